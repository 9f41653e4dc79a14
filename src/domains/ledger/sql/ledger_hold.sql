-- ledger_hold: an authorization's hold as a pending amount (issue 34, step 4; docs/ledger.md
-- "Holds"). Called by card_authorize under its row lock on the funds account (the balances it read
-- are passed in). It moves p_amount from available to pending on the account row and writes no
-- posting and no entries: the hold is recorded on the authorization's own record
-- (card_transactions.hold_seq / hold_funds), and what releases or settles it later posts balanced
-- entries through ledger_post. So an account's balances are its entries plus its holds, which the
-- ledger audit proves (ledger_hold_rows).
--
-- Invariants, raised here: the amount is positive; the account is the partner's; the row moved
-- exactly p_amount from available to pending from the balances the caller read; available stays at
-- or above zero unless the account may go negative (D33: an authorization never takes free below
-- zero). Returns the hold's number (from the entries' sequence, so it orders the hold among the
-- account's entries: the row lock serializes both) and the balances after.
--
-- The D39 balance stream of managed users is fed as ledger_post feeds it (ledger_user_balance_lines):
-- a consumer card's approval emits the user's BALANCE line.
CREATE OR REPLACE FUNCTION ledger_hold(
  p_account_id text, p_partner_id text, p_amount numeric, p_available numeric, p_pending numeric,
  p_reference text, p_created_at timestamptz
) RETURNS TABLE (hold_seq bigint, available_after numeric, pending_after numeric, account_version bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_acct ledger_accounts;
  v_seq bigint;
  v_unused text;
BEGIN
  IF p_amount IS NULL OR p_amount <= 0 THEN
    RAISE EXCEPTION 'ledger: hold of % on % is not positive', p_amount, p_account_id USING ERRCODE = 'check_violation';
  END IF;
  v_unused := set_config('cardsvc.ledger_posting', 'hold:' || p_reference, true);
  UPDATE ledger_accounts a SET available = a.available - p_amount, pending = a.pending + p_amount
   WHERE a.account_id = p_account_id RETURNING a.* INTO v_acct;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledger: account % does not exist', p_account_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  IF v_acct.partner_id <> p_partner_id THEN
    RAISE EXCEPTION 'ledger: account % belongs to another partner', p_account_id USING ERRCODE = 'check_violation';
  END IF;
  IF v_acct.available IS DISTINCT FROM p_available - p_amount OR v_acct.pending IS DISTINCT FROM p_pending + p_amount THEN
    RAISE EXCEPTION 'ledger: hold on % did not move exactly % from available % to pending %', p_account_id, p_amount, p_available, p_pending
      USING ERRCODE = 'check_violation';
  END IF;
  IF v_acct.available < 0 AND NOT v_acct.allow_negative THEN
    RAISE EXCEPTION 'ledger: available of % would fall below zero', p_account_id USING ERRCODE = 'check_violation';
  END IF;
  v_seq := nextval('ledger_entries_entry_id_seq');

  IF v_acct.owner_type = 'MANAGED_USER' THEN
    -- D39: the managed user's balance after the hold (postingKind AUTHORIZATION, as its posting had).
    PERFORM ledger_user_balance_lines(ARRAY[p_account_id], 'AUTHORIZATION', p_reference, p_created_at);
  END IF;
  v_unused := set_config('cardsvc.ledger_posting', '', true);
  -- The result row without a statement (issue 34 step 5).
  hold_seq := v_seq; available_after := v_acct.available; pending_after := v_acct.pending; account_version := v_acct.version;
  RETURN NEXT;
END $$;
