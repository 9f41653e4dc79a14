-- ledger_post: the one writer of the ledger (D29, D33; issue 10 performance). Called by the
-- TypeScript post() (src/domains/ledger/postings-store.ts), card_authorize and user_asset_move.
--
-- One function writes a posting (it replaced per-entry row triggers, statement triggers and a
-- deferred per-posting check in migration 088: an authorization hold paid about a fifth of its
-- database CPU for them): it checks the posting (at least two entries, balanced per
-- currency, each entry in its account's currency, accounts of the posting's partner, D33's rule
-- that only an entry lowering available is refused below zero unless the account may go negative
-- or the posting is forced), updates each account once (in the order of the accounts' first
-- entries: the callers' lock order), writes the entries with the balances after each one and the
-- account version, and feeds the managed users' balance stream (D39) when a managed user's account
-- moved. Writes that do not go through it are refused by the database: postings and entries are
-- inserted only while ledger_post has named the posting (a transaction-local setting it clears
-- before returning), account balances change only then, accounts are never deleted, and history
-- stays append-only (ledger_refuse_direct_write, ledger_account_update_guard, ledger_account_kept,
-- ledger_append_only beside this file). Entries have no foreign keys (dropped by migration 088):
-- ledger_post inserts the posting itself and finds every account it updates. Postings without
-- entries, which only a direct insert could make, stay a finding of the ledger audit.
--
-- The D39 balance stream of managed users is fed in the posting's transaction, by
-- ledger_user_balance_lines beside this file.

CREATE OR REPLACE FUNCTION ledger_post(
  p_posting_id text, p_partner_id text, p_kind text, p_forced boolean, p_reference text, p_description text,
  p_created_at timestamptz, p_accounts text[], p_currencies text[], p_buckets text[], p_amounts numeric[]
) RETURNS TABLE (entry_id bigint, account_id text, currency text, bucket text, amount numeric,
                 available_after numeric, pending_after numeric, account_version bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_n integer := COALESCE(cardinality(p_accounts), 0);
  v_acct ledger_accounts;
  i integer;
  j integer;
  -- Per account, in first-entry order: balances before the posting, then running through it.
  v_ids text[] := '{}';
  v_cur text[] := '{}';
  v_neg boolean[] := '{}';
  v_av numeric[] := '{}';
  v_pe numeric[] := '{}';
  v_ver bigint[] := '{}';
  v_managed boolean := false;
  -- Per entry: the balances after it.
  o_av numeric[] := '{}';
  o_pe numeric[] := '{}';
  o_ver bigint[] := '{}';
  -- Per currency: the sum of the posting's entries.
  v_sum_cur text[] := '{}';
  v_sum numeric[] := '{}';
  -- Per account: the posting's change of available and pending, and its number of entries.
  v_dav numeric[] := '{}';
  v_dpe numeric[] := '{}';
  v_cnt integer[] := '{}';
  v_unused text;
BEGIN
  IF v_n < 2 THEN
    RAISE EXCEPTION 'ledger: posting % has fewer than two entries', p_posting_id USING ERRCODE = 'check_violation';
  END IF;
  IF COALESCE(cardinality(p_currencies), 0) <> v_n OR COALESCE(cardinality(p_buckets), 0) <> v_n OR COALESCE(cardinality(p_amounts), 0) <> v_n THEN
    RAISE EXCEPTION 'ledger: posting % has entry fields of different lengths', p_posting_id USING ERRCODE = 'check_violation';
  END IF;
  -- Plain expressions, no SQL: a posting has a handful of entries.
  FOR i IN 1 .. v_n LOOP
    j := array_position(v_sum_cur, p_currencies[i]);
    IF j IS NULL THEN
      v_sum_cur := v_sum_cur || p_currencies[i];
      v_sum := v_sum || p_amounts[i];
    ELSE
      v_sum[j] := v_sum[j] + p_amounts[i];
    END IF;
    j := array_position(v_ids, p_accounts[i]);
    IF j IS NULL THEN
      v_ids := v_ids || p_accounts[i];
      v_dav := v_dav || 0::numeric;
      v_dpe := v_dpe || 0::numeric;
      v_cnt := v_cnt || 0;
      j := cardinality(v_ids);
    END IF;
    IF p_buckets[i] = 'AVAILABLE' THEN
      v_dav[j] := v_dav[j] + p_amounts[i];
    ELSE
      v_dpe[j] := v_dpe[j] + p_amounts[i];
    END IF;
    v_cnt[j] := v_cnt[j] + 1;
  END LOOP;
  FOR i IN 1 .. cardinality(v_sum) LOOP
    IF v_sum[i] <> 0 THEN
      RAISE EXCEPTION 'ledger: posting % is not balanced', p_posting_id USING ERRCODE = 'check_violation';
    END IF;
  END LOOP;

  v_unused := set_config('cardsvc.ledger_posting', p_posting_id, true);
  INSERT INTO ledger_postings (posting_id, partner_id, kind, forced, reference, description, created_at)
    VALUES (p_posting_id, p_partner_id, p_kind, p_forced, p_reference, p_description, p_created_at);

  -- One UPDATE per account, in the order of the accounts' first entries (the callers' lock order).
  FOR j IN 1 .. cardinality(v_ids) LOOP
    UPDATE ledger_accounts a SET available = a.available + v_dav[j], pending = a.pending + v_dpe[j], version = a.version + v_cnt[j]
     WHERE a.account_id = v_ids[j] RETURNING a.* INTO v_acct;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'ledger: account % does not exist', v_ids[j] USING ERRCODE = 'foreign_key_violation';
    END IF;
    IF v_acct.partner_id <> p_partner_id THEN
      RAISE EXCEPTION 'ledger: account % belongs to another partner', v_ids[j] USING ERRCODE = 'check_violation';
    END IF;
    v_cur := v_cur || v_acct.currency;
    v_neg := v_neg || v_acct.allow_negative;
    v_av := v_av || (v_acct.available - v_dav[j]);
    v_pe := v_pe || (v_acct.pending - v_dpe[j]);
    v_ver := v_ver || (v_acct.version - v_cnt[j]);
    v_managed := v_managed OR v_acct.owner_type = 'MANAGED_USER';
  END LOOP;

  -- Each entry in order, as the account moves through the posting.
  FOR i IN 1 .. v_n LOOP
    j := array_position(v_ids, p_accounts[i]);
    IF p_currencies[i] IS DISTINCT FROM v_cur[j] THEN
      RAISE EXCEPTION 'ledger: entry currency % differs from account % currency %', p_currencies[i], v_ids[j], v_cur[j]
        USING ERRCODE = 'check_violation';
    END IF;
    IF p_buckets[i] = 'AVAILABLE' THEN
      v_av[j] := v_av[j] + p_amounts[i];
      IF p_amounts[i] < 0 AND v_av[j] < 0 AND NOT v_neg[j] AND NOT p_forced THEN
        RAISE EXCEPTION 'ledger: available of % would fall below zero', v_ids[j] USING ERRCODE = 'check_violation';
      END IF;
    ELSE
      v_pe[j] := v_pe[j] + p_amounts[i];
    END IF;
    v_ver[j] := v_ver[j] + 1;
    o_av := o_av || v_av[j];
    o_pe := o_pe || v_pe[j];
    o_ver := o_ver || v_ver[j];
  END LOOP;

  RETURN QUERY
    INSERT INTO ledger_entries AS le (posting_id, account_id, currency, bucket, amount, available_after, pending_after, account_version, created_at)
    SELECT p_posting_id, e.acc, e.cur, e.b, e.amt, e.av, e.pe, e.ver, p_created_at
      FROM unnest(p_accounts, p_currencies, p_buckets, p_amounts, o_av, o_pe, o_ver) WITH ORDINALITY AS e(acc, cur, b, amt, av, pe, ver, k)
     ORDER BY e.k
    RETURNING le.entry_id, le.account_id, le.currency, le.bucket, le.amount, le.available_after, le.pending_after, le.account_version;

  IF v_managed THEN
    -- D39: the managed users' balances after the posting, one line per account.
    PERFORM ledger_user_balance_lines(v_ids, p_kind, p_reference, p_created_at);
  END IF;
  v_unused := set_config('cardsvc.ledger_posting', '', true);
END $$;
