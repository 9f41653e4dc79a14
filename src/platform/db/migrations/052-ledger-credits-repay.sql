-- D33: a negative available (after a clearing above its hold, a force-posted clearing or a fee) is
-- repaid by the next credits. Migration 021 refused every non-forced entry that left available
-- below zero, credits included; only an entry that lowers available is refused now.
CREATE OR REPLACE FUNCTION ledger_apply_entry() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  acct ledger_accounts%ROWTYPE;
  posting_forced boolean;
  posting_partner text;
BEGIN
  SELECT forced, partner_id INTO posting_forced, posting_partner FROM ledger_postings WHERE posting_id = NEW.posting_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledger: posting % does not exist', NEW.posting_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  UPDATE ledger_accounts SET
      available = available + CASE WHEN NEW.bucket = 'AVAILABLE' THEN NEW.amount ELSE 0 END,
      pending   = pending   + CASE WHEN NEW.bucket = 'PENDING'   THEN NEW.amount ELSE 0 END,
      version   = version + 1
    WHERE account_id = NEW.account_id
    RETURNING * INTO acct;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledger: account % does not exist', NEW.account_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  IF acct.currency <> NEW.currency THEN
    RAISE EXCEPTION 'ledger: entry currency % differs from account % currency %', NEW.currency, acct.account_id, acct.currency
      USING ERRCODE = 'check_violation';
  END IF;
  IF acct.partner_id <> posting_partner THEN
    RAISE EXCEPTION 'ledger: account % belongs to another partner', acct.account_id USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.bucket = 'AVAILABLE' AND NEW.amount < 0 AND acct.available < 0 AND NOT acct.allow_negative AND NOT posting_forced THEN
    RAISE EXCEPTION 'ledger: available of % would fall below zero', acct.account_id USING ERRCODE = 'check_violation';
  END IF;
  NEW.available_after := acct.available;
  NEW.pending_after := acct.pending;
  NEW.account_version := acct.version;
  RETURN NEW;
END $$;
