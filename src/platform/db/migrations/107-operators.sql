-- Issue 29: named operator accounts, their console sessions, and the audit trail of every
-- administrative action (console, admin API, CLI), chained by hashes.

CREATE TABLE operators (
  operator_id      text        PRIMARY KEY,
  name             text        NOT NULL UNIQUE,
  role             text        NOT NULL CHECK (role IN ('viewer', 'support', 'risk', 'admin')),
  status           text        NOT NULL CHECK (status IN ('ACTIVE', 'DISABLED')),
  -- scrypt (memory-hard), self-describing: scrypt$N$r$p$salt$hash (base64url).
  password_hash    text        NOT NULL,
  -- The TOTP secret (RFC 6238), sealed under the master key.
  totp_secret_enc  text        NOT NULL,
  -- The last TOTP time step accepted: a code is good once (RFC 6238 5.2).
  totp_last_step   bigint      NOT NULL DEFAULT 0,
  failed_attempts  integer     NOT NULL DEFAULT 0,
  locked_until     timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);

CREATE TABLE operator_sessions (
  -- SHA-256 of the cookie value: a copy of this table opens no session.
  session_hash  text        PRIMARY KEY,
  operator_id   text        NOT NULL REFERENCES operators (operator_id),
  csrf_token    text        NOT NULL,
  created_at    timestamptz NOT NULL,
  last_seen_at  timestamptz NOT NULL,
  ended_at      timestamptz
);
CREATE INDEX operator_sessions_operator ON operator_sessions (operator_id);
