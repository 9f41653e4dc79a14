/**
 * A lane of database calls (issue 34): items that arrive while the lane's call is in the database wait
 * and go together in its next call, one round trip and one commit (`together`); an item that finds the
 * lane idle goes at once, alone (`alone`). One call per lane is in the database at a time.
 *
 * `together` must decide each item exactly as `alone` would, in one statement, so that any error
 * rolls all of it back, and must bound its lock waits (lock_timeout), so that an item waiting on a
 * lock held elsewhere cannot hold every item of the lane behind it. When the database refuses a batch
 * (an item raised, a lock wait ran out, a deadlock), each of its items is decided again alone by its
 * own caller, outside the lane, which goes on with the next batch: one failing item fails only its
 * own caller, and a blocked one waits alone as it would have before the lanes. A lost connection
 * fails every item of the batch, as it fails a single call: whether the commit happened is unknown,
 * and deciding again could book an item twice.
 *
 * Inside a unit of work an item must join that transaction, so it goes alone at once. Each item keeps
 * its trace position; a batch's statement is traced under the first item's (a span has one parent).
 */
import { counter, histogram } from '../metrics.ts';
import { traceHere, type TracePosition } from '../tracing.ts';
import { Batcher } from './batcher.ts';
import { invariant } from '../errors.ts';
import { isDatabaseUnavailable, type Db } from './db.ts';
import { insideUnitOfWork } from './unit-of-work.ts';

export interface LaneCalls<I, O> {
  /** One item in one call, its lock waits unbounded. */
  alone(item: I): Promise<O>;
  /** Items (one or more) in one statement with bounded lock waits, each decided as `alone` would; the results in the items' order. */
  together(items: I[]): Promise<O[]>;
}

type Settled<O> = { ok: true; result: O } | { ok: false; error: unknown };
/** A batch the database refused: each of its items is decided again alone, by its own caller. */
const RETRY_ALONE = Symbol('retry alone');

interface Waiting<I> {
  item: I;
  here: TracePosition;
}

/** Items per batch at most: bounds one statement's arrays and how long a batch holds its owners' locks. */
const MAX_BATCH = 32;

/** A lane's metrics, declared once at module level so that they are exported from the start (alert rules read them). */
interface LaneMetrics {
  batchSize: ReturnType<typeof histogram>;
  retries: ReturnType<typeof counter>;
}

/**
 * `name` prefixes the metrics: `<name>_batch_size` (items per database call) and
 * `<name>_batch_retries_total` (batches refused as a whole and decided again one by one).
 */
function laneMetrics(name: string, what: string): LaneMetrics {
  return {
    batchSize: histogram(`${name}_batch_size`, `${what} decided per database call (1: alone)`, [], [1, 2, 4, 8, 16, 32]),
    retries: counter(`${name}_batch_retries_total`,
      `Batches of ${what.toLowerCase()} the database refused as a whole (a lock wait ran out, an item raised, a deadlock), decided again one by one`),
  };
}

/**
 * The lanes of one kind of call, declared at module level: one lane per Db and per `laneKey` of an
 * item (items of different keys never share a batch: credits and debits, whose blockers differ).
 * Answers the function that decides one item through its lane.
 */
export function lanes<I, O>(
  name: string, what: string, calls: (db: Db) => LaneCalls<I, O>, laneKey: (item: I) => string = () => '',
): (db: Db, item: I) => Promise<O> {
  const metrics = laneMetrics(name, what);
  const byDb = new WeakMap<Db, Map<string, DbLane<I, O>>>();
  return (db, item) => {
    let ofDb = byDb.get(db);
    if (ofDb === undefined) byDb.set(db, (ofDb = new Map()));
    const key = laneKey(item);
    let lane = ofDb.get(key);
    if (lane === undefined) ofDb.set(key, (lane = new DbLane(calls(db), metrics)));
    return lane.run(item);
  };
}

/**
 * A batch call's rows, each with its item's 1-based position, in the order of the items; raises unless
 * there is exactly one row per item.
 */
export function inItemOrder<T>(rows: (T & { item: number })[], count: number, call: string): T[] {
  invariant(rows.length === count, `${call} answered ${rows.length} of ${count} items`);
  const results = new Array<T>(count);
  for (const { item, ...result } of rows) {
    invariant(Number.isInteger(item) && item >= 1 && item <= count && results[item - 1] === undefined, `${call} answered item ${item} wrongly`);
    results[item - 1] = result as unknown as T;
  }
  return results;
}

class DbLane<I, O> {
  private readonly batcher: Batcher<Waiting<I>, Settled<O> | typeof RETRY_ALONE>;

  constructor(private readonly calls: LaneCalls<I, O>, private readonly metrics: LaneMetrics) {
    this.batcher = new Batcher((items) => this.decide(items), { maxBatch: MAX_BATCH, maxInFlight: 1 });
  }

  async run(item: I): Promise<O> {
    if (insideUnitOfWork()) return this.calls.alone(item);
    const here = traceHere();
    const settled = await this.batcher.submit({ item, here });
    if (settled === RETRY_ALONE) return here.run(() => this.calls.alone(item));
    if (!settled.ok) throw settled.error;
    return settled.result;
  }

  /**
   * One call for the whole batch, a batch of one included: `together` bounds its lock waits (the batch
   * functions' lock_timeout), so an item that waits on a lock held elsewhere does not hold the lane.
   * Refused, the items are decided again alone and together, outside the lane, which goes on meanwhile.
   */
  private async decide(batch: Waiting<I>[]): Promise<(Settled<O> | typeof RETRY_ALONE)[]> {
    this.metrics.batchSize.observe(batch.length);
    try {
      const results = await batch[0].here.run(() => this.calls.together(batch.map((w) => w.item)));
      return results.map((result) => ({ ok: true, result }));
    } catch (error) {
      if (!refusedByDatabase(error)) return batch.map(() => ({ ok: false, error }));
      this.metrics.retries.inc();
      return batch.map(() => RETRY_ALONE);
    }
  }
}

/** An error the database answered for the statement (it rolled back); not a lost or refused connection. */
function refusedByDatabase(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown };
  return err instanceof Error && typeof e.code === 'string' && typeof e.severity === 'string' && !isDatabaseUnavailable(err);
}
