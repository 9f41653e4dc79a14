import { createHmac, randomInt, randomUUID } from 'node:crypto';
import { LosslessNumber, isInteger, isSafeNumber, parse, stringify } from 'lossless-json';
import type { Static, TSchema } from 'typebox';

/**
 * The 5.2 nonce of the next request: an integer in [10000, 99999], taken in turn from a random start,
 * so no two requests of this process among 90,000 share one. The service refuses a second request
 * with the same apiKey, timestamp and nonce as a replay (D5, D7); nonces drawn at random collided about
 * once in seventy bursts of 50 calls sent in the same millisecond.
 */
let nonceCursor = randomInt(0, 90_000);
export function nextNonce(): string {
  nonceCursor = (nonceCursor + 1) % 90_000;
  return String(10_000 + nonceCursor);
}

/**
 * The partner SDK core (spec 5.2-5.3, D6): signs requests, sends JSON losslessly, and turns
 * the envelope (D1) into a typed result or a CardServiceError carrying the code.
 */
export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  secretKey: string;
  /** Clock for X-DAPI-TIMESTAMP (epoch ms); defaults to Date.now. */
  now?: () => number;
  /** Deadline of one attempt in ms (connect to last byte); default 30 000. A miss is CardServiceError TIMEOUT. */
  timeoutMs?: number;
  /**
   * Retries after the first attempt, for network errors, timeouts, HTTP 429, 409 (IDEMPOTENCY_KEY_IN_USE)
   * and 5xx, on idempotent calls only: every GET, and POSTs sent with an Idempotency-Key. Default 2; 0 disables.
   */
  maxRetries?: number;
  /** First retry delay in ms, doubled per retry with full jitter; default 300. A larger Retry-After wins. */
  retryBaseDelayMs?: number;
  /** Longest wait before a retry; a Retry-After beyond it ends the retries. Default 10 000. */
  maxRetryDelayMs?: number;
  /** Send a fresh Idempotency-Key (a UUID, kept across the retries) on every POST made with call(); default true. */
  autoIdempotencyKey?: boolean;
}

/**
 * Per-call options, the last parameter of every resource method:
 * `client.organizations.create(body, { idempotencyKey: 'my-key', timeoutMs: 5_000 })`.
 * SignedHttpClient.call() is the one place that applies them.
 */
export interface CallOptions {
  /** POST only: your own Idempotency-Key (a retry with the same key answers the original response); false sends none. */
  idempotencyKey?: string | false;
  /** Deadline of each attempt in ms, instead of the client's timeoutMs. */
  timeoutMs?: number;
  /** Retries of this call, instead of the client's maxRetries. */
  maxRetries?: number;
  /** Cancels the call (and its retries): it fails with CardServiceError ABORTED. */
  signal?: AbortSignal;
  /** Extra headers (not signed): a correlation id of yours, for example. */
  headers?: Record<string, string>;
}

/** The response envelope of every endpoint (2.1). */
export interface Envelope<T = unknown> {
  code: string;
  message: string | null;
  messageDetail: Record<string, unknown> | null;
  data: T;
  /** Present only on framework-level rejections (D3). */
  success?: boolean;
}

/**
 * Every failure of an SDK call: a service error code from the envelope, or a client-side one —
 * `NETWORK_ERROR` (no connection, reset: httpStatus 0), `TIMEOUT` (no complete answer within
 * timeoutMs: httpStatus 0), `INVALID_RESPONSE` (an answer that is not a JSON envelope).
 */
export class CardServiceError extends Error {
  /** The service's message without the code (the `message` property reads `CODE: message`). */
  readonly serviceMessage: string;

  constructor(
    readonly code: string,
    message: string,
    readonly httpStatus: number,
    readonly data: unknown,
    readonly envelope: Envelope | null,
    /** The x-request-id of the answer (quote it to support), or null when there was no answer. */
    readonly requestId: string | null = null,
    options: { cause?: unknown; attempts?: number } = {},
  ) {
    super(`${code}: ${message}`, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = 'CardServiceError';
    this.serviceMessage = message;
    this.attempts = options.attempts ?? 1;
  }

  /** Attempts made (1 + retries). */
  readonly attempts: number;

  /** True for failures a retry may cure: network errors, timeouts, 429, 409 IDEMPOTENCY_KEY_IN_USE, 5xx. */
  get retryable(): boolean {
    return this.code === 'NETWORK_ERROR' || this.code === 'TIMEOUT' || this.httpStatus === 429 || this.httpStatus === 409 || this.httpStatus >= 500;
  }
}

export type QueryValue = string | number | boolean | undefined | null;

export interface RequestOptions {
  /** Query parameters (GET), or the exact query string to send and sign. */
  query?: Record<string, QueryValue> | string;
  /** JSON body (serialized losslessly), or the exact body text to send and sign. */
  body?: unknown;
  /** Override or remove (null) any header after signing: for tests of the authentication rules. */
  headers?: Record<string, string | null>;
  timestamp?: string;
  nonce?: string;
  /** POST only: the Idempotency-Key to send (call() makes one up unless false or autoIdempotencyKey is off). */
  idempotencyKey?: string | false;
  /** Overrides of the client's timeoutMs and maxRetries for this call. */
  timeoutMs?: number;
  maxRetries?: number;
  /** Cancels the request. */
  signal?: AbortSignal;
}

export interface RawResponse<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  envelope: Envelope<T>;
}

