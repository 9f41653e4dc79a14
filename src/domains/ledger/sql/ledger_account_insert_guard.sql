-- New accounts start empty.
CREATE OR REPLACE FUNCTION ledger_account_insert_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.available <> 0 OR NEW.pending <> 0 OR NEW.version <> 0 THEN
    RAISE EXCEPTION 'ledger: account % must start with zero balances', NEW.account_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER ledger_accounts_insert_guard BEFORE INSERT ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_account_insert_guard();
