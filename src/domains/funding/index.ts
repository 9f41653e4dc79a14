/**
 * Funding: company pool balances and statements (D29, D48), sandbox and bank deposits to pools, and
 * low-balance alerts (2.12, D41, D49). The public entry of the domain: other domains and the top
 * level import only from here.
 */
export { fundingRoutes } from './routes.ts';
export {
  corporateWire, depositToPool, fundBalance, queryBalanceAlerts, setBalanceAlerts, statement,
  CORPORATE_AMOUNT_RULES, DEPOSIT_SOURCE_OWNER, THRESHOLD_RULES,
  type BalanceAlertInput, type DedicatedCards, type FundingDeps, type FundingRouteDeps, type PoolDeposit, type StatementQuery,
} from './service.ts';
export {
  lowBalanceJob, mailLowBalanceAlert, scanLowBalances, LOW_BALANCE_BATCH_SIZE, LOW_BALANCE_LEASE_MS, LOW_BALANCE_MAX_ATTEMPTS, LOW_BALANCE_POLL_INTERVAL_MS,
  LOW_BALANCE_SCAN_INTERVAL_MS, type LowBalanceDeps, type ScanResult,
} from './low-balance.ts';
export type { AlertConfig, AlertSetting, LeasedAlertSetting } from './store.ts';
