import type { Queryable } from './db/db.ts';

/** SQL of the mail outbox (D14, D51); plain objects in and out. */

export interface OutboxMailRow {
  mailId: string;
  recipient: string;
  subject: string;
  body: string;
  transport: string;
  sentAt: Date | null;
  error: string | null;
  createdAt: Date;
}

export type NewOutboxMail = Pick<OutboxMailRow, 'mailId' | 'recipient' | 'subject' | 'body'> & { transport: 'SMTP' | 'OUTBOX' };

export async function insertMail(q: Queryable, m: NewOutboxMail): Promise<void> {
  await q.query(
    `INSERT INTO outbox_mail (mail_id, recipient, subject, body, transport) VALUES ($1, $2, $3, $4, $5)`,
    [m.mailId, m.recipient, m.subject, m.body, m.transport],
  );
}

export async function markMailSent(q: Queryable, mailId: string): Promise<void> {
  await q.query('UPDATE outbox_mail SET sent_at = now() WHERE mail_id = $1', [mailId]);
}

export async function markMailFailed(q: Queryable, mailId: string, error: string): Promise<void> {
  await q.query('UPDATE outbox_mail SET error = $2 WHERE mail_id = $1', [mailId, error]);
}

/** Newest first; `recipient` null lists every message. */
export async function listMail(q: Queryable, recipient: string | null, limit: number, offset: number): Promise<{ total: number; rows: OutboxMailRow[] }> {
  const [{ total }] = await q.query<{ total: number }>(
    'SELECT count(*)::int AS total FROM outbox_mail WHERE $1::text IS NULL OR recipient = $1', [recipient],
  );
  const rows = await q.query<OutboxMailRow>(
    `SELECT mail_id AS "mailId", recipient, subject, body, transport, sent_at AS "sentAt", error, created_at AS "createdAt"
       FROM outbox_mail WHERE $1::text IS NULL OR recipient = $1
      ORDER BY created_at DESC, mail_id DESC LIMIT $2 OFFSET $3`,
    [recipient, limit, offset],
  );
  return { total, rows };
}
