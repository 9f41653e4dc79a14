/** The authorization engine's public entry (D34). */
export { authorizationRoutes, type AuthorizationRouteDeps } from './routes.ts';
export {
  authorize, clear, reverse, refund, expireHold, expireHolds, holdExpiryJob, listTransactions, queryTransaction, HOLD_EXPIRY_MS, HOLD_EXPIRY_BATCH,
  DECLINE_REASONS, type AssetRate, type AuthorizationDeps, type DeclineReason,
} from './service.ts';
export {
  approveEverything, decisionRecoveryJob, recoverDecisions, DECISION_GRACE_MS, DECISION_RECOVERY_INTERVAL_MS,
  type PartnerDecisionStage, type PartnerExchange,
} from './decision.ts';
export { NetworkAuthenticator, networkKeys, type NetworkCaller } from './network-keys.ts';
export type { TransactionView } from './schemas.ts';
export { AuthUrlForwarder, businessFields, SERVICE_KEY_HEADER, type StandInReason } from './forwarding.ts';
export { ServiceKeys, type ServiceKey } from './service-keys.ts';
export { observedDecisionStage } from './observability.ts';
export { cardTransactionsPage, findTransactionRefs, holdExpiryBacklog, transactionTimelineRefs, type TransactionRef } from './operator-views.ts';
