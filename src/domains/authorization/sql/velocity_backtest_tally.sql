-- Issue 31 section 3: adds p_count declined authorizations of p_amount in all to a backtest's result document, under
-- p_result -> p_section -> p_key: {"count": n, "amounts": {"USD": "12.50", ...}} (amounts as exact
-- decimal strings). Used by velocity_backtest_step for its per-reason and per-day figures.
CREATE OR REPLACE FUNCTION velocity_backtest_tally(p_result jsonb, p_section text, p_key text, p_currency text, p_count bigint, p_amount numeric)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  v_entry jsonb := COALESCE(p_result -> p_section -> p_key, '{"count": 0, "amounts": {}}'::jsonb);
BEGIN
  v_entry := jsonb_build_object(
    'count', (v_entry ->> 'count')::bigint + p_count,
    'amounts', (v_entry -> 'amounts') || jsonb_build_object(p_currency,
                 (COALESCE((v_entry -> 'amounts' ->> p_currency)::numeric, 0) + p_amount)::text));
  RETURN jsonb_set(p_result, ARRAY[p_section], COALESCE(p_result -> p_section, '{}'::jsonb) || jsonb_build_object(p_key, v_entry));
END $$;
