-- Issue 33: velocity usage is counted in the database both ways. card_authorize adds an approved
-- authorization's amount and one count (D32); this function gives them back (reversal, hold
-- expiry, partner decline) in the periods of the original authorization, never below zero. The
-- subjects are the card and, for an employee card only (D45), its employee: the same rule as
-- card_authorize. Rows are updated in card_authorize's order (subject type), so the two never
-- deadlock. Owned by the velocity domain (its store calls it).
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
  -- Issue 34: one counter row per subject; a period gives back only while it is still the row's
  -- (its key is the original authorization's): a period since rolled over has nothing to give back to.
  FOR v_cell IN
    SELECT s.kind, s.id
      FROM (VALUES ('CARD', p_card_id), ('CUSTOMER', CASE WHEN p_holder_type = 'CUSTOMER' THEN p_holder_id END)) s(kind, id)
     WHERE s.id IS NOT NULL
     ORDER BY s.kind
  LOOP
    UPDATE velocity_counters u
       SET daily_amount = CASE WHEN u.daily_key = v_keys[1] THEN GREATEST(u.daily_amount - p_amount, 0) ELSE u.daily_amount END,
           daily_count = CASE WHEN u.daily_key = v_keys[1] THEN GREATEST(u.daily_count - p_count, 0) ELSE u.daily_count END,
           monthly_amount = CASE WHEN u.monthly_key = v_keys[2] THEN GREATEST(u.monthly_amount - p_amount, 0) ELSE u.monthly_amount END,
           monthly_count = CASE WHEN u.monthly_key = v_keys[2] THEN GREATEST(u.monthly_count - p_count, 0) ELSE u.monthly_count END,
           quarterly_amount = CASE WHEN u.quarterly_key = v_keys[3] THEN GREATEST(u.quarterly_amount - p_amount, 0) ELSE u.quarterly_amount END,
           quarterly_count = CASE WHEN u.quarterly_key = v_keys[3] THEN GREATEST(u.quarterly_count - p_count, 0) ELSE u.quarterly_count END,
           yearly_amount = CASE WHEN u.yearly_key = v_keys[4] THEN GREATEST(u.yearly_amount - p_amount, 0) ELSE u.yearly_amount END,
           yearly_count = CASE WHEN u.yearly_key = v_keys[4] THEN GREATEST(u.yearly_count - p_count, 0) ELSE u.yearly_count END
     WHERE u.partner_id = p_partner_id AND u.subject_type = v_cell.kind AND u.subject_id = v_cell.id AND u.control = p_control
       AND u.currency = p_currency
       AND v_keys && ARRAY[u.daily_key, u.monthly_key, u.quarterly_key, u.yearly_key];
  END LOOP;
END $$;
