import { Secret, TOTP } from 'otpauth';

/**
 * The code an authenticator app shows for an enrolled secret at a moment (RFC 6238: SHA-1, 6
 * digits, 30 s steps), computed here apart from the service, which only verifies codes.
 */
export function totpCode(secretBase32: string, nowMs: number): string {
  return new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secretBase32) }).generate({ timestamp: nowMs });
}
