-- The managed-balance model (spec 1, 2.3, 2.4, 4.3; D33, D35, D39, D48): assets, users keyed by
-- (partner, externalUserId), their capability freezes, asset movements and the push stream.
-- Balances are ledger accounts (owner_type MANAGED_USER, owner_id = user_id, currency = asset):
-- free = available, freeze = pending. See src/domains/managed-balance/ and docs/managed-balance.md.

-- Assets (2.3): operators extend this table; nothing in code lists them. `usd_rate` is how many
-- units of the asset one USD buys: 1 for USD-pegged assets (D35), an operator-set rate otherwise,
-- NULL when the asset cannot be converted.
CREATE TABLE assets (
  asset       text        PRIMARY KEY CHECK (asset ~ '^[A-Z0-9]{2,12}$'),
  network     text        NOT NULL,
  logo        text        NOT NULL,
  -- Decimals an amount in this asset may carry (D4: managed-balance assets up to 18).
  scale       integer     NOT NULL CHECK (scale BETWEEN 0 AND 18),
  usd_pegged  boolean     NOT NULL,
  usd_rate    numeric     CHECK (usd_rate > 0),
  status      text        NOT NULL CHECK (status IN ('ACTIVE', 'INACTIVE')),
  sort_order  integer     NOT NULL DEFAULT 100,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL,
  CHECK (NOT usd_pegged OR usd_rate = 1)
);
INSERT INTO assets (asset, network, logo, scale, usd_pegged, usd_rate, status, sort_order, created_at, updated_at) VALUES
  ('USDT', 'TRON', 'https://assets.cardsvc.example/logo/usdt.svg', 18, true, 1, 'ACTIVE', 10, now(), now()),
  ('USDC', 'ETHEREUM', 'https://assets.cardsvc.example/logo/usdc.svg', 18, true, 1, 'ACTIVE', 20, now(), now()),
  ('USD', 'FIAT', 'https://assets.cardsvc.example/logo/usd.svg', 18, true, 1, 'ACTIVE', 30, now(), now());

-- End users of a partner (D35), created on first use. Another partner's externalUserId is another user.
CREATE TABLE managed_users (
  user_id          text        PRIMARY KEY CHECK (length(user_id) <= 20),
  partner_id       text        NOT NULL REFERENCES partners (partner_id),
  external_user_id text        NOT NULL,
  created_at       timestamptz NOT NULL,
  UNIQUE (partner_id, external_user_id)
);

-- Capability freezes of a partner's own users (3, D20), set by operators: CASH_IN_FROZEN refuses
-- credits, CASH_OUT_FROZEN debits, PAYMENT_FROZEN card spend, CARD_FROZEN card management,
-- ACCOUNT_FROZEN all of them.
CREATE TABLE managed_user_restrictions (
  user_id    text        NOT NULL REFERENCES managed_users (user_id),
  code       text        NOT NULL CHECK (code IN ('ACCOUNT_FROZEN', 'CASH_IN_FROZEN', 'CASH_OUT_FROZEN', 'PAYMENT_FROZEN', 'CARD_FROZEN')),
  remark     text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, code)
);

-- Asset movements (2.4): one row per movement, booked by one ledger posting. `external_tran_id`
-- is the partner's idempotency id (4.3), unique per partner; service-initiated movements (fees)
-- have none. CONVERSION debits `asset` and credits `counter_asset`.
CREATE TABLE asset_movements (
  movement_id        text        PRIMARY KEY CHECK (length(movement_id) <= 20),
  -- No foreign keys to partners and assets: the user carries the partner, the booking function reads
  -- the asset row, and assets are never deleted. Each would take a KEY SHARE lock on one hot row
  -- (the partner's, USDT's) in every credit, and concurrent lockers of one row cost a MultiXact each.
  partner_id         text        NOT NULL,
  user_id            text        NOT NULL REFERENCES managed_users (user_id),
  external_tran_id   text,
  type               text        NOT NULL CHECK (type IN ('DEPOSIT', 'WITHDRAW', 'CARD_PRINTING_FEE', 'CARD_POSTAL_FEE',
                                   'CARD_VIP_FROZEN_FEE', 'CONVERSION', 'REWARD_DISTRIBUTION', 'REWARD_PAY', 'REWARD_REFUND', 'MIGRATION')),
  -- CREDIT raises the user's balance in `asset`, DEBIT lowers it (a CONVERSION is a DEBIT of `asset`).
  direction          text        NOT NULL CHECK (direction IN ('CREDIT', 'DEBIT')),
  asset              text        NOT NULL,
  amount             numeric     NOT NULL CHECK (amount > 0),
  counter_asset      text,
  counter_amount     numeric     CHECK (counter_amount > 0),
  rate               numeric     CHECK (rate > 0),
  card_id            text,
  remark             text,
  status             text        NOT NULL CHECK (status IN ('SUCCESS')),
  -- Deferred: the movement row is written first, so concurrent copies of one externalTranId queue
  -- on its unique index before anything is booked (migration 081).
  posting_id         text        NOT NULL REFERENCES ledger_postings (posting_id) DEFERRABLE INITIALLY DEFERRED,
  -- The user's free balance in `asset` after the movement.
  free_after         numeric     NOT NULL,
  seq                bigint      GENERATED ALWAYS AS IDENTITY,
  created_at         timestamptz NOT NULL,
  CHECK ((type = 'CONVERSION') = (counter_asset IS NOT NULL AND counter_amount IS NOT NULL AND rate IS NOT NULL))
);
CREATE UNIQUE INDEX asset_movements_external ON asset_movements (partner_id, external_tran_id) WHERE external_tran_id IS NOT NULL;
CREATE INDEX asset_movements_user_time ON asset_movements (user_id, created_at DESC, seq DESC);

-- The push stream of the managed-balance model (D39): what the WebSocket at /card/v1/ws sends.
-- Rows are written in the transaction that commits the change, so every instance pushes what any
-- instance committed. `stream_seq` orders the stream; a row is safe to push once every transaction
-- that could still commit a smaller stream_seq has ended: `xid < pg_snapshot_xmin(pg_current_snapshot())`.
CREATE TABLE user_stream (
  stream_seq       bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  partner_id       text        NOT NULL,
  xid              xid8        NOT NULL DEFAULT pg_current_xact_id(),
  kind             text        NOT NULL CHECK (kind IN ('BALANCE', 'CARD_TRANSACTION', 'QR_PAYMENT')),
  external_user_id text        NOT NULL,
  payload          text        NOT NULL,
  created_at       timestamptz NOT NULL
);
CREATE INDEX user_stream_partner ON user_stream (partner_id, stream_seq);

-- Every change of a managed user's balance lands in the stream as a BALANCE message: written by
-- ledger_post (src/domains/ledger/sql/ledger_post.sql) in the posting's statement.
