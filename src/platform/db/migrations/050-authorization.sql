-- The authorization engine (spec 1, 2.9, 3; D20, D31-D34, D40, D45, D47). See
-- src/domains/authorization/service.ts for the use cases and docs/authorizations.md for the rules.

-- Card transactions (2.9): one row per network message. An AUTHORIZATION row carries the hold and
-- its life (PENDING -> CLEARED | REVERSED | EXPIRED, or DECLINED); CLEARING, REVERSAL and REFUND
-- rows are POSTED records pointing at the authorization they settle (original_trans_id).
CREATE TABLE card_transactions (
  trans_id                   text        PRIMARY KEY CHECK (length(trans_id) <= 20),
  partner_id                 text        NOT NULL REFERENCES partners (partner_id),
  card_id                    text        NOT NULL REFERENCES cards (card_id),
  organization_id            text        NOT NULL,
  subject_type               text        NOT NULL CHECK (subject_type IN ('ORGANIZATION', 'CUSTOMER')),
  subject_id                 text        NOT NULL,
  message_type               text        NOT NULL CHECK (message_type IN ('AUTHORIZATION', 'CLEARING', 'REVERSAL', 'REFUND')),
  auth_type                  text        NOT NULL CHECK (auth_type IN ('EXPEND', 'REFUND', 'REVERSAL')),
  debit_credit_indicator     text        NOT NULL CHECK (debit_credit_indicator IN ('D', 'C')),
  -- Who sent the message: the card network ingress, the sandbox simulation (D40).
  source                     text        NOT NULL CHECK (source IN ('NETWORK', 'SANDBOX')),
  -- Idempotency key of every message (minted for sandbox messages): a retry is answered from here.
  network_transaction_id     text        NOT NULL UNIQUE,
  original_trans_id          text        REFERENCES card_transactions (trans_id),
  amount                     numeric     NOT NULL CHECK (amount > 0),
  currency                   text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  billing_amount             numeric     NOT NULL CHECK (billing_amount > 0),
  billing_currency           text        NOT NULL CHECK (billing_currency ~ '^[A-Z]{3}$'),
  merchant_name              text,
  mcc                        text        CHECK (mcc ~ '^[0-9]{4}$'),
  merchant_country           text        CHECK (merchant_country ~ '^[A-Z]{2}$'),
  channel                    text        CHECK (channel IN ('ECOM', 'POS', 'ATM')),
  status                     text        NOT NULL CHECK (status IN ('PENDING', 'CLEARED', 'REVERSED', 'EXPIRED', 'DECLINED', 'POSTED')),
  decline_reason             text,
  decline_detail             text,
  -- Authorizations: what is still held (billing currency); 0 once cleared, reversed or expired.
  hold_amount                numeric     NOT NULL DEFAULT 0 CHECK (hold_amount >= 0),
  funds_account_id           text        REFERENCES ledger_accounts (account_id),
  outstanding_transaction_id text,
  posted_transaction_id      text,
  posting_id                 text        REFERENCES ledger_postings (posting_id),
  -- Hold expiry (D34) on the leased job runner: an outstanding hold is due at expiry_due_at
  -- (authorization + 30 days); a claim moves it to the lease expiry and stamps the lease token.
  expiry_due_at              timestamptz,
  expiry_lease_token         text,
  expiry_attempts            integer     NOT NULL DEFAULT 0,
  transaction_time           timestamptz NOT NULL,
  created_at                 timestamptz NOT NULL,
  updated_at                 timestamptz NOT NULL,
  CHECK ((status = 'DECLINED') = (decline_reason IS NOT NULL)),
  CHECK (message_type = 'AUTHORIZATION' OR status = 'POSTED')
);
CREATE UNIQUE INDEX card_transactions_outstanding ON card_transactions (outstanding_transaction_id)
  WHERE message_type = 'AUTHORIZATION' AND outstanding_transaction_id IS NOT NULL;
CREATE UNIQUE INDEX card_transactions_posted ON card_transactions (posted_transaction_id)
  WHERE message_type <> 'AUTHORIZATION' AND posted_transaction_id IS NOT NULL;
