-- Issue 31 section 3: one step of a backtest of a draft velocity rule (rule_backtests): replays the
-- next p_limit recorded authorizations of the backtest's subjects in its window, in time order
-- (created_at, trans_id: the order card_authorize decided them in), and records what the draft
-- would have declined. The decision is velocity_refusal, the code live authorizations run
-- (card_velocity_refusal); the facts are the replay's own: the draft bound to its subjects (the
-- newest rule, so last in order), with the rules bound at the authorization's time (mode
-- COMBINED, velocity_bound_rules) or alone (ALONE), and the usage the replay accumulated
-- (rule_backtests.usage_*: an approval adds its amount and one count to every period of the card and
-- of its employee, D32, in the partner's periods of the authorization's time, velocity_periods).
-- An authorization declined when it was recorded is counted (alreadyDeclined) and not replayed: it
-- added no usage. In mode COMBINED the other cards of the employees holding the draft's cards
-- (context_employee_ids) are replayed too, with the bound rules only and unreported, so that a
-- bound employee rule measures the employee's whole usage, as it did live. Writes only rule_backtest* rows: nothing live changes.
-- Runs inside the job runner's transaction, only while p_lease_token holds the backtest.
-- Returns ('LOST_LEASE' | 'MORE' | 'COMPLETED', processed so far, total).
CREATE OR REPLACE FUNCTION velocity_backtest_step(p_backtest_id text, p_lease_token text, p_limit integer, p_now timestamptz)
RETURNS TABLE (outcome text, processed bigint, total bigint) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_bt rule_backtests;
  v_t record;
  v_n integer := 0;
  v_result jsonb;
  v_evaluated bigint;
  v_already bigint;
  v_declined bigint;
  v_samples jsonb;
  v_control text;
  v_employee text;
  v_in_scope boolean;
  v_keys text[];
  v_keys_from timestamptz;
  v_keys_until timestamptz;
  v_rules jsonb;
  v_usage jsonb;
  v_refusal text;
  v_key text;
  v_last_at timestamptz;
  v_last_id text;
  v_done boolean;
  -- The replay's usage (rule_backtests.usage_*): count slots per subject and control, amount slots per
  -- subject, control and billing currency; each slot holds the four periods (daily, monthly,
  -- quarterly, yearly) as [period key, figure], the key of the period the figure belongs to.
  v_cnames text[];
  v_ckeys text[];
  v_counts bigint[];
  v_anames text[];
  v_akeys text[];
  v_amounts numeric[];
  v_kinds text[];
  v_ids text[];
  v_ci integer[];
  v_ai integer[];
  v_name text;
  v_x integer;
  v_periods jsonb;
  v_tnames text[] := '{}';
  v_tcounts bigint[] := '{}';
  v_tamounts numeric[] := '{}';
  v_any_bound boolean;
