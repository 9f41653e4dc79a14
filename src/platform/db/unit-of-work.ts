import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db, Queryable } from './db.ts';

/**
 * A unit of work (issue 29, PCI DSS 10.2): `db.atomic(fn)` runs fn so that every statement it sends
 * through the Db, directly or from any service it calls, goes to one transaction, committed when fn
 * resolves and rolled back when it throws. The admin API and the console run an administrative
 * action and the audit entry that records it this way, so a crash or a failed append between them
 * cannot leave an action without its entry (src/domains/operators/gate.ts).
 *
 * Inside a unit, `db.tx(fn)` becomes a savepoint of the unit's transaction (its own rollback still
 * undoes only its own work), and so does every single `db.query`/`db.exec` (a failed statement then
 * does not abort the unit, as it would not outside one). Savepoints of one level run one at a time,
 * so concurrent branches (Promise.all) never interleave them. The unit knows nothing of what runs in
 * it; a statement sent after the unit ended (a late continuation) goes to the database as usual.
 *
 * Code that memoizes a database side effect for the process (key provisioning, seed rows) asks
 * `insideUnitOfWork()` and does not memoize there: the unit may still be rolled back.
 */

interface Unit {
  q: Queryable;
  open: boolean;
  savepoints: number;
}

interface Frame {
  unit: Unit;
  /** The savepoints of this nesting level, one after the other. */
  queue: Promise<unknown>;
}

const frames = new AsyncLocalStorage<Frame>();
/**
 * Units open now. On Node 20 an AsyncLocalStorage in use keeps async hooks on for every promise of
 * the process; the storage is disabled whenever no unit is open, so partner traffic pays for the
 * hooks only while an administrative action is in flight, never after it.
 */
let openUnits = 0;

function openFrame(): Frame | undefined {
  const frame = frames.getStore();
  return frame && frame.unit.open ? frame : undefined;
}

/** Whether the caller runs inside an open unit of work (its writes may still be rolled back). */
export function insideUnitOfWork(): boolean {
  return openFrame() !== undefined;
}

function inSavepoint<T>(frame: Frame, fn: (q: Queryable) => Promise<T>): Promise<T> {
  const run = async (): Promise<T> => {
    const { unit } = frame;
    const name = `unit_${++unit.savepoints}`;
    await unit.q.query(`SAVEPOINT ${name}`);
    let result: T;
    try {
      result = await frames.run({ unit, queue: Promise.resolve() }, () => fn(unit.q));
    } catch (err) {
      await unit.q.query(`ROLLBACK TO SAVEPOINT ${name}`);
      throw err;
    }
    await unit.q.query(`RELEASE SAVEPOINT ${name}`);
    return result;
  };
  const result = frame.queue.then(run, run);
  frame.queue = result.catch(() => {});
  return result;
}

/** The Db `base` with units of work: the database functions route through the open unit, if any. */
export function withUnitsOfWork(base: Omit<Db, 'atomic'>): Db {
  return {
    ...base,
    query<T>(sql: string, params?: unknown[]) {
      const frame = openFrame();
      return frame ? inSavepoint(frame, (q) => q.query<T>(sql, params)) : base.query<T>(sql, params);
    },
    exec(sql: string) {
      const frame = openFrame();
      return frame ? inSavepoint(frame, (q) => q.exec(sql)) : base.exec(sql);
    },
    tx<T>(fn: (q: Queryable) => Promise<T>) {
      const frame = openFrame();
      return frame ? inSavepoint(frame, fn) : base.tx(fn);
    },
    atomic<T>(fn: () => Promise<T>) {
      // Already in a unit: fn joins it (the outer unit commits or rolls back both).
      if (openFrame()) return fn();
      return base.tx(async (q) => {
        const unit: Unit = { q, open: true, savepoints: 0 };
        openUnits++;
        try {
          return await frames.run({ unit, queue: Promise.resolve() }, fn);
        } finally {
          unit.open = false;
          if (--openUnits === 0) frames.disable();
        }
      });
    },
  };
}
