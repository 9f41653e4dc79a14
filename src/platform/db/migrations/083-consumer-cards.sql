-- Consumer cards of the managed-balance model (issue 11; spec 4.2, 2.3, 2.4; D35, D36, D43, D47).
-- A consumer card is a row of `cards` whose subject is a managed user (subject_type USER,
-- balance_mode ASSET): no company, no application job, no custodian; it spends the user's
-- `funding_asset` (a USD-pegged asset, 1:1 with the card's USD billing amount, D35) through the
-- same authorization pipeline (card_authorize), free -> freeze on the user's asset account.
-- See src/domains/managed-balance/consumer-cards.ts and docs/consumer-cards.md.

-- Profiles: ASSET is the consumer family. Fees of 2.4 (in the funding asset, USD 1:1):
-- issuance_fee is CARD_PRINTING_FEE at issuance, postal_fee CARD_POSTAL_FEE at issuance of a
-- PHYSICAL card, frozen_fee CARD_VIP_FROZEN_FEE when a frozen card is unfrozen.
ALTER TABLE card_profiles DROP CONSTRAINT card_profiles_balance_mode_check;
ALTER TABLE card_profiles ADD CONSTRAINT card_profiles_balance_mode_check CHECK (balance_mode IN ('SHARED', 'DEDICATED', 'ASSET'));
ALTER TABLE card_profiles ADD COLUMN postal_fee numeric NOT NULL DEFAULT 0 CHECK (postal_fee >= 0);
ALTER TABLE card_profiles ADD COLUMN frozen_fee numeric NOT NULL DEFAULT 0 CHECK (frozen_fee >= 0);
-- The consumer family bills in USD only: its funding assets are USD-pegged.
ALTER TABLE card_profiles ADD CONSTRAINT card_profiles_asset_usd CHECK (balance_mode <> 'ASSET' OR settlement_currencies = '["USD"]'::jsonb);

ALTER TABLE cards ALTER COLUMN organization_id DROP NOT NULL;
ALTER TABLE cards ALTER COLUMN card_apply_id DROP NOT NULL;
ALTER TABLE cards ALTER COLUMN custodian_customer_id DROP NOT NULL;
ALTER TABLE cards DROP CONSTRAINT cards_balance_mode_check;
ALTER TABLE cards ADD CONSTRAINT cards_balance_mode_check CHECK (balance_mode IN ('SHARED', 'DEDICATED', 'ASSET'));
ALTER TABLE cards DROP CONSTRAINT cards_subject_type_check;
ALTER TABLE cards ADD CONSTRAINT cards_subject_type_check CHECK (subject_type IN ('ORGANIZATION', 'CUSTOMER', 'USER'));
ALTER TABLE cards ADD COLUMN funding_asset text REFERENCES assets (asset);
ALTER TABLE cards ADD CONSTRAINT cards_consumer_shape CHECK (
  CASE WHEN subject_type = 'USER'
       THEN balance_mode = 'ASSET' AND funding_asset IS NOT NULL AND organization_id IS NULL AND card_apply_id IS NULL AND custodian_customer_id IS NULL
       ELSE balance_mode <> 'ASSET' AND funding_asset IS NULL AND organization_id IS NOT NULL AND card_apply_id IS NOT NULL AND custodian_customer_id IS NOT NULL
  END);
CREATE INDEX cards_user ON cards (subject_id, created_at DESC, card_id DESC) WHERE subject_type = 'USER';

ALTER TABLE card_transactions ALTER COLUMN organization_id DROP NOT NULL;
ALTER TABLE card_transactions DROP CONSTRAINT card_transactions_subject_type_check;
ALTER TABLE card_transactions ADD CONSTRAINT card_transactions_subject_type_check CHECK (subject_type IN ('ORGANIZATION', 'CUSTOMER', 'USER'));
CREATE INDEX card_transactions_user_time ON card_transactions (subject_id, created_at DESC, trans_id DESC) WHERE subject_type = 'USER';

-- Every record and change of a consumer card's transaction lands in the push stream (D39):
-- src/domains/managed-balance/sql/user_stream_card_transactions.sql. The consumer card's stages of
-- card_authorize: src/domains/authorization/sql/card_authorize.sql.
