-- QR payments of the managed-balance model (issue 11; 2.9 transType PAY, REFUND, REFUND_PART,
-- REVERSAL): a user pays a merchant's QR code from an asset balance. A payment enters through the
-- network ingress (/internal/network/v1/qr-payment) or the sandbox simulation and is booked at
-- once (no hold): PAY moves free -> the QR settlement account; REFUND, REFUND_PART and REVERSAL
-- move it back. See src/domains/managed-balance/qr-payments.ts and docs/qr-payments.md.
CREATE TABLE qr_payments (
  order_id                text        PRIMARY KEY,
  partner_id              text        NOT NULL,
  user_id                 text        NOT NULL REFERENCES managed_users (user_id),
  -- The message id (the network's, or minted for a simulation): a retry is answered from this row.
  network_transaction_id  text        NOT NULL UNIQUE,
  source                  text        NOT NULL CHECK (source IN ('NETWORK', 'SANDBOX')),
  trans_type              text        NOT NULL CHECK (trans_type IN ('PAY', 'REFUND', 'REFUND_PART', 'REVERSAL')),
  debit_credit_indicator  text        NOT NULL CHECK (debit_credit_indicator IN ('D', 'C')),
  asset                   text        NOT NULL REFERENCES assets (asset),
  amount                  numeric     NOT NULL CHECK (amount > 0),
  merchant_name           text,
  merchant_country        text,
  mcc                     text,
  status                  text        NOT NULL CHECK (status IN ('SUCCESS', 'DECLINED')),
  decline_reason          text,
  decline_detail          text,
  -- REFUND, REFUND_PART, REVERSAL: the PAY they return.
  original_order_id       text        REFERENCES qr_payments (order_id),
  -- PAY: how much of it refunds and reversals have returned so far (never above amount).
  returned_amount         numeric     NOT NULL DEFAULT 0 CHECK (returned_amount >= 0 AND returned_amount <= amount),
  posting_id              text,
  free_after              numeric,
  created_at              timestamptz NOT NULL,
  updated_at              timestamptz NOT NULL,
  CHECK ((trans_type = 'PAY') = (debit_credit_indicator = 'D')),
  CHECK ((trans_type = 'PAY') = (original_order_id IS NULL)),
  CHECK ((status = 'DECLINED') = (decline_reason IS NOT NULL)),
  CHECK ((status = 'SUCCESS') = (posting_id IS NOT NULL)),
  CHECK (trans_type = 'PAY' OR returned_amount = 0)
);
CREATE INDEX qr_payments_partner_time ON qr_payments (partner_id, created_at DESC, order_id DESC);
CREATE INDEX qr_payments_user_time ON qr_payments (user_id, created_at DESC, order_id DESC);
CREATE INDEX qr_payments_original ON qr_payments (original_order_id) WHERE original_order_id IS NOT NULL;

-- qr_payment_json (the partner-facing record) and the push-stream trigger user_stream_qr_payments:
-- src/domains/managed-balance/sql/.
