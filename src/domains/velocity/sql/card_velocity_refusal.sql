-- The velocity decline of a transaction on a card (D31, D32, D45), or NULL. Every ACTIVE rule bound
-- to the card, or to the card's employee (employee cards only), must allow it; each rule's caps are
-- measured against the usage of the subject it is bound to in the periods p_keys (daily, monthly,
-- quarterly, yearly). Returns 'REASON' or 'REASON:detail'.
-- Issue 31 section 3: this function gathers the live facts (the bound rules, the subjects' usage)
-- and velocity_refusal decides, the same code a backtest of a draft rule runs.
CREATE OR REPLACE FUNCTION card_velocity_refusal(
  p_partner_id text, p_card_id text, p_employee_id text, p_control text, p_currency text, p_mcc text, p_country text,
  p_billing_amount numeric, p_billing_currency text, p_keys text[]
) RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_rules jsonb;
  v_usage jsonb;
BEGIN
  v_rules := velocity_bound_rules(p_partner_id, p_card_id, p_employee_id, p_control, p_billing_currency, NULL);
  IF v_rules IS NULL THEN RETURN NULL; END IF;

  -- The usage of the card and of its employee in the current periods: the amount in the billing
  -- currency, the count over every currency (D31).
  SELECT jsonb_object_agg(s.kind, s.periods) INTO v_usage
    FROM (SELECT x.kind, jsonb_object_agg(k.period, jsonb_build_object(
                   'amount', COALESCE((SELECT sum(u.used_amount) FROM velocity_usage u
                                        WHERE u.partner_id = p_partner_id AND u.subject_type = x.kind AND u.subject_id = x.id
                                          AND u.control = p_control AND u.currency = p_billing_currency
                                          AND u.period = k.period AND u.period_key = k.period_key), 0),
                   'count', COALESCE((SELECT sum(u.used_count) FROM velocity_usage u
                                       WHERE u.partner_id = p_partner_id AND u.subject_type = x.kind AND u.subject_id = x.id
                                         AND u.control = p_control AND u.period = k.period AND u.period_key = k.period_key), 0))) AS periods
            FROM (VALUES ('CARD', p_card_id), ('CUSTOMER', p_employee_id)) x(kind, id)
            CROSS JOIN (VALUES ('DAILY', p_keys[1]), ('MONTHLY', p_keys[2]), ('QUARTERLY', p_keys[3]), ('YEARLY', p_keys[4])) k(period, period_key)
           WHERE x.id IS NOT NULL
           GROUP BY x.kind) s;

  RETURN velocity_refusal(v_rules, v_usage, p_control, p_currency, p_mcc, p_country, p_billing_amount, p_billing_currency);
END $$;
