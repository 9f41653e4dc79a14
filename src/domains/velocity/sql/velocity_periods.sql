-- Issue 31: the velocity periods of a partner at an instant, in the partner's time zone (docs/velocity.md
-- "Periods and time zones"). The one place where period keys are made: card_authorize adds usage
-- under them, velocity_usage_give_back gives usage back under the keys of the original
-- authorization's time, query-quota reads them.
--
-- Each period follows the zone of its latest velocity_period_zones row at or before p_at (UTC when
-- there is none). Its natural instance is the local day / month / quarter / year containing p_at;
-- it starts at that local midnight or, for the first instance after a zone change, at the change
-- (the end of the previous zone's instance), and ends at the next local boundary, so a 23- or
-- 25-hour day is one day. The key is the local label (YYYYMMDD, YYYYMM, YYYYQn, YYYY), followed by
-- '@' and the zone for a zone other than UTC: keys of two zones never collide, and a zone's labels
-- are never reused after a change (a change takes effect at a boundary of the zone it leaves).
-- PL/pgSQL, not SQL: a distributed engine (docs/scaling.md) cannot plan a parameterized SQL-language
-- function that reads a distributed table.

-- The four periods, in card_velocity_refusal's order, with their unit and their label's format: the
-- one list velocity_periods and velocity_period_keys' UTC path read (SQL reading no table: inlined).
CREATE OR REPLACE FUNCTION velocity_period_kinds()
RETURNS TABLE (ord integer, period text, unit text, step interval, label text)
LANGUAGE sql IMMUTABLE AS $$
  VALUES (1, 'DAILY', 'day', interval '1 day', 'YYYYMMDD'), (2, 'MONTHLY', 'month', interval '1 month', 'YYYYMM'),
         (3, 'QUARTERLY', 'quarter', interval '3 months', 'YYYY"Q"Q'), (4, 'YEARLY', 'year', interval '1 year', 'YYYY')
$$;

CREATE OR REPLACE FUNCTION velocity_periods(p_partner_id text, p_at timestamptz)
RETURNS TABLE (period text, period_key text, time_zone text, starts_at timestamptz, ends_at timestamptz)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT p.period,
         to_char(n.local_start, p.label) || CASE WHEN z.zone = 'UTC' THEN '' ELSE '@' || z.zone END,
         z.zone,
         GREATEST(n.local_start AT TIME ZONE z.zone, z.since),
         (n.local_start + p.step) AT TIME ZONE z.zone
    FROM velocity_period_kinds() p
   CROSS JOIN LATERAL (
     SELECT COALESCE(s.time_zone, 'UTC') AS zone, COALESCE(s.effective_from, '-infinity'::timestamptz) AS since
       FROM (SELECT 1) one
       LEFT JOIN LATERAL (
         SELECT v.time_zone, v.effective_from FROM velocity_period_zones v
          WHERE v.partner_id = p_partner_id AND v.period = p.period AND v.effective_from <= p_at
          ORDER BY v.effective_from DESC LIMIT 1) s ON true) z
   CROSS JOIN LATERAL (SELECT date_trunc(p.unit, p_at AT TIME ZONE z.zone) AS local_start) n
   ORDER BY p.ord;
END $$;

-- The keys alone, in card_velocity_refusal's order: daily, monthly, quarterly, yearly. A partner
-- with no zone row at or before p_at has every period in UTC: its keys are velocity_periods' labels of
-- the UTC instances, made here in one statement without velocity_periods' (issue 34 step 5: every
-- approval asks).
CREATE OR REPLACE FUNCTION velocity_period_keys(p_partner_id text, p_at timestamptz)
RETURNS text[] LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_keys text[];
BEGIN
  SELECT array_agg(to_char(date_trunc(k.unit, p_at AT TIME ZONE 'UTC'), k.label) ORDER BY k.ord) INTO v_keys
    FROM velocity_period_kinds() k
   WHERE NOT EXISTS (SELECT 1 FROM velocity_period_zones v WHERE v.partner_id = p_partner_id AND v.effective_from <= p_at);
  IF v_keys IS NOT NULL THEN
    RETURN v_keys;
  END IF;
  RETURN (SELECT array_agg(v.period_key ORDER BY array_position(ARRAY['DAILY', 'MONTHLY', 'QUARTERLY', 'YEARLY'], v.period))
            FROM velocity_periods(p_partner_id, p_at) v);
END $$;
