import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeTestDatabase, testDatabase, TestClock } from './helpers/service.ts';
import type { Db, Queryable } from '../src/platform/db/db.ts';
import { exponentialBackoffMs, runJobOnce, startJob, type JobDefinition, type JobFailure, type Lease } from '../src/platform/jobs.ts';

/**
 * The leased job runner (src/platform/jobs.ts) with a small job of its own: a probe table standing
 * for any job's rows, claimed with FOR UPDATE SKIP LOCKED like the real jobs. The SQL lives here
 * because the table is the test's own.
 */

interface ProbeItem {
  id: string;
  attempts: number;
}

const PROBE_TABLE = `CREATE TABLE IF NOT EXISTS job_probe_items (
  id text PRIMARY KEY,
  grp text NOT NULL,
  due_at timestamptz NOT NULL,
  lease_token text,
  attempts integer NOT NULL DEFAULT 0,
  state text NOT NULL DEFAULT 'PENDING',
  done_count integer NOT NULL DEFAULT 0
)`;

async function addItems(db: Db, grp: string, n: number, dueAt: Date): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `${grp}-${String(i).padStart(3, '0')}`);
  await db.query('INSERT INTO job_probe_items (id, grp, due_at) SELECT id, $2, $3 FROM unnest($1::text[]) AS id', [ids, grp, dueAt]);
  return ids;
}

async function rows(db: Db, grp: string) {
  return db.query<{ id: string; state: string; attempts: number; doneCount: number; dueAt: Date }>(
    'SELECT id, state, attempts, done_count AS "doneCount", due_at AS "dueAt" FROM job_probe_items WHERE grp = $1 ORDER BY id', [grp],
  );
}

interface ProbeOptions {
  batchSize?: number;
  maxAttempts?: number;
  leaseMs?: number;
  /** Throws in complete for these ids (an unexpected failure). */
  failing?: Set<string>;
  /** Waits this long in perform (a slow item). */
  performMs?: number;
  onClaim?(): void;
  onClaimEnd?(): void;
}

/** A probe batch's completion in one statement: DONE for each item whose lease is still this run's. */
async function completeProbeBatch(q: Queryable, items: { item: ProbeItem }[], lease: Lease): Promise<('DONE' | 'LOST_LEASE')[]> {
  const done = await q.query<{ id: string }>(
    `UPDATE job_probe_items SET state = 'DONE', done_count = done_count + 1, lease_token = NULL
      WHERE id = ANY($1::text[]) AND lease_token = $2 RETURNING id`,
    [items.map(({ item }) => item.id), lease.token],
  );
  const doneIds = new Set(done.map((r) => r.id));
  return items.map(({ item }) => (doneIds.has(item.id) ? 'DONE' : 'LOST_LEASE'));
}

function probeJob(grp: string, o: ProbeOptions = {}): JobDefinition<ProbeItem> {
  return {
    name: 'probe-job',
    intervalMs: 20,
    batchSize: o.batchSize ?? 10,
    leaseMs: o.leaseMs ?? 60_000,
    maxAttempts: o.maxAttempts ?? 3,
    identify: (item) => ({ id: item.id, attempt: item.attempts }),
    claim: async (q: Queryable, lease: Lease) => {
      o.onClaim?.();
      try {
        return await q.query<ProbeItem>(
          `WITH due AS (
             SELECT id FROM job_probe_items WHERE grp = $5 AND state = 'PENDING' AND due_at <= $1 ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED
           )
           UPDATE job_probe_items i SET due_at = $2, lease_token = $3, attempts = i.attempts + 1 FROM due WHERE i.id = due.id
           RETURNING i.id, i.attempts`,
          [lease.now, lease.until, lease.token, lease.limit, grp],
        );
      } finally {
        o.onClaimEnd?.();
      }
    },
    perform: async () => {
      if (o.performMs) await new Promise((r) => setTimeout(r, o.performMs));
      return undefined;
    },
    complete: async (q, item, _none, lease) => {
      if (o.failing?.has(item.id)) throw new Error(`probe failure of ${item.id}`);
      const done = await q.query(
        `UPDATE job_probe_items SET state = 'DONE', done_count = done_count + 1, lease_token = NULL
          WHERE id = $1 AND lease_token = $2 RETURNING id`,
        [item.id, lease.token],
      );
      return done.length === 1 ? 'DONE' : 'LOST_LEASE';
    },
    fail: async (q, item, failure: JobFailure) => {
      const changed = await q.query(
        `UPDATE job_probe_items SET lease_token = NULL, due_at = COALESCE($3, due_at),
                state = CASE WHEN $3::timestamptz IS NULL THEN 'GAVE_UP' ELSE state END
          WHERE id = $1 AND lease_token = $2 RETURNING id`,
        [item.id, failure.lease.token, failure.retryAt],
      );
      return changed.length === 1 ? (failure.retryAt ? 'RETRY' : 'GAVE_UP') : 'LOST_LEASE';
    },
  };
}

