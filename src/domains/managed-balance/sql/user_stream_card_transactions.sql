-- Every record and change of a consumer card's transaction lands in the push stream (D39) in the
-- transaction that books it, whatever path wrote it (authorization, partner decline, clearing,
-- reversal, refund, expiry).
CREATE OR REPLACE FUNCTION user_stream_card_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO user_stream (partner_id, kind, external_user_id, payload, created_at)
  SELECT NEW.partner_id, 'CARD_TRANSACTION', u.external_user_id, card_transaction_json(NEW)::text, NEW.updated_at
    FROM managed_users u WHERE u.user_id = NEW.subject_id;
  PERFORM pg_notify('user_stream', '');
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER card_transactions_user_stream AFTER INSERT OR UPDATE ON card_transactions
  FOR EACH ROW WHEN (NEW.subject_type = 'USER') EXECUTE FUNCTION user_stream_card_transactions();
