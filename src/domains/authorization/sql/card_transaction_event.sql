-- Records a CARD_TRANSACTION event in the outbox (D38): sequence per (partner, card), the sequence's
-- upsert and the event's insert as one statement (issue 34 step 5). Called by card_authorize and by
-- the authorization store's later writes. The events domain's recordEvent does the same from
-- TypeScript; this twin writes its tables from the authorization domain (docs/contributing.md lists
-- the exception).
CREATE OR REPLACE FUNCTION card_transaction_event(t card_transactions, p_event_id text, p_now timestamptz, p_payload text DEFAULT NULL) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  WITH s AS (
    INSERT INTO event_sequences (partner_id, business_id, last_sequence) VALUES (t.partner_id, t.card_id, 1)
      ON CONFLICT (partner_id, business_id) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1
      RETURNING last_sequence)
  INSERT INTO events (event_id, partner_id, event_type, business_id, sequence, payload, create_time, status, next_attempt_at)
    SELECT p_event_id, t.partner_id, 'CARD_TRANSACTION', t.card_id, s.last_sequence,
           COALESCE(p_payload, card_transaction_json(t)::text), p_now, 'PENDING', p_now
      FROM s;
END $$;
