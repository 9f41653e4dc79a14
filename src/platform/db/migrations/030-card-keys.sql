-- Card data keys (D26): stored only wrapped by the master key (AES-256-GCM, see
-- src/platform/crypto/card-keys.ts). One ACTIVE key per purpose; RETIRED keys stay so every
-- ciphertext, which records its key id, remains readable after a rotation.
CREATE TABLE card_keys (
  key_id      text        PRIMARY KEY,
  purpose     text        NOT NULL CHECK (purpose IN ('PAN_DATA', 'PAN_FINGERPRINT', 'CVK')),
  wrapped_key text        NOT NULL,
  source      text        NOT NULL CHECK (source IN ('GENERATED', 'CONFIGURED')),
  status      text        NOT NULL CHECK (status IN ('ACTIVE', 'RETIRED')),
  -- Names the key without revealing it (DES KCV for the CVK; a keyed digest for the others).
  check_value text        NOT NULL,
  created_at  timestamptz NOT NULL,
  retired_at  timestamptz
);
CREATE UNIQUE INDEX card_keys_one_active ON card_keys (purpose) WHERE status = 'ACTIVE';
