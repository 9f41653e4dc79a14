/**
 * The leased job runner: every background job of the service runs on it (card applications,
 * webhook delivery, low-balance scans, and the authorization engine's hold expiry).
 *
 * A job is a definition; the runner does the rest. To add one, write a `JobDefinition` in the
 * owning domain (next to the store functions it names), export it from the domain's index.ts, and
 * add it to the list in src/workers.ts:
 *
 *   export function holdExpiryJob(deps: AuthorizationDeps): JobDefinition<ExpiringHold> {
 *     return {
 *       name: 'hold-expiry',            // the `job` field of every log line
 *       intervalMs: 5_000,              // pause between runs when the last run found less than a batch
 *       batchSize: 100,                 // items claimed per run (one claim transaction)
 *       leaseMs: 60_000,                // a claimed item is this worker's until then; after it, anyone's
 *       maxAttempts: 5,                 // unexpected failures before the item is given up
 *       identify: (h) => ({ id: h.holdId, attempt: h.attempts }),
 *       claim: (q, lease) => leaseExpiredHolds(q, lease),            // store: FOR UPDATE SKIP LOCKED
 *       complete: (q, h, _none, lease) => expireHold(q, h, lease),   // the outcome's transaction
 *       fail: (q, h, failure) => failHold(q, h, failure),            // store: retry at / give up
 *     };
 *   }
 *
 * The contract of the functions (the runner opens every transaction; `q` is inside it):
 * - `claim(q, lease)` leases up to `lease.limit` due items in one statement: it selects them with
 *   `FOR UPDATE SKIP LOCKED` (another instance skips them instead of waiting), stamps them with
 *   `lease.token` and an expiry of `lease.until`, counts the attempt, and returns them. An item
 *   whose lease expired (its worker died) is due again.
 * - `perform(item, lease)` (optional) is the part of the work that must run outside a transaction
 *   (an HTTP call); what it returns is handed to `complete`.
 * - `complete(q, item, performed, lease)` records the outcome: the business change and the item's
 *   "done" mark, in one transaction, and only while `lease.token` still holds the item; otherwise
 *   it writes nothing and answers 'LOST_LEASE'. It answers a result label (or a `JobOutcome`).
 * - `fail(q, item, failure)` runs when `perform` or `complete` threw: reschedule the item at
 *   `failure.retryAt` (backoff), or give it up when `retryAt` is null (the item reached
 *   `maxAttempts`); again only while the lease holds.
 * - `completeAll(q, items, lease)` (optional) does what `complete` does for every performed item of
 *   the run in one transaction (a busy queue then costs one commit per run, not per item).
 * - `autocommit: true` (optional): `claim`'s one write and `completeAll` are single statements, each
 *   atomic on its own, so the runner sends them without BEGIN and COMMIT (webhook delivery).
 * - `afterCommit(item, outcome)` (optional) runs after `complete` committed (deliver the mail the
 *   transaction queued).
 *
 * What the runner guarantees: runs of one job never overlap in one process (the next run is
 * scheduled when the previous one ended: at once when it claimed a full batch, else after
 * `intervalMs`); at most `concurrency` items are worked at once; failures are retried with
 * exponential backoff up to `maxAttempts`; `stop()` stops scheduling and waits for the run in
 * progress (graceful drain: every claimed item is completed or failed, none is left to its lease);
 * and every item outcome writes one structured log line
 * `{job, id, result, attempt, durationMs}` (plus `error` on failures and the job's own fields).
 *
 * Exports: `JobDefinition`, `JobOutcome`, `JobFailure`, `Lease`, `JobRuntime`, `JobLog`,
 * `JobItemReport`, `JobRunReport`, `PeriodicTask`, `RunningJobs`, `runJobOnce(def, runtime,
 * {limit})` (one run now: tests and operator commands), `startJob(def, runtime)`,
 * `startPeriodicTask(task, runtime)`, `startJobs(runtime, {jobs, tasks})`, `exponentialBackoffMs`.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Clock } from './clock.ts';
import type { Db, Queryable } from './db/db.ts';
import { invariant } from './errors.ts';
import { beforeScrape, counter, gauge } from './metrics.ts';
import { inSpan } from './tracing.ts';

/** What one claim gives the job's store functions. */
export interface Lease {
  /** Unique per claim: the items' lease owner; `complete` and `fail` write only while it still holds. */
  token: string;
  /** The service clock at the claim. */
  now: Date;
  /** Lease expiry: `now + leaseMs`. */
  until: Date;
  /** Items to claim at most. */
  limit: number;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** How an item ended. `result` is a short upper-case label ('SUCCESS', 'DELIVERED', 'LOST_LEASE', ...). */
export interface JobOutcome<D = unknown> {
  result: string;
  /** Log level of the item's line (default info). */
  level?: LogLevel;
  /** Extra fields for the item's log line (never secrets or card data). */
  fields?: Record<string, unknown>;
  /** Returned to `runJobOnce` callers (tests and operator commands), never logged. */
  detail?: D;
}

export interface JobFailure {
  /** The error's message (the message only: no stack, no data that could carry secrets). */
  error: string;
  attempt: number;
  /** When to try again; null when the item reached maxAttempts and is given up. */
  retryAt: Date | null;
  lease: Lease;
}

export interface JobDefinition<T, P = undefined, D = unknown> {
  name: string;
  intervalMs: number;
  batchSize: number;
  leaseMs: number;
  maxAttempts: number;
  /** Items worked at once by one process; default batchSize. */
  concurrency?: number;
  /** Wait before the next try after the n-th failed attempt; default exponentialBackoffMs. */
  retryDelayMs?(attempt: number): number;
  /** The item's id and its attempt number (1 for the first claim), for logs and the attempt bound. */
  identify(item: T): { id: string; attempt: number };
  claim(q: Queryable, lease: Lease): Promise<T[]>;
  perform?(item: T, lease: Lease): Promise<P>;
  complete(q: Queryable, item: T, performed: P, lease: Lease): Promise<JobOutcome<D> | string>;
  /**
   * Optional: records the outcomes of a whole run in one transaction (one answer per item, in
   * order), instead of one transaction per item. Same contract as `complete` for each item; when
   * it throws, the runner falls back to `complete` item by item.
   */
  completeAll?(q: Queryable, items: { item: T; performed: P }[], lease: Lease): Promise<(JobOutcome<D> | string)[]>;
  /**
   * Optional: `claim` makes its one write in a single statement (atomic on its own, reads after it
   * allowed) and `completeAll` is a single statement, so the runner sends them on the database
   * itself, without BEGIN and COMMIT: two round trips fewer for each. A failure after the claim's
   * write leaves the claimed items to their lease, as a crash would. `complete` and `fail` still run
   * in transactions.
   */
  autocommit?: boolean;
  afterCommit?(item: T, outcome: JobOutcome<D>): Promise<void>;
  fail(q: Queryable, item: T, failure: JobFailure): Promise<JobOutcome<D> | string | void>;
  /**
   * Optional (metrics, issue 27): the items due now and the due time of the oldest, read in one
   * statement by the job's store (what `claim` would take, without leasing it).
   */
  backlog?(q: Queryable, now: Date): Promise<JobBacklog>;
  /** Optional: the trace span of one item's `perform`, named after the business step (default `job.<name>`). */
  spanName?: string;
}

export interface JobBacklog {
  pending: number;
  oldestDueAt: Date | null;
}

/** A job of any item type, for lists of jobs (src/workers.ts). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyJobDefinition = JobDefinition<any, any, any>;

/** Where the runner writes. Levels the logger lacks are skipped, except error. */
export interface JobLog {
  error(obj: object, msg?: string): void;
  warn?(obj: object, msg?: string): void;
  info?(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

export interface JobRuntime {
  db: Db;
  clock: Clock;
  log?: JobLog;
}

export interface JobItemReport<D = unknown> {
  job: string;
  id: string;
  result: string;
  attempt: number;
  durationMs: number;
  /** True when perform or complete threw (the item was retried later or given up). */
  failed: boolean;
  error?: string;
  detail?: D;
}

export interface JobRunReport<D = unknown> {
  job: string;
  claimed: number;
  items: JobItemReport<D>[];
}

/** Default retry wait: 1 s doubling per failed attempt, at most 5 minutes. */
export const DEFAULT_FIRST_RETRY_MS = 1_000;
export const DEFAULT_MAX_RETRY_MS = 300_000;

export function exponentialBackoffMs(attempt: number, firstMs = DEFAULT_FIRST_RETRY_MS, maxMs = DEFAULT_MAX_RETRY_MS): number {
  return Math.min(maxMs, firstMs * 2 ** Math.max(0, attempt - 1));
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function asOutcome<D>(value: JobOutcome<D> | string | void, fallback: string): JobOutcome<D> {
  if (value === undefined) return { result: fallback };
  return typeof value === 'string' ? { result: value } : value;
}

function write(log: JobLog | undefined, level: LogLevel, line: object, msg: string): void {
  if (!log) return;
  const fn = level === 'error' ? log.error : log[level];
  fn?.call(log, line, msg);
}

function checkDefinition(def: AnyJobDefinition): void {
  invariant(/^[a-z][a-z0-9-]{0,63}$/.test(def.name), `job name "${def.name}" is kebab-case`);
  invariant(def.intervalMs > 0 && def.leaseMs > 0, `job ${def.name}: positive interval and lease`);
  invariant(Number.isSafeInteger(def.batchSize) && def.batchSize > 0, `job ${def.name}: positive batch size`);
  invariant(Number.isSafeInteger(def.maxAttempts) && def.maxAttempts > 0, `job ${def.name}: positive maxAttempts`);
  invariant(def.concurrency === undefined || def.concurrency > 0, `job ${def.name}: positive concurrency`);
}

/** Where an item stands between perform and complete. */
type Performed<P> = { ok: true; value: P } | { ok: false; error: unknown };

/** The item's outcome after its `complete` committed: follow-up, report, log line. */
async function itemCompleted<T, P, D>(def: JobDefinition<T, P, D>, runtime: JobRuntime, item: T, outcome: JobOutcome<D>, started: number): Promise<JobItemReport<D>> {
  const { id, attempt } = def.identify(item);
  if (def.afterCommit) {
    try {
      await def.afterCommit(item, outcome);
    } catch (err) {
      // The outcome committed; only the follow-up failed (e.g. SMTP). Reported, not retried.
      write(runtime.log, 'error', { job: def.name, id, attempt, error: messageOf(err) }, 'job follow-up failed');
    }
  }
  return logged(runtime, { job: def.name, id, result: outcome.result, attempt, durationMs: since(started), failed: false, detail: outcome.detail },
    outcome.level ?? 'info', outcome.fields);
}

/** perform or complete threw: reschedule with backoff, or give up at maxAttempts. */
async function itemFailed<T, P, D>(def: JobDefinition<T, P, D>, runtime: JobRuntime, item: T, lease: Lease, err: unknown, started: number): Promise<JobItemReport<D>> {
  const { id, attempt } = def.identify(item);
  const error = messageOf(err);
  const giveUp = attempt >= def.maxAttempts;
  const retryAt = giveUp ? null : new Date(runtime.clock.now() + (def.retryDelayMs ?? exponentialBackoffMs)(attempt));
  let result = giveUp ? 'GAVE_UP' : 'RETRY';
  try {
    const recorded = await runtime.db.tx((q) => def.fail(q, item, { error, attempt, retryAt, lease }));
    result = asOutcome(recorded, result).result;
  } catch (failErr) {
    // Not even the failure could be written: the lease expires and the item is claimed again.
    result = 'LEASE_LEFT';
    write(runtime.log, 'error', { job: def.name, id, attempt, error: messageOf(failErr) }, 'job failure could not be recorded');
  }
  return logged(runtime, { job: def.name, id, result, attempt, durationMs: since(started), failed: true, error }, giveUp ? 'error' : 'warn');
}

function since(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}

function logged<D>(runtime: JobRuntime, report: JobItemReport<D>, level: LogLevel, fields?: Record<string, unknown>): JobItemReport<D> {
  jobItems.inc({ job: report.job, result: report.result });
  write(runtime.log, level, { ...fields, job: report.job, id: report.id, result: report.result, attempt: report.attempt,
    durationMs: report.durationMs, ...(report.error !== undefined ? { error: report.error } : {}) }, `job ${report.result.toLowerCase()}`);
  return report;
}

async function perform<T, P, D>(def: JobDefinition<T, P, D>, item: T, lease: Lease): Promise<Performed<P>> {
  const work = def.perform;
  if (!work) return { ok: true, value: undefined as P };
  try {
    const value = await inSpan(def.spanName ?? `job.${def.name}`, (span) => {
      const { id, attempt } = def.identify(item);
      span.setAttribute('app.job', def.name);
      span.setAttribute('app.job.item_id', id);
      span.setAttribute('app.job.attempt', attempt);
      return work.call(def, item, lease);
    });
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error };
  }
}

/** One item on its own: perform, then complete in its own transaction. */
async function workItem<T, P, D>(def: JobDefinition<T, P, D>, runtime: JobRuntime, item: T, lease: Lease, started = performance.now(), done?: Performed<P>): Promise<JobItemReport<D>> {
  const performed = done ?? await perform(def, item, lease);
  if (!performed.ok) return itemFailed(def, runtime, item, lease, performed.error, started);
  let outcome: JobOutcome<D>;
  try {
    outcome = asOutcome<D>(await runtime.db.tx((q) => def.complete(q, item, performed.value, lease)), 'DONE');
  } catch (err) {
    return itemFailed(def, runtime, item, lease, err, started);
  }
  return itemCompleted(def, runtime, item, outcome, started);
}

/** Runs `work(index)` for every index, at most `concurrency` at once. */
async function inLanes(count: number, concurrency: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) await work(next++);
  }));
}

