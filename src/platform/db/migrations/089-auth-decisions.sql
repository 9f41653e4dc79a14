-- Issue 26 (sections 1-2): every forwarded authorization ends in one decision, recorded once.

-- A forwarded authorization awaiting its partner's decision (D37): written by card_authorize in the
-- hold's commit, deleted in the decision's commit (the forwarding record, the decision and, for a
-- decline, the hold and usage given back). The request that booked the hold holds it (lease_token)
-- until due_at (the deadline plus a grace); after that a waiting copy of the network message or the
-- decision-recovery job applies the stand-in recorded here. Only in-flight rows live here.
CREATE TABLE auth_decisions (
  trans_id    text        PRIMARY KEY REFERENCES card_transactions (trans_id),
  partner_id  text        NOT NULL,
  lease_token text        NOT NULL,
  -- The partner's stand-in and answer deadline when the hold was taken.
  stand_in    text        NOT NULL CHECK (stand_in IN ('APPROVE', 'DECLINE')),
  deadline_ms integer     NOT NULL CHECK (deadline_ms > 0),
  due_at      timestamptz NOT NULL,
  -- Recovery attempts by the job (a failed one is retried with backoff).
  attempts    integer     NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL
);
CREATE INDEX auth_decisions_due ON auth_decisions (due_at);

-- A stand-in applied because the service itself failed between the hold and the decision (an
-- exception, a record the database refused, a crash) records SERVICE_ERROR; such a record may name
-- no service key and no auth_url (the request may never have been built).
ALTER TABLE auth_forwardings ALTER COLUMN key_id DROP NOT NULL;
ALTER TABLE auth_forwardings ALTER COLUMN auth_url DROP NOT NULL;
ALTER TABLE auth_forwardings DROP CONSTRAINT auth_forwardings_stand_in_reason_check;
ALTER TABLE auth_forwardings ADD CONSTRAINT auth_forwardings_stand_in_reason_check
  CHECK (stand_in_reason IN ('TIMEOUT', 'TRANSPORT_ERROR', 'BLOCKED', 'HTTP_STATUS', 'MALFORMED_ANSWER', 'DECRYPTION_FAILED',
                             'SIGNATURE_INVALID', 'TRANS_ID_MISMATCH', 'NOT_CONFIGURED', 'SERVICE_ERROR'));
-- card_authorize opens the awaited decision of a forwarded approval in the hold's commit
-- (src/domains/authorization/sql/card_authorize.sql). Its earlier signature is dropped here for a
-- database created by the migrations of that time.
DROP FUNCTION IF EXISTS card_authorize(text, text, text, text, boolean, numeric, text, numeric, text, text, text, text, text, timestamptz,
  timestamptz, text[], text[], text, text, text, text, text, timestamptz);