describe('the leased job runner (src/platform/jobs.ts)', () => {
  let db: Db;
  const group = () => `g${randomBytes(4).toString('hex')}`;

  before(async () => {
    db = (await testDatabase()).db;
    await db.exec(PROBE_TABLE);
  });
  after(async () => {
    await closeTestDatabase();
  });

  it('when a run works its batch, then each item is completed once and logged with job, id, result, attempt and durationMs', async () => {
    const clock = new TestClock();
    const grp = group();
    const ids = await addItems(db, grp, 5, new Date(clock.now()));
    const lines: object[] = [];
    const log = { error: (o: object) => lines.push(o), info: (o: object) => lines.push(o), warn: (o: object) => lines.push(o) };
    const report = await runJobOnce(probeJob(grp), { db, clock, log });
    assert.equal(report.claimed, 5);
    assert.deepEqual(report.items.map((i) => [i.id, i.result, i.attempt, i.failed]), ids.map((id) => [id, 'DONE', 1, false]));
    assert.ok((await rows(db, grp)).every((r) => r.state === 'DONE' && r.doneCount === 1));
    assert.equal(lines.length, 5, 'one line per item outcome');
    for (const line of lines) {
      assert.deepEqual(Object.keys(line).sort(), ['attempt', 'durationMs', 'id', 'job', 'result']);
      assert.equal((line as { job: string }).job, 'probe-job');
    }
    assert.equal((await runJobOnce(probeJob(grp), { db, clock })).claimed, 0, 'nothing is due any more');
  });

  it('when a job completes its runs in batches, then a run commits once for all items, and a failing batch falls back to one item at a time', async () => {
    const clock = new TestClock();
    const grp = group();
    const ids = await addItems(db, grp, 6, new Date(clock.now()));
    const bad = ids[2];
    let batches = 0;
    let singles = 0;
    const base = probeJob(grp, { failing: new Set([bad]) });
    const job: JobDefinition<ProbeItem> = {
      ...base,
      complete: async (q, item, performed, lease) => {
        singles++;
        return base.complete(q, item, performed, lease);
      },
      completeAll: async (q, items, lease) => {
        batches++;
        if (items.some(({ item }) => item.id === bad)) throw new Error(`probe failure of ${bad} in a batch`);
        return completeProbeBatch(q, items, lease);
      },
    };
    // The first run holds the bad item: its batch transaction rolls back, and every item is completed on its own.
    const first = await runJobOnce(job, { db, clock }, { limit: 3 });
    assert.equal(batches, 1);
    assert.equal(singles, 3, 'fallback: each item of the failed batch completed on its own');
    assert.deepEqual(first.items.map((i) => [i.id, i.result]), [[ids[0], 'DONE'], [ids[1], 'DONE'], [bad, 'RETRY']]);
    // The next run's batch is clean: one transaction, no single completions.
    const second = await runJobOnce(job, { db, clock });
    assert.equal(batches, 2);
    assert.equal(singles, 3, 'no item completed on its own');
    assert.deepEqual(second.items.map((i) => [i.id, i.result, i.failed]), ids.slice(3).map((id) => [id, 'DONE', false]));
    const states = await rows(db, grp);
    assert.deepEqual(states.map((r) => [r.id, r.state, r.doneCount]),
      ids.map((id) => [id, id === bad ? 'PENDING' : 'DONE', id === bad ? 0 : 1]), 'each good item completed exactly once');
  });

  it('when a job is autocommit, then its claim and batch completion go to the database itself without a transaction, and a claim that fails after its write leaves the items to their lease', async () => {
    const clock = new TestClock();
    const grp = group();
    const ids = await addItems(db, grp, 4, new Date(clock.now()));
    const base = probeJob(grp, { leaseMs: 30_000 });
    const seen: Queryable[] = [];
    let transactions = 0;
    const counted: Db = Object.assign(Object.create(db) as Db, {
      tx: <T>(fn: (q: Queryable) => Promise<T>) => { transactions++; return db.tx(fn); },
    });
    let failAfterWrite = true;
    const job: JobDefinition<ProbeItem> = {
      ...base,
      autocommit: true,
      claim: async (q, lease) => {
        seen.push(q);
        const claimed = await base.claim(q, lease);
        if (failAfterWrite) throw new Error('the read after the lease failed');
        return claimed;
      },
      completeAll: async (q, items, lease) => {
        seen.push(q);
        return completeProbeBatch(q, items, lease);
      },
    };
    await assert.rejects(runJobOnce(job, { db: counted, clock }), /the read after the lease failed/);
    // The lease's write stood on its own: the items are not due until it runs out (as after a crash).
    failAfterWrite = false;
    assert.equal((await runJobOnce(job, { db: counted, clock })).claimed, 0, 'still leased');
    clock.advance(30_001);
    const report = await runJobOnce(job, { db: counted, clock });
    assert.deepEqual(report.items.map((i) => [i.id, i.result, i.attempt]), ids.map((id) => [id, 'DONE', 2]));
    assert.equal(transactions, 0, 'no BEGIN/COMMIT around the claim or the completion');
    assert.ok(seen.length === 4 && seen.every((q) => q === counted), 'claim and completeAll got the database itself');
    assert.ok((await rows(db, grp)).every((r) => r.state === 'DONE' && r.doneCount === 1));
  });

  it('when two instances run at once, then no item is claimed twice (FOR UPDATE SKIP LOCKED)', async () => {
    const clock = new TestClock();
    const grp = group();
    await addItems(db, grp, 40, new Date(clock.now()));
    const second = await (await testDatabase()).openAnother();
    const runs = await Promise.all([
      runJobOnce(probeJob(grp, { batchSize: 7 }), { db, clock }), runJobOnce(probeJob(grp, { batchSize: 7 }), { db: second, clock }),
      runJobOnce(probeJob(grp, { batchSize: 7 }), { db, clock }), runJobOnce(probeJob(grp, { batchSize: 7 }), { db: second, clock }),
    ]);
    const claimed = runs.flatMap((r) => r.items.map((i) => i.id));
    assert.equal(new Set(claimed).size, claimed.length, 'disjoint claims');
    assert.ok((await rows(db, grp)).every((r) => r.doneCount <= 1));
  });

  it('when a worker dies holding a lease, then the item is claimed again only after the lease expires', async () => {
    const clock = new TestClock();
    const grp = group();
    const [id] = await addItems(db, grp, 1, new Date(clock.now()));
    const job = probeJob(grp, { leaseMs: 30_000 });
    // The dead worker: its claim committed, nothing else happened.
    const nowMs = clock.now();
    await db.tx((q) => job.claim(q, { token: 'dead-worker', now: new Date(nowMs), until: new Date(nowMs + 30_000), limit: 10 }));
    assert.equal((await runJobOnce(job, { db, clock })).claimed, 0, 'still leased');
    clock.advance(30_001);
    const report = await runJobOnce(job, { db, clock });
    assert.deepEqual(report.items.map((i) => [i.id, i.result, i.attempt]), [[id, 'DONE', 2]]);
  });

  it('when an item keeps failing, then it is retried with backoff and given up after maxAttempts', async () => {
    const clock = new TestClock();
    const grp = group();
    const [id] = await addItems(db, grp, 1, new Date(clock.now()));
    const lines: Array<Record<string, unknown>> = [];
    const log = { error: (o: object) => lines.push({ level: 'error', ...o }), warn: (o: object) => lines.push({ level: 'warn', ...o }) };
    const job = probeJob(grp, { maxAttempts: 3, failing: new Set([id]) });
    for (let attempt = 1; attempt <= 3; attempt++) {
      const before = clock.now();
      const report = await runJobOnce(job, { db, clock, log });
      assert.deepEqual(report.items.map((i) => [i.result, i.attempt, i.failed]), [[attempt < 3 ? 'RETRY' : 'GAVE_UP', attempt, true]]);
      const [row] = await rows(db, grp);
      if (attempt < 3) {
        assert.equal(row.state, 'PENDING');
        const wait = row.dueAt.getTime() - exponentialBackoffMs(attempt);
        assert.ok(wait >= before && wait <= clock.now(), `attempt ${attempt}: due one backoff after the failure`);
        assert.equal((await runJobOnce(job, { db, clock })).claimed, 0, 'not due before the backoff ends');
        clock.advance(exponentialBackoffMs(attempt));
      } else {
        assert.equal(row.state, 'GAVE_UP');
      }
    }
    assert.deepEqual(lines.map((l) => [l.level, l.result, l.attempt, l.error]), [
      ['warn', 'RETRY', 1, `probe failure of ${id}`], ['warn', 'RETRY', 2, `probe failure of ${id}`], ['error', 'GAVE_UP', 3, `probe failure of ${id}`],
    ]);
    clock.advance(3_600_000);
    assert.equal((await runJobOnce(job, { db, clock })).claimed, 0, 'a given-up item is never claimed again');
  });

  it('when the loop runs, then its runs never overlap, and stop() drains the run in progress', async () => {
    const clock = new TestClock();
    const grp = group();
    await addItems(db, grp, 12, new Date(clock.now()));
    let claiming = 0;
    let maxClaiming = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    const job = probeJob(grp, {
      batchSize: 3,
      performMs: 30,
      onClaim: () => {
        claiming++;
        maxClaiming = Math.max(maxClaiming, claiming);
      },
      onClaimEnd: () => {
        claiming--;
      },
    });
    const counted: JobDefinition<ProbeItem> = {
      ...job,
      perform: async (item, lease) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          return await job.perform!(item, lease);
        } finally {
          inFlight--;
        }
      },
    };
    const running = startJob(counted, { db, clock });
    // Let it work on the first batches, then stop in the middle.
    const deadline = Date.now() + 10_000;
    while ((await rows(db, grp)).filter((r) => r.state === 'DONE').length < 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
    }
    await running.stop();
    assert.equal(inFlight, 0, 'stop() waited for the items in progress');
    assert.equal(maxClaiming, 1, 'never two claims at once');
    assert.ok(maxInFlight <= 3, `never more than one batch in flight (saw ${maxInFlight})`);
    const after = await rows(db, grp);
    assert.ok(after.every((r) => r.state === 'DONE' || r.attempts === 0), 'every claimed item was completed (drained), none left to its lease');
    const doneNow = after.filter((r) => r.state === 'DONE').length;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await rows(db, grp)).filter((r) => r.state === 'DONE').length, doneNow, 'nothing runs after stop()');
  });
});
