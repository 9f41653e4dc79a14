import type { Queryable } from '../../platform/db/db.ts';
import { transactionFamily, transactionRefsById, type TransactionRef } from './operator-store.ts';

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

export type { TransactionRef };
