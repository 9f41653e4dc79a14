/**
 * The test entry of the operators domain (issue 33): what tests need beyond the public entry
 * (index.ts), which exports only what other domains and the top level use. Production code never
 * imports this file (test/architecture-boundaries.test.ts).
 */
export { LOCKOUT_FAILURES } from './service.ts';
export { appendAudit, verifyAuditTrail } from './audit.ts';
