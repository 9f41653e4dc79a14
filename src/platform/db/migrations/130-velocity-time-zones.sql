-- Issue 31 section 2: velocity periods in the partner's local time (docs/velocity.md, "Periods and
-- time zones"; docs/decisions.md "Velocity periods in the partner's time zone").
--
-- partners.time_zone is the IANA zone the partner chose (the setting, UTC by default).
-- velocity_period_zones is the velocity domain's schedule: from effective_from on, the periods of
-- `period` follow time_zone. A change is one row per period, effective at the end of that period's
-- running instance in the zone it had, so a running period is never split or reset. Rows at or
-- before now are never changed or deleted (an authorization's periods are recomputed from its time
-- when usage is given back); a row still in the future is replaced by a later change.
ALTER TABLE partners ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC';

CREATE TABLE velocity_period_zones (
  partner_id     text        NOT NULL REFERENCES partners (partner_id),
  period         text        NOT NULL CHECK (period IN ('DAILY', 'MONTHLY', 'QUARTERLY', 'YEARLY')),
  effective_from timestamptz NOT NULL,
  time_zone      text        NOT NULL,
  created_at     timestamptz NOT NULL,
  PRIMARY KEY (partner_id, period, effective_from)
);

-- The keys are now computed in the database (velocity_period_keys): card_authorize no longer takes
-- them and velocity_usage_give_back recomputes them from the authorization's time. Both files are
-- applied again with their new signatures.
DROP FUNCTION IF EXISTS card_authorize(text, text, text, text, boolean, numeric, text, numeric, text, text, text, text, text,
  timestamptz, timestamptz, text[], text[], text, text, text, text, text, timestamptz, text, integer, integer);
DROP FUNCTION IF EXISTS velocity_usage_give_back(text, text, text, text, text, text, text[], numeric, bigint, timestamptz);
DELETE FROM schema_functions WHERE name IN ('authorization/sql/card_authorize.sql', 'velocity/sql/velocity_usage_give_back.sql');
