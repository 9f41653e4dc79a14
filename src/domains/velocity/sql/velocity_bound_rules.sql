-- The ACTIVE rules bound to a card, or to the card's employee (employee cards only, D45), as the
-- rule documents velocity_refusal decides on, in its order (creation time, rule id, then CARD before
-- CUSTOMER), with only the amount limits of p_control in p_billing_currency; NULL when none.
-- p_bound_by: only bindings made at or before it (a backtest replaying the past, issue 31 section
-- 3); NULL for every binding (live authorizations, card_velocity_refusal).
CREATE OR REPLACE FUNCTION velocity_bound_rules(
  p_partner_id text, p_card_id text, p_employee_id text, p_control text, p_billing_currency text, p_bound_by timestamptz
) RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_rules jsonb;
BEGIN
  SELECT jsonb_agg(jsonb_build_object(
           'ruleId', r.rule_id, 'scope', b.subject_type,
           'purchaseControl', r.purchase_control, 'cashAdvanceControl', r.cash_advance_control,
           'currencyControl', r.currency_control, 'mccControl', r.mcc_control, 'geographicControl', r.geographic_control,
           'amountLimits', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                 'control', l.control, 'currency', l.currency, 'perTransaction', l.per_transaction, 'daily', l.daily,
                 'monthly', l.monthly, 'quarterly', l.quarterly, 'yearly', l.yearly) ORDER BY l.position)
               FROM velocity_rule_amount_limits l
              WHERE l.rule_id = r.rule_id AND l.control = p_control AND l.currency = p_billing_currency), '[]'::jsonb))
         ORDER BY r.created_at, r.rule_id, b.subject_type)
    INTO v_rules
    FROM velocity_rule_bindings b JOIN velocity_rules r ON r.rule_id = b.rule_id
   WHERE b.partner_id = p_partner_id AND r.status = 'ACTIVE'
     AND ((b.subject_type = 'CARD' AND b.subject_id = p_card_id)
       OR (b.subject_type = 'CUSTOMER' AND p_employee_id IS NOT NULL AND b.subject_id = p_employee_id))
     AND (p_bound_by IS NULL OR b.created_at <= p_bound_by);
  RETURN v_rules;
END $$;
