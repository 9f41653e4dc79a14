import type { AppContext } from './platform/context.ts';
import { startJobs, type AnyJobDefinition, type JobLog, type PeriodicTask, type RunningJobs } from './platform/jobs.ts';
import { cardApplicationJob } from './domains/cards/index.ts';
import { webhookDeliveryJob } from './domains/events/index.ts';
import { lowBalanceJob } from './domains/funding/index.ts';
import { backtestJob, decisionRecoveryJob, holdExpiryJob } from './domains/authorization/index.ts';
import { sweepReplayStore } from './domains/partners/index.ts';
import { pruneUserStream } from './domains/managed-balance/index.ts';
import { auditLedgerWhenDue } from './domains/ledger/index.ts';
import { sweepIdempotencyKeys } from './platform/http/idempotency.ts';

/** Where background work logs: one line per job outcome (info/warn/error; levels the logger lacks are skipped). */
export type Logger = JobLog;

/** How often expired replay-store entries are swept. */
const NONCE_SWEEP_INTERVAL_MS = 30_000;
/** How often expired Idempotency-Keys are deleted. */
const IDEMPOTENCY_SWEEP_INTERVAL_MS = 300_000;
/** How often push-stream rows past their retention are deleted. */
const PUSH_PRUNE_INTERVAL_MS = 600_000;
/** How often a worker checks whether the ledger is due for its audit. */
const LEDGER_AUDIT_CHECK_INTERVAL_MS = 3_600_000;
/** Margin beyond the window, so a sweep never races a request being accepted at the edge. */
const NONCE_SWEEP_MARGIN_MS = 60_000;

/**
 * The background jobs of the service, all on the leased job runner (src/platform/jobs.ts). A new
 * job is one more definition here, exported by its domain's index.ts. Every job is safe on several
 * instances at once (items are leased with FOR UPDATE SKIP LOCKED).
 */
export function backgroundJobs(ctx: AppContext): AnyJobDefinition[] {
  return [
    // D38: signed webhooks from the outbox.
    webhookDeliveryJob(ctx),
    // D23, D24: card applications become cards or rejections.
    cardApplicationJob(ctx),
    // 2.12, section 6: LOW_BALANCE at most once per UTC day per pool while low.
    lowBalanceJob(ctx),
    // D34: authorization holds not cleared in 30 days are released.
    holdExpiryJob(),
    // Issue 26: a forwarded authorization whose decision is overdue (a crash between the hold and
    // the decision) gets its stand-in, a decline giving the hold and the usage back.
    decisionRecoveryJob(),
    // Issue 31 section 3: backtests of a draft velocity rule, one step of recorded authorizations at a time.
    backtestJob(),
  ];
}

/** Periodic work that is not a queue of items. */
export function periodicTasks(ctx: AppContext): PeriodicTask[] {
  return [
    {
      name: 'replay-sweep',
      intervalMs: NONCE_SWEEP_INTERVAL_MS,
      run: () => sweepReplayStore(ctx.db, ctx.clock.now() - ctx.config.timestampWindowMs - NONCE_SWEEP_MARGIN_MS),
    },
    {
      // Issue 14: Idempotency-Keys older than 24 hours no longer count; their rows are deleted.
      name: 'idempotency-sweep',
      intervalMs: IDEMPOTENCY_SWEEP_INTERVAL_MS,
      run: () => sweepIdempotencyKeys(ctx.db, ctx.clock.now()),
    },
    {
      // D39: push-stream rows older than PUSH_RETENTION_HOURS can no longer be resumed from.
      name: 'push-stream-prune',
      intervalMs: PUSH_PRUNE_INTERVAL_MS,
      run: () => pruneUserStream(ctx),
    },
    ...(ctx.config.ledgerAuditIntervalMs > 0 ? [{
      // Issue 27: the whole ledger re-derived (D33) when no instance did within the interval; the
      // result feeds ledger_audit_* (alerts LedgerAuditFailed, LedgerAuditStale). Checked hourly at most.
      name: 'ledger-audit',
      intervalMs: Math.min(ctx.config.ledgerAuditIntervalMs, LEDGER_AUDIT_CHECK_INTERVAL_MS),
      run: () => auditLedgerWhenDue(ctx.db, new Date(ctx.clock.now()), ctx.config.ledgerAuditIntervalMs),
    }] : []),
  ];
}

/** Starts the background work of this instance; `stop()` waits for the runs in progress (graceful drain). */
export function startWorkers(ctx: AppContext, log: Logger): RunningJobs {
  return startJobs({ db: ctx.db, clock: ctx.clock, log }, { jobs: backgroundJobs(ctx), tasks: periodicTasks(ctx) });
}
