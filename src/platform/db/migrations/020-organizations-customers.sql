-- Companies and employees (spec 2.7, 2.8, 3, 4.5, 4.6; D15-D19, D43, D48, D51).

-- Organizations (D15). `lifecycle` is ACTIVE or TERMINATED; `suspended` is the operator overlay of
-- D18; capability restrictions live in subject_restrictions. The merged status of 2.8 is derived.
CREATE TABLE organizations (
  organization_id             text        PRIMARY KEY,
  partner_id                  text        NOT NULL REFERENCES partners (partner_id),
  organization_ref            text        NOT NULL,
  organization_name           text        NOT NULL,
  company_registration_number text        NOT NULL,
  country_code                text        NOT NULL,
  -- Ordered as the partner gave them; one funding pool (ledger account) per entry (D29).
  funding_currencies          jsonb       NOT NULL,
  lifecycle                   text        NOT NULL DEFAULT 'ACTIVE' CHECK (lifecycle IN ('ACTIVE', 'TERMINATED')),
  suspended                   boolean     NOT NULL DEFAULT false,
  seq                         bigint      GENERATED ALWAYS AS IDENTITY,
  created_at                  timestamptz NOT NULL,
  updated_at                  timestamptz NOT NULL,
  UNIQUE (partner_id, organization_ref)
);
CREATE INDEX organizations_partner_time ON organizations (partner_id, created_at DESC, seq DESC);

-- Employees (D16, D17). KYC: PENDING -> APPROVED | REJECTED; a real name change or a resubmission
-- sets PENDING again.
CREATE TABLE customers (
  customer_id        text        PRIMARY KEY,
  partner_id         text        NOT NULL REFERENCES partners (partner_id),
  organization_id    text        NOT NULL REFERENCES organizations (organization_id),
  customer_ref       text        NOT NULL,
  first_name         text        NOT NULL,
  middle_name        text,
  last_name          text        NOT NULL,
  phone_country_code text,
  phone_number       text,
  email              text,
  lifecycle          text        NOT NULL DEFAULT 'ACTIVE' CHECK (lifecycle IN ('ACTIVE', 'TERMINATED')),
  suspended          boolean     NOT NULL DEFAULT false,
  kyc_status         text        NOT NULL DEFAULT 'PENDING' CHECK (kyc_status IN ('PENDING', 'APPROVED', 'REJECTED')),
  kyc_reason         text,
  kyc_updated_at     timestamptz NOT NULL,
  terminated_at      timestamptz,
  seq                bigint      GENERATED ALWAYS AS IDENTITY,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  -- D48: customerRef is unique per organization.
  UNIQUE (organization_id, customer_ref),
  CHECK ((phone_country_code IS NULL) = (phone_number IS NULL))
);
CREATE INDEX customers_org_time ON customers (organization_id, created_at DESC, seq DESC);
CREATE INDEX customers_partner ON customers (partner_id);

-- Addresses (2.7): one whole object per addressType, replaced as a whole (4.5 rule 3).
CREATE TABLE customer_addresses (
  customer_id          text        NOT NULL REFERENCES customers (customer_id),
  address_type         text        NOT NULL CHECK (address_type IN ('SHIPPING_ADDRESS')),
  postal_code          text,
  address_line1        text        NOT NULL,
  address_line2        text,
  address_line3        text,
  city                 text        NOT NULL,
  state                text        NOT NULL,
  address_country_code text        NOT NULL,
  updated_at           timestamptz NOT NULL,
  PRIMARY KEY (customer_id, address_type)
);

-- KYC reviews (D17): one row per review opened; the decision closes it. History for operators.
CREATE TABLE kyc_reviews (
  review_id   text        PRIMARY KEY,
  customer_id text        NOT NULL REFERENCES customers (customer_id),
  opened_by   text        NOT NULL CHECK (opened_by IN ('CREATE', 'NAME_CHANGE', 'RESUBMIT')),
  status      text        NOT NULL CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED')),
  reason      text,
  decided_by  text        CHECK (decided_by IN ('OPERATOR', 'SANDBOX', 'SCREENING')),
  opened_at   timestamptz NOT NULL,
  decided_at  timestamptz
);
CREATE INDEX kyc_reviews_customer ON kyc_reviews (customer_id, opened_at DESC);
-- At most one review in flight per employee.
CREATE UNIQUE INDEX kyc_reviews_one_pending ON kyc_reviews (customer_id) WHERE status = 'PENDING';

-- Capability restrictions (section 3, D18, D19). A code is in a subject's set while any source
-- holds it; partners add and lift only PARTNER rows, operators only their own source's rows.
CREATE TABLE subject_restrictions (
  subject_type text        NOT NULL CHECK (subject_type IN ('CUSTOMER', 'ORGANIZATION')),
  subject_id   text        NOT NULL,
  code         text        NOT NULL CHECK (code IN ('ACCOUNT_FROZEN', 'CASH_IN_FROZEN', 'CASH_OUT_FROZEN', 'PAYMENT_FROZEN', 'CARD_FROZEN')),
  source       text        NOT NULL CHECK (source IN ('PARTNER', 'RISK', 'REGULATORY', 'JUDICIAL')),
  remark       text,
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (subject_type, subject_id, code, source)
);

-- Append-only history of restriction, suspension and lifecycle changes (who, what, why).
CREATE TABLE subject_status_changes (
  change_id           text        PRIMARY KEY,
  subject_type        text        NOT NULL CHECK (subject_type IN ('CUSTOMER', 'ORGANIZATION')),
  subject_id          text        NOT NULL,
  action              text        NOT NULL CHECK (action IN ('RESTRICTIONS', 'SUSPEND', 'UNSUSPEND', 'TERMINATE')),
  source              text        NOT NULL CHECK (source IN ('PARTNER', 'RISK', 'REGULATORY', 'JUDICIAL', 'OPERATOR')),
  add_restrictions    jsonb       NOT NULL DEFAULT '[]',
  remove_restrictions jsonb       NOT NULL DEFAULT '[]',
  remark              text,
  status_before       text        NOT NULL,
  status_after        text        NOT NULL,
  created_at          timestamptz NOT NULL
);
CREATE INDEX subject_status_changes_subject ON subject_status_changes (subject_type, subject_id, created_at DESC);

-- Sanctioned countries (4.5 update-address, D51): operator-editable, seeded with the countries
-- under comprehensive UN/US/EU programmes.
CREATE TABLE sanctioned_countries (
  country_code text        PRIMARY KEY CHECK (country_code ~ '^[A-Z]{2}$'),
  remark       text,
  created_at   timestamptz NOT NULL DEFAULT now()
);
INSERT INTO sanctioned_countries (country_code, remark) VALUES
  ('KP', 'seed: North Korea, comprehensive sanctions'),
  ('IR', 'seed: Iran, comprehensive sanctions'),
  ('SY', 'seed: Syria, comprehensive sanctions'),
  ('CU', 'seed: Cuba, comprehensive sanctions');
