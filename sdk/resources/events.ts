import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Static } from 'typebox';
import { paginate, parseJsonLossless, type CallOptions, type RequestOf, type SignedHttpClient } from '../client.ts';
import type { AttemptItem, EgressIps, EventDetail, EventItem, EventPage, ListEventsQuery, ResendAnswer } from '../contract/events.ts';
import type { RotatedWebhookSecret, RotateWebhookSecretBody, WebhookSecretStatus } from '../contract/webhooks.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/events.ts).
export type { EventStatus } from '../contract/events.ts';

/** The event types a sample can be asked for (sendSample); VERIFICATION_CODE_SENT in sandbox only. */
export type SampleEventType = 'CARD_CREATED' | 'CARD_REJECTED' | 'CARD_STATUS_CHANGED' | 'CARD_UPGRADE_STATUS_CHANGED' | 'CARD_TRANSACTION'
  | 'CUSTOMER_STATUS_CHANGED' | 'ORGANIZATION_STATUS_CHANGED' | 'CUSTOMER_KYC_CHANGED' | 'LOW_BALANCE' | 'VERIFICATION_CODE_SENT' | 'WEBHOOK_TEST';

/** One entry of the event log (`GET /open-api/webhook/v1/events`); `data` is parsed losslessly (amounts keep their digits). */
export type EventRecord = Static<typeof EventItem>;

export type DeliveryAttempt = Static<typeof AttemptItem>;

/** Filters of the event log: startTime inclusive, endTime exclusive, on createTime (ISO-8601). */
export type ListEventsParams = Static<typeof ListEventsQuery>;

/** The paging envelope (D9). */
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
  listEvents(params: ListEventsParams = {}, options?: CallOptions): Promise<Static<typeof EventPage>> {
    return this.http.call('GET', '/open-api/webhook/v1/events', { query: { ...params } }, options);
  }
  /** Every event matching the filter, newest first, page after page (async iterator). */
  listAllEvents(params: Omit<ListEventsParams, 'page'> = {}, options?: CallOptions) {
    return paginate((page) => this.listEvents({ ...params, page, pageSize: params.pageSize ?? 100 }, options));
  }

  /**
   * Sends a WEBHOOK_TEST event to your webhook_url now; answers the event with its single attempt.
   * @example const test = await client.events.sendTest(); console.log(test.status, test.attemptLog[0]);
   */
  sendTest(params: { message?: string } = {}, options?: CallOptions): Promise<Static<typeof EventDetail>> {
    return this.http.call('POST', '/open-api/webhook/v1/test', { body: params }, options);
  }

  /**
   * Sends a signed example of any event type you can receive (CARD_CREATED, CARD_TRANSACTION, LOW_BALANCE, ...) to your
   * webhook_url now, marked `data.test = true`, so your handler can be tried before real traffic. Attempted once; answers the
   * event with its attempt. The payload is the type's example in the OpenAPI webhooks section, with the current time.
   * @example const sample = await client.events.sendSample({ eventType: 'CARD_TRANSACTION' }); console.log(sample.status, sample.attemptLog[0]);
   */
  sendSample(params: { eventType: SampleEventType | (string & {}) }, options?: CallOptions): Promise<Static<typeof EventDetail>> {
    return this.http.call('POST', '/open-api/webhook/v1/sample', { body: params }, options);
  }

  /**
   * Creates or rotates your webhook signing secret (shown only in this answer); the previous one keeps
   * signing for `overlapSeconds` (default 86400). Verify with `verifyWebhook({..., webhookSecrets})`.
   */
  rotateSecret(params: RequestOf<typeof RotateWebhookSecretBody> = {}, options?: CallOptions): Promise<Static<typeof RotatedWebhookSecret>> {
    return this.http.call('POST', '/open-api/webhook/v1/secret/rotate', { body: params }, options);
  }

  /** Your valid webhook secrets: creation and expiry times only. */
  secretStatus(options?: CallOptions): Promise<Static<typeof WebhookSecretStatus>> {
    return this.http.call('GET', '/open-api/webhook/v1/secret', {}, options);
  }

  /**
   * One event with its delivery attempts, latest first.
   * @example const { attemptLog } = await client.events.eventDetail('ev...');
   */
  eventDetail(eventId: string, options?: CallOptions): Promise<Static<typeof EventDetail>> {
    return this.http.call('GET', '/open-api/webhook/v1/event-detail', { query: { eventId } }, options);
  }

  /**
   * Asks for the event to be delivered again (same eventId and body), now.
   * @example await client.events.resend('ev...');
   */
  resend(eventId: string, options?: CallOptions): Promise<Static<typeof ResendAnswer>> {
    return this.http.call('POST', '/open-api/webhook/v1/resend', { body: { eventId } }, options);
  }

  /**
   * The addresses webhooks come from: put them on your webhook whitelist (5.5).
   * @example const { egressIps } = await client.events.egressIps();
   */
  egressIps(options?: CallOptions): Promise<Static<typeof EgressIps>> {
    return this.http.call('GET', '/open-api/webhook/v1/egress-ips', {}, options);
  }
}

