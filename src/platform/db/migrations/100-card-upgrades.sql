-- Physical card upgrades (issue 30, D52): an ACTIVE virtual card becomes a plastic one under a
-- PHYSICAL profile of its network and balance mode. The card keeps its row (id, PAN, expiry,
-- balance, rules, usage); this table holds the production and delivery of the plastic.
CREATE TABLE card_upgrades (
  upgrade_id          text        PRIMARY KEY CHECK (length(upgrade_id) <= 20),
  partner_id          text        NOT NULL REFERENCES partners (partner_id),
  upgrade_ref         text        NOT NULL,
  card_id             text        NOT NULL REFERENCES cards (card_id),
  card_profile_id     text        NOT NULL REFERENCES card_profiles (card_profile_id),
  status              text        NOT NULL CHECK (status IN ('PENDING', 'PRODUCING', 'SHIPPED', 'DELIVERED', 'ACTIVATED', 'REJECTED', 'CANCELLED')),
  -- Snapshots taken when the upgrade was accepted (2.7 update rule 3): later address or phone
  -- changes of the holder leave them alone.
  shipping_address    jsonb       NOT NULL,
  phone_country_code  text,
  phone_number        text        NOT NULL,
  carrier             text,
  tracking_number     text,
  reject_reason       text,
  -- The fees charged at acceptance: [{type, currency, amount, accountId, transactionId}], refunded
  -- on REJECTED and CANCELLED (refunded_at set in that transaction).
  fees                jsonb       NOT NULL DEFAULT '[]'::jsonb,
  refunded_at         timestamptz,
  -- The 6-digit activation code exists from SHIPPED on, only as an HMAC under the master key.
  activation_code_hmac text,
  activation_failures integer     NOT NULL DEFAULT 0 CHECK (activation_failures >= 0),
  activation_locked   boolean     NOT NULL DEFAULT false,
  created_at          timestamptz NOT NULL,
  updated_at          timestamptz NOT NULL,
  UNIQUE (partner_id, upgrade_ref),
  CHECK ((status = 'SHIPPED' OR status = 'DELIVERED' OR status = 'ACTIVATED') = (activation_code_hmac IS NOT NULL)),
  CHECK ((status = 'REJECTED') = (reject_reason IS NOT NULL))
);
-- D52: one open upgrade per card (the service checks it under the card's row lock; this is the net).
CREATE UNIQUE INDEX card_upgrades_open ON card_upgrades (card_id) WHERE status IN ('PENDING', 'PRODUCING', 'SHIPPED', 'DELIVERED');
CREATE INDEX card_upgrades_card ON card_upgrades (card_id, created_at DESC);
