import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** D8: apiKey is 32 lowercase hex characters. */
export function newApiKey(): string {
  return randomBytes(16).toString('hex');
}

/** D8: secretKey is 32 characters of [A-Za-z0-9], drawn without modulo bias. */
export function newSecretKey(length = 32): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

/** Opaque ids minted by the service: prefix + base-36 time + random, at most 20 characters (D43). */
export function newId(prefix: string): string {
  const body = Date.now().toString(36) + randomHex(8);
  return (prefix + body).slice(0, 20);
}

/**
 * CSPRNG bytes for ids, drawn 4 KiB at a time: an authorization mints six ids, and one randomBytes
 * call per id was a measurable share of the request's CPU. Each byte is handed out once.
 */
const ID_RANDOM_POOL_BYTES = 4096;
let idRandomPool = Buffer.alloc(0);
let idRandomOffset = 0;

function randomHex(bytes: number): string {
  if (idRandomOffset + bytes > idRandomPool.length) {
    idRandomPool = randomBytes(ID_RANDOM_POOL_BYTES);
    idRandomOffset = 0;
  }
  const hex = idRandomPool.toString('hex', idRandomOffset, idRandomOffset + bytes);
  idRandomOffset += bytes;
  return hex;
}

/**
 * The 5.2 nonce of the next request this process signs (a webhook): an integer in [10000, 99999],
 * taken in turn from a random start, so no two among 90,000 share one (a partner that refuses a
 * repeated apiKey, timestamp and nonce as a replay never sees two webhooks of one millisecond collide).
 */
let nonceCursor = randomInt(0, 90_000);
export function nextNonce(): string {
  nonceCursor = (nonceCursor + 1) % 90_000;
  return String(10_000 + nonceCursor);
}

/** 5.3: lowercase hex HMAC-SHA256 keyed with the UTF-8 bytes of the secret key (D6). */
export function hmacSha256Hex(secretKey: string, message: string | Buffer): string {
  return createHmac('sha256', Buffer.from(secretKey, 'utf8')).update(message).digest('hex');
}

/** Constant-time comparison of two strings; different lengths compare false in constant time too. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

const GCM_IV_BYTES = 12;
const GCM_TAG_BYTES = 16;

/**
 * Seals a secret under the master key: "v1." + Base64(iv | ciphertext | tag), AES-256-GCM with a
 * fresh IV. `context` is bound as additional data so a ciphertext cannot be moved to another row.
 */
export function seal(masterKey: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(GCM_IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return 'v1.' + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64');
}

export function unseal(masterKey: Buffer, sealed: string, context: string): string {
  if (!sealed.startsWith('v1.')) throw new Error('unknown sealed-secret format');
  const raw = Buffer.from(sealed.slice(3), 'base64');
  const iv = raw.subarray(0, GCM_IV_BYTES);
  const tag = raw.subarray(raw.length - GCM_TAG_BYTES);
  const body = raw.subarray(GCM_IV_BYTES, raw.length - GCM_TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', masterKey, iv);
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
}
