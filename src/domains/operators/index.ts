/**
 * Operators (issue 29): named operator accounts with roles, TOTP logins, console sessions and the
 * hash-chained audit trail of every administrative action. The public entry of the domain.
 */
export { operatorRoutes } from './routes.ts';
export { OperatorGate } from './gate.ts';
export {
  createOperator, csrfMatches, listOperators, login, logout, updateOperator, IDLE_TIMEOUT_MS, LOCKOUT_FAILURES, type LoginOutcome, type OperatorCredentials, type OperatorSession, type OperatorView,
} from './service.ts';
export { appendAudit, listAudit, redact, verifyAuditTrail, type AuditInput, type AuditView, type ChainReport } from './audit.ts';
export { totpUri } from './credentials.ts';
export type { OperatorRow } from './store.ts';
