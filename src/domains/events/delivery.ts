import { randomBytes } from 'node:crypto';
import type { Config } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import { hmacSha256Hex, newId, nextNonce } from '../../platform/crypto/secrets.ts';
import { invariant } from '../../platform/errors.ts';
import type { Db, Queryable } from '../../platform/db/db.ts';
import { runJobOnce, type JobDefinition, type JobLog, type JobOutcome, type Lease } from '../../platform/jobs.ts';
import { revealPartnerSecret, revealWebhookSecret, webhookTargetsOf } from '../partners/index.ts';
import { beforeScrape, counter, gauge } from '../../platform/metrics.ts';
import {
  dueEventsBacklog, insertAttempts, leaseDueWithAttempts, leaseEventNow, makeWaitingEventsDue, markAbandonedAttempts, rescheduleLeasedEvent, settleAttempts, undeliveredEvents,
  type AttemptSettlement, type LeasedEvent, type LeasedEventRow, type NextState,
} from './store.ts';
import { postWebhook, type PostResult } from './webhook-http.ts';

/**
 * Webhook delivery from the outbox (D38, D49): at least once, signed like a partner request (5.3),
 * retried with exponential backoff and jitter for at least 24 hours, then FAILED.
 *
 * One run = lease a batch (one statement, atomic on its own: FOR UPDATE SKIP LOCKED, one IN_FLIGHT
 * attempt row per event) and read its partners' webhook settings (one statement) -> HTTP POSTs
 * outside any transaction -> settle the batch (one statement, each event only while its lease is
 * still ours). Three round trips per run whatever the batch size, one for an idle poll (issue 34).
 * A worker that dies between the lease and the settlement loses nothing: its leases run out and
 * any instance retries.
 */

export interface EventDeps {
  config: Config;
  db: Db;
  clock: Clock;
}

export type DeliveryLog = JobLog;

/** The event type of a test send (issue 14): attempted once, never retried. */
export const TEST_EVENT_TYPE = 'WEBHOOK_TEST';

/** D49: the first retry within 10 s of the failure; 5 s with +-20 % jitter stays inside that. */
export const FIRST_RETRY_DELAY_MS = 5_000;
/** Each further failure doubles the wait ... */
export const RETRY_BACKOFF_FACTOR = 2;
/** ... up to one hour, so a partner back after an outage hears from us within the hour. */
export const MAX_RETRY_DELAY_MS = 3_600_000;
/** Each delay is the nominal one times a uniform factor in [1 - r, 1 + r]: spreads retry storms. */
export const RETRY_JITTER_RATIO = 0.2;
/** D38: retries go on for at least 24 hours from the cycle's first attempt, then FAILED. */
export const RETRY_WINDOW_MS = 24 * 3_600_000;
/** A lease outlives the HTTP deadline by this, so a live worker always settles before it expires. */
export const LEASE_MARGIN_MS = 30_000;
/** Events taken per run (one lease transaction); also the attempts one instance runs at once. */
export const DELIVERY_BATCH_SIZE = 50;
/** How often the worker looks for due events: the added latency of a fresh event, at most. */
export const WEBHOOK_POLL_INTERVAL_MS = 1_000;

export function leaseDurationMs(config: Config): number {
  return config.webhookTimeoutMs + LEASE_MARGIN_MS;
}

/** Wait before the next attempt after the n-th failed attempt (n from 1) of a delivery cycle. */
export function retryDelayMs(failedAttempts: number, random: () => number = Math.random): number {
  const nominal = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * RETRY_BACKOFF_FACTOR ** Math.max(0, failedAttempts - 1));
  return Math.round(nominal * (1 - RETRY_JITTER_RATIO + 2 * RETRY_JITTER_RATIO * random()));
}

/**
 * A test event: WEBHOOK_TEST (POST /open-api/webhook/v1/test) or a sample of another type asked for
 * with POST /open-api/webhook/v1/sample (issue 31), both marked `data.test = true`.
 */
export function isTestEvent(event: { eventType?: string; payload?: string }): boolean {
  if (event.eventType === TEST_EVENT_TYPE) return true;
  if (event.payload === undefined || !event.payload.includes('"test":true')) return false;
  try {
    const data = JSON.parse(event.payload) as unknown;
    return data !== null && typeof data === 'object' && (data as { test?: unknown }).test === true;
  } catch {
    return false;
  }
}

