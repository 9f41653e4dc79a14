import type { Queryable } from '../db/db.ts';

/** SQL of the card data keys (D26): wrapped keys only, never key material in the clear. */

export type CardKeyPurpose = 'PAN_DATA' | 'PAN_FINGERPRINT' | 'CVK';

export interface KeyRow {
  keyId: string;
  purpose: CardKeyPurpose;
  wrappedKey: string;
}

export interface KeyInfoRow {
  keyId: string;
  purpose: CardKeyPurpose;
  source: 'GENERATED' | 'CONFIGURED';
  status: 'ACTIVE' | 'RETIRED';
  checkValue: string;
  createdAt: Date;
  retiredAt: Date | null;
}

export type NewKeyRow = KeyRow & Pick<KeyInfoRow, 'source' | 'checkValue' | 'createdAt'>;

const KEY_COLUMNS = `key_id AS "keyId", purpose, wrapped_key AS "wrappedKey"`;

export async function insertKeyRow(q: Queryable, k: NewKeyRow): Promise<void> {
  await q.query(
    `INSERT INTO card_keys (key_id, purpose, wrapped_key, source, status, check_value, created_at)
     VALUES ($1, $2, $3, $4, 'ACTIVE', $5, $6)`,
    [k.keyId, k.purpose, k.wrappedKey, k.source, k.checkValue, k.createdAt],
  );
}

export async function retireActiveKeys(q: Queryable, purpose: CardKeyPurpose, now: Date): Promise<void> {
  await q.query(`UPDATE card_keys SET status = 'RETIRED', retired_at = $2 WHERE purpose = $1 AND status = 'ACTIVE'`, [purpose, now]);
}

export async function activateKey(q: Queryable, keyId: string): Promise<void> {
  await q.query(`UPDATE card_keys SET status = 'ACTIVE', retired_at = NULL WHERE key_id = $1`, [keyId]);
}

/** Active key id per purpose. */
export async function activeKeyIds(q: Queryable): Promise<Map<CardKeyPurpose, string>> {
  const rows = await q.query<{ purpose: CardKeyPurpose; keyId: string }>(`SELECT purpose, key_id AS "keyId" FROM card_keys WHERE status = 'ACTIVE'`);
  return new Map(rows.map((r) => [r.purpose, r.keyId]));
}

export async function findKeyPurpose(q: Queryable, keyId: string): Promise<CardKeyPurpose | null> {
  const [row] = await q.query<{ purpose: CardKeyPurpose }>('SELECT purpose FROM card_keys WHERE key_id = $1', [keyId]);
  return row?.purpose ?? null;
}

export async function findActiveKeyRow(q: Queryable, purpose: CardKeyPurpose): Promise<KeyRow | null> {
  const [row] = await q.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM card_keys WHERE purpose = $1 AND status = 'ACTIVE'`, [purpose]);
  return row ?? null;
}

export async function findKeyRow(q: Queryable, keyId: string): Promise<KeyRow | null> {
  const [row] = await q.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM card_keys WHERE key_id = $1`, [keyId]);
  return row ?? null;
}

export async function listKeyRows(q: Queryable): Promise<KeyInfoRow[]> {
  return q.query<KeyInfoRow>(
    `SELECT key_id AS "keyId", purpose, source, status, check_value AS "checkValue", created_at AS "createdAt", retired_at AS "retiredAt"
     FROM card_keys ORDER BY created_at DESC, key_id`,
  );
}
