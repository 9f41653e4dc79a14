-- The velocity decline of a transaction on a card (D31, D32, D45), or NULL. Every ACTIVE rule bound
-- to the card, or to the card's employee (employee cards only), must allow it; each rule's caps are
-- measured against the usage of the subject it is bound to. Order: cash advance, currency, MCC,
-- country, then amount and count caps. Returns 'REASON' or 'REASON:detail'.
CREATE OR REPLACE FUNCTION card_velocity_refusal(
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