/** After a failure at `now`: retry while the cycle is younger than the window, else FAILED. */
export function nextStateAfter(
  event: Pick<LeasedEvent, 'deliveryStartedAt' | 'deliveryAttempt'> & { eventType?: string; payload?: string },
  outcome: PostResult['outcome'],
  now: Date,
  random: () => number = Math.random,
): NextState {
  if (outcome === 'SUCCESS') return { status: 'DELIVERED' };
  // A test event (test send or sample) is attempted once: its answer is the point.
  if (isTestEvent(event)) return { status: 'FAILED' };
  const windowEnd = new Date(event.deliveryStartedAt).getTime() + RETRY_WINDOW_MS;
  if (now.getTime() >= windowEnd) return { status: 'FAILED' };
  // Nothing can be delivered until the partner sets up delivery (no webhook_url, partner not ACTIVE,
  // no credentials): the event waits for the end of its window instead of retrying on the backoff
  // schedule, and a change of those settings makes it due at once (wakeParkedEvents).
  if (outcome === 'NOT_CONFIGURED') return { status: 'PENDING', nextAttemptAt: new Date(windowEnd) };
  return { status: 'PENDING', nextAttemptAt: new Date(now.getTime() + retryDelayMs(event.deliveryAttempt, random)) };
}

/**
 * The partner's delivery settings changed (webhook_url, status, credentials): its waiting PENDING
 * events are due now, in the caller's transaction. Answers how many.
 */
export function wakeParkedEvents(q: Queryable, args: { partnerId: string; now: Date }): Promise<number> {
  return makeWaitingEventsDue(q, args);
}

/**
 * The D38 body: `{eventId, eventType, businessId, sequence, createTime, data}`. `data` is the
 * stored lossless JSON text inserted as-is, so amounts keep every digit (D4). The same event
 * always yields the same bytes.
 */
export function webhookBody(event: Pick<LeasedEvent, 'eventId' | 'eventType' | 'businessId' | 'sequence' | 'createTime' | 'payload'>): string {
  if (!/^\d+$/.test(String(event.sequence))) throw new Error('Invariant violated: sequence is a non-negative integer');
  return `{"eventId":${JSON.stringify(event.eventId)},"eventType":${JSON.stringify(event.eventType)},` +
    `"businessId":${JSON.stringify(event.businessId)},"sequence":${event.sequence},` +
    `"createTime":${JSON.stringify(new Date(event.createTime).toISOString())},"data":${event.payload}}`;
}

/** 5.2-5.3 applied to the webhook: the partner verifies it exactly like we verify its requests. */
export function webhookHeaders(args: {
  apiKey: string; secretKey: string; eventId: string; body: string; nowMs: number; nonce?: string;
  /** Webhook signing secrets (issue 14), newest first: one `v1=` signature each in X-DAPI-WEBHOOK-SIGN. */
  webhookSecrets?: string[];
}): Record<string, string> {
  const timestamp = String(args.nowMs);
  const nonce = args.nonce ?? nextNonce();
  const message = args.apiKey + timestamp + nonce + args.body;
  return {
    'content-type': 'application/json',
    'user-agent': 'cardsvc-webhooks/1',
    'x-dapi-api-key': args.apiKey,
    'x-dapi-timestamp': timestamp,
    'x-dapi-nonce': nonce,
    'x-dapi-sign': hmacSha256Hex(args.secretKey, message),
    'x-dapi-event-id': args.eventId,
    ...(args.webhookSecrets?.length
      ? { 'x-dapi-webhook-sign': args.webhookSecrets.map((secret) => `v1=${hmacSha256Hex(secret, message)}`).join(',') }
      : {}),
  };
}

/**
 * The claim of a delivery run (issue 34: two statements, no transaction): one statement leases due
 * events for `lease.token` until `lease.until`, closes attempts a dead worker left IN_FLIGHT and
 * opens an IN_FLIGHT attempt per event (atomic on its own); a second reads each partner's webhook
 * settings through the partners domain. If that read fails, the leased events wait for their lease
 * to run out, as after a crash.
 */
