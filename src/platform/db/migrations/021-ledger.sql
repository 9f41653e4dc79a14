-- The double-entry ledger (D29, D33). See src/domains/ledger/ledger.ts for the API.
--
-- Invariants enforced here as well as in the code:
--   * every posting is balanced: per currency, the entries of a posting sum to zero (deferred
--     constraint trigger, checked at commit);
--   * account balances change only by inserting entries: the entry trigger applies the amount to
--     its account row and records the balance after it; a direct UPDATE of a balance is refused;
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

-- New accounts start empty.
CREATE FUNCTION ledger_account_insert_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.available <> 0 OR NEW.pending <> 0 OR NEW.version <> 0 THEN
    RAISE EXCEPTION 'ledger: account % must start with zero balances', NEW.account_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER ledger_accounts_insert_guard BEFORE INSERT ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_account_insert_guard();

-- Balances change only from inside the entry trigger (trigger depth >= 2), never directly.
CREATE FUNCTION ledger_account_update_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF pg_trigger_depth() < 2 AND (NEW.available IS DISTINCT FROM OLD.available
      OR NEW.pending IS DISTINCT FROM OLD.pending OR NEW.version IS DISTINCT FROM OLD.version) THEN
    RAISE EXCEPTION 'ledger: balances of % change only through ledger entries', OLD.account_id USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.currency IS DISTINCT FROM OLD.currency OR NEW.partner_id IS DISTINCT FROM OLD.partner_id
      OR NEW.allow_negative IS DISTINCT FROM OLD.allow_negative THEN
    RAISE EXCEPTION 'ledger: account % identity is immutable', OLD.account_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER ledger_accounts_update_guard BEFORE UPDATE ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_account_update_guard();

-- Applies an entry to its account and records the balances after it.
CREATE FUNCTION ledger_apply_entry() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  acct ledger_accounts%ROWTYPE;
  posting_forced boolean;
  posting_partner text;
BEGIN
  SELECT forced, partner_id INTO posting_forced, posting_partner FROM ledger_postings WHERE posting_id = NEW.posting_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledger: posting % does not exist', NEW.posting_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  UPDATE ledger_accounts SET
      available = available + CASE WHEN NEW.bucket = 'AVAILABLE' THEN NEW.amount ELSE 0 END,
      pending   = pending   + CASE WHEN NEW.bucket = 'PENDING'   THEN NEW.amount ELSE 0 END,
      version   = version + 1
    WHERE account_id = NEW.account_id
    RETURNING * INTO acct;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledger: account % does not exist', NEW.account_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  IF acct.currency <> NEW.currency THEN
    RAISE EXCEPTION 'ledger: entry currency % differs from account % currency %', NEW.currency, acct.account_id, acct.currency
      USING ERRCODE = 'check_violation';
  END IF;
  IF acct.partner_id <> posting_partner THEN
    RAISE EXCEPTION 'ledger: account % belongs to another partner', acct.account_id USING ERRCODE = 'check_violation';
  END IF;
  IF acct.available < 0 AND NOT acct.allow_negative AND NOT posting_forced THEN
    RAISE EXCEPTION 'ledger: available of % would fall below zero', acct.account_id USING ERRCODE = 'check_violation';
  END IF;
  NEW.available_after := acct.available;
  NEW.pending_after := acct.pending;
  NEW.account_version := acct.version;
  RETURN NEW;
END $$;
CREATE TRIGGER ledger_entries_apply BEFORE INSERT ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_apply_entry();

-- Per currency, the entries of a posting sum to zero; a posting has at least two entries.
CREATE FUNCTION ledger_check_posting_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  target text;
BEGIN
  target := NEW.posting_id;
  IF (SELECT count(*) FROM ledger_entries WHERE posting_id = target) < 2 THEN
    RAISE EXCEPTION 'ledger: posting % has fewer than two entries', target USING ERRCODE = 'check_violation';
  END IF;
  IF EXISTS (SELECT 1 FROM ledger_entries WHERE posting_id = target GROUP BY currency HAVING sum(amount) <> 0) THEN
    RAISE EXCEPTION 'ledger: posting % is not balanced', target USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_posting_balanced();
CREATE CONSTRAINT TRIGGER ledger_postings_have_entries AFTER INSERT ON ledger_postings
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_posting_balanced();

-- Append-only.
CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger: % is append-only', TG_TABLE_NAME USING ERRCODE = 'check_violation';
END $$;
CREATE TRIGGER ledger_postings_append_only BEFORE UPDATE OR DELETE ON ledger_postings
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
