-- The partner-facing view of a transaction: the one shape of API answers and CARD_TRANSACTION events
-- (json keeps the key order and the amounts' digits), with the partner's decision on a forwarded
-- authorization (its latest forwarding). plpgsql, not sql (issue 10 performance): a SQL function
-- holding a subquery cannot be inlined, so each call from plpgsql parsed and planned it again; as
-- plpgsql its statement is planned once per session.
CREATE OR REPLACE FUNCTION card_transaction_json(t card_transactions) RETURNS json LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN json_build_object(
    'transId', t.trans_id,
    'cardId', t.card_id,
    'organizationId', t.organization_id,
    'subjectType', t.subject_type,
    'subjectId', t.subject_id,
    'messageType', t.message_type,
    'authType', t.auth_type,
    'debitCreditIndicator', t.debit_credit_indicator,
    'approved', CASE WHEN t.message_type = 'AUTHORIZATION' THEN t.status <> 'DECLINED' ELSE true END,
    'status', t.status,
    'declineReason', t.decline_reason,
    'declineDetail', t.decline_detail,
    'amount', t.amount,
    'currency', t.currency,
    'billingAmount', t.billing_amount,
    'billingCurrency', t.billing_currency,
    'holdAmount', t.hold_amount,
    'merchantName', t.merchant_name,
    'mcc', t.mcc,
    'merchantCountry', t.merchant_country,
    'channel', t.channel,
    'outstandingTransactionId', t.outstanding_transaction_id,
    'postedTransactionId', t.posted_transaction_id,
    'originalTransId', t.original_trans_id,
    'networkTransactionId', t.network_transaction_id,
    'source', t.source,
    'partnerDecision', (SELECT json_build_object('outcome', f.outcome, 'standInReason', f.stand_in_reason,
                                                 'partnerDeclineReason', f.decline_reason, 'latencyMs', f.latency_ms,
                                                 'httpStatus', f.http_status)
                          FROM auth_forwardings f WHERE f.trans_id = t.trans_id ORDER BY f.forwarding_id DESC LIMIT 1),
    'transactionTime', to_char(t.transaction_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'createTime', to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'modifyTime', to_char(t.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
END $$;
