-- card_authorize: one authorization (D34), decided and booked in one call; the hot path is one round
-- trip. Called by authorizeInDb (src/domains/authorization/store.ts), which passes every parameter by
-- name (`p_card_id => $2`, ...). See docs/authorizations.md.
--
-- Stages in order, each decline with its D47 reason and no side effect but the declined record:
-- card (CARD_INVALID when unknown or, for a partner call, another partner's: no record at all),
-- card status, capabilities of employee, company and partner, velocity (card_velocity_refusal,
-- src/domains/velocity/sql/), funds (free -> freeze: the hold is a pending amount moved on the
-- account row by ledger_hold and recorded on this authorization's record, issue 34 step 4: no
-- posting and no entries until clearing, reversal or expiry post them). A network retry (same network_transaction_id) is answered from the first
-- record. An approval on a corporate card of a partner with an auth_url opens its awaited partner
-- decision (auth_decisions, issue 26) in the hold's commit and tells the caller (stand_in,
-- deadline_ms: NULL when nothing awaits a decision); a copy of the message learns the same while the
-- decision is still awaited.
-- Returns (outcome, body, answer_partner, stand_in, deadline_ms): ('NEW'|'NEW_LOW_BALANCE'|'REPLAY',
-- transaction json, its partner, ...) or ('CARD_INVALID', NULL, ...).
CREATE OR REPLACE FUNCTION card_authorize(
  p_partner_id text, p_card_id text, p_source text, p_network_id text, p_replay_guard boolean,
  p_amount numeric, p_currency text, p_billing_amount numeric, p_billing_currency text,
  p_merchant_name text, p_mcc text, p_country text, p_channel text,
  p_now timestamptz, p_transaction_time timestamptz, p_blockers text[],
  p_trans_id text, p_outstanding_id text, p_posting_id text, p_event_id text, p_alert_event_id text, p_expiry_due_at timestamptz,
  p_decision_token text DEFAULT NULL, p_default_deadline_ms integer DEFAULT 2000, p_decision_grace_ms integer DEFAULT 5000
) RETURNS TABLE (outcome text, body text, answer_partner text, stand_in text, deadline_ms integer) LANGUAGE plpgsql AS $$
DECLARE
  v_card record;
  v_account_id text;
  v_available numeric;
  v_pending numeric;
  v_threshold numeric;
  v_existing card_transactions;
  v_t card_transactions;
  v_control text := CASE WHEN p_channel = 'ATM' THEN 'CASH_ADVANCE' ELSE 'PURCHASE' END;
  v_employee text;
  v_reason text;
  v_keys text[];
  v_detail text;
  v_bamt numeric;
  v_bcur text;
  v_asset assets;
  v_rate numeric;
  v_famt numeric;
  v_after_available numeric;
  v_after_pending numeric;
  v_after_version bigint;
  v_hold_seq bigint;
  v_json text;
  v_alert balance_alert_settings;
  v_stand_in text;
  v_deadline_ms integer;
