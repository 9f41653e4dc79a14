-- Balances change only inside ledger_post; the account's identity never. The WHEN clause keeps the
-- guard out of ledger_post's own updates (no plpgsql call on the hot path).
CREATE OR REPLACE FUNCTION ledger_account_update_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.currency IS DISTINCT FROM OLD.currency OR NEW.partner_id IS DISTINCT FROM OLD.partner_id
      OR NEW.allow_negative IS DISTINCT FROM OLD.allow_negative THEN
    RAISE EXCEPTION 'ledger: account % identity is immutable', OLD.account_id USING ERRCODE = 'check_violation';
  END IF;
  RAISE EXCEPTION 'ledger: balances of % change only through ledger entries', OLD.account_id USING ERRCODE = 'check_violation';
END $$;
CREATE OR REPLACE TRIGGER ledger_accounts_update_guard BEFORE UPDATE ON ledger_accounts FOR EACH ROW
  WHEN (NEW.currency IS DISTINCT FROM OLD.currency OR NEW.partner_id IS DISTINCT FROM OLD.partner_id
        OR NEW.allow_negative IS DISTINCT FROM OLD.allow_negative
        OR (COALESCE(current_setting('cardsvc.ledger_posting', true), '') = ''
            AND (NEW.available IS DISTINCT FROM OLD.available OR NEW.pending IS DISTINCT FROM OLD.pending
                 OR NEW.version IS DISTINCT FROM OLD.version)))
  EXECUTE FUNCTION ledger_account_update_guard();
