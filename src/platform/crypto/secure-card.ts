import { createCipheriv, randomBytes } from 'node:crypto';
import { invariant } from '../errors.ts';

/**
 * Secure card data for the partner (2.6, 4.4, D8, D27): AES-256-GCM under the 32 UTF-8 bytes of
 * the partner's secretKey, a fresh random 12-byte IV per call (Base64), each field
 * Base64(ciphertext || 16-byte tag) exactly as Java's `Cipher.getInstance("AES/GCM/NoPadding")`
 * with `GCMParameterSpec(128, iv)` produces and consumes. No additional authenticated data.
 *
 * SHARED (the spec): one IV for the three fields, so one GCM nonce encrypts three plaintexts under
 * one key: the same keystream covers all three (ciphertext XOR = plaintext XOR, so a guessed
 * expiry reveals the CVV2 under it) and the GHASH key can be recovered (forgery). See the security
 * note in docs/cards.md. PER_FIELD (partner setting): the PAN uses `iv`, and the CVV2 and expiry
 * get their own `cvv2Iv` and `expireDateIv`.
 */

export const SECURE_CARD_IV_BYTES = 12;
export const SECURE_CARD_TAG_BYTES = 16;
const AES_256_KEY_BYTES = 32;

export interface SecureCardPlain {
  cardId: string;
  pan: string;
  cvv2: string;
  /** mm/yy (2.6). */
  expireDate: string;
}

export interface SecureCardData {
  cardId: string;
  encryptedPan: string;
  encryptedCvv2: string;
  encryptedExpireDate: string;
  iv: string;
  cvv2Iv?: string;
  expireDateIv?: string;
}

function secureCardKey(secretKey: string): Buffer {
  const key = Buffer.from(secretKey, 'utf8');
  invariant(key.length === AES_256_KEY_BYTES, 'partner secretKey is 32 UTF-8 bytes');
  return key;
}

function gcmField(key: Buffer, iv: Buffer, plaintext: string): string {
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: SECURE_CARD_TAG_BYTES });
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([body, cipher.getAuthTag()]).toString('base64');
}

export function encryptSecureCard(secretKey: string, plain: SecureCardPlain, ivMode: 'SHARED' | 'PER_FIELD'): SecureCardData {
  const key = secureCardKey(secretKey);
  const iv = randomBytes(SECURE_CARD_IV_BYTES);
  if (ivMode === 'SHARED') {
    return {
      cardId: plain.cardId,
      encryptedPan: gcmField(key, iv, plain.pan),
      encryptedCvv2: gcmField(key, iv, plain.cvv2),
      encryptedExpireDate: gcmField(key, iv, plain.expireDate),
      iv: iv.toString('base64'),
    };
  }
  const cvv2Iv = randomBytes(SECURE_CARD_IV_BYTES);
  const expireDateIv = randomBytes(SECURE_CARD_IV_BYTES);
  return {
    cardId: plain.cardId,
    encryptedPan: gcmField(key, iv, plain.pan),
    encryptedCvv2: gcmField(key, cvv2Iv, plain.cvv2),
    encryptedExpireDate: gcmField(key, expireDateIv, plain.expireDate),
    iv: iv.toString('base64'),
    cvv2Iv: cvv2Iv.toString('base64'),
    expireDateIv: expireDateIv.toString('base64'),
  };
}
