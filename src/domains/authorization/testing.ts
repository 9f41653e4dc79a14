/**
 * The test entry of the authorization domain (issue 33): what tests need beyond the public entry
 * (index.ts), which exports only what other domains and the top level use. Production code never
 * imports this file (test/architecture-boundaries.test.ts).
 */
export { expireHolds, HOLD_EXPIRY_MS } from './service.ts';
export { recoverDecisions, DECISION_GRACE_MS, type PartnerExchange } from './decision.ts';
