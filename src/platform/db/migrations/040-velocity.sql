-- Velocity rules (spec 2.10, 2.11, 4.7; D30-D32, D44-D47).

-- One row per rule. Control groups are NULL when not configured (2.10). Count limits, the
-- cash-advance switch and the three filters hold only integers and strings, so they are jsonb;
-- amount caps are money and live as NUMERIC in velocity_rule_amount_limits (D4).
CREATE TABLE velocity_rules (
  rule_id              text        PRIMARY KEY,
  partner_id           text        NOT NULL REFERENCES partners (partner_id),
  organization_id      text        NOT NULL,
  rule_ref             text        NOT NULL,
  rule_name            text        NOT NULL,
  remark               text,
  status               text        NOT NULL CHECK (status IN ('ACTIVE', 'INACTIVE')),
  -- Optimistic lock (4.7 rule 4): every change is UPDATE ... WHERE rule_version = expected.
  rule_version         integer     NOT NULL CHECK (rule_version >= 1),
  -- {"countLimits": {"daily": n|null, ...} | null}
  purchase_control     jsonb,
  -- {"allowed": bool, "countLimits": {...} | null}
  cash_advance_control jsonb,
  -- {"filterType": "WHITELIST"|"BLACKLIST", "values": [...]}
  currency_control     jsonb,
  mcc_control          jsonb,
  geographic_control   jsonb,
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL,
  UNIQUE (partner_id, organization_id, rule_ref),
  CHECK (purchase_control IS NOT NULL OR cash_advance_control IS NOT NULL OR currency_control IS NOT NULL
         OR mcc_control IS NOT NULL OR geographic_control IS NOT NULL)
);
CREATE INDEX velocity_rules_org ON velocity_rules (partner_id, organization_id, created_at DESC, rule_id DESC);

-- Amount caps per control group and currency (D31). Replaced as a whole on update-rule.
CREATE TABLE velocity_rule_amount_limits (
  rule_id         text    NOT NULL REFERENCES velocity_rules (rule_id) ON DELETE CASCADE,
  control         text    NOT NULL CHECK (control IN ('PURCHASE', 'CASH_ADVANCE')),
  currency        text    NOT NULL,
  -- Order of the entry in the partner's request, so the rule reads back as it was written.
  position        integer NOT NULL,
  per_transaction numeric CHECK (per_transaction > 0),
  daily           numeric CHECK (daily > 0),
  monthly         numeric CHECK (monthly > 0),
  quarterly       numeric CHECK (quarterly > 0),
  yearly          numeric CHECK (yearly > 0),
  PRIMARY KEY (rule_id, control, currency)
);

-- Rule bindings to cards and employees (D30). Bindings survive INACTIVE (3).
CREATE TABLE velocity_rule_bindings (
  rule_id      text        NOT NULL REFERENCES velocity_rules (rule_id) ON DELETE CASCADE,
  subject_type text        NOT NULL CHECK (subject_type IN ('CARD', 'CUSTOMER')),
  subject_id   text        NOT NULL,
  partner_id   text        NOT NULL REFERENCES partners (partner_id),
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (rule_id, subject_type, subject_id)
);
CREATE INDEX velocity_rule_bindings_subject ON velocity_rule_bindings (partner_id, subject_type, subject_id);
CREATE INDEX velocity_rule_bindings_rule_time ON velocity_rule_bindings (rule_id, created_at DESC, subject_id DESC);

-- Usage counters (D32): one row per subject, control, currency and UTC period. Written only with
-- INSERT ... ON CONFLICT DO UPDATE SET used = used + excluded.used, so concurrent authorizations
-- never lose an increment. Count limits span currencies: the count of a period is the sum of
-- used_count over the currencies.
CREATE TABLE velocity_usage (
  partner_id   text        NOT NULL REFERENCES partners (partner_id),
  subject_type text        NOT NULL CHECK (subject_type IN ('CARD', 'CUSTOMER')),
  subject_id   text        NOT NULL,
  control      text        NOT NULL CHECK (control IN ('PURCHASE', 'CASH_ADVANCE')),
  currency     text        NOT NULL,
  period       text        NOT NULL CHECK (period IN ('DAILY', 'MONTHLY', 'QUARTERLY', 'YEARLY')),
  -- D11 / 2.11: YYYYMMDD, YYYYMM, YYYYQn, YYYY in UTC.
  period_key   text        NOT NULL,
  used_amount  numeric     NOT NULL DEFAULT 0 CHECK (used_amount >= 0),
  used_count   bigint      NOT NULL DEFAULT 0 CHECK (used_count >= 0),
  updated_at   timestamptz NOT NULL,
  PRIMARY KEY (partner_id, subject_type, subject_id, control, currency, period, period_key)
);
