-- Every QR record and change (a PAY's returnedAmount) lands in the push stream (D39) in the
-- transaction that books it.
CREATE OR REPLACE FUNCTION user_stream_qr_payments() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO user_stream (partner_id, kind, external_user_id, payload, created_at)
  SELECT NEW.partner_id, 'QR_PAYMENT', u.external_user_id, qr_payment_json(NEW, u.external_user_id)::text, NEW.updated_at
    FROM managed_users u WHERE u.user_id = NEW.user_id;
  PERFORM pg_notify('user_stream', '');
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER qr_payments_user_stream AFTER INSERT OR UPDATE ON qr_payments
  FOR EACH ROW EXECUTE FUNCTION user_stream_qr_payments();
