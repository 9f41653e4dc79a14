-- Issue 31 section 3: backtests of a draft velocity rule over a partner's recorded authorizations.
-- Owned by the authorization domain (the recorded authorizations are its own); the decision is
-- velocity's velocity_refusal, the one evaluation code of live authorizations. Nothing here is read
-- by a live authorization.
CREATE TABLE rule_backtests (
  backtest_id      text        PRIMARY KEY CHECK (length(backtest_id) <= 20),
  partner_id       text        NOT NULL REFERENCES partners (partner_id),
  organization_id  text        NOT NULL,
  -- What the partner asked (the create-rule body, the subjects, the window, the mode), echoed by the detail route.
  request          jsonb       NOT NULL,
  -- The draft as the rule document velocity_refusal reads (ruleId DRAFT, scope filled per authorization).
  draft            jsonb       NOT NULL,
  card_ids         text[]      NOT NULL,
  employee_ids     text[]      NOT NULL,
  -- Mode COMBINED: the employees holding the draft's cards. Their other cards' authorizations are
  -- replayed too, for the usage the bound employee rules measure, but not reported.
  context_employee_ids text[]  NOT NULL DEFAULT '{}',
  mode             text        NOT NULL CHECK (mode IN ('COMBINED', 'ALONE')),
  window_start     timestamptz NOT NULL,
  window_end       timestamptz NOT NULL CHECK (window_end > window_start),
  status           text        NOT NULL CHECK (status IN ('PENDING', 'RUNNING', 'COMPLETED', 'FAILED')),
  -- Recorded authorizations of the subjects in the window (counted by the first step), and replayed so far.
  total            bigint,
  processed        bigint      NOT NULL DEFAULT 0 CHECK (processed >= 0),
  -- The replay's cursor: the last authorization replayed, in (created_at, trans_id) order.
  cursor_at        timestamptz,
  cursor_trans_id  text,
  -- The usage the replay accumulated (velocity_backtest_step): per subject and control (counts) and per
  -- subject, control and billing currency (amounts), the four periods' current key and figure only
  -- (time only moves forward in a replay), so the state is bounded by the subjects, not by the
  -- authorizations. Emptied when the backtest ends.
  usage_count_slots  text[]    NOT NULL DEFAULT '{}',
  usage_count_keys   text[]    NOT NULL DEFAULT '{}',
  usage_counts       bigint[]  NOT NULL DEFAULT '{}',
  usage_amount_slots text[]    NOT NULL DEFAULT '{}',
  usage_amount_keys  text[]    NOT NULL DEFAULT '{}',
  usage_amounts      numeric[] NOT NULL DEFAULT '{}',
  -- The figures so far (a bounded document: per reason, per day of the window, per currency; samples).
  result           jsonb       NOT NULL DEFAULT '{}'::jsonb,
  error            text,
  -- The leased job runner (src/platform/jobs.ts).
  due_at           timestamptz NOT NULL,
  lease_token      text,
  attempts         integer     NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  completed_at     timestamptz
);
CREATE INDEX rule_backtests_due ON rule_backtests (due_at) WHERE status IN ('PENDING', 'RUNNING');
CREATE INDEX rule_backtests_partner ON rule_backtests (partner_id, created_at DESC);

-- What the replay would have declined per card and per employee, for the top lists.
CREATE TABLE rule_backtest_subjects (
  backtest_id     text    NOT NULL REFERENCES rule_backtests (backtest_id) ON DELETE CASCADE,
  subject_type    text    NOT NULL CHECK (subject_type IN ('CARD', 'CUSTOMER')),
  subject_id      text    NOT NULL,
  currency        text    NOT NULL,
  declined_count  bigint  NOT NULL CHECK (declined_count > 0),
  declined_amount numeric NOT NULL CHECK (declined_amount > 0),
  PRIMARY KEY (backtest_id, subject_type, subject_id, currency)
);
