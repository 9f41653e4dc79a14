import type { Queryable } from '../../platform/db/db.ts';
import type { Bucket, OwnerType } from './store.ts';

/** SQL of postings and their entries (D33): append-only; written only through ledger_post. */

export interface NewPostingRow {
  postingId: string;
  partnerId: string;
  kind: string;
  forced: boolean;
  reference: string | null;
  description: string | null;
  createdAt: Date;
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

/**
 * One call of ledger_post (sql/ledger_post.sql), the ledger's one writer: the posting and its entries,
 * applied in the order given; the database checks the posting and answers each entry with the
 * balances after it.
 */
export async function insertPosting(q: Queryable, p: NewPostingRow, entries: NewEntryRow[]): Promise<EntryRow[]> {
  return q.query<EntryRow>(
    `SELECT entry_id::text AS "entryId", account_id AS "accountId", currency, bucket, amount::text AS amount,
            available_after::text AS "availableAfter", pending_after::text AS "pendingAfter", account_version::text AS "accountVersion"
       FROM ledger_post($1, $2, $3, $4, $5, $6, $7, $8::text[], $9::text[], $10::text[], $11::text[]::numeric[])`,
    [p.postingId, p.partnerId, p.kind, p.forced, p.reference, p.description, p.createdAt,
      entries.map((e) => e.accountId), entries.map((e) => e.currency), entries.map((e) => e.bucket), entries.map((e) => e.amount)],
  );
}

/** One line per posting and account: the account's change and its balances after the posting (NUMERIC as text). */
export interface MovementRow {
  firstEntryId: string;
  postingId: string;
  currency: string;
  kind: string;
  reference: string | null;
  description: string | null;
  createdAt: Date;
  amount: string;
  availableChange: string;
  pendingChange: string;
  availableAfter: string;
  pendingAfter: string;
}

export interface MovementFilter {
  partnerId: string;
  ownerType: OwnerType;
  ownerId: string;
  currency: string | null;
  startTime: Date | null;
  endTime: Date | null;
}

/**
 * Movements of an owner's accounts: one line per posting and account (a hold moving money from
 * available to pending is one line), newest first (D9). Issue 34: a hold of the pending-amount
 * layout is not a posting; its line comes from its authorization's record (ledger_hold_lines) as
 * its posting showed it (AUTHORIZATION, available -held, pending +held, the balances after), and its
 * number (hold_seq, from the entries' sequence) names and orders it like an entry's.
 */
export async function listMovementRows(q: Queryable, f: MovementFilter, limit: number, offset: number): Promise<{ total: number; rows: MovementRow[] }> {
  const where = `a.partner_id = $1 AND a.owner_type = $2 AND a.owner_id = $3
    AND ($4::text IS NULL OR a.currency = $4)
    AND ($5::timestamptz IS NULL OR e.created_at >= $5) AND ($6::timestamptz IS NULL OR e.created_at < $6)`;
  const holds = 'ledger_hold_lines($1::text, $2::text, $3::text, $4::text, $5::timestamptz, $6::timestamptz)';
  const params = [f.partnerId, f.ownerType, f.ownerId, f.currency, f.startTime, f.endTime];
  const [{ total }] = await q.query<{ total: number }>(
    `SELECT (SELECT count(*)::int FROM (
              SELECT 1 FROM ledger_entries e JOIN ledger_accounts a ON a.account_id = e.account_id
               WHERE ${where} GROUP BY e.posting_id, e.account_id) g)
          + (SELECT count(*)::int FROM ${holds}) AS total`,
    params,
  );
  const rows = await q.query<MovementRow>(
    `SELECT "firstEntryId", "postingId", currency, kind, reference, description, "createdAt", amount, "availableChange", "pendingChange",
            "availableAfter", "pendingAfter"
       FROM (
         SELECT min(e.entry_id) AS seq, min(e.entry_id)::text AS "firstEntryId", e.posting_id AS "postingId", a.currency, p.kind, p.reference,
                p.description, p.created_at AS "createdAt",
                sum(e.amount)::text AS amount,
                COALESCE(sum(e.amount) FILTER (WHERE e.bucket = 'AVAILABLE'), 0)::text AS "availableChange",
                COALESCE(sum(e.amount) FILTER (WHERE e.bucket = 'PENDING'), 0)::text AS "pendingChange",
                ((array_agg(e.available_after ORDER BY e.account_version DESC))[1])::text AS "availableAfter",
                ((array_agg(e.pending_after ORDER BY e.account_version DESC))[1])::text AS "pendingAfter"
           FROM ledger_entries e
           JOIN ledger_accounts a ON a.account_id = e.account_id
           JOIN ledger_postings p ON p.posting_id = e.posting_id
          WHERE ${where}
          GROUP BY e.posting_id, e.account_id, a.currency, p.kind, p.reference, p.description, p.created_at
         UNION ALL
         SELECT h.hold_seq, h.hold_seq::text, h.posting_id, h.currency, 'AUTHORIZATION', h.reference, 'Authorization hold', h.created_at,
                (h.held - h.held)::text, (-h.held)::text, h.held::text, h.available_after::text, h.pending_after::text
           FROM ${holds} h
       ) m
      ORDER BY "createdAt" DESC, seq DESC
      LIMIT $7 OFFSET $8`,
    [...params, limit, offset],
  );
  return { total, rows };
}

/** Whether any entry on the account after `afterVersion` left its available at or above `threshold`. */
export async function availableReachedSince(q: Queryable, accountId: string, afterVersion: string, threshold: string): Promise<boolean> {
  const rows = await q.query(
    `SELECT 1 FROM ledger_entries WHERE account_id = $1 AND account_version > $2 AND available_after >= $3::numeric LIMIT 1`,
    [accountId, afterVersion, threshold],
  );
  return rows.length > 0;
}

/** An entry with its posting and its account's owner, for the console (NUMERIC as text). */
export interface PostingEntryRow {
  postingId: string;
  kind: string;
  forced: boolean;
  reference: string | null;
  createdAt: Date;
  entryId: string;
  accountId: string;
  ownerType: OwnerType;
  ownerId: string;
  currency: string;
  bucket: Bucket;
  amount: string;
}

/**
 * The entries of the postings named by id, or by one of a partner's references (primary key and
 * ledger_postings_reference; entries by ledger_entries_posting), in posting then entry order; and
 * the holds of the authorizations named among the references as the two entries their posting had
 * (issue 34: a hold is not a posting, ledger_hold_entries), ordered with the postings by their
 * first entry's number.
 */
export async function postingEntryRows(q: Queryable, partnerId: string, postingIds: string[], references: string[], limit: number): Promise<PostingEntryRow[]> {
  return q.query<PostingEntryRow>(
    `SELECT "postingId", kind, forced, reference, "createdAt", "entryId", "accountId", "ownerType", "ownerId", currency, bucket, amount
       FROM (
         SELECT p.posting_id AS "postingId", p.kind, p.forced, p.reference, p.created_at AS "createdAt", e.entry_id::text AS "entryId",
                e.account_id AS "accountId", a.owner_type AS "ownerType", a.owner_id AS "ownerId", e.currency, e.bucket, e.amount::text AS amount,
                min(e.entry_id) OVER (PARTITION BY p.posting_id) AS first, e.entry_id AS k
           FROM (SELECT * FROM ledger_postings WHERE posting_id = ANY($2::text[])
                 UNION SELECT * FROM ledger_postings WHERE partner_id = $1 AND reference = ANY($3::text[])) p
           JOIN ledger_entries e ON e.posting_id = p.posting_id
           JOIN ledger_accounts a ON a.account_id = e.account_id
         UNION ALL
         SELECT h.posting_id, 'AUTHORIZATION', false, h.reference, h.created_at, h.hold_seq::text, h.account_id, h.owner_type, h.owner_id,
                h.currency, h.bucket, h.amount::text, h.hold_seq, CASE h.bucket WHEN 'AVAILABLE' THEN 0 ELSE 1 END
           FROM ledger_hold_entries($1::text, $3::text[]) h
       ) r
      ORDER BY first, k
      LIMIT $4`,
    [partnerId, postingIds, references, limit],
  );
}
