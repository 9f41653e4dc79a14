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

-- The balanced-posting check in one statement (it runs at commit for every entry of a posting).
CREATE OR REPLACE FUNCTION ledger_check_posting_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  target text;
  entry_count bigint;
  unbalanced boolean;
BEGIN
  target := NEW.posting_id;
  SELECT COALESCE(sum(g.n), 0), COALESCE(bool_or(g.total <> 0), false) INTO entry_count, unbalanced
    FROM (SELECT count(*) AS n, sum(amount) AS total FROM ledger_entries WHERE posting_id = target GROUP BY currency) g;
  IF entry_count < 2 THEN
    RAISE EXCEPTION 'ledger: posting % has fewer than two entries', target USING ERRCODE = 'check_violation';
  END IF;
  IF unbalanced THEN
    RAISE EXCEPTION 'ledger: posting % is not balanced', target USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