/**
 * A run of a job with `completeAll`: every item performed (in lanes), then the performed ones
 * completed together in one transaction. If that transaction fails, each item is completed on
 * its own, so one bad item cannot hold back the others.
 */
async function workBatch<T, P, D>(def: JobDefinition<T, P, D>, runtime: JobRuntime, claimed: T[], lease: Lease, concurrency: number): Promise<JobItemReport<D>[]> {
  const completeAll = def.completeAll;
  invariant(completeAll, `job ${def.name}: completeAll is defined`);
  const started = claimed.map(() => performance.now());
  const performed: Performed<P>[] = new Array(claimed.length);
  await inLanes(claimed.length, concurrency, async (i) => {
    started[i] = performance.now();
    performed[i] = await perform(def, claimed[i], lease);
  });
  const ready = claimed.flatMap((item, index) => {
    const p = performed[index];
    return p.ok ? [{ item, performed: p.value, index }] : [];
  });
  let outcomes: JobOutcome<D>[] | null = null;
  if (ready.length > 0) {
    try {
      const items = ready.map(({ item, performed: value }) => ({ item, performed: value }));
      const answered = def.autocommit ? await completeAll.call(def, runtime.db, items, lease) : await runtime.db.tx((q) => completeAll.call(def, q, items, lease));
      invariant(answered.length === ready.length, `job ${def.name}: completeAll answers every item`);
      outcomes = answered.map((o) => asOutcome<D>(o, 'DONE'));
    } catch (err) {
      write(runtime.log, 'warn', { job: def.name, items: ready.length, error: messageOf(err) }, 'job batch completion failed; completing items one by one');
    }
  }
  const reports: JobItemReport<D>[] = new Array(claimed.length);
  const byIndex = new Map(ready.map((r, k) => [r.index, k]));
  await inLanes(claimed.length, concurrency, async (i) => {
    const k = byIndex.get(i);
    reports[i] = outcomes && k !== undefined
      ? await itemCompleted(def, runtime, claimed[i], outcomes[k], started[i])
      : await workItem(def, runtime, claimed[i], lease, started[i], performed[i]);
  });
  return reports;
}

