-- Issue 34, step 4: an approval's hold is a pending amount (as TigerBeetle's pending transfers), not
-- a posting. card_authorize moves the amount from available to pending on the funds account row
-- (ledger_hold) and records it here, on the authorization's own record; it writes no posting and no
-- ledger entries. What releases or settles the hold (clearing, reversal, expiry, a partner's
-- decline) posts balanced entries as before (PENDING -held, AVAILABLE ... ). So an account's
-- balances are its entries plus the holds recorded here (hold_funds of every record with a
-- hold_seq, open or released since), which the ledger audit proves (docs/ledger.md).
--
-- Holds of the previous layout (their AUTHORIZATION posting written at approval) need no
-- conversion: hold_seq stays NULL on their records, so the audit counts them through their entries
-- alone, and their releases post exactly what they posted before.
ALTER TABLE card_transactions
  -- The hold's number, drawn from the ledger entries' sequence under the funds account's row lock:
  -- orders it among the account's entries (the audit's last-entry check, the statement's order)
  -- and names its statement line (st<hold_seq>). NULL: no hold, or a hold of the previous layout.
  ADD COLUMN hold_seq bigint,
  -- The amount held at approval in the funds account's currency (the billing amount, or a rated
  -- asset's amount, D35); never changes after (hold_amount / funds_hold are what is still held).
  ADD COLUMN hold_funds numeric CHECK (hold_funds > 0),
  -- The funds account's available and pending right after the hold (its statement line).
  ADD COLUMN hold_available_after numeric,
  ADD COLUMN hold_pending_after numeric,
  ADD CONSTRAINT card_transactions_hold_complete CHECK (
    (hold_seq IS NULL) = (hold_funds IS NULL) AND (hold_seq IS NULL) = (hold_available_after IS NULL)
    AND (hold_seq IS NULL) = (hold_pending_after IS NULL) AND (hold_seq IS NULL OR funds_account_id IS NOT NULL));
-- The hold's posting id names the posting its entries would have had (statement lines, the
-- console); it has no ledger_postings row, so the reference to ledger_postings goes, as the
-- entries' did in migration 088 (every posting_id written here is written in the posting's own
-- transaction by the ledger's writer).
ALTER TABLE card_transactions DROP CONSTRAINT card_transactions_posting_id_fkey;
