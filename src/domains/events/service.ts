import type { Static } from 'typebox';
import type { ListEventsQuery } from '../../../sdk/contract/events.ts';
import type { Config } from '../../config.ts';
import { ApiError, paramInvalid } from '../../platform/errors.ts';
import { parseJson } from '../../platform/http/json.ts';
import { inSpan, traceHere } from '../../platform/tracing.ts';
import { isoTime, pageOf, type Paging } from '../../platform/http/schema.ts';
import { randomBytes } from 'node:crypto';
import type { EventDeps } from './delivery.ts';
import { claimEventNow, deliverLeased, leaseDurationMs, TEST_EVENT_TYPE } from './delivery.ts';
import { recordEvent } from './outbox.ts';
import { partnersByIds } from '../partners/index.ts';
import { WEBHOOK_EVENTS } from '../../../sdk/contract/webhooks.ts';
import { findEventRow, listAttemptRows, listEventRows, scheduleRedelivery, type AttemptRow, type EventRow } from './store.ts';

/** The partner's event log and redelivery (D38): `GET /open-api/webhook/v1/events`, `POST .../resend`. */

/** The list route's query (sdk/contract/events.ts). */
export type ListEventsInput = Static<typeof ListEventsQuery>;

/** The attempts shown with one event: the latest ones (an event has at most a few dozen). */
const DETAIL_ATTEMPTS_MAX = 100;

export function eventView(row: EventRow) {
  return {
    eventId: row.eventId,
    eventType: row.eventType,
    businessId: row.businessId,
    sequence: Number(row.sequence),
    createTime: isoTime(row.createTime),
    status: row.status,
    attempts: row.attempts,
    lastAttemptTime: isoTime(row.lastAttemptAt),
    lastHttpStatus: row.lastHttpStatus,
    lastError: row.lastError,
    nextAttemptTime: row.status === 'PENDING' ? isoTime(row.nextAttemptAt) : null,
    deliveredTime: isoTime(row.deliveredAt),
    failedTime: isoTime(row.failedAt),
    // Lossless (D4): the stored text is parsed without rounding and written back with its digits.
    data: parseJson(row.payload),
  };
}

function attemptView(a: AttemptRow) {
  return {
    attemptNo: a.attemptNo,
    attemptTime: isoTime(a.startedAt),
    finishTime: isoTime(a.finishedAt),
    outcome: a.outcome,
    httpStatus: a.httpStatus,
    latencyMs: a.latencyMs,
    error: a.error,
  };
}

export async function listEvents(deps: EventDeps, partnerId: string, input: ListEventsInput) {
  const paging: Paging = { page: input.page ?? 1, pageSize: input.pageSize ?? 20 };
  const startTime = input.startTime !== undefined ? new Date(input.startTime) : undefined;
  const endTime = input.endTime !== undefined ? new Date(input.endTime) : undefined;
  if (startTime && endTime && endTime.getTime() < startTime.getTime()) throw paramInvalid('endTime', 'must not be before startTime');
  const { total, rows } = await listEventRows(
    deps.db,
    { partnerId, eventType: input.eventType, status: input.status, businessId: input.businessId, startTime, endTime },
    paging.pageSize,
    (paging.page - 1) * paging.pageSize,
  );
  return pageOf(paging, total, rows.map(eventView));
}

export async function eventDetail(deps: EventDeps, partnerId: string, eventId: string) {
  const row = await findEventRow(deps.db, partnerId, eventId);
  if (!row) throw new ApiError('EVENT_NOT_FOUND');
  const attempts = await listAttemptRows(deps.db, eventId, DETAIL_ATTEMPTS_MAX);
  return { ...eventView(row), attemptLog: attempts.map(attemptView) };
}

/**
 * Schedules a new delivery of one of the partner's events, whatever its status: due now, with a
 * fresh 24-hour retry window. The eventId, sequence and body stay the same (partners deduplicate
 * on eventId). Another partner's event id is EVENT_NOT_FOUND, exactly like an unknown one.
 */
export async function resendEvent(deps: EventDeps, partnerId: string, eventId: string) {
  const now = new Date(deps.clock.now());
  return deps.db.tx(async (q) => {
    const row = await findEventRow(q, partnerId, eventId, true);
    if (!row) throw new ApiError('EVENT_NOT_FOUND');
    const { nextAttemptAt } = await scheduleRedelivery(q, eventId, now);
    return { eventId, status: 'PENDING' as const, nextAttemptTime: isoTime(nextAttemptAt) };
  });
}

