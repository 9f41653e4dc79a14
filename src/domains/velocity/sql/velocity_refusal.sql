-- The velocity decision itself (D31, D32, D45), the one evaluation code of velocity rules (issue 31
-- section 3): card_velocity_refusal (live authorizations) and velocity_backtest_step (backtests of a
-- draft rule) both call it, each passing the rules and the usage figures it has.
--
-- p_rules: a jsonb array of the rules that apply, in decision order (creation time, rule id, then
-- the binding's subject, CARD before CUSTOMER), each
--   {"ruleId", "scope": "CARD"|"CUSTOMER",
--    "purchaseControl": {"countLimits": {...}|null}|null, "cashAdvanceControl": {"allowed", "countLimits"}|null,
--    "currencyControl" | "mccControl" | "geographicControl": {"filterType", "values"}|null,
--    "amountLimits": [{"control", "currency", "perTransaction", "daily", "monthly", "quarterly", "yearly"}]}
-- (the velocity_rules columns and velocity_rule_amount_limits rows; amounts as JSON strings or numbers).
-- p_usage: the usage of the transaction's control group per subject and period:
--   {"CARD": {"DAILY": {"amount": "12.50", "count": 3}, ...}, "CUSTOMER": {...}}, where amount is
-- in the billing currency and count spans currencies (D31); a missing figure is zero.
-- Order: every rule's cash advance, currency, MCC and country filters (rule by rule), then amount
-- caps (per transaction, daily, monthly, quarterly, yearly; rule by rule), then count caps.
-- Returns 'REASON:ruleId' or 'VELOCITY_LIMIT_EXCEEDED:ruleId:PERIOD[_COUNT]', or NULL.
CREATE OR REPLACE FUNCTION velocity_refusal(
  p_rules jsonb, p_usage jsonb, p_control text, p_currency text, p_mcc text, p_country text,
  p_billing_amount numeric, p_billing_currency text
) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  v_rule jsonb;
  v_limit jsonb;
  v_counts jsonb;
  v_period text;
  v_cap text;
BEGIN
  IF p_rules IS NULL OR jsonb_array_length(p_rules) = 0 THEN RETURN NULL; END IF;
  FOR v_rule IN SELECT e FROM jsonb_array_elements(p_rules) e LOOP
    IF p_control = 'CASH_ADVANCE' AND (v_rule -> 'cashAdvanceControl' ->> 'allowed') = 'false' THEN
      RETURN 'CASH_ADVANCE_NOT_ALLOWED:' || (v_rule ->> 'ruleId');
    END IF;
    IF jsonb_typeof(v_rule -> 'currencyControl') = 'object'
       AND ((v_rule -> 'currencyControl' -> 'values') ? p_currency) <> ((v_rule -> 'currencyControl' ->> 'filterType') = 'WHITELIST') THEN
      RETURN 'CURRENCY_NOT_ALLOWED:' || (v_rule ->> 'ruleId');
    END IF;
    IF jsonb_typeof(v_rule -> 'mccControl') = 'object'
       AND ((v_rule -> 'mccControl' -> 'values') ? p_mcc) <> ((v_rule -> 'mccControl' ->> 'filterType') = 'WHITELIST') THEN
      RETURN 'MCC_NOT_ALLOWED:' || (v_rule ->> 'ruleId');
    END IF;
    IF jsonb_typeof(v_rule -> 'geographicControl') = 'object'
       AND ((v_rule -> 'geographicControl' -> 'values') ? p_country) <> ((v_rule -> 'geographicControl' ->> 'filterType') = 'WHITELIST') THEN
      RETURN 'COUNTRY_NOT_ALLOWED:' || (v_rule ->> 'ruleId');
    END IF;
  END LOOP;

  -- Amount caps of the transaction's control group in the billing currency: per transaction, and
  -- per period against the usage of the rule's subject.
  FOR v_rule IN SELECT e FROM jsonb_array_elements(p_rules) e LOOP
    FOR v_limit IN SELECT l FROM jsonb_array_elements(COALESCE(v_rule -> 'amountLimits', '[]'::jsonb)) l
                    WHERE l ->> 'control' = p_control AND l ->> 'currency' = p_billing_currency LOOP
      IF (v_limit ->> 'perTransaction') IS NOT NULL AND p_billing_amount > (v_limit ->> 'perTransaction')::numeric THEN
        RETURN 'VELOCITY_LIMIT_EXCEEDED:' || (v_rule ->> 'ruleId') || ':PER_TRANSACTION';
      END IF;
      FOREACH v_period IN ARRAY ARRAY['DAILY', 'MONTHLY', 'QUARTERLY', 'YEARLY'] LOOP
        v_cap := v_limit ->> lower(v_period);
        IF v_cap IS NOT NULL
           AND COALESCE((p_usage -> (v_rule ->> 'scope') -> v_period ->> 'amount')::numeric, 0) + p_billing_amount > v_cap::numeric THEN
          RETURN 'VELOCITY_LIMIT_EXCEEDED:' || (v_rule ->> 'ruleId') || ':' || v_period;
        END IF;
      END LOOP;
    END LOOP;
  END LOOP;

  -- Count caps span currencies (D31).
  FOR v_rule IN SELECT e FROM jsonb_array_elements(p_rules) e LOOP
    v_counts := CASE WHEN p_control = 'PURCHASE' THEN v_rule -> 'purchaseControl' ELSE v_rule -> 'cashAdvanceControl' END -> 'countLimits';
    CONTINUE WHEN v_counts IS NULL OR jsonb_typeof(v_counts) <> 'object';
    FOREACH v_period IN ARRAY ARRAY['DAILY', 'MONTHLY', 'QUARTERLY', 'YEARLY'] LOOP
      v_cap := v_counts ->> lower(v_period);
      IF v_cap IS NOT NULL
         AND COALESCE((p_usage -> (v_rule ->> 'scope') -> v_period ->> 'count')::bigint, 0) + 1 > v_cap::bigint THEN
        RETURN 'VELOCITY_LIMIT_EXCEEDED:' || (v_rule ->> 'ruleId') || ':' || v_period || '_COUNT';
      END IF;
    END LOOP;
  END LOOP;
  RETURN NULL;
END $$;
