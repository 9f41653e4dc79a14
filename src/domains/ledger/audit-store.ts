import type { Queryable } from '../../platform/db/db.ts';

/** SQL of the ledger audit (D33): read-only; every figure re-derived from the entries. Money as NUMERIC text. */

export interface AuditAccountRow {
  accountId: string;
  allowNegative: boolean;
  available: string;
  pending: string;
  total: string;
  version: string;
  derivedAvailable: string;
  derivedPending: string;
  entryCount: string;
  lastAvailable: string | null;
  lastPending: string | null;
  lastVersion: string | null;
  forcedCount: string;
  /** Issue 34: the holds of the pending-amount layout (never entries), open or released since. */
  held: string;
  /** Of those, the ones made after the account's last entry (the last entry's balances predate them). */
  heldAfterLast: string;
  /** What the account's open authorizations (either layout) still hold: its pending must equal it. */
  openHeld: string;
}

/**
 * Every account (of the partner, or all) with its stored balances and the ones derived from its
 * entries and holds (issue 34: a hold is a pending amount recorded on its authorization, read
 * through ledger_hold_rows). A partner's audit reads only that partner's accounts, their entries
 * (index on account_id) and holds, so its cost follows the partner's ledger, not the whole table's.
 */
export async function auditAccountRows(q: Queryable, partnerId: string | null): Promise<AuditAccountRow[]> {
  return q.query<AuditAccountRow>(
    `WITH a AS (SELECT * FROM ledger_accounts WHERE $1::text IS NULL OR partner_id = $1),
          l AS (SELECT a.account_id, l.entry_id, l.available_after, l.pending_after, l.account_version
                  FROM a LEFT JOIN LATERAL (
                    SELECT entry_id, available_after, pending_after, account_version FROM ledger_entries e
                     WHERE e.account_id = a.account_id ORDER BY account_version DESC LIMIT 1) l ON true),
          hs AS (SELECT h.account_id, sum(h.held) AS held, sum(h.open_held) AS open_held,
                        sum(h.held) FILTER (WHERE h.hold_seq > COALESCE(l.entry_id, 0)) AS held_after_last
                   FROM ledger_hold_rows($1::text) h JOIN l ON l.account_id = h.account_id
                  GROUP BY h.account_id)
     SELECT a.account_id AS "accountId", a.allow_negative AS "allowNegative",
            a.available::text AS available, a.pending::text AS pending, a.total::text AS total, a.version::text AS version,
            (COALESCE(d.avail, 0) - COALESCE(hs.held, 0))::text AS "derivedAvailable",
            (COALESCE(d.pend, 0) + COALESCE(hs.held, 0))::text AS "derivedPending",
            COALESCE(d.n, 0)::text AS "entryCount", COALESCE(d.forced, 0)::text AS "forcedCount",
            l.available_after::text AS "lastAvailable", l.pending_after::text AS "lastPending",
            l.account_version::text AS "lastVersion",
            COALESCE(hs.held, 0)::text AS held, COALESCE(hs.held_after_last, 0)::text AS "heldAfterLast",
            COALESCE(hs.open_held, 0)::text AS "openHeld"
       FROM a
       JOIN l ON l.account_id = a.account_id
       LEFT JOIN (
         SELECT e.account_id,
                sum(e.amount) FILTER (WHERE e.bucket = 'AVAILABLE') AS avail,
                sum(e.amount) FILTER (WHERE e.bucket = 'PENDING') AS pend,
                count(*) AS n,
                count(*) FILTER (WHERE p.forced) AS forced
           FROM a JOIN ledger_entries e ON e.account_id = a.account_id JOIN ledger_postings p ON p.posting_id = e.posting_id
          GROUP BY e.account_id
       ) d ON d.account_id = a.account_id
       LEFT JOIN hs ON hs.account_id = a.account_id
      ORDER BY a.account_id`,
    [partnerId],
  );
}

/** Postings with fewer than two entries or not balanced per currency. */
export async function unbalancedPostings(q: Queryable, partnerId: string | null): Promise<{ postingId: string; detail: string }[]> {
  return q.query<{ postingId: string; detail: string }>(
    `SELECT p.posting_id AS "postingId",
            COALESCE(string_agg(s.currency || ' ' || s.total::text, ', '), 'no entries') || ' (' || COALESCE(sum(s.n), 0)::text || ' entries)' AS detail
       FROM ledger_postings p
       LEFT JOIN (
         -- A partner's postings move only its own accounts: its entries are found through them.
         SELECT e.posting_id, e.currency, sum(e.amount) AS total, count(*) AS n
           FROM ledger_entries e
          WHERE $1::text IS NULL OR e.account_id IN (SELECT account_id FROM ledger_accounts WHERE partner_id = $1)
          GROUP BY e.posting_id, e.currency
       ) s ON s.posting_id = p.posting_id
      WHERE $1::text IS NULL OR p.partner_id = $1
      GROUP BY p.posting_id
     HAVING COALESCE(sum(s.n), 0) < 2 OR bool_or(s.total <> 0)`,
    [partnerId],
  );
}

/** Partner currencies whose account balances do not sum to zero (money not conserved). */
export async function unconservedCurrencies(q: Queryable, partnerId: string | null): Promise<{ partnerId: string; currency: string; total: string }[]> {
  return q.query<{ partnerId: string; currency: string; total: string }>(
    `SELECT partner_id AS "partnerId", currency, sum(total)::text AS total FROM ledger_accounts
      WHERE $1::text IS NULL OR partner_id = $1
      GROUP BY partner_id, currency HAVING sum(total) <> 0`,
    [partnerId],
  );
}

export async function countPostings(q: Queryable, partnerId: string | null): Promise<number> {
  const [{ postings }] = await q.query<{ postings: string }>(
    'SELECT count(*)::text AS postings FROM ledger_postings WHERE $1::text IS NULL OR partner_id = $1',
    [partnerId],
  );
  return Number(postings);
}

/** Issue 27: the result of a whole-ledger audit. */
export async function insertAuditRun(q: Queryable, run: { finishedAt: Date; ok: boolean; findings: number; accounts: number; postings: number }): Promise<void> {
  await q.query(
    'INSERT INTO ledger_audit_runs (finished_at, ok, findings, accounts, postings) VALUES ($1, $2, $3, $4, $5)',
    [run.finishedAt, run.ok, run.findings, run.accounts, run.postings],
  );
}

/** The latest whole-ledger audit, or null when none ran. */
export async function latestAuditRun(q: Queryable): Promise<{ finishedAt: Date; ok: boolean; findings: number } | null> {
  const rows = await q.query<{ finishedAt: Date; ok: boolean; findings: number }>(
    'SELECT finished_at AS "finishedAt", ok, findings FROM ledger_audit_runs ORDER BY finished_at DESC LIMIT 1',
  );
  return rows[0] ?? null;
}
