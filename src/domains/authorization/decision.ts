/**
 * The stage after the hold (D34, D37; issue 26): a forwarded authorization ends in one decision,
 * recorded once, whatever fails.
 *
 *   hold     card_authorize books the hold and, when the partner has an auth_url, an auth_decisions
 *            row in the same commit: the authorization awaits its decision, claimed by the request
 *            that booked it until due_at (the partner's deadline + DECISION_GRACE_MS), with the
 *            partner's stand-in of that moment (sql/card_authorize.sql)
 *   forward  that request alone asks the partner (the PartnerDecisionStage); copies of the network
 *            message wait for its decision (in this process on the request itself, elsewhere by
 *            reading the database) and answer from the one record
 *   decide   one transaction: the claim deleted, the forwarding record, and for a decline (the
 *            partner's or a stand-in) the hold and the usage given back with the DECLINED record and
 *            its CARD_TRANSACTION event
 *   recover  whatever fails before that commit ends in the stand-in with reason SERVICE_ERROR: at
 *            once by the request itself (an exception, a stage past its deadline); after due_at by a
 *            waiting copy or the decision-recovery job (a record the database keeps refusing, a crash)
 *
 * Every string a stage reports is cleaned and bounded here before it is stored or answered: the
 * stage relays a partner's bytes, and a partner is hostile until checked.
 */
import { performance } from 'node:perf_hooks';
import type { AppContext } from '../../platform/context.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { invariant } from '../../platform/errors.ts';
import { parseJson } from '../../platform/http/json.ts';
import { runJobOnce, type JobDefinition, type JobLog } from '../../platform/jobs.ts';
import { fromDb, toWire } from '../../platform/money.ts';
import { cleanText } from '../../platform/text.ts';
import { countOverdueStandIn } from './forwarding-metrics.ts';
import { insertApprovalForwarding, insertForwarding, STAND_IN_REASONS, type ForwardingOutcome, type ForwardingRow, type StandInReason } from './forwarding-store.ts';
import type { TransactionView } from './schemas.ts';
import { releaseHold } from './service.ts';
import {
  claimAwaitedDecision, decisionState, leaseOverdueDecisions, lockAuthorization, overdueDecisionsBacklog, releaseDecisionLease, transactionJson, updateAuthorization,
  type AwaitedDecision,
} from './store.ts';

/** What one exchange with the partner's auth_url produced (D37); the engine records it with the decision. */
export interface PartnerExchange {
  /** The partner's verified answer; null when there is none (late, transport error, not verifiable): the stand-in applies. */
  answer: { approved: boolean; declineReason: string | null } | null;
  /** Why there is no valid answer. */
  standInReason: StandInReason | null;
  keyId: string | null;
  authUrl: string | null;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
}

/**
 * The partner decision of D34/D37: asks the partner's auth_url about an authorization whose funds
 * are held. It writes nothing; null when the partner has no auth_url (any more): the approval stands.
 */
export interface PartnerDecisionStage {
  forward(input: { partnerId: string; transaction: TransactionView; deadline: Date }): Promise<PartnerExchange | null>;
  /** Told of every decision recorded for an exchange of this stage (counters). */
  decided?(outcome: ForwardingOutcome): void;
}
export const approveEverything: PartnerDecisionStage = { forward: async () => null };

/** How long after its deadline an awaited decision is left to the request that forwards it. */
export const DECISION_GRACE_MS = 5_000;
/** The recovery job looks for overdue decisions this often. */
export const DECISION_RECOVERY_INTERVAL_MS = 5_000;
const DECISION_RECOVERY_BATCH = 100;
const DECISION_RECOVERY_LEASE_MS = 30_000;
/**
 * Never given up (issue 26: no failure may leave a hold behind): with the runner's backoff (1 s
 * doubling, at most 5 min) an overdue decision is tried every 5 minutes until it is recorded; the
 * job's lag metric and alert show one that keeps failing. The bound only keeps the count an int.
 */
