/**
 * The test entry of the managed-balance domain: what tests need beyond the public entry (index.ts).
 * Production code never imports this file (test/architecture-boundaries.test.ts).
 */
export { move } from './movements.ts';