/**
 * An exact decimal of the SDK (D4, issue 32): a LosslessNumber whose JSON form is its exact digits
 * as a string, so `JSON.stringify(balance)` gives `{"available":"100.50"}` rather than the object's
 * internals. The SDK itself still sends it as a JSON number with these digits.
 */
export class DecimalValue extends LosslessNumber {
  toJSON(): string {
    return this.value;
  }
}

/**
 * A request amount where the API says "exact decimal": `decimal('12.34')`, a bigint, or a response
 * amount sent back. A JS number is refused by the types (and a fractional one at run time), since
 * `0.1 + 0.2` is not 0.3.
 */
export type DecimalInput = LosslessNumber | bigint;

/** Replaces every exact-decimal field of a request type (LosslessNumber | number) by DecimalInput. */
export type AmountInput<T> = [Extract<T, LosslessNumber>] extends [never]
  ? T extends readonly (infer U)[] ? AmountInput<U>[]
    : T extends object ? { [K in keyof T]: AmountInput<T[K]> }
    : T
  : Exclude<T, LosslessNumber | number> | DecimalInput;

/** The request type of a contract schema, amounts as DecimalInput. */
export type RequestOf<S extends TSchema> = AmountInput<Static<S>>;

/** Exact JSON numbers: amounts keep every digit (D4). Safe integers become numbers. */
export function parseJsonLossless(text: string): unknown {
  return parse(text, null, (value) => (isInteger(value) && isSafeNumber(value) ? Number(value) : new DecimalValue(value)));
}

export function stringifyJsonLossless(value: unknown): string {
  return stringify(value) ?? 'null';
}

/** A JSON number with exactly these digits, for request bodies: `decimal('0.123456789012345678')`. */
export function decimal(text: string): DecimalValue {
  if (typeof text !== 'string') {
    throw new CardServiceError('INVALID_ARGUMENT', `decimal() takes the digits as a string, e.g. decimal('12.34'), not ${typeof text}`, 0, null, null);
  }
  return new DecimalValue(text);
}

/** The digits of a JSON number from a response, as text. */
export function decimalText(value: unknown): string {
  if (value instanceof LosslessNumber) return value.value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  throw new CardServiceError('INVALID_ARGUMENT', `decimalText() takes an amount of a response, got ${value === null ? 'null' : typeof value}`, 0, null, null);
}

/**
 * Refuses a JS number that is not a safe integer anywhere in a request body, naming its field: every
 * fractional quantity of the API is an exact decimal (D4), and a float has already lost digits.
 */
export function assertNoFloats(value: unknown, path = 'body'): void {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw new CardServiceError('INVALID_ARGUMENT', `${path} is the JS number ${value}, which is not exact: `
        + `send decimal('${Number.isFinite(value) ? value : '...'}') (the digits as a string) or a bigint`, 0, null, null);
    }
    return;
  }
  if (value === null || typeof value !== 'object' || value instanceof LosslessNumber) return;
  if (Array.isArray(value)) value.forEach((item, i) => assertNoFloats(item, `${path}[${i}]`));
  else for (const [key, item] of Object.entries(value)) assertNoFloats(item, `${path}.${key}`);
}

export function encodeQuery(query: Record<string, QueryValue>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.append(key, String(value));
  }
  return params.toString();
}

/** The page shape of every list endpoint (2.2, D9). */
export interface PageOf<T> {
  page: number;
  pageSize: number;
  total: number;
  result: T[];
}

/**
 * Every item of a list endpoint, page after page, as an async iterator:
 * `for await (const org of client.organizations.listAll()) ...`. Lists are newest first, so an item
 * created while iterating may be seen twice or not at all: deduplicate on its id if it matters.
 */
