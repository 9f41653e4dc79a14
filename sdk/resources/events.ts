import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Static } from 'typebox';
import { paginate, parseJsonLossless, type SignedHttpClient } from '../client.ts';
import type { AttemptItem, EgressIps, EventDetail, EventItem, EventPage, ListEventsQuery, ResendAnswer } from '../contract/events.ts';
import type { RotatedWebhookSecret, RotateWebhookSecretBody, WebhookSecretStatus } from '../contract/webhooks.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/events.ts).
export type { EventStatus } from '../contract/events.ts';

/** One entry of the event log (`GET /open-api/webhook/v1/events`); `data` is parsed losslessly (amounts keep their digits). */
export type EventRecord = Static<typeof EventItem>;

export type DeliveryAttempt = Static<typeof AttemptItem>;

/** Filters of the event log: startTime inclusive, endTime exclusive, on createTime (ISO-8601). */
export type ListEventsParams = Static<typeof ListEventsQuery>;

/** The D9 paging envelope. */
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
  listEvents(params: ListEventsParams = {}): Promise<Static<typeof EventPage>> {
    return this.http.call('GET', '/open-api/webhook/v1/events', { query: { ...params } });
  }
  /** Every event matching the filter, newest first, page after page (async iterator). */
  listAllEvents(params: Omit<ListEventsParams, 'page'> = {}) {
    return paginate((page) => this.listEvents({ ...params, page, pageSize: params.pageSize ?? 100 }));
  }

  /**
   * Sends a WEBHOOK_TEST event to your webhook_url now; answers the event with its single attempt.
   * @example const test = await client.events.sendTest(); console.log(test.status, test.attemptLog[0]);
   */
  sendTest(params: { message?: string } = {}): Promise<Static<typeof EventDetail>> {
    return this.http.call('POST', '/open-api/webhook/v1/test', { body: params });
  }

  /**
   * Creates or rotates your webhook signing secret (shown only in this answer); the previous one keeps
   * signing for `overlapSeconds` (default 86400). Verify with `verifyWebhook({..., webhookSecrets})`.
   */
  rotateSecret(params: Static<typeof RotateWebhookSecretBody> = {}): Promise<Static<typeof RotatedWebhookSecret>> {
    return this.http.call('POST', '/open-api/webhook/v1/secret/rotate', { body: params });
  }

  /** Your valid webhook secrets: creation and expiry times only. */
  secretStatus(): Promise<Static<typeof WebhookSecretStatus>> {
    return this.http.call('GET', '/open-api/webhook/v1/secret');
  }

  /**
   * One event with its delivery attempts, latest first.
   * @example const { attemptLog } = await client.events.eventDetail('ev...');
   */
  eventDetail(eventId: string): Promise<Static<typeof EventDetail>> {
    return this.http.call('GET', '/open-api/webhook/v1/event-detail', { query: { eventId } });
  }

  /**
   * Asks for the event to be delivered again (same eventId and body), now.
   * @example await client.events.resend('ev...');
   */
  resend(eventId: string): Promise<Static<typeof ResendAnswer>> {
    return this.http.call('POST', '/open-api/webhook/v1/resend', { body: { eventId } });
  }

  /**
   * The addresses webhooks come from: put them on your webhook whitelist (5.5).
   * @example const { egressIps } = await client.events.egressIps();
   */
  egressIps(): Promise<Static<typeof EgressIps>> {
    return this.http.call('GET', '/open-api/webhook/v1/egress-ips');
  }
}

/** The body of a webhook (D38): the event log entry's identity and data. */
export type WebhookEvent = Pick<EventRecord, 'eventId' | 'eventType' | 'businessId' | 'sequence' | 'createTime' | 'data'>;

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyWebhookInput {
  apiKey: string;
  /** Your API secretKey: checks X-DAPI-SIGN (D38). Give this or webhookSecrets. */
  secretKey?: string;
  /**
   * Your webhook signing secret(s) (whsec_...): checks X-DAPI-WEBHOOK-SIGN, which carries one `v1=`
   * signature per valid secret; any match passes. During a rotation, list the new and the old one.
   */
  webhookSecrets?: string[];
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
  if (apiKey !== input.apiKey) throw new WebhookVerificationError('X-DAPI-API-KEY is missing or not yours');
  if (!timestamp || !/^\d{13}$/.test(timestamp)) throw new WebhookVerificationError('X-DAPI-TIMESTAMP is not 13-digit epoch milliseconds');
  if (!nonce || !/^\d{5}$/.test(nonce)) throw new WebhookVerificationError('X-DAPI-NONCE is missing or malformed');
  const body = typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body;
  const hmac = (key: string) => createHmac('sha256', Buffer.from(key, 'utf8'))
    .update(Buffer.concat([Buffer.from(apiKey + timestamp + nonce, 'utf8'), body]))
    .digest('hex');
  const matches = (given: string, expected: string) => {
    const a = Buffer.from(given, 'utf8');
    const b = Buffer.from(expected, 'utf8');
    return a.length === b.length && timingSafeEqual(a, b);
  };
  if (input.webhookSecrets?.length) {
    const header = headerOf(input.headers, 'x-dapi-webhook-sign');
    if (!header) throw new WebhookVerificationError('X-DAPI-WEBHOOK-SIGN is missing (no webhook secret on the service side?)');
    const given = header.split(',').map((part) => part.trim()).filter((part) => part.startsWith('v1=')).map((part) => part.slice(3));
    const expected = input.webhookSecrets.map(hmac);
    if (!given.some((g) => expected.some((e) => matches(g, e)))) throw new WebhookVerificationError('X-DAPI-WEBHOOK-SIGN matches none of your webhook secrets');
  } else {
    if (!input.secretKey) throw new WebhookVerificationError('give secretKey or webhookSecrets');
    const sign = headerOf(input.headers, 'x-dapi-sign');
    if (!sign) throw new WebhookVerificationError('X-DAPI-SIGN is missing');
    if (!matches(sign, hmac(input.secretKey))) throw new WebhookVerificationError('X-DAPI-SIGN does not match');
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
