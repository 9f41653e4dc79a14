-- Low-balance alerts on company funding pools (2.12, 4.6 balance-alert-set, section 6 LOW_BALANCE).

-- One row per company and currency; balance-alert-set replaces the set as a whole. The alert state
-- (last_alert_day, last_alert_version) survives a replace that keeps the same threshold.
CREATE TABLE balance_alert_settings (
  organization_id    text        NOT NULL REFERENCES organizations (organization_id),
  currency           text        NOT NULL CHECK (currency IN ('USD', 'HKD')),
  threshold          numeric     NOT NULL CHECK (threshold >= 0 AND scale(threshold) <= 2),
  position           integer     NOT NULL,
  -- UTC day of the last LOW_BALANCE for the current fall, and the pool account version then.
  -- NULL day: armed (no alert sent since the balance was last at or above the threshold).
  last_alert_day     date,
  last_alert_version bigint,
  last_alert_at      timestamptz,
  updated_at         timestamptz NOT NULL,
  PRIMARY KEY (organization_id, currency)
);

CREATE TABLE balance_alert_emails (
  organization_id text    NOT NULL REFERENCES organizations (organization_id),
  position        integer NOT NULL,
  email           text    NOT NULL,
  PRIMARY KEY (organization_id, position)
);