/**
 * One run now: claim up to `limit` (default batchSize) due items in one transaction, work them
 * (at most `concurrency` at once) and wait for every outcome. The worker loop is made of these
 * runs; tests and operator commands call it directly (deterministic, no timers).
 */
export async function runJobOnce<T, P, D>(
  def: JobDefinition<T, P, D>,
  runtime: JobRuntime,
  options: { limit?: number } = {},
): Promise<JobRunReport<D>> {
  checkDefinition(def);
  const limit = options.limit ?? def.batchSize;
  if (limit <= 0) return { job: def.name, claimed: 0, items: [] };
  try {
    const report = await runBatch(def, runtime, limit);
    ranAt(def.name, 'ok', runtime.clock.now());
    return report;
  } catch (err) {
    ranAt(def.name, 'error', runtime.clock.now());
    throw err;
  }
}

async function runBatch<T, P, D>(def: JobDefinition<T, P, D>, runtime: JobRuntime, limit: number): Promise<JobRunReport<D>> {
  const nowMs = runtime.clock.now();
  const lease: Lease = { token: randomUUID(), now: new Date(nowMs), until: new Date(nowMs + def.leaseMs), limit };
  const claimed = def.autocommit ? await def.claim(runtime.db, lease) : await runtime.db.tx((q) => def.claim(q, lease));
  invariant(claimed.length <= limit, `job ${def.name}: claim returned at most the limit`);
  const concurrency = Math.max(1, def.concurrency ?? def.batchSize);
  if (def.completeAll && claimed.length > 0) {
    return { job: def.name, claimed: claimed.length, items: await workBatch(def, runtime, claimed, lease, concurrency) };
  }
  const items: JobItemReport<D>[] = new Array(claimed.length);
  await inLanes(claimed.length, concurrency, async (i) => {
    items[i] = await workItem(def, runtime, claimed[i], lease);
  });
  return { job: def.name, claimed: claimed.length, items };
}

