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
DROP TRIGGER ledger_entries_apply ON ledger_entries;
DROP TRIGGER ledger_entries_balanced ON ledger_entries;
DROP TRIGGER ledger_entries_user_stream ON ledger_entries;
DROP TRIGGER ledger_postings_have_entries ON ledger_postings;
DROP FUNCTION ledger_apply_entry();
DROP FUNCTION ledger_check_statement_postings();
DROP FUNCTION ledger_check_posting_balanced();
DROP FUNCTION user_stream_balances();
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_posting_id_fkey, DROP CONSTRAINT ledger_entries_account_id_fkey;

CREATE FUNCTION ledger_post(
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
    -- D39: the managed users' balances after the posting, one line per account (migration 080's shape).
    INSERT INTO user_stream (partner_id, kind, external_user_id, payload, created_at)
    SELECT a.partner_id, 'BALANCE', u.external_user_id,
           json_build_object(
             'externalUserId', u.external_user_id,
             'balance', json_build_object('asset', a.currency, 'network', s.network, 'logo', s.logo,
                                          'free', a.available, 'freeze', a.pending, 'total', a.total),
             'postingKind', p_kind, 'reference', p_reference,
             'changeTime', to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text,
           p_created_at
      FROM ledger_accounts a
      JOIN managed_users u ON u.user_id = a.owner_id
      JOIN assets s ON s.asset = a.currency
     WHERE a.account_id = ANY (v_ids) AND a.owner_type = 'MANAGED_USER'
     ORDER BY a.account_id;
    PERFORM pg_notify('user_stream', '');
  END IF;
  v_unused := set_config('cardsvc.ledger_posting', '', true);
END $$;

CREATE FUNCTION ledger_refuse_direct_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger: % are written only by ledger_post', TG_TABLE_NAME USING ERRCODE = 'check_violation';
END $$;
CREATE TRIGGER ledger_postings_only_by_post BEFORE INSERT ON ledger_postings FOR EACH ROW
  WHEN (current_setting('cardsvc.ledger_posting', true) IS DISTINCT FROM NEW.posting_id)
  EXECUTE FUNCTION ledger_refuse_direct_write();
CREATE TRIGGER ledger_entries_only_by_post BEFORE INSERT ON ledger_entries FOR EACH ROW
  WHEN (current_setting('cardsvc.ledger_posting', true) IS DISTINCT FROM NEW.posting_id)
  EXECUTE FUNCTION ledger_refuse_direct_write();

-- Balances change only inside ledger_post; the account's identity never. The WHEN clause keeps the
-- guard out of ledger_post's own updates (no plpgsql call on the hot path).
CREATE OR REPLACE FUNCTION ledger_account_update_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.currency IS DISTINCT FROM OLD.currency OR NEW.partner_id IS DISTINCT FROM OLD.partner_id
      OR NEW.allow_negative IS DISTINCT FROM OLD.allow_negative THEN
    RAISE EXCEPTION 'ledger: account % identity is immutable', OLD.account_id USING ERRCODE = 'check_violation';
  END IF;
  RAISE EXCEPTION 'ledger: balances of % change only through ledger entries', OLD.account_id USING ERRCODE = 'check_violation';
END $$;
DROP TRIGGER ledger_accounts_update_guard ON ledger_accounts;
CREATE TRIGGER ledger_accounts_update_guard BEFORE UPDATE ON ledger_accounts FOR EACH ROW
  WHEN (NEW.currency IS DISTINCT FROM OLD.currency OR NEW.partner_id IS DISTINCT FROM OLD.partner_id
        OR NEW.allow_negative IS DISTINCT FROM OLD.allow_negative
        OR (COALESCE(current_setting('cardsvc.ledger_posting', true), '') = ''
            AND (NEW.available IS DISTINCT FROM OLD.available OR NEW.pending IS DISTINCT FROM OLD.pending
                 OR NEW.version IS DISTINCT FROM OLD.version)))
  EXECUTE FUNCTION ledger_account_update_guard();

CREATE FUNCTION ledger_account_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger: account % is never deleted', OLD.account_id USING ERRCODE = 'check_violation';
END $$;
CREATE TRIGGER ledger_accounts_kept BEFORE DELETE ON ledger_accounts FOR EACH ROW EXECUTE FUNCTION ledger_account_kept();

-- card_authorize (migration 087) with its hold written by ledger_post, and the partner's status
-- checked once after the capability branches instead of in each.
CREATE OR REPLACE FUNCTION card_authorize(
  p_partner_id text, p_card_id text, p_source text, p_network_id text, p_replay_guard boolean,
  p_amount numeric, p_currency text, p_billing_amount numeric, p_billing_currency text,
  p_merchant_name text, p_mcc text, p_country text, p_channel text,
  p_now timestamptz, p_transaction_time timestamptz, p_keys text[], p_blockers text[],
  p_trans_id text, p_outstanding_id text, p_posting_id text, p_event_id text, p_alert_event_id text, p_expiry_due_at timestamptz
) RETURNS TABLE (outcome text, body text, answer_partner text) LANGUAGE plpgsql AS $$
DECLARE
  v_card record;
  v_existing card_transactions;
  v_t card_transactions;
  v_control text := CASE WHEN p_channel = 'ATM' THEN 'CASH_ADVANCE' ELSE 'PURCHASE' END;
  v_employee text;
  v_reason text;
  v_detail text;
  v_bamt numeric;
  v_bcur text;
  v_asset assets;
  v_rate numeric;
  v_famt numeric;
  v_account ledger_accounts;
  v_after_available numeric;
  v_after_pending numeric;
  v_after_version bigint;
  v_json text;
  v_alert balance_alert_settings;
BEGIN
  IF p_replay_guard THEN
    -- Copies of one network message serialize here; the later ones find the first one's record.
    PERFORM pg_advisory_xact_lock(hashtextextended('card-net:' || p_network_id, 0));
    SELECT * INTO v_existing FROM card_transactions WHERE network_transaction_id = p_network_id;
    IF FOUND THEN
      RETURN QUERY SELECT 'REPLAY'::text, card_transaction_json(v_existing)::text, v_existing.partner_id;
      RETURN;
    END IF;
  END IF;

  SELECT c.*, p.status AS partner_status INTO v_card
    FROM cards c JOIN partners p ON p.partner_id = c.partner_id WHERE c.card_id = p_card_id;
  IF NOT FOUND OR (p_partner_id IS NOT NULL AND v_card.partner_id <> p_partner_id) THEN
    RETURN QUERY SELECT 'CARD_INVALID'::text, NULL::text, NULL::text;
    RETURN;
  END IF;
  v_employee := CASE WHEN v_card.subject_type = 'CUSTOMER' THEN v_card.subject_id END;
  v_bamt := COALESCE(p_billing_amount, p_amount);
  v_bcur := COALESCE(p_billing_currency, p_currency);

  -- Card status (D47).
  IF v_card.status = 'BLOCKED' THEN v_reason := 'CARD_BLOCKED';
  ELSIF v_card.status = 'CANCELLED' THEN v_reason := 'CARD_CANCELLED';
  END IF;

  -- Capabilities (D20, D45), in one statement: the employee (employee cards), then the company, then
  -- the partner. A subject refuses when it is not lifecycle ACTIVE (or missing), is SUSPENDED, or
  -- holds one of the blocking codes (the caller passes CAPABILITY_BLOCKERS.PAYMENT, in its order).
  IF v_reason IS NULL AND v_card.subject_type = 'USER' THEN
    -- A consumer card (managed-balance model): the user's own freezes, in the blockers' order.
    SELECT 'USER:' || b.code INTO v_detail FROM unnest(p_blockers) WITH ORDINALITY AS b(code, k)
     WHERE EXISTS (SELECT 1 FROM managed_user_restrictions r WHERE r.user_id = v_card.subject_id AND r.code = b.code)
     ORDER BY b.k LIMIT 1;
    IF v_detail IS NOT NULL THEN v_reason := 'CAPABILITY_FROZEN'; END IF;
  ELSIF v_reason IS NULL THEN
    SELECT s.kind || ':' || CASE WHEN s.lifecycle IS DISTINCT FROM 'ACTIVE' THEN 'TERMINATED' WHEN s.suspended THEN 'SUSPENDED'
                                 ELSE blk.code END
      INTO v_detail
      FROM (SELECT 1 AS n, 'CUSTOMER' AS kind, v_employee AS id, c.lifecycle, c.suspended
              FROM (SELECT 1) one LEFT JOIN customers c ON c.customer_id = v_employee WHERE v_employee IS NOT NULL
            UNION ALL
            SELECT 2, 'ORGANIZATION', v_card.organization_id, o.lifecycle, o.suspended
              FROM (SELECT 1) one LEFT JOIN organizations o ON o.organization_id = v_card.organization_id) s
      LEFT JOIN LATERAL (SELECT b.code FROM unnest(p_blockers) WITH ORDINALITY AS b(code, k)
                          WHERE EXISTS (SELECT 1 FROM subject_restrictions r
                                         WHERE r.subject_type = s.kind AND r.subject_id = s.id AND r.code = b.code)
                          ORDER BY b.k LIMIT 1) blk ON true
     WHERE s.lifecycle IS DISTINCT FROM 'ACTIVE' OR s.suspended OR blk.code IS NOT NULL
     ORDER BY s.n LIMIT 1;
    IF v_detail IS NOT NULL THEN v_reason := 'CAPABILITY_FROZEN'; END IF;
  END IF;
  -- Then the partner (D20), whichever kind of card.
  IF v_reason IS NULL AND v_card.partner_status <> 'ACTIVE' THEN
    v_reason := 'CAPABILITY_FROZEN';
    v_detail := 'PARTNER:' || v_card.partner_status;
  END IF;

  IF v_reason IS NULL AND EXISTS (
       SELECT 1 FROM velocity_rule_bindings b JOIN velocity_rules r ON r.rule_id = b.rule_id AND r.status = 'ACTIVE'
        WHERE b.partner_id = v_card.partner_id
          AND ((b.subject_type = 'CARD' AND b.subject_id = p_card_id)
            OR (b.subject_type = 'CUSTOMER' AND v_employee IS NOT NULL AND b.subject_id = v_employee))) THEN
    -- Authorizations of one card (and of one employee's cards) serialize from here, so two of them
    -- never both fit under a cap that has room for one.
    PERFORM pg_advisory_xact_lock(hashtextextended('card-velocity:' || s.id, 0))
       FROM unnest(ARRAY[p_card_id, v_employee]) AS s(id) WHERE s.id IS NOT NULL ORDER BY s.id;
    v_detail := card_velocity_refusal(v_card.partner_id, p_card_id, v_employee, v_control, p_currency, p_mcc, p_country,
                                      v_bamt, v_bcur, p_keys);
    IF v_detail IS NOT NULL THEN
      v_reason := split_part(v_detail, ':', 1);
      v_detail := NULLIF(substr(v_detail, length(v_reason) + 2), '');
    END IF;
  END IF;

  -- Funds (D29, D33): the billing currency must be one the card settles in; the hold moves free ->
  -- freeze on the company pool (SHARED) or the card's own balance (DEDICATED).
  IF v_reason IS NULL AND NOT (v_card.settlement_currencies ? v_bcur) THEN
    v_reason := 'CURRENCY_NOT_ALLOWED';
    v_detail := 'NOT_CARD_SETTLEMENT_CURRENCY';
  END IF;
  IF v_reason IS NULL THEN
    IF v_card.balance_mode = 'SHARED' THEN
      SELECT * INTO v_account FROM ledger_accounts
       WHERE partner_id = v_card.partner_id AND owner_type = 'ORGANIZATION_POOL' AND owner_id = v_card.organization_id
         AND currency = v_bcur FOR UPDATE;
      IF NOT FOUND THEN
        v_reason := 'CURRENCY_NOT_ALLOWED';
        v_detail := 'NO_FUNDING_POOL';
      END IF;
    ELSIF v_card.balance_mode = 'ASSET' THEN
      -- A consumer card spends the user's funding asset (D35): USD-pegged 1:1, others at the
      -- operator's usd_rate (units per USD) as it is now, rounded up to the asset's scale; the rate
      -- is kept with the authorization and its settlement uses it.
      SELECT * INTO v_asset FROM assets WHERE asset = v_card.funding_asset;
      IF v_asset.status IS DISTINCT FROM 'ACTIVE' OR v_asset.usd_rate IS NULL THEN
        v_reason := 'CURRENCY_NOT_ALLOWED';
        v_detail := 'NO_ASSET_RATE';
      ELSIF NOT v_asset.usd_pegged THEN
        v_rate := v_asset.usd_rate;
        v_famt := round(ceil(v_bamt * v_rate * power(10::numeric, v_asset.scale)) / power(10::numeric, v_asset.scale), v_asset.scale);
      END IF;
      SELECT * INTO v_account FROM ledger_accounts
       WHERE partner_id = v_card.partner_id AND owner_type = 'MANAGED_USER' AND owner_id = v_card.subject_id
         AND currency = v_card.funding_asset FOR UPDATE;
    ELSE
      SELECT * INTO v_account FROM ledger_accounts
       WHERE partner_id = v_card.partner_id AND owner_type = 'CARD' AND owner_id = p_card_id AND currency = v_bcur FOR UPDATE;
    END IF;
    -- The hold in the funds account's own currency (the billing amount but for a rated asset).
    v_famt := COALESCE(v_famt, v_bamt);
    IF v_reason IS NULL AND (v_account.account_id IS NULL OR v_account.available < v_famt) THEN
      v_reason := 'INSUFFICIENT_BALANCE';
    END IF;
  END IF;

  IF v_reason IS NULL THEN
    SELECT l.available_after, l.pending_after, l.account_version INTO v_after_available, v_after_pending, v_after_version
      FROM ledger_post(p_posting_id, v_card.partner_id, 'AUTHORIZATION', false, p_trans_id, 'Authorization hold', p_now,
                       ARRAY[v_account.account_id, v_account.account_id], ARRAY[v_account.currency, v_account.currency],
                       ARRAY['AVAILABLE', 'PENDING'], ARRAY[-v_famt, v_famt]) l
     ORDER BY l.account_version DESC LIMIT 1;
    IF v_after_available <> v_account.available - v_famt OR v_after_pending <> v_account.pending + v_famt THEN
      RAISE EXCEPTION 'authorization: hold on % did not move exactly % from available to pending', v_account.account_id, v_famt;
    END IF;
    -- D32: the amount and one count to every period of the card and of its employee.
    INSERT INTO velocity_usage AS u (partner_id, subject_type, subject_id, control, currency, period, period_key, used_amount, used_count, updated_at)
      SELECT v_card.partner_id, s.kind, s.id, v_control, v_bcur, k.period, k.period_key, v_bamt, 1, p_now
        FROM (VALUES ('CARD', p_card_id), ('CUSTOMER', v_employee)) s(kind, id)
        CROSS JOIN (VALUES ('DAILY', p_keys[1]), ('MONTHLY', p_keys[2]), ('QUARTERLY', p_keys[3]), ('YEARLY', p_keys[4])) k(period, period_key)
       WHERE s.id IS NOT NULL
       ORDER BY s.kind, k.period
      ON CONFLICT (partner_id, subject_type, subject_id, control, currency, period, period_key)
      DO UPDATE SET used_amount = u.used_amount + excluded.used_amount, used_count = u.used_count + 1, updated_at = excluded.updated_at;
  END IF;

  INSERT INTO card_transactions (trans_id, partner_id, card_id, organization_id, subject_type, subject_id, message_type, auth_type,
      debit_credit_indicator, source, network_transaction_id, amount, currency, billing_amount, billing_currency, merchant_name, mcc,
      merchant_country, channel, status, decline_reason, decline_detail, hold_amount, funds_account_id, outstanding_transaction_id,
      posting_id, expiry_due_at, transaction_time, created_at, updated_at, funds_rate, funds_scale, funds_hold)
    VALUES (p_trans_id, v_card.partner_id, p_card_id, v_card.organization_id, v_card.subject_type, v_card.subject_id, 'AUTHORIZATION',
      'EXPEND', 'D', p_source, p_network_id, p_amount, p_currency, v_bamt, v_bcur, p_merchant_name, p_mcc, p_country, p_channel,
      CASE WHEN v_reason IS NULL THEN 'PENDING' ELSE 'DECLINED' END, v_reason, v_detail,
      CASE WHEN v_reason IS NULL THEN v_bamt ELSE 0 END,
      CASE WHEN v_reason IS NULL THEN v_account.account_id END,
      CASE WHEN v_reason IS NULL THEN p_outstanding_id END,
      CASE WHEN v_reason IS NULL THEN p_posting_id END,
      CASE WHEN v_reason IS NULL THEN p_expiry_due_at END,
      p_transaction_time, p_now, p_now,
      CASE WHEN v_reason IS NULL THEN v_rate END,
      CASE WHEN v_reason IS NULL AND v_rate IS NOT NULL THEN v_asset.scale END,
      CASE WHEN v_reason IS NULL AND v_rate IS NOT NULL THEN v_famt END)
    RETURNING * INTO v_t;
  v_json := card_transaction_json(v_t)::text;
  PERFORM card_transaction_event(v_t, p_event_id, p_now, v_json);

  -- LOW_BALANCE (2.12, D49) when this spend takes a pool below its threshold: once per UTC day while
  -- low, again at once after the pool was back at or above the threshold (the scan's rule).
  IF v_reason IS NULL AND v_card.balance_mode = 'SHARED' THEN
    SELECT * INTO v_alert FROM balance_alert_settings
     WHERE organization_id = v_card.organization_id AND currency = v_bcur FOR UPDATE;
    IF FOUND AND v_after_available < v_alert.threshold AND (
         v_alert.last_alert_day IS NULL OR v_alert.last_alert_day < (p_now AT TIME ZONE 'UTC')::date
         OR EXISTS (SELECT 1 FROM ledger_entries e WHERE e.account_id = v_account.account_id
                     AND e.account_version > COALESCE(v_alert.last_alert_version, 0) AND e.available_after >= v_alert.threshold)) THEN
      INSERT INTO event_sequences (partner_id, business_id, last_sequence) VALUES (v_card.partner_id, v_card.organization_id, 1)
        ON CONFLICT (partner_id, business_id) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1;
      INSERT INTO events (event_id, partner_id, event_type, business_id, sequence, payload, create_time, status, next_attempt_at)
        SELECT p_alert_event_id, v_card.partner_id, 'LOW_BALANCE', v_card.organization_id, s.last_sequence,
               json_build_object('organizationId', v_card.organization_id, 'currency', v_bcur,
                                 'available', round(v_after_available, 2), 'threshold', round(v_alert.threshold, 2))::text,
               p_now, 'PENDING', p_now
          FROM event_sequences s WHERE s.partner_id = v_card.partner_id AND s.business_id = v_card.organization_id;
      UPDATE balance_alert_settings SET last_alert_day = (p_now AT TIME ZONE 'UTC')::date, last_alert_version = v_after_version,
             last_alert_at = p_now
       WHERE organization_id = v_card.organization_id AND currency = v_bcur;
      RETURN QUERY SELECT 'NEW_LOW_BALANCE'::text, v_json, v_card.partner_id;
      RETURN;
    END IF;
  END IF;

  RETURN QUERY SELECT 'NEW'::text, v_json, v_card.partner_id;
END $$;

-- user_asset_move (migration 081) with its posting written by ledger_post.
CREATE OR REPLACE FUNCTION user_asset_move(
  p_partner_id text, p_external_user_id text, p_new_user_id text, p_external_tran_id text, p_type text, p_direction text,
  p_asset text, p_amount numeric, p_remark text, p_blockers text[], p_now timestamptz,
  p_movement_id text, p_posting_id text, p_new_account_id text, p_new_contra_id text
) RETURNS TABLE (outcome text, body text) LANGUAGE plpgsql AS $$
DECLARE
  v_asset assets;
  v_user_id text;
  v_code text;
  v_account ledger_accounts;
  v_contra_owner text;
  v_contra_id text;
  v_signed numeric := CASE WHEN p_direction = 'CREDIT' THEN p_amount ELSE -p_amount END;
  v_after numeric;
  v_check numeric;
  v_m asset_movements;
BEGIN
  IF p_amount <= 0 OR p_direction NOT IN ('CREDIT', 'DEBIT') THEN
    RAISE EXCEPTION 'user_asset_move: amount % and direction % are checked by the caller', p_amount, p_direction;
  END IF;
  SELECT * INTO v_asset FROM assets WHERE asset = p_asset;
  IF NOT FOUND OR v_asset.status <> 'ACTIVE' THEN
    RETURN QUERY SELECT 'ASSET_INVALID'::text, p_asset;
    RETURN;
  END IF;
  IF min_scale(p_amount) > v_asset.scale THEN
    RETURN QUERY SELECT 'AMOUNT_SCALE'::text, v_asset.scale::text;
    RETURN;
  END IF;

  -- Read first: the user and its account exist for every movement but the first.
  SELECT user_id INTO v_user_id FROM managed_users WHERE partner_id = p_partner_id AND external_user_id = p_external_user_id;
  IF NOT FOUND THEN
    INSERT INTO managed_users (user_id, partner_id, external_user_id, created_at) VALUES (p_new_user_id, p_partner_id, p_external_user_id, p_now)
      ON CONFLICT (partner_id, external_user_id) DO NOTHING;
    SELECT user_id INTO v_user_id FROM managed_users WHERE partner_id = p_partner_id AND external_user_id = p_external_user_id;
  END IF;

  SELECT b.code INTO v_code FROM unnest(p_blockers) WITH ORDINALITY AS b(code, k)
   WHERE EXISTS (SELECT 1 FROM managed_user_restrictions r WHERE r.user_id = v_user_id AND r.code = b.code)
   ORDER BY b.k LIMIT 1;
  IF v_code IS NOT NULL THEN
    RETURN QUERY SELECT 'CAPABILITY_FROZEN'::text, v_code;
    RETURN;
  END IF;

  -- The user's account in the asset, created empty on first use, then locked: copies of one request
  -- for one user serialize here and the later ones find the first one's movement.
  SELECT * INTO v_account FROM ledger_accounts
   WHERE partner_id = p_partner_id AND owner_type = 'MANAGED_USER' AND owner_id = v_user_id AND currency = p_asset FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO ledger_accounts (account_id, partner_id, organization_id, owner_type, owner_id, currency, allow_negative, created_at)
      VALUES (p_new_account_id, p_partner_id, NULL, 'MANAGED_USER', v_user_id, p_asset, false, p_now)
      ON CONFLICT (partner_id, owner_type, owner_id, currency) DO NOTHING;
    SELECT * INTO v_account FROM ledger_accounts
     WHERE partner_id = p_partner_id AND owner_type = 'MANAGED_USER' AND owner_id = v_user_id AND currency = p_asset FOR UPDATE;
  END IF;

  IF EXISTS (SELECT 1 FROM asset_movements WHERE partner_id = p_partner_id AND external_tran_id = p_external_tran_id) THEN
    RETURN QUERY SELECT 'DUPLICATE'::text, p_external_tran_id;
    RETURN;
  END IF;
  IF p_direction = 'DEBIT' AND v_account.available < p_amount THEN
    RETURN QUERY SELECT 'INSUFFICIENT_BALANCE'::text, v_account.available::text;
    RETURN;
  END IF;
  v_after := v_account.available + v_signed;

  -- A copy of this externalTranId for another user or asset holds the index entry: wait for it,
  -- then nothing is written here (the posting comes after this insert).
  INSERT INTO asset_movements (movement_id, partner_id, user_id, external_tran_id, type, direction, asset, amount, remark, status,
                               posting_id, free_after, created_at)
    VALUES (p_movement_id, p_partner_id, v_user_id, p_external_tran_id, p_type, p_direction, p_asset, p_amount, p_remark, 'SUCCESS',
            p_posting_id, v_after, p_now)
    ON CONFLICT (partner_id, external_tran_id) WHERE external_tran_id IS NOT NULL DO NOTHING
    RETURNING * INTO v_m;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'DUPLICATE'::text, p_external_tran_id;
    RETURN;
  END IF;

  -- Money outside the service (the partner's treasury), striped over 16 accounts per partner and asset.
  v_contra_owner := 'USER_FUNDS_' || lpad(((hashtext(v_user_id) & 2147483647) % 16)::text, 2, '0');
  SELECT account_id INTO v_contra_id FROM ledger_accounts
   WHERE partner_id = p_partner_id AND owner_type = 'EXTERNAL' AND owner_id = v_contra_owner AND currency = p_asset;
  IF NOT FOUND THEN
    INSERT INTO ledger_accounts (account_id, partner_id, organization_id, owner_type, owner_id, currency, allow_negative, created_at)
      VALUES (p_new_contra_id, p_partner_id, NULL, 'EXTERNAL', v_contra_owner, p_asset, true, p_now)
      ON CONFLICT (partner_id, owner_type, owner_id, currency) DO NOTHING;
    SELECT account_id INTO v_contra_id FROM ledger_accounts
     WHERE partner_id = p_partner_id AND owner_type = 'EXTERNAL' AND owner_id = v_contra_owner AND currency = p_asset;
  END IF;

  -- Account rows in account_id order, the ledger's one lock order.
  -- Pair assertion: the ledger applied exactly what was predicted to the user's account.
  SELECT l.available_after INTO v_check
    FROM ledger_post(p_posting_id, p_partner_id, p_type, false, p_movement_id, p_remark, p_now,
                     ARRAY[least(v_account.account_id, v_contra_id), greatest(v_account.account_id, v_contra_id)],
                     ARRAY[p_asset, p_asset], ARRAY['AVAILABLE', 'AVAILABLE'],
                     CASE WHEN v_account.account_id < v_contra_id THEN ARRAY[v_signed, -v_signed] ELSE ARRAY[-v_signed, v_signed] END) l
   WHERE l.account_id = v_account.account_id;
  IF v_check IS DISTINCT FROM v_after THEN
    RAISE EXCEPTION 'user_asset_move: free of % is % and not % after %', v_account.account_id, v_check, v_after, p_movement_id;
  END IF;

  RETURN QUERY SELECT 'OK'::text, asset_movement_json(v_m, p_external_user_id)::text;
END $$;
