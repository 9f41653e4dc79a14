-- Virtual receiving accounts (4.4 open-va, D28): one per subject and currency. A deposit to a
-- card's account credits the card's dedicated balance (ledger); to a company's, its pool.
CREATE TABLE deposit_accounts (
  account_id      text        PRIMARY KEY,
  partner_id      text        NOT NULL REFERENCES partners (partner_id),
  organization_id text        NOT NULL REFERENCES organizations (organization_id),
  subject_type    text        NOT NULL CHECK (subject_type IN ('CARD', 'ORGANIZATION')),
  subject_id      text        NOT NULL,
  currency        text        NOT NULL CHECK (currency IN ('USD', 'HKD')),
  account_number  text        NOT NULL UNIQUE,
  account_name    text        NOT NULL,
  bank_name       text        NOT NULL,
  bank_code       text        NOT NULL,
  status          text        NOT NULL CHECK (status IN ('ACTIVE', 'CLOSED')),
  created_at      timestamptz NOT NULL,
  UNIQUE (subject_type, subject_id, currency)
);
CREATE INDEX deposit_accounts_partner ON deposit_accounts (partner_id, subject_type, subject_id);
