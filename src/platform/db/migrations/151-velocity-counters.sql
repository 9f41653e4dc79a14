-- Issue 34: velocity usage as one row per subject, control and currency holding every period's
-- amount and count with its period key, instead of one row per period (an approval wrote eight
-- rows, now two: the card and, for an employee card, the employee). Periods roll over lazily: the
-- row's keys are those of its latest instant (as_of); an authorization at or after as_of whose key
-- differs starts that period afresh, one before as_of (a clock behind another instance's) leaves a
-- period it no longer shares as it is. A period that is not the row's current one has no usage that
-- can matter any more: caps are measured against the current periods only (D31, D32).
-- velocity_usage stays as a view of the old shape (one row per period) for the readers
-- (query-quota, card_velocity_refusal).
CREATE TABLE velocity_counters (
  partner_id       text        NOT NULL REFERENCES partners (partner_id),
  subject_type     text        NOT NULL CHECK (subject_type IN ('CARD', 'CUSTOMER')),
  subject_id       text        NOT NULL,
  control          text        NOT NULL CHECK (control IN ('PURCHASE', 'CASH_ADVANCE')),
  currency         text        NOT NULL,
  -- The latest instant whose periods the keys are (velocity_period_keys of it).
  as_of            timestamptz NOT NULL,
  daily_key        text        NOT NULL,
  daily_amount     numeric     NOT NULL CHECK (daily_amount >= 0),
  daily_count      bigint      NOT NULL CHECK (daily_count >= 0),
  monthly_key      text        NOT NULL,
  monthly_amount   numeric     NOT NULL CHECK (monthly_amount >= 0),
  monthly_count    bigint      NOT NULL CHECK (monthly_count >= 0),
  quarterly_key    text        NOT NULL,
  quarterly_amount numeric     NOT NULL CHECK (quarterly_amount >= 0),
  quarterly_count  bigint      NOT NULL CHECK (quarterly_count >= 0),
  yearly_key       text        NOT NULL,
  yearly_amount    numeric     NOT NULL CHECK (yearly_amount >= 0),
  yearly_count     bigint      NOT NULL CHECK (yearly_count >= 0),
  PRIMARY KEY (partner_id, subject_type, subject_id, control, currency)
);

-- The existing usage: per subject, control, currency and period, the row of the latest period
-- (periods partition time, so the row written last, by updated_at, is the latest; give-backs write
-- their authorization's time). An approval wrote all four periods; a period without a row would get
-- an empty key, which no period matches, so it starts afresh at the next approval.
INSERT INTO velocity_counters (partner_id, subject_type, subject_id, control, currency, as_of,
    daily_key, daily_amount, daily_count, monthly_key, monthly_amount, monthly_count,
    quarterly_key, quarterly_amount, quarterly_count, yearly_key, yearly_amount, yearly_count)
  SELECT l.partner_id, l.subject_type, l.subject_id, l.control, l.currency, max(l.updated_at),
         COALESCE(max(l.period_key) FILTER (WHERE l.period = 'DAILY'), ''), COALESCE(sum(l.used_amount) FILTER (WHERE l.period = 'DAILY'), 0),
         COALESCE(sum(l.used_count) FILTER (WHERE l.period = 'DAILY'), 0),
         COALESCE(max(l.period_key) FILTER (WHERE l.period = 'MONTHLY'), ''), COALESCE(sum(l.used_amount) FILTER (WHERE l.period = 'MONTHLY'), 0),
         COALESCE(sum(l.used_count) FILTER (WHERE l.period = 'MONTHLY'), 0),
         COALESCE(max(l.period_key) FILTER (WHERE l.period = 'QUARTERLY'), ''), COALESCE(sum(l.used_amount) FILTER (WHERE l.period = 'QUARTERLY'), 0),
         COALESCE(sum(l.used_count) FILTER (WHERE l.period = 'QUARTERLY'), 0),
         COALESCE(max(l.period_key) FILTER (WHERE l.period = 'YEARLY'), ''), COALESCE(sum(l.used_amount) FILTER (WHERE l.period = 'YEARLY'), 0),
         COALESCE(sum(l.used_count) FILTER (WHERE l.period = 'YEARLY'), 0)
    FROM (SELECT DISTINCT ON (u.partner_id, u.subject_type, u.subject_id, u.control, u.currency, u.period) u.*
            FROM velocity_usage u
           ORDER BY u.partner_id, u.subject_type, u.subject_id, u.control, u.currency, u.period, u.updated_at DESC, u.period_key DESC) l
   GROUP BY l.partner_id, l.subject_type, l.subject_id, l.control, l.currency;

DROP TABLE velocity_usage;

-- The old shape, read-only: one row per subject, control, currency and current period.
CREATE VIEW velocity_usage AS
  SELECT c.partner_id, c.subject_type, c.subject_id, c.control, c.currency, p.period, p.period_key,
         p.used_amount, p.used_count, c.as_of AS updated_at
    FROM velocity_counters c
   CROSS JOIN LATERAL (VALUES ('DAILY', c.daily_key, c.daily_amount, c.daily_count),
                              ('MONTHLY', c.monthly_key, c.monthly_amount, c.monthly_count),
                              ('QUARTERLY', c.quarterly_key, c.quarterly_amount, c.quarterly_count),
                              ('YEARLY', c.yearly_key, c.yearly_amount, c.yearly_count)) AS p(period, period_key, used_amount, used_count);

-- card_authorize and velocity_usage_give_back write the new table: both files are applied again.
DELETE FROM schema_functions WHERE name IN ('authorization/sql/card_authorize.sql', 'velocity/sql/velocity_usage_give_back.sql');
