-- Transfers between a company pool and a dedicated card balance (D29). The ledger posting is the
-- money movement; this row is the partner-facing record and the idempotency key (externalTranId
-- unique per partner: a repeat is EXTERNAL_TRAN_ID_DUPLICATE and moves nothing).
CREATE TABLE card_transfers (
  transfer_id      text        PRIMARY KEY,
  partner_id       text        NOT NULL REFERENCES partners (partner_id),
  external_tran_id text        NOT NULL,
  organization_id  text        NOT NULL REFERENCES organizations (organization_id),
  card_id          text        NOT NULL REFERENCES cards (card_id),
  direction        text        NOT NULL CHECK (direction IN ('POOL_TO_CARD', 'CARD_TO_POOL')),
  currency         text        NOT NULL CHECK (currency IN ('USD', 'HKD')),
  amount           numeric     NOT NULL CHECK (amount > 0),
  posting_id       text        NOT NULL REFERENCES ledger_postings (posting_id),
  created_at       timestamptz NOT NULL,
  UNIQUE (partner_id, external_tran_id)
);
CREATE INDEX card_transfers_card ON card_transfers (card_id, created_at DESC);
