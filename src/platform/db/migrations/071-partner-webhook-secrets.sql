-- Webhook signing secrets (issue 14): optional, separate from the API secretKey, rotatable with an
-- overlap. A partner has at most one current secret (expires_at NULL) and, during a rotation's
-- overlap, the previous one (expires_at in the future). Webhooks carry one signature per valid
-- secret (X-DAPI-WEBHOOK-SIGN), so the receiver can switch secrets without losing an event.
-- Secrets are sealed under the master key (like the API secret, D8); expired rows are deleted at
-- the next rotation.
CREATE TABLE partner_webhook_secrets (
  secret_id  text        PRIMARY KEY,
  partner_id text        NOT NULL REFERENCES partners (partner_id),
  secret_enc text        NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz
);
CREATE INDEX partner_webhook_secrets_partner ON partner_webhook_secrets (partner_id, created_at DESC);
