/**
 * Backtests of a draft velocity rule (issue 31 section 3; docs/velocity.md "Backtesting a draft
 * rule"). A partner sends a draft (the body of create-rule) with the subjects it would be bound to
 * and a past window; the service replays the partner's recorded authorizations of those subjects
 * in time order and reports what the draft would have declined. Nothing live changes: the draft is
 * never created, no usage, balance or transaction is touched.
 *
 * Where the rules live (docs/contributing.md): the validation is velocity's (`checkDraft`, the
 * checks of create-rule and bind-rule); the replay is the database function
 * velocity_backtest_step (this domain's: it reads the recorded authorizations), which decides with
 * velocity_refusal, the code live authorizations run through card_velocity_refusal. TypeScript
 * sequences the steps: every backtest runs as a job on the leased job runner, one step of
 * BACKTEST_STEP_SIZE authorizations per transaction, the cursor and the accumulated usage in the
 * database, so a window of millions of authorizations runs in bounded memory and survives a crash
 * (a step that did not commit is replayed from the last cursor).
 */
import {
  BACKTEST_SAMPLES_MAX, BACKTEST_TOP_MAX, BACKTEST_WINDOW_MAX_DAYS, type BacktestBody, type BacktestOut,
} from '../../../sdk/contract/velocity.ts';
import type { Static } from 'typebox';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import type { Db } from '../../platform/db/db.ts';
import { ApiError, paramInvalid } from '../../platform/errors.ts';
import type { JobDefinition } from '../../platform/jobs.ts';
import { toWire } from '../../platform/money.ts';
import { checkDraft, DRAFT_RULE_ID, type CardLookup } from '../velocity/index.ts';
import {
  backtestBacklog, countUnfinishedBacktests, failBacktest, findBacktest, insertBacktest, leaseDueBacktests, lockPartnerBacktestStarts, stepBacktest, topDeclinedSubjects,
  type BacktestRow, type LeasedBacktest, type StepOutcome,
} from './backtest-store.ts';

export interface BacktestDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'backtestMaxPendingPerPartner'>;
  /** The cards domain's lookup, for velocity's subject checks. */
  cards: CardLookup;
}

/** Authorizations replayed per step (one transaction): a few seconds of work, then the next step. */
export const BACKTEST_STEP_SIZE = 20_000;
const DAY_MS = 86_400_000;
/** Retry-After of a start refused for the partner's unfinished backtests: a step takes seconds, a large window about a minute. */
const BACKTEST_RETRY_AFTER_SECONDS = 60;

type BacktestInput = Static<typeof BacktestBody>;
type BacktestView = Static<typeof BacktestOut>;

function parseTime(field: string, value: string): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw paramInvalid(field, 'must be an ISO-8601 date-time');
  return at;
}

/**
 * Starts a backtest (always a job: the answer is PENDING with its backtestId; poll backtest-detail).
 * Checks in order: the window (endTime after startTime, not in the future, at most 90 days:
 * DAPI_PARAM_INVALID naming the field), then the draft and its subjects as create-rule and
 * bind-rule check them (velocity's checkDraft), then the partner's unfinished backtests: at most
 * BACKTEST_MAX_PENDING_PER_PARTNER PENDING or RUNNING (SYS_RATE_LIMITED, nothing written), counted
 * and inserted under a per-partner lock so concurrent starts, on any instance, cannot pass it.
 */
export async function startBacktest(deps: BacktestDeps, partnerId: string, input: BacktestInput): Promise<BacktestView> {
  const now = new Date(deps.clock.now());
  const start = parseTime('startTime', input.startTime);
  const end = parseTime('endTime', input.endTime);
  if (end.getTime() <= start.getTime()) throw paramInvalid('endTime', 'must be after startTime');
  if (end.getTime() > now.getTime()) throw paramInvalid('endTime', `must not be in the future (now ${now.toISOString()})`);
  if (end.getTime() - start.getTime() > BACKTEST_WINDOW_MAX_DAYS * DAY_MS) {
    throw paramInvalid('endTime', `the window is at most ${BACKTEST_WINDOW_MAX_DAYS} days`);
  }
  const backtestId = newId('bt');
  await deps.db.tx(async (q) => {
    const draft = await checkDraft(deps, q, partnerId, { rule: input.rule, bindings: input.bindings });
    const mode = input.mode ?? 'COMBINED';
    // Issue 31 section 3: the one worker runs every partner's backtests in turn; a cap per partner keeps
    // one partner's queue from delaying the others'. Counted under the lock, inserted before it is released.
    await lockPartnerBacktestStarts(q, partnerId);
    const max = deps.config.backtestMaxPendingPerPartner;
    const unfinished = await countUnfinishedBacktests(q, partnerId);
    if (unfinished >= max) {
      throw new ApiError('SYS_RATE_LIMITED',
        `You already have ${unfinished} backtests pending or running (at most ${max}); wait for one to finish (backtest-detail shows its progress), then start another`,
        { headers: { 'retry-after': String(BACKTEST_RETRY_AFTER_SECONDS) } });
    }
    await insertBacktest(q, {
      backtestId, partnerId, organizationId: draft.organizationId, request: input, draft: draft.document,
      cardIds: draft.cardIds, employeeIds: draft.employeeIds, contextEmployeeIds: mode === 'COMBINED' ? draft.holderIds : [],
      mode, windowStart: start, windowEnd: end, now,
    });
  });
  return queryBacktest(deps, partnerId, { backtestId });
}

