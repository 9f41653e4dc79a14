import type { Queryable } from '../../platform/db/db.ts';
import { invariant } from '../../platform/errors.ts';
import { activeCardKey, cardKeyById, decryptCardData, encryptCardData, panFingerprint } from '../../platform/crypto/card-keys.ts';
import { computeCvv2 } from '../../platform/crypto/cvv.ts';
import { generatePan, isLuhnValid, panFirst6, panLast4 } from '../../platform/crypto/pan.ts';
import type { CardSecretRow } from './store.ts';

/**
 * Card data at rest (D26). The plaintext PAN exists only inside these functions and the secure-card
 * response encryption; it is never returned to a route as plaintext, logged, or put in an error.
 * What is stored: AES-256-GCM of {pan, expiry YYMM} under the active PAN_DATA key (its id beside
 * it, the card id bound as additional data), the keyed fingerprint, first 6 and last 4, and the id
 * of the CVK the CVV2 is derived under.
 */

export interface IssuedCardData {
  panFirst6: string;
  panLast4: string;
  panFingerprint: string;
  panKeyId: string;
  panEnc: string;
  cvkKeyId: string;
}

interface StoredCardData {
  pan: string;
  /** YYMM, the CVV input order. */
  expiry: string;
}

function cardDataContext(cardId: string): string {
  return `card-data:${cardId}`;
}

/** Expiry YYMM: the month `validityMonths` after the issue month (UTC); the card is valid through its end. */
export function expiryYymm(issuedAt: Date, validityMonths: number): string {
  const months = issuedAt.getUTCFullYear() * 12 + issuedAt.getUTCMonth() + validityMonths;
  const year = Math.floor(months / 12) % 100;
  const month = (months % 12) + 1;
  return String(year).padStart(2, '0') + String(month).padStart(2, '0');
}

/**
 * Draws a PAN under the BIN and seals it. The caller inserts the card and calls again when the
 * fingerprint collides (the unique index decides, so two instances can never issue one PAN twice).
 */
export async function drawCardData(
  q: Queryable,
  masterKey: Buffer,
  input: { cardId: string; bin: string; panLength: number; expiry: string },
): Promise<IssuedCardData> {
  const [dataKey, fingerprintKey, cvk] = [
    await activeCardKey(q, masterKey, 'PAN_DATA'),
    await activeCardKey(q, masterKey, 'PAN_FINGERPRINT'),
    await activeCardKey(q, masterKey, 'CVK'),
  ];
  const pan = generatePan(input.bin, input.panLength);
  const stored: StoredCardData = { pan, expiry: input.expiry };
  return {
    panFirst6: panFirst6(pan),
    panLast4: panLast4(pan),
    panFingerprint: panFingerprint(fingerprintKey.key, pan),
    panKeyId: dataKey.keyId,
    panEnc: encryptCardData(dataKey.key, JSON.stringify(stored), cardDataContext(input.cardId)),
    cvkKeyId: cvk.keyId,
  };
}

export interface CardSecret {
  pan: string;
  /** mm/yy, as the secure-card response carries it (2.6). */
  expireDate: string;
  cvv2: string;
}

/** Decrypts a card's data and derives its CVV2 under the card's CVK. For the secure-card response only. */
export async function revealCardSecret(q: Queryable, masterKey: Buffer, row: CardSecretRow): Promise<CardSecret> {
  const dataKey = await cardKeyById(q, masterKey, row.panKeyId, 'PAN_DATA');
  const stored = JSON.parse(decryptCardData(dataKey, row.panEnc, cardDataContext(row.cardId))) as StoredCardData;
  invariant(isLuhnValid(stored.pan) && /^\d{4}$/.test(stored.expiry), 'stored card data is well formed');
  const cvk = await cardKeyById(q, masterKey, row.cvkKeyId, 'CVK');
  return {
    pan: stored.pan,
    expireDate: `${stored.expiry.slice(2, 4)}/${stored.expiry.slice(0, 2)}`,
    cvv2: computeCvv2(cvk, stored.pan, stored.expiry),
  };
}

/** Re-seals a card's data under the active PAN_DATA key (after a rotation); returns the new key id and ciphertext. */
export async function resealCardData(q: Queryable, masterKey: Buffer, row: CardSecretRow): Promise<{ panKeyId: string; panEnc: string }> {
  const oldKey = await cardKeyById(q, masterKey, row.panKeyId, 'PAN_DATA');
  const plaintext = decryptCardData(oldKey, row.panEnc, cardDataContext(row.cardId));
  const active = await activeCardKey(q, masterKey, 'PAN_DATA');
  return { panKeyId: active.keyId, panEnc: encryptCardData(active.key, plaintext, cardDataContext(row.cardId)) };
}
