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
import { lanes } from '../../platform/db/lane.ts';
import { authorizeBatchInDb, authorizeInDb, type AuthorizeResult, type AuthorizeRow } from './store.ts';

/** One authorization decided and booked through the lane of `db`. */
export const authorizeInLane = lanes<AuthorizeRow, AuthorizeResult>('authorization', 'Authorizations',
  (db) => ({ alone: (r) => authorizeInDb(db, r), together: (rs) => authorizeBatchInDb(db, rs) }));