async function claimDueEvents(q: Queryable, lease: Lease): Promise<LeasedEvent[]> {
  const rows = await leaseDueWithAttempts(q, { now: lease.now, leaseUntil: lease.until, leaseToken: lease.token, limit: lease.limit });
  if (rows.length === 0) return [];
  const targets = await webhookTargetsOf(q, rows.map((r) => r.partnerId), lease.now);
  return rows.map((row): LeasedEvent => {
    const target = targets.get(row.partnerId);
    if (!target) invariant(false, `event ${row.eventId} belongs to an existing partner`);
    // Spelled out, not spread: two spreads per event were a measurable share of a run's CPU (issue 34).
    return {
      eventId: row.eventId, partnerId: row.partnerId, eventType: row.eventType, businessId: row.businessId, sequence: row.sequence,
      payload: row.payload, createTime: row.createTime, attemptNo: row.attemptNo, deliveryAttempt: row.deliveryAttempt,
      deliveryStartedAt: row.deliveryStartedAt, leaseToken: row.leaseToken, attemptId: row.attemptId, startedAt: lease.now,
      partnerStatus: target.partnerStatus, apiKey: target.apiKey, secretKeyEnc: target.secretKeyEnc, webhookUrl: target.webhookUrl,
      webhookSecretsEnc: target.webhookSecretsEnc, webhookWhitelist: target.webhookWhitelist,
    };
  });
}

/** Leases one just-recorded event for an immediate attempt (a test send), in the caller's transaction. */
export async function claimEventNow(q: Queryable, eventId: string, lease: Lease): Promise<LeasedEvent> {
  const rows = await leaseEventNow(q, { eventId, now: lease.now, leaseUntil: lease.until, leaseToken: lease.token });
  invariant(rows.length === 1, `event ${eventId} is pending`);
  const [event] = await openAttempts(q, rows, lease);
  return event;
}

async function openAttempts(q: Queryable, rows: LeasedEventRow[], lease: Lease): Promise<LeasedEvent[]> {
  const { now } = lease;
  await markAbandonedAttempts(q, rows.map((r) => r.eventId), now);
  const targets = await webhookTargetsOf(q, rows.map((r) => r.partnerId), now);
  const leased = rows.map((row): LeasedEvent => {
    const target = targets.get(row.partnerId);
    invariant(target, `event ${row.eventId} belongs to an existing partner`);
    return { ...row, attemptId: newId('ea'), startedAt: now, ...target };
  });
  await insertAttempts(q, now, leased);
  return leased;
}

/** First half of an attempt: leases due events and opens an IN_FLIGHT attempt row for each. */
export async function leaseDueEvents(deps: EventDeps, options: { limit?: number } = {}): Promise<LeasedEvent[]> {
  const limit = options.limit ?? DELIVERY_BATCH_SIZE;
  if (limit <= 0) return [];
  const now = new Date(deps.clock.now());
  const lease: Lease = { token: randomBytes(12).toString('hex'), now, until: new Date(now.getTime() + leaseDurationMs(deps.config)), limit };
  return deps.db.tx((q) => claimDueEvents(q, lease));
}

function notConfigured(error: string): PostResult {
  return { outcome: 'NOT_CONFIGURED', httpStatus: null, latencyMs: 0, error };
}

/** The HTTP part of an attempt; never throws. */
async function attempt(deps: EventDeps, event: LeasedEvent): Promise<PostResult> {
  if (event.partnerStatus !== 'ACTIVE') return notConfigured('partner is disabled');
  if (!event.webhookUrl) return notConfigured('partner has no webhook_url');
  if (!event.apiKey || !event.secretKeyEnc) return notConfigured('partner has no credentials yet, so the webhook cannot be signed');
  let secretKey: string;
  try {
    secretKey = revealPartnerSecret(deps.config.masterKey, event.partnerId, event.secretKeyEnc);
  } catch {
    return notConfigured('partner secret key cannot be read with this master key');
  }
  let webhookSecrets: string[];
  try {
    webhookSecrets = event.webhookSecretsEnc.map((sealed) => revealWebhookSecret(deps.config.masterKey, event.partnerId, sealed));
  } catch {
    return notConfigured('partner webhook secret cannot be read with this master key');
  }
  const body = webhookBody(event);
  const headers = webhookHeaders({ apiKey: event.apiKey, secretKey, eventId: event.eventId, body, nowMs: deps.clock.now(), webhookSecrets });
  return postWebhook({
    url: event.webhookUrl,
    body,
    headers,
    timeoutMs: deps.config.webhookTimeoutMs,
    blockPrivateAddresses: deps.config.env === 'production',
    whitelist: { entries: event.webhookWhitelist, env: deps.config.env },
  });
}

