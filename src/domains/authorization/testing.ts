/**
 * The test entry of the authorization domain (issue 33): what tests need beyond the public entry
 * (index.ts), which exports only what other domains and the top level use. Production code never
 * imports this file (test/architecture-boundaries.test.ts).
 */
export { authorize, expireHolds, HOLD_EXPIRY_MS } from './service.ts';
export { recoverDecisions, DECISION_GRACE_MS, type PartnerExchange } from './decision.ts';

import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/db.ts';
import { runJobOnce } from '../../platform/jobs.ts';
import { backtestJob as makeBacktestJob } from './backtest.ts';

/** One run of the backtest job now (what the worker loop does): one step of one due backtest, `stepSize` authorizations. */
export async function stepBacktests(deps: { db: Db; clock: Clock }, options: { stepSize?: number } = {}) {
  const run = await runJobOnce(makeBacktestJob(options), { db: deps.db, clock: deps.clock }, { limit: 1 });
  return run.items.map((i) => ({ id: i.id, result: i.result, failed: i.failed, error: i.error }));
}