interface Tally {
  count: number;
  amounts: Record<string, string>;
}

interface ResultDocument {
  evaluated?: number;
  alreadyDeclined?: number;
  declined?: number;
  declinedAmounts?: Record<string, string>;
  byReason?: Record<string, Tally>;
  byDay?: Record<string, Tally>;
  samples?: string[];
}

const amountsView = (amounts: Record<string, string> | undefined) =>
  Object.entries(amounts ?? {}).sort(([a], [b]) => a.localeCompare(b)).map(([currency, amount]) => ({ currency, amount: toWire(amount) }));

async function resultView(deps: BacktestDeps, row: BacktestRow): Promise<BacktestView['result']> {
  if (row.status === 'PENDING') return null;
  const doc = JSON.parse(row.result) as ResultDocument;
  const top = async (type: 'CARD' | 'CUSTOMER') => (await topDeclinedSubjects(deps.db, row.backtestId, type, BACKTEST_TOP_MAX)).map((s) => ({
    subjectId: s.subjectId,
    declinedCount: Number(s.declinedCount),
    amounts: (JSON.parse(s.amounts) as { currency: string; amount: string }[]).map((a) => ({ currency: a.currency, amount: toWire(a.amount) })),
  }));
  return {
    evaluated: doc.evaluated ?? 0,
    alreadyDeclined: doc.alreadyDeclined ?? 0,
    declined: doc.declined ?? 0,
    declinedAmounts: amountsView(doc.declinedAmounts),
    byReason: Object.entries(doc.byReason ?? {}).map(([key, t]) => {
      // velocity_refusal's answer: REASON:ruleId or VELOCITY_LIMIT_EXCEEDED:ruleId:LIMIT.
      const [reason, ruleId, limit] = key.split(':');
      return {
        reason: reason!, ruleId: ruleId === undefined || ruleId === DRAFT_RULE_ID ? null : ruleId, limit: limit ?? null,
        count: t.count, amounts: amountsView(t.amounts),
      };
    }).sort((a, b) => b.count - a.count || `${a.reason}:${a.ruleId}:${a.limit}`.localeCompare(`${b.reason}:${b.ruleId}:${b.limit}`)),
    byDay: Object.entries(doc.byDay ?? {}).sort(([a], [b]) => a.localeCompare(b))
      .map(([day, t]) => ({ day, count: t.count, amounts: amountsView(t.amounts) })),
    topCards: await top('CARD'),
    topEmployees: await top('CUSTOMER'),
    sampleTransIds: (doc.samples ?? []).slice(0, BACKTEST_SAMPLES_MAX),
  };
}

/** backtest-detail: progress, and the figures so far (final once COMPLETED). Another partner's backtest is not found. */
export async function queryBacktest(deps: BacktestDeps, partnerId: string, input: { backtestId: string }): Promise<BacktestView> {
  const row = await findBacktest(deps.db, partnerId, input.backtestId);
  if (!row) throw new ApiError('VELOCITY_BACKTEST_NOT_FOUND', `Backtest ${input.backtestId} not found`);
  return {
    backtestId: row.backtestId,
    organizationId: row.organizationId,
    status: row.status,
    mode: row.mode,
    startTime: row.windowStart.toISOString(),
    endTime: row.windowEnd.toISOString(),
    progress: { processed: Number(row.processed), total: row.total === null ? null : Number(row.total) },
    result: await resultView(deps, row),
    error: row.error,
    createTime: row.createdAt.toISOString(),
    completeTime: row.completedAt ? row.completedAt.toISOString() : null,
  };
}

/**
 * The backtest job: each item is one step of one backtest (BACKTEST_STEP_SIZE authorizations in one
 * transaction, velocity_backtest_step); a backtest with more to replay is due again at once, after
 * the other backtests waiting (one partner's large window does not hold up another's).
 */
export function backtestJob(options: { stepSize?: number } = {}): JobDefinition<LeasedBacktest, undefined, StepOutcome> {
  const stepSize = options.stepSize ?? BACKTEST_STEP_SIZE;
  return {
    name: 'rule-backtest',
    intervalMs: 1_000,
    batchSize: 1,
    leaseMs: 300_000,
    maxAttempts: 3,
    identify: (b) => ({ id: b.backtestId, attempt: b.attempts }),
    claim: (q, lease) => leaseDueBacktests(q, lease),
    complete: async (q, b, _none, lease) => {
      const step = await stepBacktest(q, b.backtestId, lease, stepSize);
      return { result: step.outcome, fields: { processed: step.processed, total: step.total }, detail: step };
    },
    fail: async (q, b, failure) => {
      const held = await failBacktest(q, b.backtestId, failure.lease.token, failure.error, failure.retryAt, failure.lease.now);
      return held ? (failure.retryAt ? 'RETRY' : 'FAILED') : 'LOST_LEASE';
    },
    backlog: (q, now) => backtestBacklog(q, now),
  };
}
