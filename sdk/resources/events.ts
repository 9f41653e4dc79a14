import { createHmac, timingSafeEqual } from 'node:crypto';
import { parseJsonLossless, type SignedHttpClient } from '../client.ts';

export type EventStatus = 'PENDING' | 'DELIVERED' | 'FAILED';

/** One entry of the event log (`GET /open-api/webhook/v1/events`). */
export interface EventRecord {
  eventId: string;
  eventType: string;
  businessId: string;
  sequence: number;
  createTime: string;
  status: EventStatus;
  attempts: number;
  lastAttemptTime: string | null;
  lastHttpStatus: number | null;
  lastError: string | null;
  nextAttemptTime: string | null;
  deliveredTime: string | null;
  failedTime: string | null;
  /** Parsed losslessly: amounts are LosslessNumber with their exact digits. */
  data: unknown;
}

export interface DeliveryAttempt {
  attemptNo: number;
  attemptTime: string;
  finishTime: string | null;
  outcome: 'IN_FLIGHT' | 'SUCCESS' | 'HTTP_ERROR' | 'TIMEOUT' | 'NETWORK_ERROR' | 'BLOCKED' | 'NOT_CONFIGURED' | 'LEASE_EXPIRED';
  httpStatus: number | null;
  latencyMs: number | null;
  error: string | null;
}

export interface ListEventsParams {
  eventType?: string;
  status?: EventStatus;
  businessId?: string;
  /** ISO-8601, inclusive, on createTime. */
  startTime?: string;
  /** ISO-8601, exclusive, on createTime. */
  endTime?: string;
  page?: number;
  pageSize?: number;
}

export interface Page<T> {
  page: number;
  pageSize: number;
  total: number;
  result: T[];
}

/** Webhooks and the event log (D38). */
export class EventsResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Your events, newest first, with their delivery state.
   * @example const page = await client.events.listEvents({ status: 'FAILED', pageSize: 50 });
   */
  listEvents(params: ListEventsParams = {}): Promise<Page<EventRecord>> {
    return this.http.call('GET', '/open-api/webhook/v1/events', { query: { ...params } });
  }

  /**
   * One event with its delivery attempts, latest first.
   * @example const { attemptLog } = await client.events.eventDetail('ev...');
   */
  eventDetail(eventId: string): Promise<EventRecord & { attemptLog: DeliveryAttempt[] }> {
    return this.http.call('GET', '/open-api/webhook/v1/event-detail', { query: { eventId } });
  }

  /**
   * Asks for the event to be delivered again (same eventId and body), now.
   * @example await client.events.resend('ev...');
   */
  resend(eventId: string): Promise<{ eventId: string; status: 'PENDING'; nextAttemptTime: string }> {
    return this.http.call('POST', '/open-api/webhook/v1/resend', { body: { eventId } });
  }

  /**
   * The addresses webhooks come from: put them on your webhook whitelist (5.5).
   * @example const { egressIps } = await client.events.egressIps();
   */
  egressIps(): Promise<{ environment: string; egressIps: string[] }> {
    return this.http.call('GET', '/open-api/webhook/v1/egress-ips');
  }
}

/** The body of a webhook (D38). */
export interface WebhookEvent {
  eventId: string;
  eventType: string;
  businessId: string;
  sequence: number;
  createTime: string;
  data: unknown;
}

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyWebhookInput {
  apiKey: string;
  secretKey: string;
  /** The request headers (any case), e.g. Node's req.headers or a fetch Headers object. */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** The raw body exactly as received (do not re-serialize parsed JSON). */
  body: string | Buffer;
  /** Your clock (epoch ms), default Date.now(). */
  now?: number;
  /** Accepted distance between X-DAPI-TIMESTAMP and now; default 5 minutes. */
  toleranceMs?: number;
}

const DEFAULT_WEBHOOK_TOLERANCE_MS = 5 * 60_000;

function headerOf(headers: VerifyWebhookInput['headers'], name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/**
 * Verifies a webhook the way the service verifies your requests (5.3): lowercase hex
 * HmacSHA256(apiKey + timestamp + nonce + rawBody) keyed with your secretKey, compared in
 * constant time, timestamp within the tolerance. Returns the parsed event (amounts lossless).
 * Deduplicate on `eventId`; use `sequence` per `businessId` to drop stale updates.
 * @example
 * const event = verifyWebhook({ apiKey, secretKey, headers: req.headers, body: rawBody });
 */
export function verifyWebhook(input: VerifyWebhookInput): WebhookEvent {
  const apiKey = headerOf(input.headers, 'x-dapi-api-key');
  const timestamp = headerOf(input.headers, 'x-dapi-timestamp');
  const nonce = headerOf(input.headers, 'x-dapi-nonce');
  const sign = headerOf(input.headers, 'x-dapi-sign');
  if (apiKey !== input.apiKey) throw new WebhookVerificationError('X-DAPI-API-KEY is missing or not yours');
  if (!timestamp || !/^\d{13}$/.test(timestamp)) throw new WebhookVerificationError('X-DAPI-TIMESTAMP is not 13-digit epoch milliseconds');
  if (!nonce || !/^\d{5}$/.test(nonce)) throw new WebhookVerificationError('X-DAPI-NONCE is missing or malformed');
  if (!sign) throw new WebhookVerificationError('X-DAPI-SIGN is missing');
  const body = typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body;
  const expected = createHmac('sha256', Buffer.from(input.secretKey, 'utf8'))
    .update(Buffer.concat([Buffer.from(apiKey + timestamp + nonce, 'utf8'), body]))
    .digest('hex');
  const given = Buffer.from(sign, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected, 'utf8'))) {
    throw new WebhookVerificationError('X-DAPI-SIGN does not match');
  }
  const now = input.now ?? Date.now();
  if (Math.abs(now - Number(timestamp)) > (input.toleranceMs ?? DEFAULT_WEBHOOK_TOLERANCE_MS)) {
    throw new WebhookVerificationError('X-DAPI-TIMESTAMP is outside the accepted window');
  }
  const event = parseJsonLossless(body.toString('utf8')) as WebhookEvent;
  const eventIdHeader = headerOf(input.headers, 'x-dapi-event-id');
  if (eventIdHeader !== undefined && eventIdHeader !== event.eventId) {
    throw new WebhookVerificationError('X-DAPI-EVENT-ID does not match the body');
  }
  return event;
}
