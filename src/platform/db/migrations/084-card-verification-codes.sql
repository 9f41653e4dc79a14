-- Verification codes of /card/v2/block unfreezing (D36) and the contacts they are sent to.
-- See src/domains/managed-balance/consumer-cards.ts and docs/consumer-cards.md.

-- Where a managed user's codes go: given by the partner at card apply or with /card/v2/contact.
CREATE TABLE managed_user_contacts (
  user_id    text        PRIMARY KEY REFERENCES managed_users (user_id),
  mobile     text        CHECK (mobile ~ '^\+[1-9][0-9]{6,14}$'),
  email      text        CHECK (length(email) <= 254),
  updated_at timestamptz NOT NULL
);

-- One row per code sent: only its HMAC is kept (keyed by the master key), never the code. A code
-- is valid until expires_at, for at most 5 wrong attempts, and once (used_at). A new code for the
-- same card supersedes the older ones (superseded_at).
CREATE TABLE card_verification_codes (
  code_id       text        PRIMARY KEY CHECK (length(code_id) <= 20),
  partner_id    text        NOT NULL,
  user_id       text        NOT NULL REFERENCES managed_users (user_id),
  card_id       text        NOT NULL REFERENCES cards (card_id),
  channel       text        NOT NULL CHECK (channel IN ('SMS', 'EMAIL')),
  code_hmac     text        NOT NULL,
  expires_at    timestamptz NOT NULL,
  attempts      integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  used_at       timestamptz,
  superseded_at timestamptz,
  created_at    timestamptz NOT NULL
);
CREATE INDEX card_verification_codes_card ON card_verification_codes (card_id, created_at DESC);
