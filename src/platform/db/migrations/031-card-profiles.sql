-- Card profiles (D22, D48): created by operators, listed by partners. A profile with a
-- partner_id is offered to that partner only; NULL offers it to every partner.
CREATE TABLE card_profiles (
  card_profile_id       text        PRIMARY KEY,
  partner_id            text        REFERENCES partners (partner_id),
  profile_name          text        NOT NULL,
  card_network          text        NOT NULL CHECK (card_network IN ('VISA', 'MASTERCARD')),
  card_form             text        NOT NULL CHECK (card_form IN ('VIRTUAL', 'PHYSICAL')),
  balance_mode          text        NOT NULL CHECK (balance_mode IN ('SHARED', 'DEDICATED')),
  -- Ordered subset of USD, HKD; the card currency is the first one the company funds.
  settlement_currencies jsonb       NOT NULL,
  bin                   text        NOT NULL CHECK (bin ~ '^[0-9]{6,8}$'),
  pan_length            integer     NOT NULL DEFAULT 16 CHECK (pan_length BETWEEN 13 AND 19),
  validity_months       integer     NOT NULL DEFAULT 36 CHECK (validity_months BETWEEN 1 AND 120),
  issuance_fee          numeric     NOT NULL DEFAULT 0 CHECK (issuance_fee >= 0),
  monthly_fee           numeric     NOT NULL DEFAULT 0 CHECK (monthly_fee >= 0),
  status                text        NOT NULL CHECK (status IN ('ACTIVE', 'INACTIVE')),
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL
);
CREATE INDEX card_profiles_partner ON card_profiles (partner_id, created_at);
