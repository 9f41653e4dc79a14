/**
 * The test entry of the funding domain (issue 33): what tests need beyond the public entry
 * (index.ts), which exports only what other domains and the top level use. Production code never
 * imports this file (test/architecture-boundaries.test.ts).
 */
export { scanLowBalances } from './low-balance.ts';
