-- The authorization engine (spec 1, 2.9, 3; D20, D31-D34, D40, D45, D47). See
-- src/domains/authorization/service.ts for the use cases and docs/authorizations.md for the rules.

-- Card transactions (2.9): one row per network message. An AUTHORIZATION row carries the hold and
-- its life (PENDING -> CLEARED | REVERSED | EXPIRED, or DECLINED); CLEARING, REVERSAL and REFUND
-- rows are POSTED records pointing at the authorization they settle (original_trans_id).
CREATE TABLE card_transactions (
  trans_id                   text        PRIMARY KEY CHECK (length(trans_id) <= 20),
  partner_id                 text        NOT NULL REFERENCES partners (partner_id),
  card_id                    text        NOT NULL REFERENCES cards (card_id),
  organization_id            text        NOT NULL,
  subject_type               text        NOT NULL CHECK (subject_type IN ('ORGANIZATION', 'CUSTOMER')),
  subject_id                 text        NOT NULL,
  message_type               text        NOT NULL CHECK (message_type IN ('AUTHORIZATION', 'CLEARING', 'REVERSAL', 'REFUND')),
  auth_type                  text        NOT NULL CHECK (auth_type IN ('EXPEND', 'REFUND', 'REVERSAL')),
  debit_credit_indicator     text        NOT NULL CHECK (debit_credit_indicator IN ('D', 'C')),
  -- Who sent the message: the card network ingress, the sandbox simulation (D40).
  source                     text        NOT NULL CHECK (source IN ('NETWORK', 'SANDBOX')),
  -- Idempotency key of every message (minted for sandbox messages): a retry is answered from here.
  network_transaction_id     text        NOT NULL UNIQUE,
  original_trans_id          text        REFERENCES card_transactions (trans_id),
  amount                     numeric     NOT NULL CHECK (amount > 0),
  currency                   text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  billing_amount             numeric     NOT NULL CHECK (billing_amount > 0),
  billing_currency           text        NOT NULL CHECK (billing_currency ~ '^[A-Z]{3}$'),
  merchant_name              text,
  mcc                        text        CHECK (mcc ~ '^[0-9]{4}$'),
  merchant_country           text        CHECK (merchant_country ~ '^[A-Z]{2}$'),
  channel                    text        CHECK (channel IN ('ECOM', 'POS', 'ATM')),
  status                     text        NOT NULL CHECK (status IN ('PENDING', 'CLEARED', 'REVERSED', 'EXPIRED', 'DECLINED', 'POSTED')),
  decline_reason             text,
  decline_detail             text,
  -- Authorizations: what is still held (billing currency); 0 once cleared, reversed or expired.
  hold_amount                numeric     NOT NULL DEFAULT 0 CHECK (hold_amount >= 0),
  funds_account_id           text        REFERENCES ledger_accounts (account_id),
  outstanding_transaction_id text,
  posted_transaction_id      text,
  posting_id                 text        REFERENCES ledger_postings (posting_id),
  -- Hold expiry (D34) on the leased job runner: an outstanding hold is due at expiry_due_at
  -- (authorization + 30 days); a claim moves it to the lease expiry and stamps the lease token.
  expiry_due_at              timestamptz,
  expiry_lease_token         text,
  expiry_attempts            integer     NOT NULL DEFAULT 0,
  transaction_time           timestamptz NOT NULL,
  created_at                 timestamptz NOT NULL,
  updated_at                 timestamptz NOT NULL,
  CHECK ((status = 'DECLINED') = (decline_reason IS NOT NULL)),
  CHECK (message_type = 'AUTHORIZATION' OR status = 'POSTED')
);
CREATE UNIQUE INDEX card_transactions_outstanding ON card_transactions (outstanding_transaction_id)
  WHERE message_type = 'AUTHORIZATION' AND outstanding_transaction_id IS NOT NULL;
CREATE UNIQUE INDEX card_transactions_posted ON card_transactions (posted_transaction_id)
  WHERE message_type <> 'AUTHORIZATION' AND posted_transaction_id IS NOT NULL;
CREATE INDEX card_transactions_partner_time ON card_transactions (partner_id, created_at DESC, trans_id DESC);
CREATE INDEX card_transactions_card_time ON card_transactions (card_id, created_at DESC, trans_id DESC);
CREATE INDEX card_transactions_org_time ON card_transactions (organization_id, created_at DESC, trans_id DESC);
-- Hold expiry (D34): outstanding holds by due time.
CREATE INDEX card_transactions_expiry_due ON card_transactions (expiry_due_at)
  WHERE message_type = 'AUTHORIZATION' AND status = 'PENDING';

-- Credentials of the card network ingress (/internal/network/v1/), issued by operators; never a
-- partner's. Signed exactly as 5.3; the secret is sealed under the master key like a partner's.
CREATE TABLE network_keys (
  network_key_id text        PRIMARY KEY,
  name           text        NOT NULL,
  api_key        text        NOT NULL UNIQUE,
  secret_key_enc text        NOT NULL,
  ip_allowlist   jsonb       NOT NULL DEFAULT '[]',
  status         text        NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'REVOKED')),
  created_at     timestamptz NOT NULL
);

-- The authorization pipeline's functions: card_authorize, card_transaction_event and
-- card_transaction_json in src/domains/authorization/sql/, card_velocity_refusal in
-- src/domains/velocity/sql/ (applied after the numbered migrations).
