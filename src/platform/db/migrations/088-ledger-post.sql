-- ledger_post: the one writer of the ledger (issue 10 performance; D33 invariants unchanged).
--
-- Until now each entry was applied by a row trigger (one plpgsql call, a posting lookup and an
-- account UPDATE per entry), checked by two statement triggers over a transition table and, at
-- commit, by a deferred per-posting trigger, with two foreign keys per entry. An authorization hold
-- (two entries on one account) paid all of it: about a fifth of card_authorize's database CPU.
--
-- Now one function writes a posting: it checks the posting (at least two entries, balanced per
-- currency, each entry in its account's currency, accounts of the posting's partner, D33's rule
-- that only an entry lowering available is refused below zero unless the account may go negative
-- or the posting is forced), updates each account once (in the order of the accounts' first
-- entries: the callers' lock order), writes the entries with the balances after each one and the
-- account version, and feeds the managed users' balance stream (D39) when a managed user's account
-- moved. Writes that do not go through it are refused by the database: postings and entries are
-- inserted only while ledger_post has named the posting (a transaction-local setting it clears
-- before returning), account balances change only then, accounts are never deleted, and history
-- stays append-only (migration 021). The foreign keys of entries are gone with the triggers:
-- ledger_post inserts the posting itself and finds every account it updates. Postings without
-- entries, which only a direct insert could make, stay a finding of the ledger audit.
--
-- ledger_post and the guards live in src/domains/ledger/sql/. The triggers and functions it replaced
-- are dropped here for a database created by the migrations of that time (a fresh one has none).
DROP TRIGGER IF EXISTS ledger_entries_apply ON ledger_entries;
DROP TRIGGER IF EXISTS ledger_entries_balanced ON ledger_entries;
DROP TRIGGER IF EXISTS ledger_entries_user_stream ON ledger_entries;
DROP TRIGGER IF EXISTS ledger_postings_have_entries ON ledger_postings;
DROP FUNCTION IF EXISTS ledger_apply_entry();
DROP FUNCTION IF EXISTS ledger_check_statement_postings();
DROP FUNCTION IF EXISTS ledger_check_posting_balanced();
DROP FUNCTION IF EXISTS user_stream_balances();
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_posting_id_fkey, DROP CONSTRAINT ledger_entries_account_id_fkey;
