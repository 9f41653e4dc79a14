-- Records a CARD_TRANSACTION event in the outbox (D38): sequence per (partner, card), through the
-- events domain's event_record (events/sql/event_record.sql). Called by the authorization store's
-- later writes (clearing, reversal, expiry); card_authorize calls event_record itself with the payload
-- it built.
CREATE OR REPLACE FUNCTION card_transaction_event(t card_transactions, p_event_id text, p_now timestamptz, p_payload text DEFAULT NULL) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM event_record(p_event_id, t.partner_id, 'CARD_TRANSACTION', t.card_id, COALESCE(p_payload, card_transaction_json(t)::text), p_now);
END $$;