BEGIN
  IF p_replay_guard THEN
    -- Copies of one network message serialize here; the later ones find the first one's record.
    PERFORM pg_advisory_xact_lock(hashtextextended('card-net:' || p_network_id, 0));
    SELECT * INTO v_existing FROM card_transactions WHERE network_transaction_id = p_network_id;
    IF FOUND THEN
      -- A copy of a forwarded authorization still awaiting its decision waits for it (issue 26).
      SELECT d.stand_in, d.deadline_ms INTO v_stand_in, v_deadline_ms FROM auth_decisions d WHERE d.trans_id = v_existing.trans_id;
      outcome := 'REPLAY'; body := card_transaction_json(v_existing)::text; answer_partner := v_existing.partner_id;
      stand_in := v_stand_in; deadline_ms := v_deadline_ms;
      RETURN NEXT;
      RETURN;
    END IF;
  END IF;

  -- Issue 34 step 5: one statement reads the card and its partner, the velocity period keys of p_now
  -- in the partner's time zone (velocity_period_keys, issue 31), whether a capability refuses (D20,
  -- D45: the employee of an employee card or the company, a consumer card's user; which one is read
  -- below only then) and whether a velocity rule binds; the stages below decide in the D47 order.
  SELECT c.partner_id, c.organization_id, c.subject_type, c.subject_id, c.status, c.balance_mode, c.settlement_currencies,
         c.funding_asset, p.status AS partner_status, p.auth_url AS partner_auth_url,
         velocity_period_keys(c.partner_id, p_now) AS period_keys,
         -- Whether a capability refuses (which one is read below, only then): the same subjects and conditions.
         CASE WHEN c.subject_type = 'USER' THEN
           EXISTS (SELECT 1 FROM managed_user_restrictions r WHERE r.user_id = c.subject_id AND r.code = ANY (p_blockers))
         ELSE
           (c.subject_type = 'CUSTOMER' AND (cu.lifecycle IS DISTINCT FROM 'ACTIVE' OR cu.suspended))
           OR o.lifecycle IS DISTINCT FROM 'ACTIVE' OR o.suspended
           OR EXISTS (SELECT 1 FROM subject_restrictions r
                       WHERE r.subject_type = 'CUSTOMER' AND c.subject_type = 'CUSTOMER' AND r.subject_id = c.subject_id
                         AND r.code = ANY (p_blockers))
           OR EXISTS (SELECT 1 FROM subject_restrictions r
                       WHERE r.subject_type = 'ORGANIZATION' AND r.subject_id = c.organization_id AND r.code = ANY (p_blockers))
         END AS capability_refused,
         -- One index probe per subject: written as one EXISTS with an OR, the probe used the partner alone and
         -- read every binding of the partner on each authorization.
         (EXISTS (SELECT 1 FROM velocity_rule_bindings b JOIN velocity_rules r ON r.rule_id = b.rule_id AND r.status = 'ACTIVE'
                   WHERE b.partner_id = c.partner_id AND b.subject_type = 'CARD' AND b.subject_id = p_card_id)
          OR (c.subject_type = 'CUSTOMER'
              AND EXISTS (SELECT 1 FROM velocity_rule_bindings b JOIN velocity_rules r ON r.rule_id = b.rule_id AND r.status = 'ACTIVE'
                           WHERE b.partner_id = c.partner_id AND b.subject_type = 'CUSTOMER' AND b.subject_id = c.subject_id))) AS velocity_bound
    INTO v_card
    FROM cards c JOIN partners p ON p.partner_id = c.partner_id
    LEFT JOIN customers cu ON c.subject_type = 'CUSTOMER' AND cu.customer_id = c.subject_id
    LEFT JOIN organizations o ON c.subject_type <> 'USER' AND o.organization_id = c.organization_id
   WHERE c.card_id = p_card_id;
  IF NOT FOUND OR (p_partner_id IS NOT NULL AND v_card.partner_id <> p_partner_id) THEN
    outcome := 'CARD_INVALID';
    RETURN NEXT;
    RETURN;
  END IF;
  v_employee := CASE WHEN v_card.subject_type = 'CUSTOMER' THEN v_card.subject_id END;
  v_keys := v_card.period_keys;
  v_bamt := COALESCE(p_billing_amount, p_amount);
  v_bcur := COALESCE(p_billing_currency, p_currency);

  -- Card status (D47).
  IF v_card.status = 'BLOCKED' THEN v_reason := 'CARD_BLOCKED';
  ELSIF v_card.status = 'CANCELLED' THEN v_reason := 'CARD_CANCELLED';
  END IF;
  -- Capabilities (D20, D45), when one refuses: which one, in one statement (the employee of an
  -- employee card, then the company; a consumer card's user), then the partner.
  IF v_reason IS NULL AND v_card.capability_refused AND v_card.subject_type = 'USER' THEN
    -- A consumer card (managed-balance model): the user's own freezes, in the blockers' order.
    SELECT 'USER:' || b.code INTO v_detail FROM unnest(p_blockers) WITH ORDINALITY AS b(code, k)
     WHERE EXISTS (SELECT 1 FROM managed_user_restrictions r WHERE r.user_id = v_card.subject_id AND r.code = b.code)
     ORDER BY b.k LIMIT 1;
    IF v_detail IS NOT NULL THEN v_reason := 'CAPABILITY_FROZEN'; END IF;
  ELSIF v_reason IS NULL AND v_card.capability_refused THEN
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

  IF v_reason IS NULL AND v_card.velocity_bound THEN
    -- Authorizations of one card (and of one employee's cards) serialize from here, so two of them
    -- never both fit under a cap that has room for one.
    PERFORM pg_advisory_xact_lock(hashtextextended('card-velocity:' || s.id, 0))
       FROM unnest(ARRAY[p_card_id, v_employee]) AS s(id) WHERE s.id IS NOT NULL ORDER BY s.id;
    v_detail := card_velocity_refusal(v_card.partner_id, p_card_id, v_employee, v_control, p_currency, p_mcc, p_country,
                                      v_bamt, v_bcur, v_keys);
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
      -- With the pool's LOW_BALANCE threshold, if it has one (D49; its row is locked below only
      -- when this spend takes the pool below it).
      SELECT a.account_id, a.available, a.pending,
             (SELECT s.threshold FROM balance_alert_settings s WHERE s.organization_id = v_card.organization_id AND s.currency = v_bcur)
        INTO v_account_id, v_available, v_pending, v_threshold
        FROM ledger_accounts a
       WHERE a.partner_id = v_card.partner_id AND a.owner_type = 'ORGANIZATION_POOL' AND a.owner_id = v_card.organization_id
         AND a.currency = v_bcur FOR UPDATE OF a;
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
        -- Exactly atRate(UP) of src/platform/money.ts: the product of two NUMERICs is exact, trunc()
        -- to the scale is exact, and one unit of the last place is added when digits were cut. No
        -- division and no power(): numeric division keeps only about 16 significant decimals and
        -- power(10::numeric, -18) is 0, which held 41.15 for 41.149999999999999959 (D4).
        v_famt := trunc(v_bamt * v_rate, v_asset.scale);
        IF v_famt < v_bamt * v_rate THEN
          v_famt := v_famt + ('1e-' || v_asset.scale)::numeric;
        END IF;
      END IF;
      SELECT account_id, available, pending INTO v_account_id, v_available, v_pending FROM ledger_accounts
       WHERE partner_id = v_card.partner_id AND owner_type = 'MANAGED_USER' AND owner_id = v_card.subject_id
         AND currency = v_card.funding_asset FOR UPDATE;
    ELSE
      SELECT account_id, available, pending INTO v_account_id, v_available, v_pending FROM ledger_accounts
       WHERE partner_id = v_card.partner_id AND owner_type = 'CARD' AND owner_id = p_card_id AND currency = v_bcur FOR UPDATE;
    END IF;
    -- The hold in the funds account's own currency (the billing amount but for a rated asset).
    v_famt := COALESCE(v_famt, v_bamt);
    IF v_reason IS NULL AND (v_account_id IS NULL OR v_available < v_famt) THEN
      v_reason := 'INSUFFICIENT_BALANCE';
    END IF;
  END IF;

  IF v_reason IS NULL THEN
    -- Issue 34, step 4: the hold is a pending amount on the account row and this record (ledger_hold:
    -- no posting, no entries); what releases or settles it posts the balanced entries. ledger_hold
    -- raises unless the row moved exactly v_famt from the balances read above under its lock.
    SELECT h.hold_seq, h.available_after, h.pending_after, h.account_version INTO v_hold_seq, v_after_available, v_after_pending, v_after_version
      FROM ledger_hold(v_account_id, v_card.partner_id, v_famt, v_available, v_pending, p_trans_id, p_now) h;
    -- D32: the amount and one count to every period of the card and of its employee: one counter
    -- row per subject holding the four periods (issue 34), rolled over lazily. A period whose key
    -- differs starts afresh when this authorization is at or after the row's latest instant; one
    -- before it (a clock behind another instance's) leaves a period it no longer shares alone.
    INSERT INTO velocity_counters AS u (partner_id, subject_type, subject_id, control, currency, as_of,
        daily_key, daily_amount, daily_count, monthly_key, monthly_amount, monthly_count,
        quarterly_key, quarterly_amount, quarterly_count, yearly_key, yearly_amount, yearly_count)
      SELECT v_card.partner_id, s.kind, s.id, v_control, v_bcur, p_now,
             v_keys[1], v_bamt, 1, v_keys[2], v_bamt, 1, v_keys[3], v_bamt, 1, v_keys[4], v_bamt, 1
        FROM (VALUES ('CARD', p_card_id), ('CUSTOMER', v_employee)) s(kind, id)
       WHERE s.id IS NOT NULL
       ORDER BY s.kind
      ON CONFLICT (partner_id, subject_type, subject_id, control, currency) DO UPDATE SET
        daily_amount = CASE WHEN u.daily_key = excluded.daily_key THEN u.daily_amount + excluded.daily_amount
                            WHEN excluded.as_of >= u.as_of THEN excluded.daily_amount ELSE u.daily_amount END,
        daily_count = CASE WHEN u.daily_key = excluded.daily_key THEN u.daily_count + 1
                           WHEN excluded.as_of >= u.as_of THEN 1 ELSE u.daily_count END,
        daily_key = CASE WHEN excluded.as_of >= u.as_of THEN excluded.daily_key ELSE u.daily_key END,
        monthly_amount = CASE WHEN u.monthly_key = excluded.monthly_key THEN u.monthly_amount + excluded.monthly_amount
                              WHEN excluded.as_of >= u.as_of THEN excluded.monthly_amount ELSE u.monthly_amount END,
        monthly_count = CASE WHEN u.monthly_key = excluded.monthly_key THEN u.monthly_count + 1
                             WHEN excluded.as_of >= u.as_of THEN 1 ELSE u.monthly_count END,
        monthly_key = CASE WHEN excluded.as_of >= u.as_of THEN excluded.monthly_key ELSE u.monthly_key END,
        quarterly_amount = CASE WHEN u.quarterly_key = excluded.quarterly_key THEN u.quarterly_amount + excluded.quarterly_amount
                                WHEN excluded.as_of >= u.as_of THEN excluded.quarterly_amount ELSE u.quarterly_amount END,
        quarterly_count = CASE WHEN u.quarterly_key = excluded.quarterly_key THEN u.quarterly_count + 1
                               WHEN excluded.as_of >= u.as_of THEN 1 ELSE u.quarterly_count END,
        quarterly_key = CASE WHEN excluded.as_of >= u.as_of THEN excluded.quarterly_key ELSE u.quarterly_key END,
        yearly_amount = CASE WHEN u.yearly_key = excluded.yearly_key THEN u.yearly_amount + excluded.yearly_amount
                             WHEN excluded.as_of >= u.as_of THEN excluded.yearly_amount ELSE u.yearly_amount END,
        yearly_count = CASE WHEN u.yearly_key = excluded.yearly_key THEN u.yearly_count + 1
                            WHEN excluded.as_of >= u.as_of THEN 1 ELSE u.yearly_count END,
        yearly_key = CASE WHEN excluded.as_of >= u.as_of THEN excluded.yearly_key ELSE u.yearly_key END,
        as_of = GREATEST(u.as_of, excluded.as_of);
  END IF;

  INSERT INTO card_transactions (trans_id, partner_id, card_id, organization_id, subject_type, subject_id, message_type, auth_type,
      debit_credit_indicator, source, network_transaction_id, amount, currency, billing_amount, billing_currency, merchant_name, mcc,
      merchant_country, channel, status, decline_reason, decline_detail, hold_amount, funds_account_id, outstanding_transaction_id,
      posting_id, expiry_due_at, transaction_time, created_at, updated_at, funds_rate, funds_scale, funds_hold,
      hold_seq, hold_funds, hold_available_after, hold_pending_after)
    VALUES (p_trans_id, v_card.partner_id, p_card_id, v_card.organization_id, v_card.subject_type, v_card.subject_id, 'AUTHORIZATION',
      'EXPEND', 'D', p_source, p_network_id, p_amount, p_currency, v_bamt, v_bcur, p_merchant_name, p_mcc, p_country, p_channel,
      CASE WHEN v_reason IS NULL THEN 'PENDING' ELSE 'DECLINED' END, v_reason, v_detail,
      CASE WHEN v_reason IS NULL THEN v_bamt ELSE 0 END,
      CASE WHEN v_reason IS NULL THEN v_account_id END,
      CASE WHEN v_reason IS NULL THEN p_outstanding_id END,
      CASE WHEN v_reason IS NULL THEN p_posting_id END,
      CASE WHEN v_reason IS NULL THEN p_expiry_due_at END,
      p_transaction_time, p_now, p_now,
      CASE WHEN v_reason IS NULL THEN v_rate END,
      CASE WHEN v_reason IS NULL AND v_rate IS NOT NULL THEN v_asset.scale END,
      CASE WHEN v_reason IS NULL AND v_rate IS NOT NULL THEN v_famt END,
      v_hold_seq, CASE WHEN v_reason IS NULL THEN v_famt END, v_after_available, v_after_pending)
    RETURNING * INTO v_t;
  -- Issue 26: an approval on a corporate card of a partner with an auth_url awaits the partner's
  -- decision from this commit on, claimed by this request (p_decision_token) until due_at, with the
  -- partner's stand-in and deadline of this moment (D37).
  IF v_reason IS NULL AND p_decision_token IS NOT NULL AND v_card.subject_type <> 'USER' AND v_card.partner_auth_url IS NOT NULL THEN
    SELECT COALESCE(s.stand_in, 'DECLINE'), COALESCE(s.deadline_ms, p_default_deadline_ms) INTO v_stand_in, v_deadline_ms
      FROM (SELECT 1) one LEFT JOIN auth_forwarding_settings s ON s.partner_id = v_card.partner_id;
    INSERT INTO auth_decisions (trans_id, partner_id, lease_token, stand_in, deadline_ms, due_at, attempts, created_at)
      VALUES (p_trans_id, v_card.partner_id, p_decision_token, v_stand_in, v_deadline_ms,
              p_now + (v_deadline_ms + p_decision_grace_ms) * interval '1 millisecond', 0, p_now);
  END IF;
  v_json := card_transaction_json(v_t)::text;
  -- The CARD_TRANSACTION event (D38), with the payload this call built.
  PERFORM event_record(p_event_id, v_t.partner_id, 'CARD_TRANSACTION', v_t.card_id, v_json, p_now);

  -- LOW_BALANCE (2.12, D49) when this spend takes a pool below its threshold: once per UTC day while
  -- low, again at once after the pool was back at or above the threshold (the scan's rule).
  IF v_reason IS NULL AND v_card.balance_mode = 'SHARED' AND v_after_available < v_threshold THEN
    SELECT * INTO v_alert FROM balance_alert_settings
     WHERE organization_id = v_card.organization_id AND currency = v_bcur FOR UPDATE;
    IF FOUND AND v_after_available < v_alert.threshold AND (
         v_alert.last_alert_day IS NULL OR v_alert.last_alert_day < (p_now AT TIME ZONE 'UTC')::date
         OR EXISTS (SELECT 1 FROM ledger_entries e WHERE e.account_id = v_account_id
                     AND e.account_version > COALESCE(v_alert.last_alert_version, 0) AND e.available_after >= v_alert.threshold)) THEN
      PERFORM event_record(p_alert_event_id, v_card.partner_id, 'LOW_BALANCE', v_card.organization_id,
                           json_build_object('organizationId', v_card.organization_id, 'currency', v_bcur,
                                             'available', round(v_after_available, 2), 'threshold', round(v_alert.threshold, 2))::text,
                           p_now);
      UPDATE balance_alert_settings SET last_alert_day = (p_now AT TIME ZONE 'UTC')::date, last_alert_version = v_after_version,
             last_alert_at = p_now
       WHERE organization_id = v_card.organization_id AND currency = v_bcur;
      outcome := 'NEW_LOW_BALANCE'; body := v_json; answer_partner := v_card.partner_id;
      stand_in := v_stand_in; deadline_ms := v_deadline_ms;
      RETURN NEXT;
      RETURN;
    END IF;
  END IF;

  outcome := 'NEW'; body := v_json; answer_partner := v_card.partner_id; stand_in := v_stand_in; deadline_ms := v_deadline_ms;
  RETURN NEXT;
END $$;
