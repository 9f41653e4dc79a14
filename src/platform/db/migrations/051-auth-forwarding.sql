-- Authorization forwarding to the partner's auth_url over RSA (spec 5.6, 6; D37, D50).

-- The service's own RSA-2048 key pairs (one environment per deployment). The private key is stored
-- only sealed under the master key. Exactly one ACTIVE key signs requests; a RETIRED key still
-- decrypts answers to requests it signed (answers in flight during a rotation).
CREATE TABLE service_rsa_keys (
  key_id          text        PRIMARY KEY,
  public_key      text        NOT NULL,
  private_key_enc text        NOT NULL,
  status          text        NOT NULL CHECK (status IN ('ACTIVE', 'RETIRED')),
  created_at      timestamptz NOT NULL,
  retired_at      timestamptz
);
CREATE UNIQUE INDEX service_rsa_keys_one_active ON service_rsa_keys ((status)) WHERE status = 'ACTIVE';

-- Per-partner forwarding settings: the answer deadline and the stand-in decision applied when no
-- valid answer arrives in time (D37: default decline).
CREATE TABLE auth_forwarding_settings (
  partner_id  text        PRIMARY KEY REFERENCES partners (partner_id),
  deadline_ms integer     NOT NULL CHECK (deadline_ms BETWEEN 100 AND 10000),
  stand_in    text        NOT NULL CHECK (stand_in IN ('APPROVE', 'DECLINE')),
  updated_at  timestamptz NOT NULL
);

-- Every forwarded request: what happened, how long it took, why a stand-in applied.
CREATE TABLE auth_forwardings (
  forwarding_id   bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  partner_id      text        NOT NULL REFERENCES partners (partner_id),
  -- NULL for a sandbox test forwarding (nothing booked).
  trans_id        text        REFERENCES card_transactions (trans_id),
  network_transaction_id text NOT NULL,
  key_id          text        NOT NULL REFERENCES service_rsa_keys (key_id),
  auth_url        text        NOT NULL,
  -- APPROVED / DECLINED: the partner's valid answer; STAND_IN_APPROVED / STAND_IN_DECLINED: no valid answer.
  outcome         text        NOT NULL CHECK (outcome IN ('APPROVED', 'DECLINED', 'STAND_IN_APPROVED', 'STAND_IN_DECLINED')),
  stand_in_reason text        CHECK (stand_in_reason IN ('TIMEOUT', 'TRANSPORT_ERROR', 'BLOCKED', 'HTTP_STATUS', 'MALFORMED_ANSWER',
                                                        'DECRYPTION_FAILED', 'SIGNATURE_INVALID', 'TRANS_ID_MISMATCH', 'NOT_CONFIGURED')),
  decline_reason  text,
  http_status     integer,
  latency_ms      integer     NOT NULL CHECK (latency_ms >= 0),
  error           text,
  test            boolean     NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL,
  CHECK ((outcome LIKE 'STAND_IN%') = (stand_in_reason IS NOT NULL))
);
CREATE INDEX auth_forwardings_trans ON auth_forwardings (trans_id, forwarding_id);
CREATE INDEX auth_forwardings_partner_time ON auth_forwardings (partner_id, created_at DESC, forwarding_id DESC);

-- card_transaction_json, the partner-facing view of a transaction with the partner's decision on a
-- forwarded authorization: src/domains/authorization/sql/card_transaction_json.sql.
