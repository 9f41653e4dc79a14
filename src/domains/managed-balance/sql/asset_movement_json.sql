-- The partner-facing view of an asset movement (the one shape of API answers).
CREATE OR REPLACE FUNCTION asset_movement_json(m asset_movements, p_external_user_id text) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'transactionId', m.movement_id,
    'externalTranId', m.external_tran_id,
    'externalUserId', p_external_user_id,
    'type', m.type,
    'direction', m.direction,
    'asset', m.asset,
    'amount', m.amount,
    'counterAsset', m.counter_asset,
    'counterAmount', m.counter_amount,
    'rate', m.rate,
    'cardId', m.card_id,
    'remark', m.remark,
    'status', m.status,
    'freeAfter', m.free_after,
    'createTime', to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
$$;