const DECISION_RECOVERY_MAX_ATTEMPTS = 1_000_000_000;
/** A copy waiting on another instance's forwarding reads the database this often (doubling up to the max). */
const WAIT_POLL_MS = 25;
const WAIT_POLL_MAX_MS = 200;
/** docs/auth-url.md: a partner's reason shown as the transaction's declineDetail. */
const PARTNER_REASON = /^[A-Z0-9_]{1,40}$/;
const REASON_KEEP_CHARS = 64;
const ERROR_KEEP_CHARS = 200;
const URL_KEEP_CHARS = 2048;
const INT_MAX = 2_147_483_647;

type Deps = Pick<AppContext, 'db' | 'clock'>;

/** A forwarded authorization whose hold is committed and whose decision is awaited. */
export interface AwaitingDecision {
  /** As booked with the hold. */
  transaction: TransactionView;
  partnerId: string;
  standIn: 'APPROVE' | 'DECLINE';
  deadlineMs: number;
}

type DecideResult =
  | { kind: 'RECORDED'; outcome: ForwardingOutcome | null; view: TransactionView }
  | { kind: 'ALREADY'; view: TransactionView }
  | { kind: 'BUSY' };

function view(body: string | null): TransactionView {
  invariant(body !== null, 'a transaction view exists');
  return parseJson(body) as TransactionView;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function serviceError(error: string, latencyMs: number): PartnerExchange {
  return { answer: null, standInReason: 'SERVICE_ERROR', keyId: null, authUrl: null, httpStatus: null, latencyMs, error };
}

function boundedInt(value: unknown, min: number, max: number): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? Math.min(max, Math.max(min, Math.round(value))) : null;
}

/**
 * The decision an exchange makes under a stand-in, the forwarding record (every string cleaned and
 * bounded, numbers in range) and, for a decline, its reason and detail.
 */
export function decisionOf(x: PartnerExchange, standIn: 'APPROVE' | 'DECLINE') {
  const answer = x.answer !== null && typeof x.answer.approved === 'boolean' ? x.answer : null;
  const standInReason: StandInReason | null = answer ? null
    : STAND_IN_REASONS.includes(x.standInReason as StandInReason) ? x.standInReason : 'SERVICE_ERROR';
  const outcome: ForwardingOutcome = answer ? (answer.approved ? 'APPROVED' : 'DECLINED')
    : standIn === 'APPROVE' ? 'STAND_IN_APPROVED' : 'STAND_IN_DECLINED';
  const partnerReason = answer && !answer.approved && typeof answer.declineReason === 'string' ? answer.declineReason : null;
  const record: Omit<ForwardingRow, 'forwardingId' | 'partnerId' | 'transId' | 'networkTransactionId' | 'test' | 'createdAt'> = {
    keyId: typeof x.keyId === 'string' ? x.keyId : null,
    authUrl: cleanText(x.authUrl, URL_KEEP_CHARS),
    outcome,
    standInReason,
    declineReason: cleanText(partnerReason, REASON_KEEP_CHARS),
    httpStatus: boundedInt(x.httpStatus, 0, 999),
    latencyMs: boundedInt(x.latencyMs, 0, INT_MAX) ?? 0,
    error: cleanText(x.error, ERROR_KEEP_CHARS),
  };
  const decline = outcome === 'DECLINED'
    ? { reason: 'PARTNER_DECLINED', detail: partnerReason !== null && PARTNER_REASON.test(partnerReason) ? partnerReason : null }
    : outcome === 'STAND_IN_DECLINED' ? { reason: 'PARTNER_TIMEOUT', detail: standInReason } : null;
  return { outcome, record, decline };
}

/** The same decision with nothing the stage relayed but what decides it: the retry when the full record was refused. */
function stripped(x: PartnerExchange | null, failure: unknown): PartnerExchange | null {
  if (x === null) return null;
  return {
    answer: x.answer && { approved: x.answer.approved, declineReason: null },
    standInReason: x.standInReason, keyId: null, authUrl: null, httpStatus: null, latencyMs: x.latencyMs,
    error: `the forwarding record was refused: ${messageOf(failure)}`,
  };
}

