import type { Queryable } from '../../platform/db/db.ts';
import { cardTransactionRefs, dueHoldCount, transactionFamily, transactionRefsById, type TransactionRef } from './operator-store.ts';

/** The operator console (issue 29): a transaction by transId or network transaction id, any partner. */
export function findTransactionRefs(q: Queryable, id: string): Promise<TransactionRef[]> {
  return transactionRefsById(q, id);
}

/** The timeline's members: the original authorization and every later message about it. */
export async function transactionTimelineRefs(q: Queryable, transId: string): Promise<TransactionRef[]> {
  const [ref] = await transactionRefsById(q, transId);
  if (!ref) return [];
  return transactionFamily(q, ref.originalTransId ?? ref.transId);
}

/** A card's transactions for the console, newest first: a page after `beforeTransId`, and whether more follow. */
export async function cardTransactionsPage(q: Queryable, cardId: string, beforeTransId: string | null, limit: number): Promise<{ refs: TransactionRef[]; more: boolean }> {
  const refs = await cardTransactionRefs(q, cardId, beforeTransId, limit + 1);
  return { refs: refs.slice(0, limit), more: refs.length > limit };
}

/** The hold-expiry job's backlog: holds due by `now` (console ledger page). */
export function holdExpiryBacklog(q: Queryable, now: Date): Promise<string> {
  return dueHoldCount(q, now);
}

export type { TransactionRef };
