-- Issue 34 step 5: card_transactions' CHECK constraints, but the two of the hold (migration 152), as one
-- constraint with the same conditions (each one's own NULL rule kept: a row passes unless a
-- condition is false). PostgreSQL reads every constraint's expression again for each statement
-- that writes a row; one expression instead of 21 took about 8 % of card_authorize's CPU off
-- (docs/benchmarks.md, issue 34 step 5). A violation now names card_transactions_row_checks.
ALTER TABLE card_transactions
  DROP CONSTRAINT card_transactions_amount_check,
  DROP CONSTRAINT card_transactions_auth_type_check,
  DROP CONSTRAINT card_transactions_billing_amount_check,
  DROP CONSTRAINT card_transactions_billing_currency_check,
  DROP CONSTRAINT card_transactions_channel_check,
  DROP CONSTRAINT card_transactions_check,
  DROP CONSTRAINT card_transactions_check1,
  DROP CONSTRAINT card_transactions_currency_check,
  DROP CONSTRAINT card_transactions_debit_credit_indicator_check,
  DROP CONSTRAINT card_transactions_funds_hold_check,
  DROP CONSTRAINT card_transactions_funds_rate_check,
  DROP CONSTRAINT card_transactions_funds_scale_check,
  DROP CONSTRAINT card_transactions_funds_shape,
  DROP CONSTRAINT card_transactions_hold_amount_check,
  DROP CONSTRAINT card_transactions_mcc_check,
  DROP CONSTRAINT card_transactions_merchant_country_check,
  DROP CONSTRAINT card_transactions_message_type_check,
  DROP CONSTRAINT card_transactions_source_check,
  DROP CONSTRAINT card_transactions_status_check,
  DROP CONSTRAINT card_transactions_subject_type_check,
  DROP CONSTRAINT card_transactions_trans_id_check,
  ADD CONSTRAINT card_transactions_row_checks CHECK (
    ((amount > (0)::numeric))
    AND ((auth_type = ANY (ARRAY['EXPEND'::text, 'REFUND'::text, 'REVERSAL'::text])))
    AND ((billing_amount > (0)::numeric))
    AND ((billing_currency ~ '^[A-Z]{3}$'::text))
    AND ((channel = ANY (ARRAY['ECOM'::text, 'POS'::text, 'ATM'::text])))
    AND (((status = 'DECLINED'::text) = (decline_reason IS NOT NULL)))
    AND (((message_type = 'AUTHORIZATION'::text) OR (status = 'POSTED'::text)))
    AND ((currency ~ '^[A-Z]{3}$'::text))
    AND ((debit_credit_indicator = ANY (ARRAY['D'::text, 'C'::text])))
    AND ((funds_hold >= (0)::numeric))
    AND ((funds_rate > (0)::numeric))
    AND (((funds_scale >= 0) AND (funds_scale <= 18)))
    AND (((funds_rate IS NULL) = (funds_scale IS NULL)))
    AND ((hold_amount >= (0)::numeric))
    AND ((mcc ~ '^[0-9]{4}$'::text))
    AND ((merchant_country ~ '^[A-Z]{2}$'::text))
    AND ((message_type = ANY (ARRAY['AUTHORIZATION'::text, 'CLEARING'::text, 'REVERSAL'::text, 'REFUND'::text])))
    AND ((source = ANY (ARRAY['NETWORK'::text, 'SANDBOX'::text])))
    AND ((status = ANY (ARRAY['PENDING'::text, 'CLEARED'::text, 'REVERSED'::text, 'EXPIRED'::text, 'DECLINED'::text, 'POSTED'::text])))
    AND ((subject_type = ANY (ARRAY['ORGANIZATION'::text, 'CUSTOMER'::text, 'USER'::text])))
    AND ((length(trans_id) <= 20)));
