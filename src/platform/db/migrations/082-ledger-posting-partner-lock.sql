-- Every posting checked its partner_id against partners with a foreign key, which takes a KEY SHARE
-- lock on the partner's row: every concurrent posting of one partner locked the same row, and each
-- extra locker costs a MultiXact. The reference is implied without it: each entry's account has a
-- foreign key to partners, and the entry trigger (ledger_apply_entry) refuses an account of another
-- partner than its posting's, and a posting needs at least two entries (ledger_check_statement_postings).
ALTER TABLE ledger_postings DROP CONSTRAINT ledger_postings_partner_id_fkey;