CREATE INDEX card_transactions_partner_time ON card_transactions (partner_id, created_at DESC, trans_id DESC);
CREATE INDEX card_transactions_card_time ON card_transactions (card_id, created_at DESC, trans_id DESC);
CREATE INDEX card_transactions_org_time ON card_transactions (organization_id, created_at DESC, trans_id DESC);
-- Hold expiry (D34): outstanding holds by due time.
CREATE INDEX card_transactions_expiry_due ON card_transactions (expiry_due_at)
  WHERE message_type = 'AUTHORIZATION' AND status = 'PENDING';

-- Credentials of the card network ingress (/internal/network/v1/), issued by operators; never a
-- partner's. Signed exactly as 5.3; the secret is sealed under the master key like a partner's.
CREATE TABLE network_keys (
  network_key_id text        PRIMARY KEY,
  name           text        NOT NULL,
  api_key        text        NOT NULL UNIQUE,
  secret_key_enc text        NOT NULL,
  ip_allowlist   jsonb       NOT NULL DEFAULT '[]',
  status         text        NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'REVOKED')),
  created_at     timestamptz NOT NULL
);

-- card_transaction_json(t), the partner-facing view of a transaction (the one shape of API answers
-- and CARD_TRANSACTION events), is defined in migration 051 beside the forwarding log it reads; the
-- plpgsql functions below call it at run time.

-- Records a CARD_TRANSACTION event in the outbox (D38): sequence per (partner, card).
CREATE FUNCTION card_transaction_event(t card_transactions, p_event_id text, p_now timestamptz, p_payload text DEFAULT NULL) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_seq bigint;
BEGIN
  INSERT INTO event_sequences (partner_id, business_id, last_sequence) VALUES (t.partner_id, t.card_id, 1)
    ON CONFLICT (partner_id, business_id) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1
    RETURNING last_sequence INTO v_seq;
  INSERT INTO events (event_id, partner_id, event_type, business_id, sequence, payload, create_time, status, next_attempt_at)
    VALUES (p_event_id, t.partner_id, 'CARD_TRANSACTION', t.card_id, v_seq, COALESCE(p_payload, card_transaction_json(t)::text), p_now, 'PENDING', p_now);
END $$;

-- The velocity decline of a transaction on a card (D31, D32, D45), or NULL. Every ACTIVE rule bound
-- to the card, or to the card's employee (employee cards only), must allow it; each rule's caps are
-- measured against the usage of the subject it is bound to. Order: cash advance, currency, MCC,
-- country, then amount and count caps. Returns 'REASON' or 'REASON:detail'.
CREATE FUNCTION card_velocity_refusal(
  p_partner_id text, p_card_id text, p_employee_id text, p_control text, p_currency text, p_mcc text, p_country text,
  p_billing_amount numeric, p_billing_currency text, p_keys text[]
) RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_rule record;
  v_hit text;