BEGIN
  SELECT * INTO v_bt FROM rule_backtests b WHERE b.backtest_id = p_backtest_id AND b.lease_token = p_lease_token FOR UPDATE;
  IF NOT FOUND OR v_bt.status NOT IN ('PENDING', 'RUNNING') THEN
    RETURN QUERY SELECT 'LOST_LEASE'::text, NULL::bigint, NULL::bigint;
    RETURN;
  END IF;
  IF v_bt.total IS NULL THEN
    SELECT count(*) INTO v_bt.total FROM card_transactions t
     WHERE t.partner_id = v_bt.partner_id AND t.message_type = 'AUTHORIZATION'
       AND t.created_at >= v_bt.window_start AND t.created_at < v_bt.window_end
       AND (t.card_id = ANY (v_bt.card_ids)
         OR (t.subject_type = 'CUSTOMER' AND (t.subject_id = ANY (v_bt.employee_ids) OR t.subject_id = ANY (v_bt.context_employee_ids))));
  END IF;
  v_result := v_bt.result;
  v_evaluated := COALESCE((v_result ->> 'evaluated')::bigint, 0);
  v_already := COALESCE((v_result ->> 'alreadyDeclined')::bigint, 0);
  v_declined := COALESCE((v_result ->> 'declined')::bigint, 0);
  v_samples := COALESCE(v_result -> 'samples', '[]'::jsonb);
  v_last_at := v_bt.cursor_at;
  v_last_id := v_bt.cursor_trans_id;
  -- Mode COMBINED looks up the rules bound at each authorization's time, unless the partner had none bound in the window.
  v_any_bound := v_bt.mode = 'COMBINED' AND velocity_rules_bound_by(v_bt.partner_id, v_bt.window_end);
  v_cnames := v_bt.usage_count_slots;
  v_ckeys := v_bt.usage_count_keys;
  v_counts := v_bt.usage_counts;
  v_anames := v_bt.usage_amount_slots;
  v_akeys := v_bt.usage_amount_keys;
  v_amounts := v_bt.usage_amounts;

  FOR v_t IN
    SELECT t.trans_id, t.card_id, t.subject_type, t.subject_id, t.channel, t.currency, t.mcc, t.merchant_country,
           t.billing_amount, t.billing_currency, t.status, t.created_at
      FROM card_transactions t
     WHERE t.partner_id = v_bt.partner_id AND t.message_type = 'AUTHORIZATION'
       AND t.created_at >= v_bt.window_start AND t.created_at < v_bt.window_end
       AND (v_bt.cursor_at IS NULL OR (t.created_at, t.trans_id) > (v_bt.cursor_at, v_bt.cursor_trans_id))
       AND (t.card_id = ANY (v_bt.card_ids)
         OR (t.subject_type = 'CUSTOMER' AND (t.subject_id = ANY (v_bt.employee_ids) OR t.subject_id = ANY (v_bt.context_employee_ids))))
     ORDER BY t.created_at, t.trans_id
     LIMIT p_limit
  LOOP
    v_n := v_n + 1;
    v_last_at := v_t.created_at;
    v_last_id := v_t.trans_id;
    v_employee := CASE WHEN v_t.subject_type = 'CUSTOMER' THEN v_t.subject_id END;
    v_in_scope := v_t.card_id = ANY (v_bt.card_ids) OR v_employee = ANY (v_bt.employee_ids);
    IF v_t.status = 'DECLINED' THEN
      IF v_in_scope THEN v_already := v_already + 1; END IF;
      CONTINUE;
    END IF;
    IF v_in_scope THEN v_evaluated := v_evaluated + 1; END IF;
    v_control := CASE WHEN v_t.channel = 'ATM' THEN 'CASH_ADVANCE' ELSE 'PURCHASE' END;
    -- The partner's periods of the authorization's time; kept while the time stays inside all four.
    IF v_keys IS NULL OR v_t.created_at < v_keys_from OR v_t.created_at >= v_keys_until THEN
      SELECT array_agg(p.period_key ORDER BY array_position(ARRAY['DAILY', 'MONTHLY', 'QUARTERLY', 'YEARLY'], p.period)),
             max(p.starts_at), min(p.ends_at)
        INTO v_keys, v_keys_from, v_keys_until
        FROM velocity_periods(v_bt.partner_id, v_t.created_at) p;
    END IF;

    v_rules := CASE WHEN v_any_bound
                    THEN velocity_bound_rules(v_bt.partner_id, v_t.card_id, v_employee, v_control, v_t.billing_currency, v_t.created_at)
               END;
    v_rules := COALESCE(v_rules, '[]'::jsonb)
      || CASE WHEN v_t.card_id = ANY (v_bt.card_ids) THEN jsonb_build_array(v_bt.draft || '{"scope": "CARD"}'::jsonb) ELSE '[]'::jsonb END
      || CASE WHEN v_employee = ANY (v_bt.employee_ids) THEN jsonb_build_array(v_bt.draft || '{"scope": "CUSTOMER"}'::jsonb) ELSE '[]'::jsonb END;

    -- The usage of the card and of its employee in the current periods: the amount in the billing
    -- currency, the count over every currency (D31); a figure of a past period key counts as zero.
    v_kinds := ARRAY['CARD', 'CUSTOMER'];
    v_ids := ARRAY[v_t.card_id, v_employee];
    v_ci := ARRAY[NULL, NULL]::integer[];
    v_ai := ARRAY[NULL, NULL]::integer[];
    v_usage := '{}'::jsonb;
    FOR k IN 1 .. 2 LOOP
      CONTINUE WHEN v_ids[k] IS NULL;
      v_ci[k] := array_position(v_cnames, v_kinds[k] || '|' || v_ids[k] || '|' || v_control);
      v_ai[k] := array_position(v_anames, v_kinds[k] || '|' || v_ids[k] || '|' || v_control || '|' || v_t.billing_currency);
      CONTINUE WHEN v_ci[k] IS NULL;
      v_periods := '{}'::jsonb;
      FOR p IN 1 .. 4 LOOP
        v_periods := v_periods || jsonb_build_object((ARRAY['DAILY', 'MONTHLY', 'QUARTERLY', 'YEARLY'])[p], jsonb_build_object(
          'amount', CASE WHEN v_ai[k] IS NOT NULL AND v_akeys[(v_ai[k] - 1) * 4 + p] = v_keys[p] THEN v_amounts[(v_ai[k] - 1) * 4 + p] ELSE 0 END,
          'count', CASE WHEN v_ckeys[(v_ci[k] - 1) * 4 + p] = v_keys[p] THEN v_counts[(v_ci[k] - 1) * 4 + p] ELSE 0 END));
      END LOOP;
      v_usage := v_usage || jsonb_build_object(v_kinds[k], v_periods);
    END LOOP;

    v_refusal := velocity_refusal(v_rules, v_usage, v_control, v_t.currency, v_t.mcc, v_t.merchant_country,
                                  v_t.billing_amount, v_t.billing_currency);
    IF v_refusal IS NULL THEN
      -- D32: the amount and one count to every period of the card and of its employee.
      FOR k IN 1 .. 2 LOOP
        CONTINUE WHEN v_ids[k] IS NULL;
        IF v_ci[k] IS NULL THEN
          v_cnames := v_cnames || (v_kinds[k] || '|' || v_ids[k] || '|' || v_control);
          v_ckeys := v_ckeys || v_keys;
          v_counts := v_counts || ARRAY[0, 0, 0, 0]::bigint[];
          v_ci[k] := array_length(v_cnames, 1);
        END IF;
        IF v_ai[k] IS NULL THEN
          v_anames := v_anames || (v_kinds[k] || '|' || v_ids[k] || '|' || v_control || '|' || v_t.billing_currency);
          v_akeys := v_akeys || v_keys;
          v_amounts := v_amounts || ARRAY[0, 0, 0, 0]::numeric[];
          v_ai[k] := array_length(v_anames, 1);
        END IF;
        FOR p IN 1 .. 4 LOOP
          v_x := (v_ci[k] - 1) * 4 + p;
          IF v_ckeys[v_x] = v_keys[p] THEN v_counts[v_x] := v_counts[v_x] + 1;
          ELSE v_ckeys[v_x] := v_keys[p]; v_counts[v_x] := 1;
          END IF;
          v_x := (v_ai[k] - 1) * 4 + p;
          IF v_akeys[v_x] = v_keys[p] THEN v_amounts[v_x] := v_amounts[v_x] + v_t.billing_amount;
          ELSE v_akeys[v_x] := v_keys[p]; v_amounts[v_x] := v_t.billing_amount;
          END IF;
        END LOOP;
      END LOOP;
    ELSIF v_in_scope THEN
      v_declined := v_declined + 1;
      IF jsonb_array_length(v_samples) < 20 THEN v_samples := v_samples || to_jsonb(v_t.trans_id); END IF;
      -- This step's figures in arrays (merged into the result document and the subjects' rows at its
      -- end): the declined amount per currency, per reason (reason, rule, limit) and per UTC day; the
      -- declines of the card and of its employee.
      FOREACH v_name IN ARRAY ARRAY['declinedAmounts||', 'byReason|' || v_refusal || '|',
                                    'byDay|' || to_char(v_t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') || '|',
                                    'CARD|' || v_t.card_id || '|', 'CUSTOMER|' || COALESCE(v_employee, '') || '|'] LOOP
        CONTINUE WHEN v_name = 'CUSTOMER||';
        v_name := v_name || v_t.billing_currency;
        v_x := array_position(v_tnames, v_name);
        IF v_x IS NULL THEN
          v_tnames := v_tnames || v_name;
          v_tcounts := v_tcounts || 1::bigint;
          v_tamounts := v_tamounts || v_t.billing_amount;
        ELSE
          v_tcounts[v_x] := v_tcounts[v_x] + 1;
          v_tamounts[v_x] := v_tamounts[v_x] + v_t.billing_amount;
        END IF;
      END LOOP;
    END IF;
  END LOOP;

  FOR k IN 1 .. COALESCE(array_length(v_tnames, 1), 0) LOOP
    v_key := split_part(v_tnames[k], '|', 1);
    IF v_key = 'declinedAmounts' THEN
      v_result := jsonb_set(v_result, '{declinedAmounts}', COALESCE(v_result -> 'declinedAmounts', '{}'::jsonb) || jsonb_build_object(
        split_part(v_tnames[k], '|', 3),
        (COALESCE((v_result -> 'declinedAmounts' ->> split_part(v_tnames[k], '|', 3))::numeric, 0) + v_tamounts[k])::text));
    ELSIF v_key IN ('byReason', 'byDay') THEN
      v_result := velocity_backtest_tally(v_result, v_key, split_part(v_tnames[k], '|', 2), split_part(v_tnames[k], '|', 3),
                                          v_tcounts[k], v_tamounts[k]);
    ELSE
      INSERT INTO rule_backtest_subjects AS d (backtest_id, subject_type, subject_id, currency, declined_count, declined_amount)
        VALUES (p_backtest_id, v_key, split_part(v_tnames[k], '|', 2), split_part(v_tnames[k], '|', 3), v_tcounts[k], v_tamounts[k])
        ON CONFLICT (backtest_id, subject_type, subject_id, currency) DO UPDATE
          SET declined_count = d.declined_count + excluded.declined_count, declined_amount = d.declined_amount + excluded.declined_amount;
    END IF;
  END LOOP;

  v_done := v_n < p_limit;
  v_result := v_result || jsonb_build_object('evaluated', v_evaluated, 'alreadyDeclined', v_already, 'declined', v_declined,
                                             'samples', v_samples);
  UPDATE rule_backtests b
     SET total = v_bt.total, processed = b.processed + v_n, cursor_at = v_last_at, cursor_trans_id = v_last_id, result = v_result,
         status = CASE WHEN v_done THEN 'COMPLETED' ELSE 'RUNNING' END,
         completed_at = CASE WHEN v_done THEN p_now END,
         lease_token = NULL, attempts = 0, due_at = p_now, updated_at = p_now,
         usage_count_slots = CASE WHEN v_done THEN '{}' ELSE v_cnames END, usage_count_keys = CASE WHEN v_done THEN '{}' ELSE v_ckeys END,
         usage_counts = CASE WHEN v_done THEN '{}' ELSE v_counts END, usage_amount_slots = CASE WHEN v_done THEN '{}' ELSE v_anames END,
         usage_amount_keys = CASE WHEN v_done THEN '{}' ELSE v_akeys END, usage_amounts = CASE WHEN v_done THEN '{}' ELSE v_amounts END
   WHERE b.backtest_id = p_backtest_id;
  RETURN QUERY SELECT CASE WHEN v_done THEN 'COMPLETED' ELSE 'MORE' END, v_bt.processed + v_n, v_bt.total;
END $$;
