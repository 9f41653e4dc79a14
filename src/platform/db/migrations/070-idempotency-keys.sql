-- Idempotency-Key on business POSTs (issue 14, Stripe's semantics; docs/api-guide.md).
--
-- One row per (partner, key). A request claims its key with INSERT ... ON CONFLICT DO NOTHING
-- before the handler runs (state IN_PROGRESS, locked_until = claim time + lock); the answer is
-- stored when the handler ends (state DONE, http_status + response text). A copy that finds the
-- row DONE with the same request hash gets the stored answer; with another hash it is refused;
-- IN_PROGRESS makes it wait. A claim whose holder died (locked_until passed) may be taken over,
-- and a row older than 24 hours (expires_at) no longer counts: the key is free again.
CREATE TABLE idempotency_keys (
  partner_id      text        NOT NULL,
  idempotency_key text        NOT NULL,
  request_hash    text        NOT NULL,
  state           text        NOT NULL CHECK (state IN ('IN_PROGRESS', 'DONE')),
  claim_token     text        NOT NULL,
  locked_until    timestamptz NOT NULL,
  http_status     integer,
  response        text,
  created_at      timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (partner_id, idempotency_key),
  CHECK (state <> 'DONE' OR (http_status IS NOT NULL AND response IS NOT NULL))
);
-- The sweep of expired keys.
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
