-- Issue 29: indexes of the operator console's lookups (every console page under 1 s with 100,000
-- transactions): cards by last four, transactions by their original, the KYC review queue.
CREATE INDEX cards_last4 ON cards (pan_last4, created_at DESC);
CREATE INDEX card_transactions_original ON card_transactions (original_trans_id) WHERE original_trans_id IS NOT NULL;
CREATE INDEX kyc_reviews_pending ON kyc_reviews (opened_at, review_id) WHERE status = 'PENDING';
-- Managed users by the partner's user id, across partners (console search).
CREATE INDEX managed_users_external ON managed_users (external_user_id);
