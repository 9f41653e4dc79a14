import type { Queryable } from '../../platform/db/db.ts';
import { fromDb } from '../../platform/money.ts';
import { auditAccountRows, countPostings, unbalancedPostings, unconservedCurrencies } from './audit-store.ts';

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

  const accounts = await auditAccountRows(q, partner);
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

  const unbalanced = await unbalancedPostings(q, partner);
  for (const u of unbalanced) add({ kind: 'UNBALANCED_POSTING', postingId: u.postingId, detail: u.detail });

  const unconserved = await unconservedCurrencies(q, partner);
  for (const u of unconserved) add({ kind: 'NOT_CONSERVED', detail: `partner ${u.partnerId} ${u.currency} balances sum to ${u.total}` });

  const postings = await countPostings(q, partner);
  return { ok: findings.length === 0, accounts: accounts.length, postings, entries, findings };
}