/**
 * The decision transaction (the caller's `q`): applies `exchange` when `claim` holds the awaited
 * decision (this request's token, or anyone's once it is overdue). BUSY: someone else holds it;
 * ALREADY: decided before.
 */
async function decideIn(q: Queryable, at: Date, transId: string, claim: { token: string } | { overdueAt: Date }, exchange: PartnerExchange | null): Promise<DecideResult> {
  const awaited = await claimAwaitedDecision(q, transId, 'token' in claim ? { token: claim.token } : { overdueAt: claim.overdueAt });
  if (!awaited) {
    const state = await decisionState(q, transId);
    invariant(state !== null, `authorization ${transId} exists`);
    return state.dueAt === null ? { kind: 'ALREADY', view: view(state.body) } : { kind: 'BUSY' };
  }
  // No exchange: the partner has no auth_url any more, and the approval stands unforwarded.
  const decision = exchange === null ? { outcome: null, record: null, decline: null } : decisionOf(exchange, awaited.standIn);
  if (decision.record) {
    await insertForwarding(q, {
      ...decision.record, partnerId: awaited.partnerId, transId, networkTransactionId: awaited.networkTransactionId, test: false, createdAt: at,
    });
  }
  let body: string | null = null;
  if (decision.decline) {
    const auth = await lockAuthorization(q, { transId });
    invariant(auth !== null, `authorization ${transId} exists`);
    // A clearing or a full reversal that came first left nothing held to give back.
    if (auth.status === 'PENDING' && !fromDb(auth.holdAmount).isZero()) {
      const released = await releaseHold(q, auth, fromDb(auth.holdAmount), 'PARTNER_DECLINE', at, true);
      body = await updateAuthorization(q, {
        transId, status: 'DECLINED', holdAmount: '0.00', now: at, eventId: newId('ev'),
        declineReason: decision.decline.reason, declineDetail: decision.decline.detail, fundsHold: released.fundsHold,
      });
    }
  }
  return { kind: 'RECORDED', outcome: decision.outcome, view: view(body ?? await transactionJson(q, transId)) };
}

/**
 * The approval path in one statement (no transaction of its own): the claim and the record go
 * together, and nothing else of the authorization changes, so the answer is the booked view with
 * the record as card_transaction_json shows it. Null when the exchange declines or the claim is
 * gone (then the transaction path finds out why).
 */
async function recordApproval(
  deps: Deps, a: AwaitingDecision, token: string, exchange: PartnerExchange,
): Promise<{ outcome: ForwardingOutcome; view: TransactionView } | null> {
  const { outcome, record, decline } = decisionOf(exchange, a.standIn);
  if (decline) return null;
  const transId = a.transaction.transId;
  if (!await insertApprovalForwarding(deps.db, { transId, token }, { ...record, createdAt: new Date(deps.clock.now()) })) return null;
  const partnerDecision = {
    outcome, standInReason: record.standInReason, partnerDeclineReason: record.declineReason, latencyMs: record.latencyMs, httpStatus: record.httpStatus,
  };
  return { outcome, view: { ...a.transaction, partnerDecision } };
}

/**
 * The answer when not even the stand-in could be recorded (the database refuses every write): the
 * stand-in the authorization was taken with, exactly what the recovery job will record.
 */