BEGIN
  FOR v_rule IN
    SELECT r.*, b.subject_type AS scope, b.subject_id AS scope_id
      FROM velocity_rule_bindings b JOIN velocity_rules r ON r.rule_id = b.rule_id
     WHERE b.partner_id = p_partner_id AND r.status = 'ACTIVE'
       AND ((b.subject_type = 'CARD' AND b.subject_id = p_card_id)
         OR (b.subject_type = 'CUSTOMER' AND p_employee_id IS NOT NULL AND b.subject_id = p_employee_id))
     ORDER BY r.created_at, r.rule_id
  LOOP
    IF p_control = 'CASH_ADVANCE' AND (v_rule.cash_advance_control ->> 'allowed') = 'false' THEN
      RETURN 'CASH_ADVANCE_NOT_ALLOWED:' || v_rule.rule_id;
    END IF;
    IF v_rule.currency_control IS NOT NULL
       AND ((v_rule.currency_control -> 'values') ? p_currency) <> ((v_rule.currency_control ->> 'filterType') = 'WHITELIST') THEN
      RETURN 'CURRENCY_NOT_ALLOWED:' || v_rule.rule_id;
    END IF;
    IF v_rule.mcc_control IS NOT NULL
       AND ((v_rule.mcc_control -> 'values') ? p_mcc) <> ((v_rule.mcc_control ->> 'filterType') = 'WHITELIST') THEN
      RETURN 'MCC_NOT_ALLOWED:' || v_rule.rule_id;
    END IF;
    IF v_rule.geographic_control IS NOT NULL
       AND ((v_rule.geographic_control -> 'values') ? p_country) <> ((v_rule.geographic_control ->> 'filterType') = 'WHITELIST') THEN
      RETURN 'COUNTRY_NOT_ALLOWED:' || v_rule.rule_id;
    END IF;
  END LOOP;

  -- Amount caps of the transaction's control group in the billing currency: per transaction, and
  -- per period against the usage of the rule's subject in the current UTC period.
  SELECT 'VELOCITY_LIMIT_EXCEEDED:' || r.rule_id || ':' || c.period INTO v_hit
    FROM velocity_rule_bindings b
    JOIN velocity_rules r ON r.rule_id = b.rule_id AND r.status = 'ACTIVE'
    JOIN velocity_rule_amount_limits l ON l.rule_id = r.rule_id AND l.control = p_control AND l.currency = p_billing_currency
    CROSS JOIN LATERAL (VALUES ('PER_TRANSACTION', l.per_transaction, NULL::text), ('DAILY', l.daily, p_keys[1]),
                               ('MONTHLY', l.monthly, p_keys[2]), ('QUARTERLY', l.quarterly, p_keys[3]),
                               ('YEARLY', l.yearly, p_keys[4])) AS c(period, cap, period_key)
    LEFT JOIN velocity_usage u ON u.partner_id = p_partner_id AND u.subject_type = b.subject_type AND u.subject_id = b.subject_id
          AND u.control = p_control AND u.currency = p_billing_currency AND u.period = c.period AND u.period_key = c.period_key
   WHERE b.partner_id = p_partner_id
     AND ((b.subject_type = 'CARD' AND b.subject_id = p_card_id)
       OR (b.subject_type = 'CUSTOMER' AND p_employee_id IS NOT NULL AND b.subject_id = p_employee_id))
     AND c.cap IS NOT NULL
     AND (CASE WHEN c.period = 'PER_TRANSACTION' THEN 0 ELSE COALESCE(u.used_amount, 0) END) + p_billing_amount > c.cap
   ORDER BY r.created_at, r.rule_id
   LIMIT 1;
  IF v_hit IS NOT NULL THEN RETURN v_hit; END IF;

  -- Count caps span currencies (D31): the period's count is the sum over the usage rows.
  SELECT 'VELOCITY_LIMIT_EXCEEDED:' || r.rule_id || ':' || c.period || '_COUNT' INTO v_hit
    FROM velocity_rule_bindings b
    JOIN velocity_rules r ON r.rule_id = b.rule_id AND r.status = 'ACTIVE'
    CROSS JOIN LATERAL (SELECT CASE WHEN p_control = 'PURCHASE' THEN r.purchase_control ELSE r.cash_advance_control END -> 'countLimits' AS limits) g
    CROSS JOIN LATERAL (VALUES ('DAILY', g.limits ->> 'daily', p_keys[1]), ('MONTHLY', g.limits ->> 'monthly', p_keys[2]),
                               ('QUARTERLY', g.limits ->> 'quarterly', p_keys[3]), ('YEARLY', g.limits ->> 'yearly', p_keys[4])) AS c(period, cap, period_key)
   WHERE b.partner_id = p_partner_id
     AND ((b.subject_type = 'CARD' AND b.subject_id = p_card_id)
       OR (b.subject_type = 'CUSTOMER' AND p_employee_id IS NOT NULL AND b.subject_id = p_employee_id))
     AND g.limits IS NOT NULL AND jsonb_typeof(g.limits) = 'object' AND c.cap IS NOT NULL
     AND (SELECT COALESCE(sum(u.used_count), 0) FROM velocity_usage u
           WHERE u.partner_id = p_partner_id AND u.subject_type = b.subject_type AND u.subject_id = b.subject_id
             AND u.control = p_control AND u.period = c.period AND u.period_key = c.period_key) + 1 > c.cap::bigint
   ORDER BY r.created_at, r.rule_id
   LIMIT 1;
  RETURN v_hit;
