import type { Queryable } from '../../platform/db/db.ts';

export interface TransactionRef {
  transId: string;
  partnerId: string;
  cardId: string;
  originalTransId: string | null;
}

const REF = `trans_id AS "transId", partner_id AS "partnerId", card_id AS "cardId", original_trans_id AS "originalTransId"`;

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
