-- Consumer cards funded by an asset that is not USD-pegged (D35: "others at an operator-set rate").
-- An authorization converts its USD billing amount to the asset at the asset's usd_rate (units per
-- USD) as it is at that moment, rounded up to the asset's scale, and keeps the rate and the hold in
-- the asset with the record; clearing, reversal and expiry settle at that same rate (the service
-- side of src/domains/authorization/service.ts). NULL columns: the funds account's currency is the
-- billing currency (corporate cards, USD-pegged assets), the hold is hold_amount.
ALTER TABLE card_transactions
  ADD COLUMN funds_rate numeric CHECK (funds_rate > 0),
  ADD COLUMN funds_scale integer CHECK (funds_scale BETWEEN 0 AND 18),
  ADD COLUMN funds_hold numeric CHECK (funds_hold >= 0),
  ADD CONSTRAINT card_transactions_funds_shape CHECK ((funds_rate IS NULL) = (funds_scale IS NULL));
-- The conversion is a stage of card_authorize (src/domains/authorization/sql/card_authorize.sql).
