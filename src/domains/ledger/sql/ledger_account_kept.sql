-- Ledger accounts are never deleted (their entries and the audit refer to them).
CREATE OR REPLACE FUNCTION ledger_account_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger: account % is never deleted', OLD.account_id USING ERRCODE = 'check_violation';
END $$;
CREATE OR REPLACE TRIGGER ledger_accounts_kept BEFORE DELETE ON ledger_accounts FOR EACH ROW EXECUTE FUNCTION ledger_account_kept();
