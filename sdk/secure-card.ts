import { createDecipheriv } from 'node:crypto';
import type { Static } from 'typebox';
import type { SecureCardView } from './contract/cards.ts';

/**
 * Decrypts the output of `cards.retrieveSecureCard()` (spec 2.6, 4.4; D8, D27).
 *
 * Algorithm (the same as Java's `Cipher.getInstance("AES/GCM/NoPadding")` with
 * `new GCMParameterSpec(128, Base64.decode(iv))` and `new SecretKeySpec(secretKey.getBytes(UTF_8), "AES")`):
 *   key        = the 32 UTF-8 bytes of your secretKey (AES-256)
 *   iv         = Base64-decode `iv` (12 bytes); with the PER_FIELD setting, CVV2 uses `cvv2Iv` and
 *                the expiry `expireDateIv`
 *   field      = Base64-decode the field; the last 16 bytes are the GCM tag, the rest the ciphertext
 *   plaintext  = AES-256-GCM decrypt, no additional authenticated data; UTF-8
 *
 * The result is for immediate display only: never store, cache or log it (4.4).
 * @example
 * const card = decryptSecureCard(secretKey, await client.cards.retrieveSecureCard('cd...'));
 */
export type EncryptedSecureCard = Static<typeof SecureCardView>;

export interface DecryptedSecureCard {
  cardId: string;
  pan: string;
  cvv2: string;
  /** mm/yy */
  expireDate: string;
}

const TAG_BYTES = 16;
const IV_BYTES = 12;

export class SecureCardDecryptError extends Error {
  constructor(field: string) {
    super(`secure card field ${field} could not be decrypted (wrong secretKey, IV or a tampered ciphertext)`);
    this.name = 'SecureCardDecryptError';
  }
}

/** Decrypts one field: Base64(ciphertext || 16-byte tag) under key and iv (both raw bytes). */
export function decryptGcmField(key: Buffer, iv: Buffer, field: string, name = 'field'): string {
  const raw = Buffer.from(field, 'base64');
  if (iv.length !== IV_BYTES || raw.length < TAG_BYTES) throw new SecureCardDecryptError(name);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(0, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecureCardDecryptError(name);
  }
}

export function decryptSecureCard(secretKey: string, data: EncryptedSecureCard): DecryptedSecureCard {
  const key = Buffer.from(secretKey, 'utf8');
  if (key.length !== 32) throw new TypeError('secretKey must be 32 UTF-8 bytes (AES-256)');
  const iv = Buffer.from(data.iv, 'base64');
  const cvv2Iv = data.cvv2Iv ? Buffer.from(data.cvv2Iv, 'base64') : iv;
  const expireDateIv = data.expireDateIv ? Buffer.from(data.expireDateIv, 'base64') : iv;
  return {
    cardId: data.cardId,
    pan: decryptGcmField(key, iv, data.encryptedPan, 'encryptedPan'),
    cvv2: decryptGcmField(key, cvv2Iv, data.encryptedCvv2, 'encryptedCvv2'),
    expireDate: decryptGcmField(key, expireDateIv, data.encryptedExpireDate, 'encryptedExpireDate'),
  };
}