/** The body of a webhook (D38): the event log entry's identity and data. */
export type WebhookEvent = Pick<EventRecord, 'eventId' | 'eventType' | 'businessId' | 'sequence' | 'createTime' | 'data'>;

/** Why a webhook was refused; `code` is RAW_BODY_REQUIRED when the body was not the raw bytes. */
export class WebhookVerificationError extends Error {
  constructor(message: string, readonly code: 'RAW_BODY_REQUIRED' | 'INVALID_INPUT' | 'SIGNATURE_INVALID' = 'SIGNATURE_INVALID') {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

const RAW_BODY_HINT = 'pass the raw body exactly as received (a string or Buffer), not parsed JSON: '
  + "Express: express.raw({ type: 'application/json' }) on the webhook route; Fastify: a content-type parser with parseAs: 'buffer'; "
  + 'Next.js: await request.text() (see the SDK README, "Receiving webhooks")';

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
  /** The raw body exactly as received (do not re-serialize parsed JSON): a string, Buffer or Uint8Array. */
  body: string | Buffer | Uint8Array;
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
  if (input === null || typeof input !== 'object') throw new WebhookVerificationError('verifyWebhook needs { apiKey, secretKey or webhookSecrets, headers, body }', 'INVALID_INPUT');
  const rawBody: unknown = input.body;
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    const got = rawBody === undefined ? 'no body' : rawBody === null ? 'null' : typeof rawBody === 'object' ? 'a parsed object' : `a ${typeof rawBody}`;
    throw new WebhookVerificationError(`body is ${got}: ${RAW_BODY_HINT}`, 'RAW_BODY_REQUIRED');
  }
  if (input.headers === null || typeof input.headers !== 'object') {
    throw new WebhookVerificationError('headers are missing: pass the request headers (req.headers, or a fetch Headers object)', 'INVALID_INPUT');
  }
  const apiKey = headerOf(input.headers, 'x-dapi-api-key');
  const timestamp = headerOf(input.headers, 'x-dapi-timestamp');
  const nonce = headerOf(input.headers, 'x-dapi-nonce');
  if (apiKey !== input.apiKey) throw new WebhookVerificationError('X-DAPI-API-KEY is missing or not yours');
  if (!timestamp || !/^\d{13}$/.test(timestamp)) throw new WebhookVerificationError('X-DAPI-TIMESTAMP is not 13-digit epoch milliseconds');
  if (!nonce || !/^\d{5}$/.test(nonce)) throw new WebhookVerificationError('X-DAPI-NONCE is missing or malformed');
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
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
    if (!input.secretKey) throw new WebhookVerificationError('give secretKey or webhookSecrets', 'INVALID_INPUT');
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
