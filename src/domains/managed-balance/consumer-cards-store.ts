import type { Queryable } from '../../platform/db/db.ts';

/** Contacts of managed users and the verification codes of /card/v2/block (D36): rows as stored. */

export interface ContactRow {
  userId: string;
  mobile: string | null;
  email: string | null;
}

/** Sets the given contact fields (null leaves a field as it is). */
export async function upsertContact(q: Queryable, c: ContactRow, now: Date): Promise<ContactRow> {
  const rows = await q.query<ContactRow>(
    `INSERT INTO managed_user_contacts (user_id, mobile, email, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_id) DO UPDATE SET mobile = COALESCE(excluded.mobile, managed_user_contacts.mobile),
       email = COALESCE(excluded.email, managed_user_contacts.email), updated_at = excluded.updated_at
     RETURNING user_id AS "userId", mobile, email`,
    [c.userId, c.mobile, c.email, now],
  );
  return rows[0];
}

export async function findContact(q: Queryable, userId: string): Promise<ContactRow | null> {
  const rows = await q.query<ContactRow>('SELECT user_id AS "userId", mobile, email FROM managed_user_contacts WHERE user_id = $1', [userId]);
  return rows[0] ?? null;
}

export interface CodeRow {
  codeId: string;
  channel: 'SMS' | 'EMAIL';
  codeHmac: string;
  expiresAt: Date;
  attempts: number;
}

/** A new code for the card; the card's earlier open codes are superseded (only the newest one works). */
export async function insertCode(
  q: Queryable,
  c: { codeId: string; partnerId: string; userId: string; cardId: string; channel: 'SMS' | 'EMAIL'; codeHmac: string; expiresAt: Date; now: Date },
): Promise<void> {
  await q.query(
    `UPDATE card_verification_codes SET superseded_at = $2 WHERE card_id = $1 AND used_at IS NULL AND superseded_at IS NULL`,
    [c.cardId, c.now],
  );
  await q.query(
    `INSERT INTO card_verification_codes (code_id, partner_id, user_id, card_id, channel, code_hmac, expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [c.codeId, c.partnerId, c.userId, c.cardId, c.channel, c.codeHmac, c.expiresAt, c.now],
  );
}

/** When the card's codes were sent since `since`, newest first. */
export async function codeTimesSince(q: Queryable, cardId: string, since: Date): Promise<Date[]> {
  const rows = await q.query<{ createdAt: Date }>(
    'SELECT created_at AS "createdAt" FROM card_verification_codes WHERE card_id = $1 AND created_at > $2 ORDER BY created_at DESC',
    [cardId, since],
  );
  return rows.map((r) => r.createdAt);
}

/** The card's newest code that is neither used nor superseded, locked for the check. */
export async function lockOpenCode(q: Queryable, cardId: string): Promise<CodeRow | null> {
  const rows = await q.query<CodeRow>(
    `SELECT code_id AS "codeId", channel, code_hmac AS "codeHmac", expires_at AS "expiresAt", attempts
       FROM card_verification_codes WHERE card_id = $1 AND used_at IS NULL AND superseded_at IS NULL
      ORDER BY created_at DESC LIMIT 1 FOR UPDATE`,
    [cardId],
  );
  return rows[0] ?? null;
}

export async function countFailedAttempt(q: Queryable, codeId: string): Promise<void> {
  await q.query('UPDATE card_verification_codes SET attempts = attempts + 1 WHERE code_id = $1', [codeId]);
}

export async function markCodeUsed(q: Queryable, codeId: string, now: Date): Promise<void> {
  await q.query('UPDATE card_verification_codes SET used_at = $2 WHERE code_id = $1', [codeId, now]);
}
