-- Postings and entries are inserted only by ledger_post: it names the posting it writes in a
-- transaction-local setting (cardsvc.ledger_posting) and clears it before returning.
CREATE OR REPLACE FUNCTION ledger_refuse_direct_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger: % are written only by ledger_post', TG_TABLE_NAME USING ERRCODE = 'check_violation';
END $$;
CREATE OR REPLACE TRIGGER ledger_postings_only_by_post BEFORE INSERT ON ledger_postings FOR EACH ROW
  WHEN (current_setting('cardsvc.ledger_posting', true) IS DISTINCT FROM NEW.posting_id)
  EXECUTE FUNCTION ledger_refuse_direct_write();
CREATE OR REPLACE TRIGGER ledger_entries_only_by_post BEFORE INSERT ON ledger_entries FOR EACH ROW
  WHEN (current_setting('cardsvc.ledger_posting', true) IS DISTINCT FROM NEW.posting_id)
  EXECUTE FUNCTION ledger_refuse_direct_write();
