import type { Queryable } from '../../platform/db/db.ts';
import { fromDb } from '../../platform/money.ts';

/**
 * D33: "the ledger can be audited by a command that re-derives every balance". Re-derives each
 * account's available and pending from its entries and compares them with the stored balances,
 * the balances recorded on the account's last entry, and the version; lists postings that are not
 * balanced per currency or have fewer than two entries, and accounts breaking pending >= 0 or
 * available >= 0 (a negative available is reported as a finding only when no forced posting
 * explains it), and partner currencies whose balances do not sum to zero (money is conserved:
 * every posting is balanced and every account starts empty). Read-only; run it through
 * GET /internal/admin/v1/ledger/audit.
 */
export interface AuditFinding {
  kind: 'BALANCE_MISMATCH' | 'LAST_ENTRY_MISMATCH' | 'VERSION_MISMATCH' | 'UNBALANCED_POSTING' | 'NEGATIVE_PENDING' | 'NEGATIVE_AVAILABLE'
    | 'NOT_CONSERVED';
  accountId?: string;
  postingId?: string;
  detail: string;
}

export interface AuditReport {
  ok: boolean;
  accounts: number;
  postings: number;
  entries: number;
  findings: AuditFinding[];
}

/** Findings listed at most; the counts stay exact. */
const MAX_FINDINGS = 1000;

export async function auditLedger(q: Queryable, options: { partnerId?: string } = {}): Promise<AuditReport> {
  const partner = options.partnerId ?? null;
  const findings: AuditFinding[] = [];
  const add = (f: AuditFinding) => {
    if (findings.length < MAX_FINDINGS) findings.push(f);
  };

  const accounts = await q.query<{
    accountId: string; allowNegative: boolean; available: string; pending: string; total: string; version: string;
    derivedAvailable: string; derivedPending: string; entryCount: string;
    lastAvailable: string | null; lastPending: string | null; lastVersion: string | null; forcedCount: string;
  }>(
    `SELECT a.account_id AS "accountId", a.allow_negative AS "allowNegative",
            a.available::text AS available, a.pending::text AS pending, a.total::text AS total, a.version::text AS version,
            COALESCE(d.avail, 0)::text AS "derivedAvailable", COALESCE(d.pend, 0)::text AS "derivedPending",
            COALESCE(d.n, 0)::text AS "entryCount", COALESCE(d.forced, 0)::text AS "forcedCount",
            l.available_after::text AS "lastAvailable", l.pending_after::text AS "lastPending",
            l.account_version::text AS "lastVersion"
       FROM ledger_accounts a
       LEFT JOIN (
         SELECT e.account_id,
                sum(e.amount) FILTER (WHERE e.bucket = 'AVAILABLE') AS avail,
                sum(e.amount) FILTER (WHERE e.bucket = 'PENDING') AS pend,
                count(*) AS n,
                count(*) FILTER (WHERE p.forced) AS forced
           FROM ledger_entries e JOIN ledger_postings p ON p.posting_id = e.posting_id
          GROUP BY e.account_id
       ) d ON d.account_id = a.account_id
       LEFT JOIN LATERAL (
         SELECT available_after, pending_after, account_version FROM ledger_entries e
          WHERE e.account_id = a.account_id ORDER BY account_version DESC LIMIT 1
       ) l ON true
      WHERE $1::text IS NULL OR a.partner_id = $1
      ORDER BY a.account_id`,
    [partner],
  );
  let entries = 0;
  for (const a of accounts) {
    entries += Number(a.entryCount);
    const available = fromDb(a.available);
    const pending = fromDb(a.pending);
    if (!available.eq(fromDb(a.derivedAvailable)) || !pending.eq(fromDb(a.derivedPending))) {
      add({ kind: 'BALANCE_MISMATCH', accountId: a.accountId,
        detail: `stored ${a.available}/${a.pending}, derived from entries ${a.derivedAvailable}/${a.derivedPending}` });
    }
    if (!fromDb(a.total).eq(available.plus(pending))) {
      add({ kind: 'BALANCE_MISMATCH', accountId: a.accountId, detail: `total ${a.total} is not available + pending` });
    }
    if (Number(a.version) !== Number(a.entryCount)) {
      add({ kind: 'VERSION_MISMATCH', accountId: a.accountId, detail: `version ${a.version}, entries ${a.entryCount}` });
    }
    if (a.lastVersion !== null && (!fromDb(a.lastAvailable).eq(available) || !fromDb(a.lastPending).eq(pending) || a.lastVersion !== a.version)) {
      add({ kind: 'LAST_ENTRY_MISMATCH', accountId: a.accountId,
        detail: `last entry says ${a.lastAvailable}/${a.lastPending} v${a.lastVersion}, account ${a.available}/${a.pending} v${a.version}` });
    }
    if (pending.lt(0)) add({ kind: 'NEGATIVE_PENDING', accountId: a.accountId, detail: `pending ${a.pending}` });
    if (available.lt(0) && !a.allowNegative && Number(a.forcedCount) === 0) {
      add({ kind: 'NEGATIVE_AVAILABLE', accountId: a.accountId, detail: `available ${a.available} without a forced posting` });
    }
  }

  const unbalanced = await q.query<{ postingId: string; detail: string }>(
    `SELECT p.posting_id AS "postingId",
            COALESCE(string_agg(s.currency || ' ' || s.total::text, ', '), 'no entries') || ' (' || COALESCE(sum(s.n), 0)::text || ' entries)' AS detail
       FROM ledger_postings p
       LEFT JOIN (SELECT posting_id, currency, sum(amount) AS total, count(*) AS n FROM ledger_entries GROUP BY posting_id, currency) s
         ON s.posting_id = p.posting_id
      WHERE $1::text IS NULL OR p.partner_id = $1
      GROUP BY p.posting_id
     HAVING COALESCE(sum(s.n), 0) < 2 OR bool_or(s.total <> 0)`,
    [partner],
  );
  for (const u of unbalanced) add({ kind: 'UNBALANCED_POSTING', postingId: u.postingId, detail: u.detail });

  const unconserved = await q.query<{ partnerId: string; currency: string; total: string }>(
    `SELECT partner_id AS "partnerId", currency, sum(total)::text AS total FROM ledger_accounts
      WHERE $1::text IS NULL OR partner_id = $1
      GROUP BY partner_id, currency HAVING sum(total) <> 0`,
    [partner],
  );
  for (const u of unconserved) add({ kind: 'NOT_CONSERVED', detail: `partner ${u.partnerId} ${u.currency} balances sum to ${u.total}` });

  const [{ postings }] = await q.query<{ postings: string }>(
    'SELECT count(*)::text AS postings FROM ledger_postings WHERE $1::text IS NULL OR partner_id = $1',
    [partner],
  );
  return { ok: findings.length === 0, accounts: accounts.length, postings: Number(postings), entries, findings };
}
