-- Issue 29: the audit trail. Each entry's hash is an HMAC over the previous entry's hash and its
-- own fields (src/domains/operators/audit.ts); appends are serialized by locking the one-row head,
-- so several instances on one database still write one chain.

CREATE TABLE audit_trail (
  seq          bigint      PRIMARY KEY,
  recorded_at  timestamptz NOT NULL,
  actor        text        NOT NULL,
  operator_id  text,
  role         text        NOT NULL,
  channel      text        NOT NULL CHECK (channel IN ('console', 'admin-api', 'cli')),
  action       text        NOT NULL,
  target       text,
  -- JSON text, kept byte for byte as hashed.
  summary      text        NOT NULL,
  outcome      text        NOT NULL CHECK (outcome IN ('DONE', 'DENIED', 'FAILED')),
  source_ip    text        NOT NULL,
  request_id   text        NOT NULL,
  prev_hash    text        NOT NULL,
  hash         text        NOT NULL
);
CREATE INDEX audit_trail_actor ON audit_trail (actor, seq DESC);
CREATE INDEX audit_trail_action ON audit_trail (action, seq DESC);
CREATE INDEX audit_trail_target ON audit_trail (target, seq DESC);

CREATE TABLE audit_trail_head (
  id    boolean PRIMARY KEY DEFAULT true CHECK (id),
  seq   bigint  NOT NULL,
  hash  text    NOT NULL
);
INSERT INTO audit_trail_head (id, seq, hash) VALUES (true, 0, '0000000000000000000000000000000000000000000000000000000000000000');
