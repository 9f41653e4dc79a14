-- Issue 34: the single-column CHECK constraints of the tables every approval writes become domains,
-- with the same conditions. Why: PostgreSQL rebuilds a table's CHECK constraints for every statement
-- that writes a row of it (each expression deserialized from the catalog and planned again, then
-- evaluated: about 14 % of card_authorize's database CPU), while a domain's conditions are prepared
-- once per connection (the type cache) and checked only for the columns a statement assigns. The
-- rows accepted are the same: an insert checks every domain column as the table constraint did, an
-- update checks the columns it sets (the others hold values already checked). A violation is still
-- SQLSTATE 23514 (check_violation), naming the domain's constraint instead of the table's.
-- Conditions over several columns stay table constraints. docs/benchmarks.md has the measurements.

CREATE DOMAIN currency_code AS text CHECK (VALUE ~ '^[A-Z]{3}$');
CREATE DOMAIN asset_code AS text CHECK (VALUE ~ '^[A-Z0-9]{2,12}$');
CREATE DOMAIN country_code AS text CHECK (VALUE ~ '^[A-Z]{2}$');
CREATE DOMAIN merchant_category_code AS text CHECK (VALUE ~ '^[0-9]{4}$');
CREATE DOMAIN positive_amount AS numeric CHECK (VALUE > 0);
CREATE DOMAIN nonnegative_amount AS numeric CHECK (VALUE >= 0);
CREATE DOMAIN nonnegative_count AS bigint CHECK (VALUE >= 0);
CREATE DOMAIN asset_scale AS integer CHECK (VALUE >= 0 AND VALUE <= 18);
CREATE DOMAIN card_transaction_status AS text CHECK (VALUE IN ('PENDING', 'CLEARED', 'REVERSED', 'EXPIRED', 'DECLINED', 'POSTED'));
CREATE DOMAIN card_message_type AS text CHECK (VALUE IN ('AUTHORIZATION', 'CLEARING', 'REVERSAL', 'REFUND'));
CREATE DOMAIN card_subject_type AS text CHECK (VALUE IN ('ORGANIZATION', 'CUSTOMER', 'USER'));
CREATE DOMAIN card_auth_type AS text CHECK (VALUE IN ('EXPEND', 'REFUND', 'REVERSAL'));
CREATE DOMAIN card_channel AS text CHECK (VALUE IN ('ECOM', 'POS', 'ATM'));
CREATE DOMAIN card_transaction_source AS text CHECK (VALUE IN ('NETWORK', 'SANDBOX'));
CREATE DOMAIN debit_credit_indicator AS text CHECK (VALUE IN ('D', 'C'));
CREATE DOMAIN velocity_control AS text CHECK (VALUE IN ('PURCHASE', 'CASH_ADVANCE'));
CREATE DOMAIN velocity_subject_type AS text CHECK (VALUE IN ('CARD', 'CUSTOMER'));
CREATE DOMAIN event_status AS text CHECK (VALUE IN ('PENDING', 'DELIVERED', 'FAILED'));
CREATE DOMAIN ledger_owner_type AS text
  CHECK (VALUE IN ('ORGANIZATION_POOL', 'CARD', 'MANAGED_USER', 'EXTERNAL', 'CLEARING', 'FEE_INCOME'));

-- Two triggers' WHEN clauses read columns that change type: dropped here, made again (the same) by
-- their domains' files, applied after the migrations.
DROP TRIGGER IF EXISTS card_transactions_user_stream ON card_transactions;
DROP TRIGGER IF EXISTS ledger_accounts_update_guard ON ledger_accounts;
DELETE FROM schema_functions
 WHERE name IN ('managed-balance/sql/user_stream_card_transactions.sql', 'ledger/sql/ledger_account_update_guard.sql');

ALTER TABLE card_transactions
  DROP CONSTRAINT card_transactions_status_check,
  DROP CONSTRAINT card_transactions_message_type_check,
  DROP CONSTRAINT card_transactions_subject_type_check,
  DROP CONSTRAINT card_transactions_auth_type_check,
  DROP CONSTRAINT card_transactions_channel_check,
  DROP CONSTRAINT card_transactions_funds_scale_check,
  DROP CONSTRAINT card_transactions_source_check,
  DROP CONSTRAINT card_transactions_debit_credit_indicator_check,
  DROP CONSTRAINT card_transactions_amount_check,
  DROP CONSTRAINT card_transactions_billing_amount_check,
  DROP CONSTRAINT card_transactions_hold_amount_check,
  DROP CONSTRAINT card_transactions_hold_funds_check,
  DROP CONSTRAINT card_transactions_funds_rate_check,
  DROP CONSTRAINT card_transactions_funds_hold_check,
  DROP CONSTRAINT card_transactions_merchant_country_check,
  DROP CONSTRAINT card_transactions_mcc_check,
  DROP CONSTRAINT card_transactions_currency_check,
  DROP CONSTRAINT card_transactions_billing_currency_check,
  ALTER COLUMN status TYPE card_transaction_status,
  ALTER COLUMN message_type TYPE card_message_type,
  ALTER COLUMN subject_type TYPE card_subject_type,
  ALTER COLUMN auth_type TYPE card_auth_type,
  ALTER COLUMN channel TYPE card_channel,
  ALTER COLUMN funds_scale TYPE asset_scale,
  ALTER COLUMN source TYPE card_transaction_source,
  ALTER COLUMN debit_credit_indicator TYPE debit_credit_indicator,
  ALTER COLUMN amount TYPE positive_amount,
  ALTER COLUMN billing_amount TYPE positive_amount,
  ALTER COLUMN hold_amount TYPE nonnegative_amount,
  ALTER COLUMN hold_funds TYPE positive_amount,
  ALTER COLUMN funds_rate TYPE positive_amount,
  ALTER COLUMN funds_hold TYPE nonnegative_amount,
  ALTER COLUMN merchant_country TYPE country_code,
  ALTER COLUMN mcc TYPE merchant_category_code,
  ALTER COLUMN currency TYPE currency_code,
  ALTER COLUMN billing_currency TYPE currency_code;

-- velocity_usage (migration 151) reads velocity_counters' columns: made again, the same, after.
DROP VIEW velocity_usage;
ALTER TABLE velocity_counters
  DROP CONSTRAINT velocity_counters_control_check,
  DROP CONSTRAINT velocity_counters_subject_type_check,
  DROP CONSTRAINT velocity_counters_daily_amount_check,
  DROP CONSTRAINT velocity_counters_monthly_amount_check,
  DROP CONSTRAINT velocity_counters_quarterly_amount_check,
  DROP CONSTRAINT velocity_counters_yearly_amount_check,
  DROP CONSTRAINT velocity_counters_daily_count_check,
  DROP CONSTRAINT velocity_counters_monthly_count_check,
  DROP CONSTRAINT velocity_counters_quarterly_count_check,
  DROP CONSTRAINT velocity_counters_yearly_count_check,
  ALTER COLUMN control TYPE velocity_control,
  ALTER COLUMN subject_type TYPE velocity_subject_type,
  ALTER COLUMN daily_amount TYPE nonnegative_amount,
  ALTER COLUMN monthly_amount TYPE nonnegative_amount,
  ALTER COLUMN quarterly_amount TYPE nonnegative_amount,
  ALTER COLUMN yearly_amount TYPE nonnegative_amount,
  ALTER COLUMN daily_count TYPE nonnegative_count,
  ALTER COLUMN monthly_count TYPE nonnegative_count,
  ALTER COLUMN quarterly_count TYPE nonnegative_count,
  ALTER COLUMN yearly_count TYPE nonnegative_count;
CREATE VIEW velocity_usage AS
  SELECT c.partner_id, c.subject_type, c.subject_id, c.control, c.currency, p.period, p.period_key,
         p.used_amount, p.used_count, c.as_of AS updated_at
    FROM velocity_counters c
   CROSS JOIN LATERAL (VALUES ('DAILY', c.daily_key, c.daily_amount, c.daily_count),
                              ('MONTHLY', c.monthly_key, c.monthly_amount, c.monthly_count),
                              ('QUARTERLY', c.quarterly_key, c.quarterly_amount, c.quarterly_count),
                              ('YEARLY', c.yearly_key, c.yearly_amount, c.yearly_count)) AS p(period, period_key, used_amount, used_count);

-- ledger_accounts: pending keeps its table constraint (the generated total reads it).
ALTER TABLE ledger_accounts
  DROP CONSTRAINT ledger_accounts_owner_type_check,
  DROP CONSTRAINT ledger_accounts_currency_check,
  ALTER COLUMN owner_type TYPE ledger_owner_type,
  ALTER COLUMN currency TYPE asset_code;

ALTER TABLE events
  DROP CONSTRAINT events_status_check,
  ALTER COLUMN status TYPE event_status;
