-- The double-entry ledger (D29, D33). See src/domains/ledger/ledger.ts for the API.
--
-- Invariants enforced by the database (src/domains/ledger/sql/: ledger_post, the one writer, and the
-- guard triggers) as well as in the code:
--   * every posting is balanced: per currency, the entries of a posting sum to zero;
--   * account balances change only by the entries ledger_post writes, each recording the balance
--     after it; a direct UPDATE of a balance is refused;
--   * pending >= 0 always, total = available + pending (generated column);
--   * available >= 0 unless the account is a system account (allow_negative) or the posting is
--     one the service cannot refuse (forced, D33);
--   * postings and entries are append-only.

CREATE TABLE ledger_accounts (
  account_id      text        PRIMARY KEY,
  partner_id      text        NOT NULL REFERENCES partners (partner_id),
  -- The company the money belongs to, when there is one (pools, dedicated card balances).
  organization_id text,
  owner_type      text        NOT NULL CHECK (owner_type IN ('ORGANIZATION_POOL', 'CARD', 'MANAGED_USER', 'EXTERNAL', 'CLEARING', 'FEE_INCOME')),
  owner_id        text        NOT NULL,
  currency        text        NOT NULL CHECK (currency ~ '^[A-Z0-9]{2,12}$'),
  -- System (contra) accounts mirror money outside the service and may go negative.
  allow_negative  boolean     NOT NULL,
  available       numeric     NOT NULL DEFAULT 0,
  pending         numeric     NOT NULL DEFAULT 0 CHECK (pending >= 0),
  total           numeric     GENERATED ALWAYS AS (available + pending) STORED,
  -- Incremented by every entry; entries record the version they produced (per-account order).
  version         bigint      NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL,
  UNIQUE (partner_id, owner_type, owner_id, currency)
);
CREATE INDEX ledger_accounts_org ON ledger_accounts (organization_id, owner_type) WHERE organization_id IS NOT NULL;

CREATE TABLE ledger_postings (
  posting_id  text        PRIMARY KEY,
  partner_id  text        NOT NULL REFERENCES partners (partner_id),
  kind        text        NOT NULL CHECK (kind ~ '^[A-Z][A-Z0-9_]{0,39}$'),
  -- D33: a posting the service cannot refuse (fee, clearing above its hold) may take available below 0.
  forced      boolean     NOT NULL DEFAULT false,
  reference   text,
  description text,
  seq         bigint      GENERATED ALWAYS AS IDENTITY,
  created_at  timestamptz NOT NULL
);
CREATE INDEX ledger_postings_reference ON ledger_postings (partner_id, reference) WHERE reference IS NOT NULL;

CREATE TABLE ledger_entries (
  entry_id        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  posting_id      text        NOT NULL REFERENCES ledger_postings (posting_id),
  account_id      text        NOT NULL REFERENCES ledger_accounts (account_id),
  currency        text        NOT NULL,
  bucket          text        NOT NULL CHECK (bucket IN ('AVAILABLE', 'PENDING')),
  amount          numeric     NOT NULL CHECK (amount <> 0),
  -- Filled by the trigger from the account row it updated (never by the caller).
  available_after numeric     NOT NULL,
  pending_after   numeric     NOT NULL CHECK (pending_after >= 0),
  account_version bigint      NOT NULL,
  created_at      timestamptz NOT NULL,
  UNIQUE (account_id, account_version)
);
CREATE INDEX ledger_entries_posting ON ledger_entries (posting_id);
CREATE INDEX ledger_entries_account_time ON ledger_entries (account_id, created_at DESC, entry_id DESC);


-- The guard triggers and their functions: src/domains/ledger/sql/ (ledger_account_insert_guard,
-- ledger_account_update_guard, ledger_append_only; applied after the numbered migrations).