export async function* paginate<T>(fetchPage: (page: number) => Promise<PageOf<T>>): AsyncGenerator<T, void, undefined> {
  for (let page = 1; ; page++) {
    const current = await fetchPage(page);
    yield* current.result;
    if (current.result.length === 0 || page * current.pageSize >= Number(current.total)) return;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One attempt's transport failure as a CardServiceError (never a bare TypeError). */
export function transportError(err: unknown, timeoutMs: number, url: string): CardServiceError {
  const name = (err as { name?: string }).name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new CardServiceError('TIMEOUT', `no complete answer from ${url} within ${timeoutMs} ms`, 0, null, null, null, { cause: err });
  }
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const reason = cause?.code ?? cause?.message ?? (err as Error).message ?? String(err);
  return new CardServiceError('NETWORK_ERROR', `cannot reach ${url}: ${reason}`, 0, null, null, null, { cause: err });
}

const optionError = (message: string) => new CardServiceError('INVALID_OPTIONS', message, 0, null, null);

/** The constructor's options, checked up front so a missing one is named (never a bare TypeError later). */
export function checkClientOptions(options: ClientOptions): void {
  if (options === null || typeof options !== 'object') throw optionError('CardServiceClient needs options: { baseUrl, apiKey, secretKey }');
  const { baseUrl, apiKey, secretKey } = options as Partial<ClientOptions>;
  if (typeof baseUrl !== 'string' || baseUrl === '') throw optionError('option baseUrl is missing: the service address, e.g. https://cards.example.com');
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw optionError(`option baseUrl is not an absolute URL: ${JSON.stringify(baseUrl)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw optionError(`option baseUrl must be http(s), not ${url.protocol}`);
  for (const [name, value] of [['apiKey', apiKey], ['secretKey', secretKey]] as const) {
    if (typeof value !== 'string' || value === '') {
      throw optionError(`option ${name} is missing${value === undefined ? ' (undefined: is the environment variable set?)' : ` (got ${value === null ? 'null' : typeof value})`}`);
    }
  }
  for (const name of ['timeoutMs', 'maxRetries', 'retryBaseDelayMs', 'maxRetryDelayMs'] as const) {
    const value = options[name];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      throw optionError(`option ${name} must be a non-negative number, got ${JSON.stringify(value)}`);
    }
  }
  if (options.now !== undefined && typeof options.now !== 'function') throw optionError('option now must be a function returning epoch milliseconds');
}

/**
 * The X-DAPI-SIGN of a request (5.3): lowercase hex HmacSHA256(apiKey + timestamp + nonce + payload)
 * keyed with the UTF-8 bytes of secretKey; payload is the query string after "?" (GET) or the exact
 * body text (POST). Checked against the published vectors (`card-issuing-sdk/test-vectors/signing.json`).
 * @example signatureOf({ apiKey, secretKey, timestamp: '1795305600000', nonce: '12345', payload: 'customerId=cusmwxdk8zr9bf0f6582' })
 */
export function signatureOf(values: { apiKey: string; secretKey: string; timestamp: string; nonce: string; payload: string }): string {
  return createHmac('sha256', Buffer.from(values.secretKey, 'utf8'))
    .update(values.apiKey + values.timestamp + values.nonce + values.payload, 'utf8')
    .digest('hex');
}

export class SignedHttpClient {
  readonly baseUrl: string;
  readonly apiKey: string;
  private readonly secretKey: string;
  /** The clock of X-DAPI-TIMESTAMP (the `now` option, else Date.now). */
  readonly now: () => number;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  private readonly retryBaseDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly autoIdempotencyKey: boolean;

  constructor(options: ClientOptions) {
    checkClientOptions(options);
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.secretKey = options.secretKey;
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxRetries = options.maxRetries ?? 2;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 300;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 10_000;
    this.autoIdempotencyKey = options.autoIdempotencyKey ?? true;
  }

  /** Lowercase hex HmacSHA256(apiKey + timestamp + nonce + payload) keyed by the secretKey's UTF-8 bytes (5.3). */
  sign(timestamp: string, nonce: string, payload: string): string {
    return signatureOf({ apiKey: this.apiKey, secretKey: this.secretKey, timestamp, nonce, payload });
  }

  /** Sends a signed request and returns the HTTP status and the parsed envelope, whatever the code. */
  async raw<T = unknown>(method: 'GET' | 'POST', path: string, options: RequestOptions = {}): Promise<RawResponse<T>> {
    const queryString = typeof options.query === 'string' ? options.query : options.query ? encodeQuery(options.query) : '';
    const bodyText = method === 'GET' ? null
      : typeof options.body === 'string' ? options.body : stringifyJsonLossless(options.body ?? {});
    const timestamp = options.timestamp ?? String(this.now());
    const nonce = options.nonce ?? nextNonce();
    // D6: GET signs the query string exactly as sent; other methods sign the exact body text.
    const payload = method === 'GET' ? queryString : bodyText!;
    const headers: Record<string, string> = {
      'X-DAPI-API-KEY': this.apiKey,
      'X-DAPI-TIMESTAMP': timestamp,
      'X-DAPI-NONCE': nonce,
      'X-DAPI-SIGN': this.sign(timestamp, nonce, payload),
    };
    if (bodyText !== null) headers['Content-Type'] = 'application/json';
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      const existing = Object.keys(headers).find((h) => h.toLowerCase() === name.toLowerCase());
      if (existing) delete headers[existing];
      if (value !== null) headers[name] = value;
    }
    if (method === 'POST' && typeof options.idempotencyKey === 'string') headers['Idempotency-Key'] = options.idempotencyKey;
    const url = this.baseUrl + path + (queryString ? `?${queryString}` : '');
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    let res: Response;
    let text: string;
    const deadline = AbortSignal.timeout(timeoutMs);
    try {
      res = await fetch(url, {
        method, headers, body: bodyText ?? undefined, redirect: 'manual', signal: options.signal ? AbortSignal.any([deadline, options.signal]) : deadline,
      });
      text = await res.text();
    } catch (err) {
      if (options.signal?.aborted) {
        throw new CardServiceError('ABORTED', `the call to ${this.baseUrl + path} was aborted by its signal`, 0, null, null, null, { cause: err });
      }
      throw transportError(err, timeoutMs, this.baseUrl + path);
    }
    let envelope: Envelope<T>;
    try {
      envelope = parseJsonLossless(text) as Envelope<T>;
    } catch (err) {
      envelope = null as unknown as Envelope<T>;
      void err;
    }
    if (envelope === null || typeof envelope !== 'object' || typeof envelope.code !== 'string') {
      throw new CardServiceError('INVALID_RESPONSE', `HTTP ${res.status} from ${this.baseUrl + path} is not a JSON envelope`, res.status, null, null,
        res.headers.get('x-request-id'));
    }
    return { status: res.status, headers: res.headers, text, envelope };
  }

  /** Wait before retry number `retry` (from 1): full-jitter exponential backoff, or Retry-After; null = do not retry. */
  private retryDelay(retry: number, retryAfter: string | null): number | null {
    const backoff = Math.min(this.maxRetryDelayMs, this.retryBaseDelayMs * 2 ** (retry - 1));
    const jittered = Math.round(backoff / 2 + Math.random() * (backoff / 2));
    if (retryAfter === null || !/^\d+$/.test(retryAfter)) return jittered;
    const wanted = Number(retryAfter) * 1000;
    return wanted > this.maxRetryDelayMs ? null : Math.max(wanted, jittered);
  }

  /**
   * Sends a signed request; resolves with `data` on SYS_SUCCESS, otherwise throws CardServiceError.
   * Idempotent calls (GETs, and POSTs with an Idempotency-Key: one is made up unless told
   * otherwise) are retried on network errors, timeouts, 429, 409 and 5xx, with backoff; each
   * attempt is signed afresh (new timestamp and nonce).
   */
  async call<T = unknown>(method: 'GET' | 'POST', path: string, request: RequestOptions = {}, callOptions: CallOptions = {}): Promise<T> {
    const options: RequestOptions = {
      ...request, ...callOptions, headers: callOptions.headers ? { ...request.headers, ...callOptions.headers } : request.headers,
    };
    if (method === 'POST' && typeof options.body !== 'string') assertNoFloats(options.body);
    if (options.signal?.aborted) throw new CardServiceError('ABORTED', `the call to ${this.baseUrl + path} was aborted before it was sent`, 0, null, null);
    const idempotencyKey = method !== 'POST' || options.idempotencyKey === false ? undefined
      : options.idempotencyKey ?? (this.autoIdempotencyKey ? randomUUID() : undefined);
    const retriable = method === 'GET' || idempotencyKey !== undefined;
    const maxRetries = retriable ? (options.maxRetries ?? this.maxRetries) : 0;
    for (let attempt = 1; ; attempt++) {
      let failure: CardServiceError;
      let retryAfter: string | null = null;
      try {
        const { status, headers, envelope } = await this.raw<T>(method, path, { ...options, idempotencyKey: idempotencyKey ?? false });
        if (envelope.code === 'SYS_SUCCESS') return envelope.data;
        failure = new CardServiceError(envelope.code, envelope.message ?? `HTTP ${status}`, status, envelope.data ?? null, envelope,
          headers.get('x-request-id'), { attempts: attempt });
        retryAfter = headers.get('retry-after');
      } catch (err) {
        if (!(err instanceof CardServiceError)) throw err;
        failure = new CardServiceError(err.code, err.serviceMessage, err.httpStatus, err.data, err.envelope, err.requestId, { cause: err.cause, attempts: attempt });
      }
      const wait = failure.retryable && attempt <= maxRetries && !options.signal?.aborted ? this.retryDelay(attempt, retryAfter) : null;
      if (wait === null) throw failure;
      await sleep(wait);
    }
  }
}
