-- Whether the partner had any ACTIVE rule bound to anything at or before p_bound_by: a backtest of a
-- draft rule (issue 31 section 3) in mode COMBINED asks it once per step, and looks up the rules
-- bound at each authorization's time (velocity_bound_rules) only when there can be some.
CREATE OR REPLACE FUNCTION velocity_rules_bound_by(p_partner_id text, p_bound_by timestamptz)
RETURNS boolean LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM velocity_rule_bindings b JOIN velocity_rules r ON r.rule_id = b.rule_id
                  WHERE b.partner_id = p_partner_id AND r.status = 'ACTIVE' AND b.created_at <= p_bound_by);
END $$;
