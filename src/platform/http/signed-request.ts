import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';
import { ApiError } from '../errors.ts';

/**
 * The credential-independent checks of a signed call (5.2-5.3, D5, D6), in D5's order after the
 * caller resolved the key and checked its IP list: timestamp format -> timestamp window -> nonce
 * format -> signature. The replay store comes after (only a correctly signed request reaches it).
 * Partners and the card network ingress sign alike.
 */
export interface SignedRequest {
  apiKey: string | undefined;
  timestamp: string | undefined;
  nonce: string | undefined;
  sign: string | undefined;
  /** D6: the raw query string (GET) or the raw body bytes (other methods). */
  payload: Buffer;
  ip: string;
}

export const TIMESTAMP_FORMAT = /^\d{13}$/; // 5.2: 13-digit epoch milliseconds
export const NONCE_FORMAT = /^[1-9]\d{4}$/; // 5.2: integer in [10000, 99999]
export const SIGN_FORMAT = /^[0-9a-f]{64}$/; // 5.2: lowercase hex of a 32-byte HMAC
export const API_KEY_FORMAT = /^[0-9a-f]{32}$/; // D8

/**
 * Throws the D5 code of the first failing check; returns the replay-store key of a valid request.
 * The secret may be a KeyObject made once per key (issue 34: the HMAC's set-up from a string key
 * was about a quarter of its cost); an empty payload adds nothing to the HMAC and is not fed to it.
 */
export function verifySignedRequest(
  req: SignedRequest & { apiKey: string }, secretKey: string | KeyObject, nowMs: number, windowMs: number,
): { apiKey: string; timestampMs: number; nonce: number } {
  if (!req.timestamp || !TIMESTAMP_FORMAT.test(req.timestamp)) throw new ApiError('DAPI_TIMESTAMP_FORMAT_ERROR');
  const timestampMs = Number(req.timestamp);
  if (Math.abs(nowMs - timestampMs) > windowMs) throw new ApiError('DAPI_TIMESTAMP_EXPIRED');
  if (!req.nonce || !NONCE_FORMAT.test(req.nonce)) throw new ApiError('DAPI_NONCE_INVALID');
  // 5.3: HmacSHA256(apiKey + timestamp + nonce + payload); the header must be lowercase hex.
  const hmac = createHmac('sha256', secretKey).update(req.apiKey + req.timestamp + req.nonce, 'utf8');
  const expected = (req.payload.length === 0 ? hmac : hmac.update(req.payload)).digest();
  if (!req.sign || !SIGN_FORMAT.test(req.sign) || !timingSafeEqual(Buffer.from(req.sign, 'hex'), expected)) {
    throw new ApiError('DAPI_SIGN_INVALID');
  }
  return { apiKey: req.apiKey, timestampMs, nonce: Number(req.nonce) };
}

/** What the extraction reads of a request (a FastifyRequest has it all). */
interface IncomingSigned {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody?: Buffer | null;
  query?: unknown;
  ip: string;
}

/** The payload of a GET without a query string (shared: never written to). */
const EMPTY_PAYLOAD = Buffer.alloc(0);

const SIGNATURE_VALUES = ['x-dapi-api-key', 'x-dapi-timestamp', 'x-dapi-nonce', 'x-dapi-sign'] as const;

function signedWith(value: (name: (typeof SIGNATURE_VALUES)[number]) => string | undefined, payload: Buffer, ip: string): SignedRequest {
  return { apiKey: value('x-dapi-api-key'), timestamp: value('x-dapi-timestamp'), nonce: value('x-dapi-nonce'), sign: value('x-dapi-sign'), payload, ip };
}

const headerOf = (req: IncomingSigned) => (name: string) => {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * The 5.2 values of a signed call from its headers; the payload is the raw query string (GET) or the
 * raw body (D6). HEAD, which Fastify answers for every GET route by running the GET's handler, is
 * signed like that GET: over its query string, which the handler reads (it has no body).
 */
export function signedRequestOf(req: IncomingSigned): SignedRequest {
  const queryAt = req.url.indexOf('?');
  const payload = req.method === 'GET' || req.method === 'HEAD'
    ? (queryAt === -1 || queryAt === req.url.length - 1 ? EMPTY_PAYLOAD : Buffer.from(req.url.slice(queryAt + 1), 'utf8'))
    : req.rawBody ?? EMPTY_PAYLOAD;
  return signedWith(headerOf(req), payload, req.ip);
}

/**
 * A WebSocket upgrade's 5.2 values (D39): the headers or, for browsers (which cannot set headers on
 * an upgrade), query parameters of the same names; signed over an empty payload.
 */
export function signedUpgradeOf(req: IncomingSigned): SignedRequest {
  const header = headerOf(req);
  const query = (req.query ?? {}) as Record<string, unknown>;
  return signedWith((name) => {
    const h = header(name);
    if (h !== undefined) return h;
    const q = query[name];
    return typeof q === 'string' ? q : undefined;
  }, EMPTY_PAYLOAD, req.ip);
}
