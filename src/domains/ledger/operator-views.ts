import type { Queryable } from '../../platform/db/db.ts';
import { postingEntryRows } from './postings-store.ts';
import type { Bucket, OwnerType } from './store.ts';

export interface PostingDetail {
  postingId: string;
  kind: string;
  forced: boolean;
  reference: string | null;
  createdAt: Date;
  entries: {
    accountId: string;
    ownerType: OwnerType;
    ownerId: string;
    bucket: Bucket;
    /**
     * An entry lowering its account's bucket is a debit, one raising it a credit (customer accounts
     * hold what the service owes; system accounts mirror the outside world), so a posting's debits
     * equal its credits in each asset.
     */
    side: 'DEBIT' | 'CREDIT';
    /** Unsigned NUMERIC text. */
    amount: string;
    currency: string;
  }[];
}

/** At most this many entries are shown for one transaction (a transaction makes a few postings of two to four entries). */
const ENTRY_LIMIT = 200;

/**
 * Issue 29, the console's transaction page: the postings a transaction made, named by id (its
 * messages' postings) or by reference (releases and expiries reference the authorization), each
 * with its entries.
 */
export async function postingsWithEntries(q: Queryable, partnerId: string, filter: { postingIds: string[]; references: string[] }): Promise<PostingDetail[]> {
  const rows = await postingEntryRows(q, partnerId, filter.postingIds, filter.references, ENTRY_LIMIT);
  const byId = new Map<string, PostingDetail>();
  for (const r of rows) {
    let p = byId.get(r.postingId);
    if (!p) byId.set(r.postingId, (p = { postingId: r.postingId, kind: r.kind, forced: r.forced, reference: r.reference, createdAt: r.createdAt, entries: [] }));
    const negative = r.amount.startsWith('-');
    p.entries.push({ accountId: r.accountId, ownerType: r.ownerType, ownerId: r.ownerId, bucket: r.bucket, side: negative ? 'DEBIT' : 'CREDIT',
      amount: negative ? r.amount.slice(1) : r.amount, currency: r.currency });
  }
  return [...byId.values()];
}