END $$;

-- One authorization (D34), decided and booked in one call: the hot path is one round trip.
-- Stages in order, each decline with its D47 reason and no side effect but the declined record:
-- card (CARD_INVALID when unknown or, for a partner call, another partner's: no record at all),
-- card status, capabilities of employee, company and partner, velocity, funds (free -> freeze).
-- A network retry (same network_transaction_id) is answered from the first record.
-- Returns (outcome, body, partner_id): ('NEW'|'NEW_LOW_BALANCE'|'REPLAY', transaction json, its partner) or ('CARD_INVALID', NULL, NULL).
CREATE FUNCTION card_authorize(
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
  IF v_reason IS NULL THEN
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
    IF v_reason IS NULL AND v_card.partner_status <> 'ACTIVE' THEN
      v_reason := 'CAPABILITY_FROZEN';
      v_detail := 'PARTNER:' || v_card.partner_status;
    END IF;
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
    ELSE
      SELECT * INTO v_account FROM ledger_accounts
       WHERE partner_id = v_card.partner_id AND owner_type = 'CARD' AND owner_id = p_card_id AND currency = v_bcur FOR UPDATE;
    END IF;
    IF v_reason IS NULL AND (v_account.account_id IS NULL OR v_account.available < v_bamt) THEN
      v_reason := 'INSUFFICIENT_BALANCE';
    END IF;
  END IF;

  IF v_reason IS NULL THEN
    INSERT INTO ledger_postings (posting_id, partner_id, kind, forced, reference, description, created_at)
      VALUES (p_posting_id, v_card.partner_id, 'AUTHORIZATION', false, p_trans_id, 'Authorization hold', p_now);
    -- The entry trigger applies each entry to the account and records the balances after it.
    WITH e AS (
      INSERT INTO ledger_entries (posting_id, account_id, currency, bucket, amount, available_after, pending_after, account_version, created_at)
        VALUES (p_posting_id, v_account.account_id, v_bcur, 'AVAILABLE', -v_bamt, 0, 0, 0, p_now),
               (p_posting_id, v_account.account_id, v_bcur, 'PENDING', v_bamt, 0, 0, 0, p_now)
        RETURNING available_after, pending_after, account_version)
    SELECT available_after, pending_after, account_version INTO v_after_available, v_after_pending, v_after_version
      FROM e ORDER BY account_version DESC LIMIT 1;
    IF v_after_available <> v_account.available - v_bamt OR v_after_pending <> v_account.pending + v_bamt THEN
      RAISE EXCEPTION 'authorization: hold on % did not move exactly % from available to pending', v_account.account_id, v_bamt;
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
      posting_id, expiry_due_at, transaction_time, created_at, updated_at)
    VALUES (p_trans_id, v_card.partner_id, p_card_id, v_card.organization_id, v_card.subject_type, v_card.subject_id, 'AUTHORIZATION',
      'EXPEND', 'D', p_source, p_network_id, p_amount, p_currency, v_bamt, v_bcur, p_merchant_name, p_mcc, p_country, p_channel,
      CASE WHEN v_reason IS NULL THEN 'PENDING' ELSE 'DECLINED' END, v_reason, v_detail,
      CASE WHEN v_reason IS NULL THEN v_bamt ELSE 0 END,
      CASE WHEN v_reason IS NULL THEN v_account.account_id END,
      CASE WHEN v_reason IS NULL THEN p_outstanding_id END,
      CASE WHEN v_reason IS NULL THEN p_posting_id END,
      CASE WHEN v_reason IS NULL THEN p_expiry_due_at END,
      p_transaction_time, p_now, p_now)
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