export interface DeliveryResult {
  eventId: string;
  attemptNo: number;
  outcome: PostResult['outcome'];
  status: NextState['status'];
  /** False when the lease was lost meanwhile (resend, or expiry): the answer was logged only. */
  settled: boolean;
}

/** Records the answers of attempts, each event's only while its lease holds (in the caller's transaction). */
async function settleAttemptsOf(deps: EventDeps, q: Queryable, answered: { item: LeasedEvent; performed: PostResult }[]): Promise<DeliveryResult[]> {
  const finishedAt = new Date(deps.clock.now());
  const settlements = answered.map(({ item, performed }): AttemptSettlement => ({
    eventId: item.eventId, leaseToken: item.leaseToken, attemptId: item.attemptId,
    result: { ...performed, finishedAt }, next: nextStateAfter(item, performed.outcome, finishedAt),
  }));
  const settled = await settleAttempts(q, settlements);
  return settlements.map((s, i) => ({
    eventId: s.eventId, attemptNo: answered[i].item.attemptNo, outcome: s.result.outcome, status: s.next.status, settled: settled.has(s.eventId),
  }));
}

async function settleAttempt(deps: EventDeps, q: Queryable, event: LeasedEvent, post: PostResult): Promise<DeliveryResult> {
  const [result] = await settleAttemptsOf(deps, q, [{ item: event, performed: post }]);
  return result;
}

// Metrics (issue 27, docs/observability.md).
const webhookDeliveries = counter('webhook_deliveries_total', 'Webhook delivery attempts by their answer (SUCCESS, HTTP_ERROR, TIMEOUT, NETWORK_ERROR, BLOCKED, NOT_CONFIGURED)', ['outcome']);
const webhookUndelivered = gauge('webhook_undelivered_events', 'Events not delivered yet: due, waiting for a retry, or waiting for the partner\'s webhook settings');
const webhookOldestAge = gauge('webhook_oldest_undelivered_age_seconds', 'Age of the oldest event not delivered yet (0 when none)');

/** The webhook backlog at every scrape (the due part and its lag are the delivery job's job_pending_items and job_lag_seconds). */
export function observeWebhooks(deps: Pick<EventDeps, 'db' | 'clock'>): void {
  beforeScrape('webhook-backlog', async () => {
    const backlog = await undeliveredEvents(deps.db);
    webhookUndelivered.set(backlog.pending);
    webhookOldestAge.set(backlog.oldestCreatedAt ? Math.max(0, (deps.clock.now() - backlog.oldestCreatedAt.getTime()) / 1000) : 0);
  });
}

/** The job runner's account of one attempt: warnings for failed answers, an error when given up. */
/**
 * Partners whose events are parked as NOT_CONFIGURED (no webhook_url, disabled, ...), with the
 * reason last warned about. Issue 32: a partner without a webhook_url is a setting, not an
 * incident, so the warning is logged once per partner and reason (per process), the rest of its
 * events at debug level; any other outcome for the partner forgets it, so a later relapse warns
 * again. Bounded by the number of partners.
 */
const notConfiguredWarned = new Map<string, string>();

/** Whether this NOT_CONFIGURED attempt is the first of its partner and reason (and remembers it). */
function firstNotConfigured(partnerId: string, reason: string): boolean {
  if (notConfiguredWarned.get(partnerId) === reason) return false;
  notConfiguredWarned.set(partnerId, reason);
  return true;
}

