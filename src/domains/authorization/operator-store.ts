import type { Queryable } from '../../platform/db/db.ts';

export interface TransactionRef {
  transId: string;
  partnerId: string;
  cardId: string;
  originalTransId: string | null;
  /** The ledger posting the message made, if any. */
  postingId: string | null;
}

const REF = `trans_id AS "transId", partner_id AS "partnerId", card_id AS "cardId", original_trans_id AS "originalTransId", posting_id AS "postingId"`;

/** A transaction by its transId or its network transaction id, across partners (issue 29). */
export async function transactionRefsById(q: Queryable, id: string): Promise<TransactionRef[]> {
  return q.query<TransactionRef>(
    `SELECT ${REF} FROM card_transactions WHERE trans_id = $1
     UNION ALL SELECT ${REF} FROM card_transactions WHERE network_transaction_id = $1 AND trans_id <> $1`,
    [id],
  );
}

/** The messages of one authorization's life: itself and every message naming it as original. */
export async function transactionFamily(q: Queryable, rootTransId: string): Promise<TransactionRef[]> {
  return q.query<TransactionRef>(
    `SELECT ${REF} FROM card_transactions WHERE trans_id = $1
     UNION ALL SELECT ${REF} FROM card_transactions WHERE original_trans_id = $1`,
    [rootTransId],
  );
}

/**
 * A card's transactions, newest first, keyset-paged after the transaction `beforeTransId` (index
 * card_transactions_card_time): constant time on any page, where an offset grows with the page.
 */
export async function cardTransactionRefs(q: Queryable, cardId: string, beforeTransId: string | null, limit: number): Promise<TransactionRef[]> {
  return q.query<TransactionRef>(
    `SELECT ${REF} FROM card_transactions
     WHERE card_id = $1
       AND ($2::text IS NULL OR (created_at, trans_id) < (SELECT b.created_at, b.trans_id FROM card_transactions b WHERE b.trans_id = $2 AND b.card_id = $1))
     ORDER BY created_at DESC, trans_id DESC LIMIT $3`,
    [cardId, beforeTransId, limit],
  );
}

/** Authorization holds past their expiry date (the hold-expiry job's backlog), across partners. */
export async function dueHoldCount(q: Queryable, now: Date): Promise<string> {
  const rows = await q.query<{ n: string }>(
    `SELECT count(*)::bigint AS n FROM card_transactions WHERE message_type = 'AUTHORIZATION' AND status = 'PENDING' AND expiry_due_at <= $1`,
    [now],
  );
  return rows[0].n;
}