/** Something to do on an interval that is not a queue of items (e.g. a table sweep). */
export interface PeriodicTask {
  name: string;
  intervalMs: number;
  run(): Promise<unknown>;
}

export interface RunningJobs {
  /** Stops scheduling and waits for the runs in progress to finish (graceful drain). */
  stop(): Promise<void>;
}

/** Runs `step` again and again, never two at once: the next run starts `delay` ms after one ends. */
function loop(name: string, firstDelayMs: number, step: () => Promise<number>, log: JobLog | undefined): RunningJobs {
  let stopping = false;
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<void> | null = null;
  const schedule = (delayMs: number) => {
    if (stopping) return;
    timer = setTimeout(() => {
      timer = null;
      current = step()
        .catch((err) => {
          write(log, 'error', { job: name, error: messageOf(err) }, 'job run failed');
          return firstDelayMs;
        })
        .then((nextDelayMs) => {
          current = null;
          schedule(nextDelayMs);
        });
    }, delayMs);
    timer.unref();
  };
  schedule(firstDelayMs);
  return {
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}

/** The worker loop of one job: runs never overlap; a full batch is followed at once by the next run. */
export function startJob(def: AnyJobDefinition, runtime: JobRuntime): RunningJobs {
  checkDefinition(def);
  return loop(def.name, def.intervalMs, async () => {
    const report = await runJobOnce(def, runtime);
    return report.claimed >= def.batchSize ? 0 : def.intervalMs;
  }, runtime.log);
}

export function startPeriodicTask(task: PeriodicTask, runtime: JobRuntime): RunningJobs {
  return loop(task.name, task.intervalMs, async () => {
    try {
      await task.run();
    } catch (err) {
      ranAt(task.name, 'error', runtime.clock.now());
      throw err;
    }
    ranAt(task.name, 'ok', runtime.clock.now());
    return task.intervalMs;
  }, runtime.log);
}

/** Starts every job and task; `stop()` drains them all. */
export function startJobs(runtime: JobRuntime, work: { jobs: AnyJobDefinition[]; tasks?: PeriodicTask[] }): RunningJobs {
  const names = [...work.jobs.map((j) => j.name), ...(work.tasks ?? []).map((t) => t.name)];
  invariant(new Set(names).size === names.length, 'job and task names are unique');
  const running = [...work.jobs.map((j) => startJob(j, runtime)), ...(work.tasks ?? []).map((t) => startPeriodicTask(t, runtime))];
  return {
    async stop() {
      await Promise.all(running.map((r) => r.stop()));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Metrics and freshness (issue 27, docs/observability.md)

const jobRuns = counter('job_runs_total', 'Runs of background jobs and periodic tasks, by job and result (ok, error: the run itself failed)', ['job', 'result']);
const jobItems = counter('job_items_total', 'Items worked by background jobs, by job and the item\'s result label (DELIVERED, RETRY, GAVE_UP, LOST_LEASE, ...)', ['job', 'result']);
const jobLastRun = gauge('job_last_run_timestamp_seconds', 'When the last run of a job or periodic task ended in this process (Unix time)', ['job']);
const jobPending = gauge('job_pending_items', 'Items of a job due now and not leased (from the database: the same on every instance)', ['job']);
const jobLag = gauge('job_lag_seconds', 'How long the oldest due item of a job has waited past its due time (0 when none is due)', ['job']);
/**
 * The freshness bound of each job and task (the one /readyz applies): the JobStale alert compares
 * the time since the last run with it, so an hourly task (ledger-audit) is not called stale after
 * 15 minutes (review rvG).
 */
const jobStaleAfter = gauge('job_stale_after_seconds', 'How long after its last run a job or periodic task counts as stale (its interval + lease + 60 s; periodic tasks twice their interval + 60 s), as /readyz says', ['job']);

/** When each job or task last finished a run in this process (its clock), and how. */
const lastRuns = new Map<string, { endedAtMs: number; result: 'ok' | 'error' }>();

function ranAt(name: string, result: 'ok' | 'error', nowMs: number): void {
  jobRuns.inc({ job: name, result });
  jobLastRun.set({ job: name }, nowMs / 1000);
  lastRuns.set(name, { endedAtMs: nowMs, result });
}

/** What /readyz says of one job or task. */
export interface JobFreshness {
  job: string;
  /** When its last run ended in this process; null when none has yet. */
  lastRunAt: string | null;
  lastResult: 'ok' | 'error' | null;
  /** fresh: ended within its bound; stale: not (stuck, or the loop died); waiting: no run ended yet. */
  status: 'fresh' | 'stale' | 'waiting';
  /** A run ends at most this long after the previous one (seconds). */
  boundSeconds: number;
}

/** Jobs and tasks whose freshness is watched, with their bound: interval + lease (+ a minute of slack). */
const watched = new Map<string, number>();
const FRESHNESS_SLACK_MS = 60_000;

/** Watches the service's jobs: their backlog in the database at every scrape, and their freshness (GET /readyz). */
export function observeJobs(runtime: Pick<JobRuntime, 'db' | 'clock'>, work: { jobs: AnyJobDefinition[]; tasks?: PeriodicTask[] }): void {
  // One bound per job or task, read by /readyz (watched) and by the JobStale alert (job_stale_after_seconds).
  const watch = (job: string, boundMs: number) => {
    watched.set(job, boundMs);
    jobStaleAfter.set({ job }, boundMs / 1000);
    jobRuns.inc({ job, result: 'ok' }, 0);
    jobRuns.inc({ job, result: 'error' }, 0);
  };
  for (const def of work.jobs) watch(def.name, def.intervalMs + def.leaseMs + FRESHNESS_SLACK_MS);
  for (const task of work.tasks ?? []) watch(task.name, 2 * task.intervalMs + FRESHNESS_SLACK_MS);
  const withBacklog = work.jobs.filter((def) => def.backlog);
  beforeScrape('job-backlog', async () => {
    const now = new Date(runtime.clock.now());
    await Promise.all(withBacklog.map(async (def) => {
      const backlog = await def.backlog!(runtime.db, now);
      jobPending.set({ job: def.name }, backlog.pending);
      jobLag.set({ job: def.name }, backlog.oldestDueAt ? Math.max(0, (now.getTime() - backlog.oldestDueAt.getTime()) / 1000) : 0);
    }));
  });
}

/**
 * Freshness of every watched job and task at `nowMs`, for the readiness report. `startedAtMs` is
 * when this process started its workers: a job with no run yet is "waiting" until its bound has
 * passed since then.
 */
export function jobFreshness(nowMs: number, startedAtMs: number): JobFreshness[] {
  return [...watched].map(([job, boundMs]) => {
    const last = lastRuns.get(job);
    const reference = last?.endedAtMs ?? startedAtMs;
    const fresh = nowMs - reference <= boundMs;
    return {
      job,
      lastRunAt: last ? new Date(last.endedAtMs).toISOString() : null,
      lastResult: last?.result ?? null,
      status: fresh ? (last ? 'fresh' : 'waiting') : 'stale',
      boundSeconds: Math.round(boundMs / 1000),
    };
  });
}
