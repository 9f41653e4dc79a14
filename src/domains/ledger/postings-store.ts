import type { Queryable } from '../../platform/db/db.ts';
import type { Bucket } from './store.ts';

/** SQL of postings and their entries (D33): append-only; the database applies each entry to its account. */

export interface NewPostingRow {
  postingId: string;
  partnerId: string;
  kind: string;
  forced: boolean;
  reference: string | null;
  description: string | null;
  createdAt: Date;
}

export async function insertPosting(q: Queryable, p: NewPostingRow): Promise<void> {
  await q.query(
    `INSERT INTO ledger_postings (posting_id, partner_id, kind, forced, reference, description, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [p.postingId, p.partnerId, p.kind, p.forced, p.reference, p.description, p.createdAt],
  );
}

export interface NewEntryRow {
  accountId: string;
  currency: string;
  bucket: Bucket;
  /** Signed NUMERIC text. */
  amount: string;
}

/** An entry as written, with the balances the database computed for its account (NUMERIC/BIGINT as text). */
export interface EntryRow {
  entryId: string;
  accountId: string;
  currency: string;
  bucket: Bucket;
  amount: string;
  availableAfter: string;
  pendingAfter: string;
  accountVersion: string;
}

/** One statement; rows are applied in the order given (WITH ORDINALITY keeps it explicit). */
export async function insertEntries(q: Queryable, postingId: string, createdAt: Date, entries: NewEntryRow[]): Promise<EntryRow[]> {
  return q.query<EntryRow>(
    `INSERT INTO ledger_entries (posting_id, account_id, currency, bucket, amount, available_after, pending_after, account_version, created_at)
     SELECT $1, e.account_id, e.currency, e.bucket, e.amount::numeric, 0, 0, 0, $2
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS e(account_id, currency, bucket, amount, n)
      ORDER BY e.n
     RETURNING entry_id::text AS "entryId", account_id AS "accountId", currency, bucket, amount::text AS amount,
       available_after::text AS "availableAfter", pending_after::text AS "pendingAfter", account_version::text AS "accountVersion"`,
    [postingId, createdAt, entries.map((e) => e.accountId), entries.map((e) => e.currency), entries.map((e) => e.bucket), entries.map((e) => e.amount)],
  );
}
