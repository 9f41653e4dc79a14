/**
 * Operators (issue 29): named operator accounts with roles, TOTP logins, console sessions and the
 * hash-chained audit trail of every administrative action. The public entry of the domain.
 */
export { operatorRoutes } from './routes.ts';
export { OperatorGate } from './gate.ts';
export {
  createOperator, csrfMatches, listOperators, login, logout, updateOperator, IDLE_TIMEOUT_MS, OPERATOR_NAME, type OperatorSession,
} from './service.ts';
export { listAudit, redact } from './audit.ts';
