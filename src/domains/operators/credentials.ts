import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

/**
 * Operator credentials (issue 29, PCI DSS 8.3, 8.4): passwords under scrypt, a memory-hard KDF
 * from node:crypto (N = 2^15, r = 8: 32 MiB and some tens of milliseconds per check), and TOTP
 * codes (RFC 6238: SHA-1, 6 digits, 30 s steps, one step of drift either way) by `otpauth`.
 */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32 };
const SCRYPT_MAXMEM = 64 * 1024 * 1024;

function scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCallback(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p, maxmem: SCRYPT_MAXMEM });
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Checks a password against its stored hash in constant time (the hash's own parameters). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, { N: Number(n), r: Number(r), p: Number(p), maxmem: SCRYPT_MAXMEM });
  return timingSafeEqual(key, expected);
}

/** A password handed to a new operator once: 20 random base64url characters (120 bits). */
export function newPassword(): string {
  return randomBytes(15).toString('base64url');
}

export const TOTP_PERIOD_S = 30;
export const TOTP_ISSUER = 'Card issuing console';

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totpOf(secretBase32: string, name: string): TOTP {
  return new TOTP({ issuer: TOTP_ISSUER, label: name, algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD_S, secret: Secret.fromBase32(secretBase32) });
}

/** The otpauth:// URI an authenticator app enrols from (shown once, with the secret). */
export function totpUri(secretBase32: string, name: string): string {
  return totpOf(secretBase32, name).toString();
}

/** The time step a code belongs to (now's step, or one either side), or null when it is wrong. */
export function totpStepOf(secretBase32: string, code: string, nowMs: number): number | null {
  if (!/^[0-9]{6}$/.test(code)) return null;
  const delta = totpOf(secretBase32, 'x').validate({ token: code, timestamp: nowMs, window: 1 });
  return delta === null ? null : Math.floor(nowMs / 1000 / TOTP_PERIOD_S) + delta;
}
