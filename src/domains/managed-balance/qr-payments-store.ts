import type { Queryable } from '../../platform/db/db.ts';
import { Where } from '../../platform/db/where.ts';

/** QR payments (2.9 transType): the rows as stored and their partner-facing JSON (qr_payment_json, sql/qr_payment_json.sql). */

export interface QrPaymentRow {
  orderId: string;
  partnerId: string;
  userId: string;
  externalUserId: string;
  transType: 'PAY' | 'REFUND' | 'REFUND_PART' | 'REVERSAL';
  asset: string;
  amount: string;
  status: 'SUCCESS' | 'DECLINED';
  returnedAmount: string;
  merchantName: string | null;
  merchantCountry: string | null;
  mcc: string | null;
  createdAt: Date;
}

const ROW = `q.order_id AS "orderId", q.partner_id AS "partnerId", q.user_id AS "userId", u.external_user_id AS "externalUserId",
  q.trans_type AS "transType", q.asset, q.amount::text AS amount, q.status, q.returned_amount::text AS "returnedAmount",
  q.merchant_name AS "merchantName", q.merchant_country AS "merchantCountry", q.mcc, q.created_at AS "createdAt"`;

/** Serializes the copies of one message id (whatever instance each reached) until the transaction ends. */
export async function lockQrMessage(q: Queryable, networkTransactionId: string): Promise<void> {
  await q.query(`SELECT pg_advisory_xact_lock(hashtextextended('qr-net:' || $1, 0))`, [networkTransactionId]);
}

/** The answer already given to a message id, or null. */
export async function qrBodyByMessageId(q: Queryable, networkTransactionId: string): Promise<string | null> {
  const rows = await q.query<{ body: string }>(
    `SELECT qr_payment_json(q, u.external_user_id)::text AS body FROM qr_payments q JOIN managed_users u ON u.user_id = q.user_id
      WHERE q.network_transaction_id = $1`, [networkTransactionId]);
  return rows[0]?.body ?? null;
}

/**
 * The PAY a return names, locked: returns of one payment serialize here. By message id (network) or orderId of
 * the partner (sandbox). Only the keys given are in the statement (Where): with all of them optional in one
 * statement, its generic plan read every payment of every partner.
 */
export async function lockPayment(q: Queryable, by: { networkTransactionId?: string; orderId?: string; partnerId?: string }): Promise<QrPaymentRow | null> {
  const w = new Where();
  w.eq('q.network_transaction_id', by.networkTransactionId);
  w.eq('q.order_id', by.orderId);
  w.eq('q.partner_id', by.partnerId);
  w.and(`q.trans_type = 'PAY'`);
  const rows = await q.query<QrPaymentRow>(
    `SELECT ${ROW} FROM qr_payments q JOIN managed_users u ON u.user_id = q.user_id
      WHERE ${w.sql}
      FOR UPDATE OF q`,
    w.params,
  );
  return rows[0] ?? null;
}

export interface NewQrPayment {
  orderId: string;
  partnerId: string;
  userId: string;
  networkTransactionId: string;
  source: 'NETWORK' | 'SANDBOX';
  transType: QrPaymentRow['transType'];
  debitCreditIndicator: 'D' | 'C';
  asset: string;
  amount: string;
  merchantName: string | null;
  merchantCountry: string | null;
  mcc: string | null;
  status: QrPaymentRow['status'];
  declineReason: string | null;
  declineDetail: string | null;
  originalOrderId: string | null;
  postingId: string | null;
  freeAfter: string | null;
  now: Date;
}

export async function insertQrPayment(q: Queryable, r: NewQrPayment, externalUserId: string): Promise<string> {
  const rows = await q.query<{ body: string }>(
    `WITH ins AS (
       INSERT INTO qr_payments (order_id, partner_id, user_id, network_transaction_id, source, trans_type, debit_credit_indicator, asset, amount,
                                merchant_name, merchant_country, mcc, status, decline_reason, decline_detail, original_order_id, posting_id,
                                free_after, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::numeric, $10, $11, $12, $13, $14, $15, $16, $17, $18::numeric, $19, $19)
       RETURNING *)
     SELECT qr_payment_json(ins, $20)::text AS body FROM ins`,
    [r.orderId, r.partnerId, r.userId, r.networkTransactionId, r.source, r.transType, r.debitCreditIndicator, r.asset, r.amount,
      r.merchantName, r.merchantCountry, r.mcc, r.status, r.declineReason, r.declineDetail, r.originalOrderId, r.postingId, r.freeAfter, r.now,
      externalUserId],
  );
  return rows[0].body;
}

/** Adds a return to its PAY; the row's CHECK refuses more than the payment (an invariant: the caller checked). */
export async function addReturned(q: Queryable, orderId: string, amount: string, now: Date): Promise<void> {
  await q.query('UPDATE qr_payments SET returned_amount = returned_amount + $2::numeric, updated_at = $3 WHERE order_id = $1', [orderId, amount, now]);
}

export interface QrFilter {
  partnerId: string;
  userId: string | null;
  transType: string | null;
  status: string | null;
  asset: string | null;
  startTime: Date | null;
  endTime: Date | null;
}

export async function listQrBodies(q: Queryable, f: QrFilter, limit: number, offset: number): Promise<{ total: number; bodies: string[] }> {
  const w = new Where();
  w.and(`q.partner_id = ${w.arg(f.partnerId, 'text')}`);
  w.eq('q.user_id', f.userId);
  w.eq('q.trans_type', f.transType);
  w.eq('q.status', f.status);
  w.eq('q.asset', f.asset);
  if (f.startTime !== null) w.and(`q.created_at >= ${w.arg(f.startTime, 'timestamptz')}`);
  if (f.endTime !== null) w.and(`q.created_at < ${w.arg(f.endTime, 'timestamptz')}`);
  const [count] = await q.query<{ n: string }>(`SELECT count(*) AS n FROM qr_payments q WHERE ${w.sql}`, w.params);
  const rows = await q.query<{ body: string }>(
    `SELECT qr_payment_json(q, u.external_user_id)::text AS body FROM qr_payments q JOIN managed_users u ON u.user_id = q.user_id
      WHERE ${w.sql} ORDER BY q.created_at DESC, q.order_id DESC LIMIT ${w.next()} OFFSET ${w.next(1)}`, [...w.params, limit, offset]);
  return { total: Number(count.n), bodies: rows.map((r) => r.body) };
}

export async function findQrBody(q: Queryable, partnerId: string, orderId: string): Promise<string | null> {
  const rows = await q.query<{ body: string }>(
    `SELECT qr_payment_json(q, u.external_user_id)::text AS body FROM qr_payments q JOIN managed_users u ON u.user_id = q.user_id
      WHERE q.partner_id = $1 AND q.order_id = $2`, [partnerId, orderId]);
  return rows[0]?.body ?? null;
}
