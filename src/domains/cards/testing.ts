/**
 * The test entry of the cards domain (issue 33): what tests need beyond the public entry
 * (index.ts), which exports only what other domains and the top level use. Production code never
 * imports this file (test/architecture-boundaries.test.ts).
 */
export { revealCardSecretOf } from './service.ts';
export { leaseCardApplications, processCardApplications, CARD_APPLY_LEASE_MS } from './jobs.ts';
