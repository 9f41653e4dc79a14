-- Records an event in the outbox (D38), in the caller's transaction, as one statement: the next
-- sequence of (partner, business id) (the upsert takes the row lock, so concurrent writers for one
-- business id are serialized and never share a number), the event itself (never changed after) and
-- its delivery state, due at once (migration 157). Answers the sequence. The one writer of events:
-- recordEvent (outbox.ts) and the authorization domain's functions call it.
CREATE OR REPLACE FUNCTION event_record(p_event_id text, p_partner_id text, p_event_type text, p_business_id text,
                                        p_payload text, p_now timestamptz) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_sequence bigint;
BEGIN
  WITH s AS (
    INSERT INTO event_sequences (partner_id, business_id, last_sequence) VALUES (p_partner_id, p_business_id, 1)
      ON CONFLICT (partner_id, business_id) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1
      RETURNING last_sequence
  ), e AS (
    INSERT INTO events (event_id, partner_id, event_type, business_id, sequence, payload, create_time)
      SELECT p_event_id, p_partner_id, p_event_type, p_business_id, s.last_sequence, p_payload, p_now FROM s
      RETURNING sequence
  ), d AS (
    INSERT INTO event_deliveries (event_id, partner_id, status, next_attempt_at) VALUES (p_event_id, p_partner_id, 'PENDING', p_now)
  )
  SELECT sequence INTO v_sequence FROM e;
  RETURN v_sequence;
END $$;