/** 5.5: the addresses webhooks come from, for the partner's webhook whitelist. */
export function webhookEgress(config: Config) {
  return { environment: config.env, egressIps: config.webhookEgressIps };
}

const TEST_MESSAGE = 'Test event from the card-issuing service';

/**
 * Sends a WEBHOOK_TEST event to the partner's webhook_url now and answers it with its attempt
 * (issue 14). The event is recorded in the event log like any other (businessId = partnerId), signed
 * like any other (X-DAPI-SIGN, and X-DAPI-WEBHOOK-SIGN when a webhook secret exists), attempted
 * once and never retried: DELIVERED or FAILED at once. Resend it to try again.
 */
export async function sendTestEvent(deps: EventDeps, partnerId: string, message: string | undefined) {
  const now = new Date(deps.clock.now());
  return sendOnce(deps, partnerId, {
    eventType: TEST_EVENT_TYPE, businessId: partnerId, createTime: now,
    data: { test: true, message: message ?? TEST_MESSAGE, partnerId, sentTime: now.toISOString() },
  });
}

/** Records a test event and attempts it once now, outside the delivery worker; answers it with its attempt. */
async function sendOnce(deps: EventDeps, partnerId: string, event: { eventType: string; businessId: string; createTime: Date; data: unknown }) {
  // docs/observability.md: every webhook POST is a CLIENT span carrying traceparent; this one is a
  // step of the partner's request, resumed after the awaits below (the job's deliveries have their own).
  const here = traceHere();
  const [partner] = await partnersByIds(deps.db, [partnerId]);
  if (!partner?.webhookUrl) throw new ApiError('WEBHOOK_NOT_CONFIGURED');
  const now = event.createTime;
  const lease = { token: randomBytes(12).toString('hex'), now, until: new Date(now.getTime() + leaseDurationMs(deps.config)), limit: 1 };
  const leased = await deps.db.tx(async (q) => {
    const { eventId } = await recordEvent(q, { partnerId, ...event });
    return claimEventNow(q, eventId, lease);
  });
  await here.run(() => inSpan('webhook.deliver', () => deliverLeased(deps, leased)));
  return eventDetail(deps, partnerId, leased.eventId);
}

/** The documented example's time (sdk/contract/webhooks.ts): a sample carries the time it is sent instead. */
const EXAMPLE_TIME = '2026-11-22T06:30:21.000Z';

function withTime(node: unknown, time: string): unknown {
  if (node === EXAMPLE_TIME) return time;
  if (Array.isArray(node)) return node.map((item) => withTime(item, time));
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, withTime(v, time)]));
}

/** The event types a partner of this deployment can receive (sandbox-only types are not sent in production). */
export function receivableEventTypes(config: Pick<Config, 'env'>): string[] {
  return WEBHOOK_EVENTS.filter((e) => !e.sandboxOnly || config.env === 'sandbox').map((e) => e.eventType);
}

/**
 * Issue 31: a signed example of any event type the partner can receive, so that its handler can be
 * tried before real traffic. The payload is the OpenAPI document's example of that type (so it is
 * valid against the `webhooks` schema) with the current time, marked `test: true` like WEBHOOK_TEST;
 * the businessId is the example's. It goes through the normal delivery path (event log, signing,
 * X-DAPI-WEBHOOK-SIGN, SSRF guard, webhook whitelist) and, like the test send, is attempted once
 * and never retried; resend it to try again.
 */
export async function sendSampleEvent(deps: EventDeps, partnerId: string, eventType: string) {
  const doc = WEBHOOK_EVENTS.find((e) => e.eventType === eventType);
  const receivable = receivableEventTypes(deps.config);
  if (!doc || !receivable.includes(eventType)) {
    throw new ApiError('WEBHOOK_EVENT_TYPE_INVALID', `Unknown event type, or one not sent in this environment: use one of ${receivable.join(', ')}`);
  }
  if (eventType === TEST_EVENT_TYPE) return sendTestEvent(deps, partnerId, undefined);
  const now = new Date(deps.clock.now());
  const data = { ...(withTime(doc.example, now.toISOString()) as Record<string, unknown>), test: true };
  return sendOnce(deps, partnerId, { eventType, businessId: String(doc.example[doc.businessIdField]), createTime: now, data });
}
