-- Cards (2.5, D25, D26). The PAN is stored only encrypted (pan_enc: AES-256-GCM under the
-- PAN_DATA key pan_key_id, with the expiry) plus its first 6 and last 4 digits; pan_fingerprint
-- is a keyed HMAC that makes PANs unique without revealing them. CVV2 is never stored: it is
-- derived on demand under the CVK cvk_key_id.
CREATE TABLE cards (
  card_id               text        PRIMARY KEY,
  partner_id            text        NOT NULL REFERENCES partners (partner_id),
  organization_id       text        NOT NULL REFERENCES organizations (organization_id),
  card_apply_id         text        NOT NULL UNIQUE REFERENCES card_applications (card_apply_id),
  card_profile_id       text        NOT NULL REFERENCES card_profiles (card_profile_id),
  card_network          text        NOT NULL,
  card_form             text        NOT NULL,
  balance_mode          text        NOT NULL CHECK (balance_mode IN ('SHARED', 'DEDICATED')),
  currency              text        NOT NULL,
  settlement_currencies jsonb       NOT NULL,
  subject_type          text        NOT NULL CHECK (subject_type IN ('ORGANIZATION', 'CUSTOMER')),
  subject_id            text        NOT NULL,
  custodian_customer_id text        NOT NULL REFERENCES customers (customer_id),
  cardholder_name       text,
  pan_first6            text        NOT NULL CHECK (pan_first6 ~ '^[0-9]{6}$'),
  pan_last4             text        NOT NULL CHECK (pan_last4 ~ '^[0-9]{4}$'),
  pan_fingerprint       text        NOT NULL UNIQUE,
  pan_key_id            text        NOT NULL REFERENCES card_keys (key_id),
  pan_enc               text        NOT NULL,
  cvk_key_id            text        NOT NULL REFERENCES card_keys (key_id),
  status                text        NOT NULL CHECK (status IN ('ACTIVE', 'BLOCKED', 'CANCELLED')),
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL
);
CREATE INDEX cards_org ON cards (partner_id, organization_id, created_at DESC, card_id DESC);
CREATE INDEX cards_subject ON cards (partner_id, subject_type, subject_id);
