-- The partner-facing record (one shape for answers, lists and the push stream).
CREATE OR REPLACE FUNCTION qr_payment_json(q qr_payments, p_external_user_id text) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'orderId', q.order_id,
    'transType', q.trans_type,
    'debitCreditIndicator', q.debit_credit_indicator,
    'externalUserId', p_external_user_id,
    'asset', q.asset,
    'amount', q.amount,
    'merchantName', q.merchant_name,
    'merchantCountry', q.merchant_country,
    'mcc', q.mcc,
    'status', q.status,
    'declineReason', q.decline_reason,
    'declineDetail', q.decline_detail,
    'originalOrderId', q.original_order_id,
    'returnedAmount', CASE WHEN q.trans_type = 'PAY' THEN q.returned_amount END,
    'freeAfter', q.free_after,
    'source', q.source,
    'networkTransactionId', q.network_transaction_id,
    'createTime', to_char(q.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updateTime', to_char(q.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
$$;