function unrecordedStandIn(a: AwaitingDecision, latencyMs: number): TransactionView {
  const t = a.transaction;
  const partnerDecision = {
    outcome: a.standIn === 'APPROVE' ? 'STAND_IN_APPROVED' : 'STAND_IN_DECLINED', standInReason: 'SERVICE_ERROR', partnerDeclineReason: null,
    latencyMs: Math.min(INT_MAX, Math.max(0, Math.round(latencyMs))), httpStatus: null,
  };
  if (a.standIn === 'APPROVE') return { ...t, partnerDecision };
  return {
    ...t, approved: false, status: 'DECLINED', declineReason: 'PARTNER_TIMEOUT', declineDetail: 'SERVICE_ERROR',
    holdAmount: toWire('0.00') as unknown as TransactionView['holdAmount'], outstandingTransactionId: null, partnerDecision,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Rejects when `work` has not settled within `ms`. */
async function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the partner-decision stage did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Forwardings in flight per stage (one stage per service instance), by transId: a copy arriving at
 * the instance that forwards waits on the request itself; other instances read the database.
 */
const flights = new WeakMap<PartnerDecisionStage, Map<string, Promise<TransactionView>>>();
function flightsOf(stage: PartnerDecisionStage): Map<string, Promise<TransactionView>> {
  let map = flights.get(stage);
  if (!map) {
    map = new Map();
    flights.set(stage, map);
  }
  return map;
}

/**
 * The request that booked the hold (its `token` holds the awaited decision): asks the partner once
 * and records the decision. Never throws: every failure ends in the stand-in.
 */
export function decideAfterHold(deps: Deps, stage: PartnerDecisionStage, a: AwaitingDecision, token: string): Promise<TransactionView> {
  const transId = a.transaction.transId;
  const inFlight = flightsOf(stage);
  const flight = forwardAndRecord(deps, stage, a, token).finally(() => inFlight.delete(transId));
  inFlight.set(transId, flight);
  return flight;
}

async function forwardAndRecord(deps: Deps, stage: PartnerDecisionStage, a: AwaitingDecision, token: string): Promise<TransactionView> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  let exchange: PartnerExchange | null;
  try {
    const deadline = new Date(deps.clock.now() + a.deadlineMs);
    exchange = await within(stage.forward({ partnerId: a.partnerId, transaction: a.transaction, deadline }), a.deadlineMs + DECISION_GRACE_MS / 2);
  } catch (err) {
    exchange = serviceError(`the partner decision failed: ${messageOf(err)}`, elapsed());
  }
  const counted = (outcome: ForwardingOutcome | null) => {
    try {
      if (outcome !== null) stage.decided?.(outcome);
    } catch {
      // A counter must not change the answer: the decision is committed.
    }
  };
  const record = async (tried: PartnerExchange | null): Promise<TransactionView> => {
    const approval = tried && await recordApproval(deps, a, token, tried);
    if (approval) {
      counted(approval.outcome);
      return approval.view;
    }
    const result = await deps.db.tx((q) => decideIn(q, new Date(deps.clock.now()), a.transaction.transId, { token }, tried));
    if (result.kind === 'BUSY') return awaitDecision(deps, null, a);
    if (result.kind === 'RECORDED') counted(result.outcome);
    return result.view;
  };
  // The decision as the stage reported it; if its record is refused, the same decision stripped of
  // what the stage relayed; if that fails too, the stand-in the recovery job will record.
  let failure: unknown;
  try {
    return await record(exchange);
  } catch (err) {
    failure = err;
  }
  try {
    return await record(stripped(exchange, failure));
  } catch {
    // Nothing can be written now: the answer is the stand-in that will be recorded.
  }
  return unrecordedStandIn(a, elapsed());
}

/**
 * A copy of the network message (or a request overtaken after its due time): answers from the one
 * recorded decision. Once the decision is overdue it applies the stand-in itself.
 */
export async function awaitDecision(deps: Deps, stage: PartnerDecisionStage | null, a: AwaitingDecision): Promise<TransactionView> {
  const transId = a.transaction.transId;
  const flight = stage && flightsOf(stage).get(transId);
  if (flight) return flight;
  const heldAt = Date.parse(a.transaction.createTime);
  // A copy waits at most this long (the request itself is bounded by deadline + grace / 2).
  const giveUpAt = heldAt + a.deadlineMs + 2 * DECISION_GRACE_MS;
  let pause = WAIT_POLL_MS;
  for (;;) {
    const nowMs = deps.clock.now();
    try {
      const state = await decisionState(deps.db, transId);
      invariant(state !== null, `authorization ${transId} exists`);
      if (state.dueAt === null) return view(state.body);
      if (state.dueAt.getTime() <= nowMs) {
        const at = new Date(nowMs);
        const result = await deps.db.tx((q) => decideIn(q, at, transId, { overdueAt: at },
          serviceError('no decision was recorded by its due time', nowMs - heldAt)));
        if (result.kind === 'RECORDED') countOverdueStandIn(result.outcome);
        if (result.kind !== 'BUSY') return result.view;
      }
    } catch {
      // The database refused the read or the stand-in's record: tried again until giveUpAt.
    }
    // Still undecided (the database failing, or the recovery job holding it under its lease): the
    // answer is the stand-in, which is what will be recorded.
    if (nowMs >= giveUpAt) return unrecordedStandIn(a, nowMs - heldAt);
    await sleep(pause);
    pause = Math.min(2 * pause, WAIT_POLL_MAX_MS);
  }
}

/**
 * Decision recovery (issue 26) on the leased job runner: an authorization whose decision is overdue
 * (its request crashed, or the database refused every record) gets the stand-in it was taken with,
 * reason SERVICE_ERROR, a stand-in decline giving the hold and the usage back.
 */
export function decisionRecoveryJob(): JobDefinition<AwaitedDecision> {
  return {
    name: 'auth-decision-recovery',
    intervalMs: DECISION_RECOVERY_INTERVAL_MS,
    batchSize: DECISION_RECOVERY_BATCH,
    leaseMs: DECISION_RECOVERY_LEASE_MS,
    maxAttempts: DECISION_RECOVERY_MAX_ATTEMPTS,
    concurrency: 1,
    identify: (d) => ({ id: d.transId, attempt: d.attempts }),
    claim: (q, lease) => leaseOverdueDecisions(q, { ...lease, maxAttempts: DECISION_RECOVERY_MAX_ATTEMPTS }),
    backlog: (q, now) => overdueDecisionsBacklog(q, now, DECISION_RECOVERY_MAX_ATTEMPTS),
    complete: async (q, d, _none, lease) => {
      const exchange = serviceError('no decision was recorded by its due time (recovered)', lease.now.getTime() - d.createdAt.getTime());
      const result = await decideIn(q, lease.now, d.transId, { token: lease.token }, exchange);
      if (result.kind === 'BUSY') return 'LOST_LEASE';
      if (result.kind === 'ALREADY') return 'ALREADY_DECIDED';
      return { result: result.outcome ?? 'DECIDED', level: 'warn', fields: { transId: d.transId, partnerId: d.partnerId } };
    },
    // The stand-in recorded, counted once committed (review rvG).
    afterCommit: async (_d, outcome) => {
      if (outcome.result === 'STAND_IN_APPROVED' || outcome.result === 'STAND_IN_DECLINED') countOverdueStandIn(outcome.result);
    },
    fail: async (q, d, failure) => {
      const released = await releaseDecisionLease(q, d.transId, failure.lease.token, failure.retryAt);
      return released ? (failure.retryAt ? 'RETRY' : 'GAVE_UP') : 'LOST_LEASE';
    },
  };
}

/** Runs the recovery job until nothing is due (tests with a moved clock, operators); returns how many were decided. */
export async function recoverDecisions(deps: Deps, options: { log?: JobLog } = {}): Promise<number> {
  const job = decisionRecoveryJob();
  let decided = 0;
  for (;;) {
    const run = await runJobOnce(job, { db: deps.db, clock: deps.clock, log: options.log });
    decided += run.items.filter((i) => !i.failed && i.result !== 'LOST_LEASE' && i.result !== 'ALREADY_DECIDED').length;
    if (run.claimed < job.batchSize) return decided;
  }
}
