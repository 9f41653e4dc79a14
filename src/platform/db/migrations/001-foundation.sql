-- Partners (D13). The secret key is stored only encrypted under the master key (D8).
CREATE TABLE partners (
  partner_id          text PRIMARY KEY,
  name                text NOT NULL,
  api_key             text UNIQUE,
  secret_key_enc      text,
  pci_certified       boolean NOT NULL DEFAULT false,
  webhook_url         text,
  auth_url            text,
  external_public_key text,
  ip_whitelist        jsonb NOT NULL DEFAULT '{"api":[],"webhook":[],"auth":[],"retrieval":[]}',
  secure_card_iv_mode text NOT NULL DEFAULT 'SHARED' CHECK (secure_card_iv_mode IN ('SHARED', 'PER_FIELD')),
  status              text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'DISABLED')),
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  CHECK ((api_key IS NULL) = (secret_key_enc IS NULL))
);

-- Replay store (D5, D7): shared by every instance on the database. A row is written only for a
-- request whose signature is valid; rows older than the window are deleted by a janitor.
CREATE TABLE replay_nonces (
  api_key    text   NOT NULL,
  ts         bigint NOT NULL,
  nonce      integer NOT NULL,
  PRIMARY KEY (api_key, ts, nonce)
);
CREATE INDEX replay_nonces_ts ON replay_nonces (ts);

-- One-time credential retrieval links (4.1, D14). Only a hash of the extract key is kept.
CREATE TABLE credential_links (
  link_id          text PRIMARY KEY,
  partner_id       text NOT NULL REFERENCES partners (partner_id),
  extract_key_hash text NOT NULL UNIQUE,
  email            text NOT NULL,
  retrieval_ip     text NOT NULL,
  expire_time      timestamptz NOT NULL,
  consumed_at      timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now()
);

-- Mail outbox (D14, D51): every message the service sends; without SMTP this is the only copy.
CREATE TABLE outbox_mail (
  mail_id    text PRIMARY KEY,
  recipient  text NOT NULL,
  subject    text NOT NULL,
  body       text NOT NULL,
  transport  text NOT NULL CHECK (transport IN ('SMTP', 'OUTBOX')),
  sent_at    timestamptz,
  error      text,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Event outbox (D38): written in the same transaction as the change it reports.
CREATE TABLE event_sequences (
  partner_id    text   NOT NULL REFERENCES partners (partner_id),
  business_id   text   NOT NULL,
  last_sequence bigint NOT NULL,
  PRIMARY KEY (partner_id, business_id)
);

CREATE TABLE events (
  event_id    text PRIMARY KEY,
  partner_id  text        NOT NULL REFERENCES partners (partner_id),
  event_type  text        NOT NULL,
  business_id text        NOT NULL,
  sequence    bigint      NOT NULL,
  -- JSON text written losslessly (amounts keep their digits); not jsonb, which a JS client would
  -- parse through IEEE-754 numbers.
  payload     text        NOT NULL,
  create_time timestamptz NOT NULL,
  UNIQUE (partner_id, business_id, sequence)
);
CREATE INDEX events_partner_time ON events (partner_id, create_time DESC);

-- Exact-decimal probe (D4): proves NUMERIC round trips through a route and the database.
CREATE TABLE decimal_probes (
  probe_id   text PRIMARY KEY,
  partner_id text    NOT NULL REFERENCES partners (partner_id),
  amount     numeric NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
