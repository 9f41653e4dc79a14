/**
 * Operators (issue 29): named operator accounts with roles, TOTP logins, console sessions and the
 * hash-chained audit trail of every administrative action. The public entry of the domain.
 */
export { operatorRoutes } from './routes.ts';
export { OperatorGate, ADMIN_CLI_USER_AGENT, BEARER_ACTOR, CSRF_HEADER, cookieValue, targetOf } from './gate.ts';
export {
  checkSession, createOperator, csrfMatches, listOperators, login, logout, updateOperator, IDLE_TIMEOUT_MS, LOCKOUT_FAILURES, LOCKOUT_MS,
  SESSION_MAX_MS, type LoginOutcome, type OperatorCredentials, type OperatorSession, type OperatorView,
} from './service.ts';
export { appendAudit, listAudit, redact, verifyAuditTrail, AUDIT_PAGE_MAX, type AuditInput, type AuditView, type ChainReport } from './audit.ts';
export { totpCode, totpUri } from './credentials.ts';
export type { OperatorRow } from './store.ts';
