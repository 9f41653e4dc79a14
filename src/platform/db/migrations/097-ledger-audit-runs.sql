-- Issue 27: every whole-ledger audit (D33) leaves its result here, whoever ran it (the periodic
-- task of a worker instance, the ledger-audit command, the admin route), so every instance's
-- /metrics can say when the ledger was last audited and whether it was clean.
CREATE TABLE ledger_audit_runs (
  run_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  finished_at timestamptz NOT NULL,
  ok          boolean NOT NULL,
  findings    integer NOT NULL CHECK (findings >= 0),
  accounts    integer NOT NULL CHECK (accounts >= 0),
  postings    bigint NOT NULL CHECK (postings >= 0)
);
CREATE INDEX ledger_audit_runs_finished ON ledger_audit_runs (finished_at DESC);
