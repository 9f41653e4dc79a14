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
  v_n integer := COALESCE(jsonb_array_length(p_rules), 0);
  v_rule jsonb;
  v_limits jsonb;
  v_limit jsonb;
  v_counts jsonb;
  v_usage jsonb;
  v_period text;
  v_cap text;
  v_filter jsonb;
BEGIN
  -- Plain loops over the documents (no query per rule): this runs once per authorization, live and replayed.
  FOR i IN 0 .. v_n - 1 LOOP
    v_rule := p_rules -> i;
    IF p_control = 'CASH_ADVANCE' AND (v_rule -> 'cashAdvanceControl' ->> 'allowed') = 'false' THEN
      RETURN 'CASH_ADVANCE_NOT_ALLOWED:' || (v_rule ->> 'ruleId');
    END IF;
    v_filter := v_rule -> 'currencyControl';
    IF jsonb_typeof(v_filter) = 'object' AND ((v_filter -> 'values') ? p_currency) <> ((v_filter ->> 'filterType') = 'WHITELIST') THEN
      RETURN 'CURRENCY_NOT_ALLOWED:' || (v_rule ->> 'ruleId');
    END IF;
    v_filter := v_rule -> 'mccControl';
    IF jsonb_typeof(v_filter) = 'object' AND ((v_filter -> 'values') ? p_mcc) <> ((v_filter ->> 'filterType') = 'WHITELIST') THEN
      RETURN 'MCC_NOT_ALLOWED:' || (v_rule ->> 'ruleId');
    END IF;
    v_filter := v_rule -> 'geographicControl';
    IF jsonb_typeof(v_filter) = 'object' AND ((v_filter -> 'values') ? p_country) <> ((v_filter ->> 'filterType') = 'WHITELIST') THEN
      RETURN 'COUNTRY_NOT_ALLOWED:' || (v_rule ->> 'ruleId');
    END IF;
  END LOOP;

  -- Amount caps of the transaction's control group in the billing currency: per transaction, and
  -- per period against the usage of the rule's subject.
  FOR i IN 0 .. v_n - 1 LOOP
    v_rule := p_rules -> i;
    v_limits := v_rule -> 'amountLimits';
    CONTINUE WHEN v_limits IS NULL OR jsonb_typeof(v_limits) <> 'array';
    v_usage := p_usage -> (v_rule ->> 'scope');
    FOR j IN 0 .. jsonb_array_length(v_limits) - 1 LOOP
      v_limit := v_limits -> j;
      CONTINUE WHEN v_limit ->> 'control' IS DISTINCT FROM p_control OR v_limit ->> 'currency' IS DISTINCT FROM p_billing_currency;
      IF (v_limit ->> 'perTransaction') IS NOT NULL AND p_billing_amount > (v_limit ->> 'perTransaction')::numeric THEN
        RETURN 'VELOCITY_LIMIT_EXCEEDED:' || (v_rule ->> 'ruleId') || ':PER_TRANSACTION';
      END IF;
      FOREACH v_period IN ARRAY ARRAY['DAILY', 'MONTHLY', 'QUARTERLY', 'YEARLY'] LOOP
        v_cap := v_limit ->> lower(v_period);
        IF v_cap IS NOT NULL AND COALESCE((v_usage -> v_period ->> 'amount')::numeric, 0) + p_billing_amount > v_cap::numeric THEN
          RETURN 'VELOCITY_LIMIT_EXCEEDED:' || (v_rule ->> 'ruleId') || ':' || v_period;
        END IF;
      END LOOP;
    END LOOP;
  END LOOP;

  -- Count caps span currencies (D31).
  FOR i IN 0 .. v_n - 1 LOOP
    v_rule := p_rules -> i;
    v_counts := CASE WHEN p_control = 'PURCHASE' THEN v_rule -> 'purchaseControl' ELSE v_rule -> 'cashAdvanceControl' END -> 'countLimits';
    CONTINUE WHEN v_counts IS NULL OR jsonb_typeof(v_counts) <> 'object';
    v_usage := p_usage -> (v_rule ->> 'scope');
    FOREACH v_period IN ARRAY ARRAY['DAILY', 'MONTHLY', 'QUARTERLY', 'YEARLY'] LOOP
      v_cap := v_counts ->> lower(v_period);
      IF v_cap IS NOT NULL AND COALESCE((v_usage -> v_period ->> 'count')::bigint, 0) + 1 > v_cap::bigint THEN
        RETURN 'VELOCITY_LIMIT_EXCEEDED:' || (v_rule ->> 'ruleId') || ':' || v_period || '_COUNT';
      END IF;
    END LOOP;
  END LOOP;
  RETURN NULL;
END $$;
