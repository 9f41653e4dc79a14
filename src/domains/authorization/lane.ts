/**
 * The authorization lane (issue 34): authorizations that arrive while the previous batch is in the
 * database wait and go together in the next one, one call of card_authorize_batch and one commit
 * (sql/card_authorize_batch.sql). Alone, an authorization goes at once as one call of card_authorize.
 *
 * Why: eight calls at once on two cores cost each about 1.4 times one call at a time (the backends
 * take turns on the cores and on the WAL), and a batch shares its round trip, statement start and
 * commit. One batch is in the database at a time per instance: batches of several instances never
 * wait on each other in a cycle (they take their funds owners' locks in one order), but one that
 * waits holds every owner it already decided, so two of one instance would mostly queue.
 *
 * Every authorization is still decided by card_authorize alone, in its own right: a batch changes
 * when it is sent, not what is decided. When a batch fails with an error of the database (its one
 * statement rolled back, nothing of it was written), each of its authorizations is decided again
 * alone, so one failing authorization fails only its own request. A lost connection fails them all,
 * as it fails a single call: whether the commit happened is unknown, and deciding again could book
 * an authorization twice.
 */
import { Batcher } from '../../platform/db/batcher.ts';
import { isDatabaseUnavailable, type Db } from '../../platform/db/db.ts';
import { insideUnitOfWork } from '../../platform/db/unit-of-work.ts';
import { counter, histogram } from '../../platform/metrics.ts';
import { traceHere, type TracePosition } from '../../platform/tracing.ts';
import { authorizeBatchInDb, authorizeInDb, type AuthorizeResult, type AuthorizeRow } from './store.ts';

/** Authorizations per batch at most: bounds one statement's arrays and how long it holds its owners' locks. */
const MAX_BATCH = 32;

const batchSize = histogram('authorization_batch_size', 'Authorizations decided per database call (1: alone)', [], [1, 2, 4, 8, 16, 32]);
const batchRetries = counter('authorization_batch_retries_total',
  'Batches of authorizations the database refused as a whole (a deadlock, a broken invariant), whose authorizations were then decided one by one');

type Settled = { ok: true; result: AuthorizeResult } | { ok: false; error: unknown };
/** An authorization waiting in the lane, with its trace position: its statement's span goes under it. */
interface Waiting {
  row: AuthorizeRow;
  here: TracePosition;
}

const lanes = new WeakMap<Db, Batcher<Waiting, Settled>>();

/** One authorization decided and booked, through the lane of `db` (or alone inside a unit of work, whose transaction it must join). */
export async function authorizeInLane(db: Db, a: AuthorizeRow): Promise<AuthorizeResult> {
  if (insideUnitOfWork()) return authorizeInDb(db, a);
  let lane = lanes.get(db);
  if (lane === undefined) {
    lane = new Batcher((items) => decide(db, items), { maxBatch: MAX_BATCH, maxInFlight: 1 });
    lanes.set(db, lane);
  }
  const settled = await lane.submit({ row: a, here: traceHere() });
  if (!settled.ok) throw settled.error;
  return settled.result;
}

async function alone(db: Db, a: Waiting): Promise<Settled> {
  try {
    return { ok: true, result: await a.here.run(() => authorizeInDb(db, a.row)) };
  } catch (error) {
    return { ok: false, error };
  }
}

async function decide(db: Db, items: Waiting[]): Promise<Settled[]> {
  batchSize.observe(items.length);
  if (items.length === 1) return [await alone(db, items[0])];
  try {
    // The batch's statement is traced under the first authorization's checks (a span has one parent).
    const results = await items[0].here.run(() => authorizeBatchInDb(db, items.map((w) => w.row)));
    return results.map((result) => ({ ok: true, result }));
  } catch (error) {
    if (!refusedByDatabase(error)) return items.map(() => ({ ok: false, error }));
    batchRetries.inc();
    const settled: Settled[] = [];
    for (const a of items) settled.push(await alone(db, a));
    return settled;
  }
}

/** An error the database answered for the statement (it rolled back); not a lost or refused connection. */
function refusedByDatabase(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown };
  return err instanceof Error && typeof e.code === 'string' && typeof e.severity === 'string' && !isDatabaseUnavailable(err);
}
