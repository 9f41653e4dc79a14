-- Card applications (D23, D24, D44): accepted synchronously as PENDING, then screened and turned
-- into a card (SUCCESS) or REJECTED by a leased job. The row is the job: a worker leases it
-- (status PROCESSING, lease_owner, lease_expires_at) with FOR UPDATE SKIP LOCKED; a lease that
-- expires (crashed worker) is taken again by the next run.
CREATE TABLE card_applications (
  card_apply_id         text        PRIMARY KEY,
  partner_id            text        NOT NULL REFERENCES partners (partner_id),
  card_apply_ref        text        NOT NULL,
  organization_id       text        NOT NULL REFERENCES organizations (organization_id),
  card_profile_id       text        NOT NULL REFERENCES card_profiles (card_profile_id),
  subject_type          text        NOT NULL CHECK (subject_type IN ('ORGANIZATION', 'CUSTOMER')),
  subject_id            text        NOT NULL,
  custodian_customer_id text        NOT NULL REFERENCES customers (customer_id),
  cardholder_name       text,
  rule_ids              jsonb       NOT NULL,
  status                text        NOT NULL CHECK (status IN ('PENDING', 'PROCESSING', 'SUCCESS', 'REJECTED')),
  card_id               text,
  reject_reason         text,
  attempts              integer     NOT NULL DEFAULT 0,
  lease_owner           text,
  lease_expires_at      timestamptz,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL,
  UNIQUE (partner_id, card_apply_ref),
  CHECK ((status = 'SUCCESS') = (card_id IS NOT NULL)),
  CHECK ((status = 'REJECTED') = (reject_reason IS NOT NULL)),
  CHECK ((status = 'PROCESSING') = (lease_expires_at IS NOT NULL))
);
CREATE INDEX card_applications_open ON card_applications (created_at) WHERE status IN ('PENDING', 'PROCESSING');
