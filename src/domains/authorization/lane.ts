/**
 * The authorization lane (issue 34, src/platform/db/lane.ts): authorizations that arrive while the
 * previous call is in the database go together in the next one, one call of card_authorize_batch
 * (sql/card_authorize_batch.sql) and one commit; one that finds the lane idle goes at once, as a batch
 * of one. card_authorize decides each: a batch changes when it is sent, not what is decided. Refused
 * (a lock wait past the batch's lock_timeout, an error), the authorizations are decided again alone,
 * each by one call of card_authorize.
 * A batch decides its authorizations in the order of their funds owner, so batches of several
 * instances never wait on each other in a cycle (docs/authorizations.md).
 */
import type { Db } from '../../platform/db/db.ts';
import { DbLane, laneMetrics } from '../../platform/db/lane.ts';
import { authorizeBatchInDb, authorizeInDb, type AuthorizeResult, type AuthorizeRow } from './store.ts';

/** Authorizations per batch at most: bounds one statement's arrays and how long it holds its owners' locks. */
const MAX_BATCH = 32;

const metrics = laneMetrics('authorization', 'Authorizations');
const lanes = new WeakMap<Db, DbLane<AuthorizeRow, AuthorizeResult>>();

/** One authorization decided and booked through the lane of `db`. */
export function authorizeInLane(db: Db, a: AuthorizeRow): Promise<AuthorizeResult> {
  let lane = lanes.get(db);
  if (lane === undefined) {
    lane = new DbLane({ alone: (r) => authorizeInDb(db, r), together: (rs) => authorizeBatchInDb(db, rs) }, metrics, MAX_BATCH);
    lanes.set(db, lane);
  }
  return lane.run(a);
}
