import { createHmac, timingSafeEqual } from 'node:crypto';
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

/** Throws the D5 code of the first failing check; returns the replay-store key of a valid request. */
export function verifySignedRequest(
  req: SignedRequest & { apiKey: string }, secretKey: string, nowMs: number, windowMs: number,
): { apiKey: string; timestampMs: number; nonce: number } {
  if (!req.timestamp || !TIMESTAMP_FORMAT.test(req.timestamp)) throw new ApiError('DAPI_TIMESTAMP_FORMAT_ERROR');
  const timestampMs = Number(req.timestamp);
  if (Math.abs(nowMs - timestampMs) > windowMs) throw new ApiError('DAPI_TIMESTAMP_EXPIRED');
  if (!req.nonce || !NONCE_FORMAT.test(req.nonce)) throw new ApiError('DAPI_NONCE_INVALID');
  // 5.3: HmacSHA256(apiKey + timestamp + nonce + payload); the header must be lowercase hex.
  const expected = createHmac('sha256', secretKey).update(req.apiKey + req.timestamp + req.nonce, 'utf8').update(req.payload).digest();
  if (!req.sign || !SIGN_FORMAT.test(req.sign) || !timingSafeEqual(Buffer.from(req.sign, 'hex'), expected)) {
    throw new ApiError('DAPI_SIGN_INVALID');
  }
  return { apiKey: req.apiKey, timestampMs, nonce: Number(req.nonce) };
}
