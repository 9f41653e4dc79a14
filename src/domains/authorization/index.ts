/** The authorization engine's public entry (D34). */
export { authorizationRoutes } from './routes.ts';
export { expireHold, holdExpiryJob, listTransactions, queryTransaction, type AssetRate } from './service.ts';
export { decisionRecoveryJob, type PartnerDecisionStage } from './decision.ts';
export { NetworkAuthenticator, networkKeys } from './network-keys.ts';
export type { TransactionView } from './schemas.ts';
export { AuthUrlForwarder } from './forwarding.ts';
export { ServiceKeys } from './service-keys.ts';
export { observedDecisionStage } from './observability.ts';
export { cardTransactionsPage, findTransactionRefs, holdExpiryBacklog, transactionTimelineRefs } from './operator-views.ts';
export { backtestRoutes } from './backtest-routes.ts';
export { backtestJob } from './backtest.ts';
