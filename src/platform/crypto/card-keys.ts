import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Config } from '../../config.ts';
import { advisoryXactLock, insideUnitOfWork, type Db, type Queryable } from '../db/db.ts';
import {
  activateKey, activeKeyIds, findActiveKeyRow, findKeyPurpose, findKeyRow, insertKeyRow, listKeyRows, retireActiveKeys,
  type CardKeyPurpose, type KeyRow,
} from './card-keys-store.ts';
import { invariant } from '../errors.ts';
import { CVK_BYTES, desKeyCheckValue } from './cvv.ts';
import { newId, seal, unseal } from './secrets.ts';

/**
 * Card data keys (D26), stored only wrapped by the master key in `card_keys`, one ACTIVE key per
 * purpose; older keys stay (RETIRED) so every ciphertext, which records its key id, stays readable.
 *
 * - PAN_DATA: AES-256-GCM data key for PANs and expiries at rest (rotatable).
 * - PAN_FINGERPRINT: HMAC-SHA256 key of the PAN fingerprint behind the uniqueness index. A plain
 *   hash of a PAN is brute-forced in seconds (BIN and last 4 are known), hence a keyed one. Never
 *   rotated: uniqueness compares fingerprints across all cards.
 * - CVK: double-length DES card-verification key of the CVV algorithm (cvv.ts). From CARD_CVK in
 *   configuration, or generated at first use in sandbox. A card records the CVK id it was issued
 *   under: its CVV2 must stay stable after a rotation.
 *
 * Provisioning (`ensureCardKeys`) runs in its own transaction under an advisory lock, before any
 * business transaction, so several instances starting together create each key exactly once.
 */

export type { CardKeyPurpose };

const KEY_BYTES: Record<CardKeyPurpose, number> = { PAN_DATA: 32, PAN_FINGERPRINT: 32, CVK: CVK_BYTES };
const PROVISION_LOCK_KEY = 727_030;
const GCM_IV_BYTES = 12;
const GCM_TAG_BYTES = 16;
/** Ciphertext format marker of card data at rest: "c1." + Base64(iv | ciphertext | tag). */
const CARD_DATA_PREFIX = 'c1.';

function wrapContext(keyId: string, purpose: CardKeyPurpose): string {
  return `card-key:${purpose}:${keyId}`;
}

export interface CardKeyInfo {
  keyId: string;
  purpose: CardKeyPurpose;
  source: 'GENERATED' | 'CONFIGURED';
  status: 'ACTIVE' | 'RETIRED';
  checkValue: string;
  createTime: string;
  retireTime: string | null;
}

/** Unwrapped keys by id and wrapped text (the text changes if a key id were ever reused). */
const unwrapped = new Map<string, Buffer>();
const UNWRAPPED_CACHE_MAX = 1000;

function unwrap(masterKey: Buffer, row: KeyRow): Buffer {
  const cacheKey = `${row.keyId}\u0000${row.wrappedKey}`;
  let key = unwrapped.get(cacheKey);
  if (!key) {
    key = Buffer.from(unseal(masterKey, row.wrappedKey, wrapContext(row.keyId, row.purpose)), 'hex');
    invariant(key.length === KEY_BYTES[row.purpose], `unwrapped ${row.purpose} key length`);
    if (unwrapped.size >= UNWRAPPED_CACHE_MAX) unwrapped.clear();
    unwrapped.set(cacheKey, key);
  }
  return key;
}

function checkValueOf(purpose: CardKeyPurpose, key: Buffer): string {
  if (purpose === 'CVK') return desKeyCheckValue(key);
  return createHmac('sha256', key).update('key-check-value').digest('hex').slice(0, 6).toUpperCase();
}

async function insertKey(q: Queryable, masterKey: Buffer, purpose: CardKeyPurpose, keyId: string, key: Buffer, source: 'GENERATED' | 'CONFIGURED', now: Date) {
  await insertKeyRow(q, {
    keyId, purpose, wrappedKey: seal(masterKey, key.toString('hex'), wrapContext(keyId, purpose)), source,
    checkValue: checkValueOf(purpose, key), createdAt: now,
  });
}