function deliveryOutcome(event: LeasedEvent, post: PostResult, delivery: DeliveryResult): JobOutcome<DeliveryResult> {
  webhookDeliveries.inc({ outcome: post.outcome });
  const result = delivery.settled ? delivery.status : 'LOST_LEASE';
  const fields = { partnerId: event.partnerId, eventType: event.eventType, outcome: post.outcome, httpStatus: post.httpStatus, attemptNo: event.attemptNo };
  if (post.outcome === 'NOT_CONFIGURED' && result === 'PENDING') {
    const first = firstNotConfigured(event.partnerId, post.error ?? '');
    return {
      result,
      level: first ? 'warn' : 'debug',
      fields: first ? { ...fields, reason: post.error, note: "the partner's events wait until this is fixed; further ones are logged at debug level" } : fields,
      detail: delivery,
    };
  }
  notConfiguredWarned.delete(event.partnerId);
  return {
    result,
    // A failing partner endpoint is visible to operators: every failed answer is a warning.
    level: result === 'DELIVERED' ? 'info' : result === 'FAILED' ? 'error' : 'warn',
    fields,
    detail: delivery,
  };
}

/** Second half: POSTs the leased event and records the answer. */
export async function deliverLeased(deps: EventDeps, event: LeasedEvent): Promise<DeliveryResult> {
  const post = await attempt(deps, event);
  webhookDeliveries.inc({ outcome: post.outcome });
  // One statement, atomic on its own: no BEGIN/COMMIT around it.
  return settleAttempt(deps, deps.db, event, post);
}

export interface DeliverySummary {
  leased: number;
  delivered: number;
  retrying: number;
  failed: number;
  results: DeliveryResult[];
}

/** Unexpected failures (not answers: those follow the 24-hour window) before an event is given up. */
export const WEBHOOK_MAX_ATTEMPTS = 50;

/**
 * Webhook delivery (D38) on the leased job runner (src/platform/jobs.ts): claim = lease due events
 * (FOR UPDATE SKIP LOCKED), perform = the HTTP POST outside any transaction, complete = record the
 * answer while the lease holds. A run waits for its slowest POST (at most WEBHOOK_TIMEOUT_MS); a
 * full batch is followed at once by the next run.
 */
export function webhookDeliveryJob(deps: EventDeps): JobDefinition<LeasedEvent, PostResult, DeliveryResult> {
  return {
    name: 'webhook-delivery',
    intervalMs: WEBHOOK_POLL_INTERVAL_MS,
    batchSize: DELIVERY_BATCH_SIZE,
    leaseMs: leaseDurationMs(deps.config),
    maxAttempts: WEBHOOK_MAX_ATTEMPTS,
    retryDelayMs: (failedAttempts) => retryDelayMs(failedAttempts),
    identify: (e) => ({ id: e.eventId, attempt: e.deliveryAttempt }),
    // Issue 34: the claim's one write and the settlement are single statements, sent without BEGIN/COMMIT.
    autocommit: true,
    claim: (q, lease) => claimDueEvents(q, lease),
    backlog: (q, now) => dueEventsBacklog(q, now),
    spanName: 'webhook.deliver',
    perform: (event) => attempt(deps, event),
    complete: async (q, event, post) => deliveryOutcome(event, post, await settleAttempt(deps, q, event, post)),
    // A run's answers are recorded in one statement: one commit per batch, not per event.
    completeAll: async (q, answered) => {
      const deliveries = await settleAttemptsOf(deps, q, answered);
      return answered.map(({ item, performed }, i) => deliveryOutcome(item, performed, deliveries[i]));
    },
    fail: async (q, event, failure) => {
      const changed = await rescheduleLeasedEvent(q, { eventId: event.eventId, leaseToken: event.leaseToken, retryAt: failure.retryAt, error: failure.error, now: new Date(deps.clock.now()) });
      if (!changed) return 'LOST_LEASE';
      return failure.retryAt ? 'RETRY' : 'FAILED';
    },
  };
}

/**
 * Delivers every due event, up to `limit`, and waits for the answers: one run of the delivery job.
 * Tests call it directly (deterministic, no timers). Safe on several instances at once.
 */
export async function deliverDueEvents(deps: EventDeps, options: { limit?: number; log?: DeliveryLog } = {}): Promise<DeliverySummary> {
  const run = await runJobOnce(webhookDeliveryJob(deps), { db: deps.db, clock: deps.clock, log: options.log }, { limit: options.limit });
  const results = run.items.flatMap((i) => (i.detail ? [i.detail] : []));
  return {
    leased: run.claimed,
    delivered: results.filter((r) => r.settled && r.status === 'DELIVERED').length,
    retrying: results.filter((r) => r.settled && r.status === 'PENDING').length,
    failed: results.filter((r) => r.settled && r.status === 'FAILED').length,
    results,
  };
}
