-- Issue 33: velocity usage is counted in the database both ways. card_authorize adds an approved
-- authorization's amount and one count (D32); this function gives them back (reversal, hold
-- expiry, partner decline) in the periods of the original authorization, never below zero. The
-- subjects are the card and, for an employee card only (D45), its employee: the same rule as
-- card_authorize. Rows are updated in card_authorize's order (subject type, then period), so the
-- two never deadlock. Owned by the velocity domain (its store calls it).
-- Issue 31: the periods are those of p_at (the original authorization's time) in the partner's
-- time zone schedule as it was then (velocity_period_keys), the keys card_authorize used: schedule
-- rows at or before an authorization are never changed.
CREATE OR REPLACE FUNCTION velocity_usage_give_back(
  p_partner_id text, p_card_id text, p_holder_type text, p_holder_id text, p_control text, p_currency text,
  p_amount numeric, p_count bigint, p_at timestamptz
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_cell record;
  v_keys text[] := velocity_period_keys(p_partner_id, p_at);
BEGIN
  IF p_amount < 0 OR p_count < 0 THEN
    RAISE EXCEPTION 'velocity_usage_give_back: amount % and count % are not negative', p_amount, p_count;
  END IF;
  FOR v_cell IN
    SELECT s.kind, s.id, k.period, k.period_key
      FROM (VALUES ('CARD', p_card_id), ('CUSTOMER', CASE WHEN p_holder_type = 'CUSTOMER' THEN p_holder_id END)) s(kind, id)
      CROSS JOIN (VALUES ('DAILY', v_keys[1]), ('MONTHLY', v_keys[2]), ('QUARTERLY', v_keys[3]), ('YEARLY', v_keys[4])) k(period, period_key)
     WHERE s.id IS NOT NULL
     ORDER BY s.kind, k.period
  LOOP
    UPDATE velocity_usage u
       SET used_amount = GREATEST(u.used_amount - p_amount, 0), used_count = GREATEST(u.used_count - p_count, 0), updated_at = p_at
     WHERE u.partner_id = p_partner_id AND u.subject_type = v_cell.kind AND u.subject_id = v_cell.id AND u.control = p_control
       AND u.currency = p_currency AND u.period = v_cell.period AND u.period_key = v_cell.period_key;
  END LOOP;
END $$;