async function provision(db: Db, config: Config, now: Date): Promise<void> {
  await db.tx(async (q) => {
    await advisoryXactLock(q, PROVISION_LOCK_KEY);
    const active = await activeKeyIds(q);
    for (const purpose of ['PAN_DATA', 'PAN_FINGERPRINT'] as const) {
      if (!active.has(purpose)) await insertKey(q, config.masterKey, purpose, newId('ck'), randomBytes(KEY_BYTES[purpose]), 'GENERATED', now);
    }
    const configured = config.cardVerificationKey;
    if (configured) {
      // A configured CVK becomes the active one; a new CARD_CVK_ID is a rotation.
      if (active.get('CVK') !== configured.keyId) {
        const existing = await findKeyPurpose(q, configured.keyId);
        invariant(!existing || existing === 'CVK', 'CARD_CVK_ID does not name a key of another purpose');
        await retireActiveKeys(q, 'CVK', now);
        if (existing) await activateKey(q, configured.keyId);
        else await insertKey(q, config.masterKey, 'CVK', configured.keyId, configured.key, 'CONFIGURED', now);
      }
    } else if (!active.has('CVK') && config.env === 'sandbox') {
      await insertKey(q, config.masterKey, 'CVK', newId('ck'), generateCvk(), 'GENERATED', now);
    }
  });
}

/** A random double-length DES key with odd parity per byte and two distinct halves. */
function generateCvk(): Buffer {
  for (;;) {
    const key = randomBytes(CVK_BYTES);
    for (let i = 0; i < key.length; i++) {
      let bits = 0;
      for (let b = 1; b < 8; b++) bits += (key[i] >> b) & 1;
      key[i] = (key[i] & 0xfe) | (bits % 2 === 0 ? 1 : 0);
    }
    if (!key.subarray(0, 8).equals(key.subarray(8))) return key;
  }
}

const provisioned = new WeakMap<Db, WeakMap<Config, Promise<void>>>();

/** Creates missing keys once per process, database and configuration; call before opening a business transaction. */
export function ensureCardKeys(db: Db, config: Config, now: Date): Promise<void> {
  let byConfig = provisioned.get(db);
  if (!byConfig) provisioned.set(db, (byConfig = new WeakMap()));
  let done = byConfig.get(config);
  if (!done) {
    // Inside a unit of work (an audited admin action) the keys are created in its transaction, which
    // may still be rolled back: provision there (idempotent) without remembering it for the process.
    if (insideUnitOfWork()) return provision(db, config, now);
    done = provision(db, config, now);
    byConfig.set(config, done);
    done.catch(() => byConfig.delete(config));
  }
  return done;
}

export async function activeCardKey(q: Queryable, masterKey: Buffer, purpose: CardKeyPurpose): Promise<{ keyId: string; key: Buffer }> {
  const row = await findActiveKeyRow(q, purpose);
  if (!row) {
    throw new Error(purpose === 'CVK'
      ? 'no card-verification key: set CARD_CVK (required in production)'
      : `no active ${purpose} card key: ensureCardKeys was not run`);
  }
  return { keyId: row.keyId, key: unwrap(masterKey, row) };
}

export async function cardKeyById(q: Queryable, masterKey: Buffer, keyId: string, purpose: CardKeyPurpose): Promise<Buffer> {
  const row = await findKeyRow(q, keyId);
  invariant(row && row.purpose === purpose, `card key ${keyId} exists with purpose ${purpose}`);
  return unwrap(masterKey, row);
}

/** AES-256-GCM with a fresh IV per record; `context` (the card id) is bound as additional data. */
export function encryptCardData(key: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(GCM_IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return CARD_DATA_PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64');
}

export function decryptCardData(key: Buffer, sealed: string, context: string): string {
  invariant(sealed.startsWith(CARD_DATA_PREFIX), 'card data ciphertext format');
  const raw = Buffer.from(sealed.slice(CARD_DATA_PREFIX.length), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, GCM_IV_BYTES));
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(raw.subarray(raw.length - GCM_TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(GCM_IV_BYTES, raw.length - GCM_TAG_BYTES)), decipher.final()]).toString('utf8');
}

/** Keyed PAN fingerprint (HMAC-SHA256, hex) for the uniqueness index; reveals nothing without the key. */
export function panFingerprint(key: Buffer, pan: string): string {
  return createHmac('sha256', key).update(pan, 'utf8').digest('hex');
}

/** Operators: a new active PAN_DATA key (CVK rotates through CARD_CVK / CARD_CVK_ID). */
export async function rotateCardKey(q: Queryable, masterKey: Buffer, purpose: 'PAN_DATA', now: Date): Promise<string> {
  await advisoryXactLock(q, PROVISION_LOCK_KEY);
  await retireActiveKeys(q, purpose, now);
  const keyId = newId('ck');
  await insertKey(q, masterKey, purpose, keyId, randomBytes(KEY_BYTES[purpose]), 'GENERATED', now);
  return keyId;
}

export async function listCardKeys(q: Queryable): Promise<CardKeyInfo[]> {
  const rows = await listKeyRows(q);
  return rows.map((r) => ({
    keyId: r.keyId, purpose: r.purpose, source: r.source, status: r.status, checkValue: r.checkValue,
    createTime: r.createdAt.toISOString(), retireTime: r.retiredAt ? r.retiredAt.toISOString() : null,
  }));
}
