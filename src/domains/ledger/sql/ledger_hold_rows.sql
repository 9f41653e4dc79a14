-- The holds of the ledger (issue 34, step 4; docs/ledger.md "Holds"), for its readers: the audit
-- (ledger_hold_rows), the statement (ledger_hold_lines) and the console's postings of a
-- transaction (ledger_hold_entries). A hold is recorded on the authorization's record
-- (card_transactions.hold_seq, hold_funds: card_authorize through ledger_hold), not as entries.
--
-- Foreign tables (docs/contributing.md): card_transactions (the authorization domain's), read only.

-- For the audit: every hold of the pending-amount layout (hold_seq set: counted once, at its amount,
-- whether still open or released since, for its release is in the entries), and every open
-- authorization of either layout with what it still holds in its funds account's currency (the
-- account's pending is exactly its open holds). A partner's, or all (p_partner_id NULL).
CREATE OR REPLACE FUNCTION ledger_hold_rows(p_partner_id text)
RETURNS TABLE (account_id text, hold_seq bigint, held numeric, open_held numeric)
LANGUAGE sql STABLE AS $$
  SELECT t.funds_account_id, t.hold_seq, t.hold_funds,
         CASE WHEN t.status = 'PENDING' THEN COALESCE(t.funds_hold, t.hold_amount) ELSE 0 END
    FROM card_transactions t
   WHERE (p_partner_id IS NULL OR t.partner_id = p_partner_id)
     AND t.funds_account_id IS NOT NULL AND t.message_type = 'AUTHORIZATION'
     AND (t.hold_seq IS NOT NULL OR t.status = 'PENDING')
$$;

-- For the statement (D29): the hold lines of an owner's accounts, as the hold's posting showed them
-- (kind AUTHORIZATION, available -held, pending +held, the balances after), in a time window. The
-- authorization's record is found through the owner (company pool: the company's transactions;
-- dedicated card: the card's; managed user: the user's).
CREATE OR REPLACE FUNCTION ledger_hold_lines(
  p_partner_id text, p_owner_type text, p_owner_id text, p_currency text, p_start timestamptz, p_end timestamptz
) RETURNS TABLE (hold_seq bigint, account_id text, currency text, posting_id text, reference text, created_at timestamptz,
                 held numeric, available_after numeric, pending_after numeric)
LANGUAGE sql STABLE AS $$
  SELECT t.hold_seq, a.account_id, a.currency, t.posting_id, t.trans_id, t.created_at,
         t.hold_funds, t.hold_available_after, t.hold_pending_after
    FROM ledger_accounts a
    JOIN card_transactions t ON t.funds_account_id = a.account_id
   WHERE a.partner_id = p_partner_id AND a.owner_type = p_owner_type AND a.owner_id = p_owner_id
     AND (p_currency IS NULL OR a.currency = p_currency)
     AND t.hold_seq IS NOT NULL
     AND (p_start IS NULL OR t.created_at >= p_start) AND (p_end IS NULL OR t.created_at < p_end)
     AND CASE p_owner_type WHEN 'ORGANIZATION_POOL' THEN t.organization_id = p_owner_id
                           WHEN 'CARD' THEN t.card_id = p_owner_id
                           WHEN 'MANAGED_USER' THEN t.subject_type = 'USER' AND t.subject_id = p_owner_id
                           ELSE false END
$$;

-- For the console (issue 29): the holds of the named authorizations as the two entries of their
-- posting (AVAILABLE -held, PENDING +held).
CREATE OR REPLACE FUNCTION ledger_hold_entries(p_partner_id text, p_trans_ids text[])
RETURNS TABLE (posting_id text, reference text, created_at timestamptz, hold_seq bigint, account_id text, owner_type text,
               owner_id text, currency text, bucket text, amount numeric)
LANGUAGE sql STABLE AS $$
  SELECT t.posting_id, t.trans_id, t.created_at, t.hold_seq, a.account_id, a.owner_type, a.owner_id, a.currency, e.bucket, e.amount
    FROM card_transactions t
    JOIN ledger_accounts a ON a.account_id = t.funds_account_id
   CROSS JOIN LATERAL (VALUES (1, 'AVAILABLE', -t.hold_funds), (2, 'PENDING', t.hold_funds)) AS e(k, bucket, amount)
   WHERE t.trans_id = ANY (p_trans_ids) AND t.partner_id = p_partner_id AND t.hold_seq IS NOT NULL
   ORDER BY t.hold_seq, e.k
$$;
