import { createHmac, randomInt } from 'node:crypto';
import { LosslessNumber, isInteger, isSafeNumber, parse, stringify } from 'lossless-json';

/**
 * The partner SDK core: signs requests as spec 5.2-5.3 with D6, sends JSON losslessly, and turns
 * the envelope (D1) into a typed result or a CardServiceError carrying the code.
 */
export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  secretKey: string;
  /** Clock for X-DAPI-TIMESTAMP (epoch ms); defaults to Date.now. */
  now?: () => number;
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

export class CardServiceError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly httpStatus: number,
    readonly data: unknown,
    readonly envelope: Envelope | null,
  ) {
    super(`${code}: ${message}`);
    this.name = 'CardServiceError';
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
}

export interface RawResponse<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  envelope: Envelope<T>;
}

/** Exact JSON numbers: amounts keep every digit (D4). Safe integers become numbers. */
export function parseJsonLossless(text: string): unknown {
  return parse(text, null, (value) => (isInteger(value) && isSafeNumber(value) ? Number(value) : new LosslessNumber(value)));
}

export function stringifyJsonLossless(value: unknown): string {
  return stringify(value) ?? 'null';
}

/** A JSON number with exactly these digits, for request bodies: `decimal('0.123456789012345678')`. */
export function decimal(text: string): LosslessNumber {
  return new LosslessNumber(text);
}

/** The digits of a JSON number from a response, as text. */
export function decimalText(value: unknown): string {
  if (value instanceof LosslessNumber) return value.value;
  if (typeof value === 'number') return String(value);
  throw new TypeError(`not a JSON number: ${String(value)}`);
}

export function encodeQuery(query: Record<string, QueryValue>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.append(key, String(value));
  }
  return params.toString();
}

export class SignedHttpClient {
  readonly baseUrl: string;
  readonly apiKey: string;
  private readonly secretKey: string;
  private readonly now: () => number;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.secretKey = options.secretKey;
    this.now = options.now ?? Date.now;
  }

  /** 5.3: lowercase hex HmacSHA256(apiKey + timestamp + nonce + payload) keyed by the secretKey's UTF-8 bytes. */
  sign(timestamp: string, nonce: string, payload: string): string {
    return createHmac('sha256', Buffer.from(this.secretKey, 'utf8'))
      .update(this.apiKey + timestamp + nonce + payload, 'utf8')
      .digest('hex');
  }

  /** Sends a signed request and returns the HTTP status and the parsed envelope, whatever the code. */
  async raw<T = unknown>(method: 'GET' | 'POST', path: string, options: RequestOptions = {}): Promise<RawResponse<T>> {
    const queryString = typeof options.query === 'string' ? options.query : options.query ? encodeQuery(options.query) : '';
    const bodyText = method === 'GET' ? null
      : typeof options.body === 'string' ? options.body : stringifyJsonLossless(options.body ?? {});
    const timestamp = options.timestamp ?? String(this.now());
    const nonce = options.nonce ?? String(randomInt(10000, 100000));
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
    const url = this.baseUrl + path + (queryString ? `?${queryString}` : '');
    const res = await fetch(url, { method, headers, body: bodyText ?? undefined });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, envelope: parseJsonLossless(text) as Envelope<T> };
  }

  /** Sends a signed request; resolves with `data` on SYS_SUCCESS, otherwise throws CardServiceError. */
  async call<T = unknown>(method: 'GET' | 'POST', path: string, options: RequestOptions = {}): Promise<T> {
    const { status, envelope } = await this.raw<T>(method, path, options);
    if (envelope?.code !== 'SYS_SUCCESS') {
      throw new CardServiceError(envelope?.code ?? 'UNKNOWN', envelope?.message ?? `HTTP ${status}`, status, envelope?.data ?? null, envelope ?? null);
    }
    return envelope.data;
  }
}
