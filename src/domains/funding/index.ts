/**
 * Funding: company pool balances and statements (D29, D48), sandbox and bank deposits to pools, and
 * low-balance alerts (2.12, D41, D49). The public entry of the domain: other domains and the top
 * level import only from here.
 */
export { fundingRoutes } from './routes.ts';
export { corporateWire, depositToPool, fundBalance, statement } from './service.ts';
export { lowBalanceJob, mailLowBalanceAlert } from './low-balance.ts';
