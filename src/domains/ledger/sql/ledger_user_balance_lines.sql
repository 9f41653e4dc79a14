-- ledger_user_balance_lines: the managed users' balance stream (D39), one BALANCE line per managed
-- user's account among p_account_ids, with its balances as they are now (after the movement), and the
-- stream's wake-up. Called by the ledger's two writers of balances: ledger_post (after a posting's
-- entries) and ledger_hold (after an approval's hold on a consumer card). Migration 080's shape.
--
-- Foreign tables (docs/contributing.md): user_stream, managed_users, assets.
CREATE OR REPLACE FUNCTION ledger_user_balance_lines(p_account_ids text[], p_kind text, p_reference text, p_created_at timestamptz)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO user_stream (partner_id, kind, external_user_id, payload, created_at)
  SELECT a.partner_id, 'BALANCE', u.external_user_id,
         json_build_object(
           'externalUserId', u.external_user_id,
           -- The amounts in their shortest exact form, as GET /user-asset/v1/balance writes them (72.8, not 72.80).
           'balance', json_build_object('asset', a.currency, 'network', s.network, 'logo', s.logo,
                                        'free', trim_scale(a.available), 'freeze', trim_scale(a.pending), 'total', trim_scale(a.total)),
           'postingKind', p_kind, 'reference', p_reference,
           'changeTime', to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text,
         p_created_at
    -- One primary-key probe per account (issue 34): the cached generic plan of `a.account_id = ANY
    -- (p_account_ids)` scanned the whole accounts table while it was small (0.34 ms of a credit's 0.97 ms
    -- with 1,000 users); OFFSET 0 keeps the lateral probe from being flattened into that plan again.
    FROM (SELECT DISTINCT unnest(p_account_ids) AS account_id) ids
    CROSS JOIN LATERAL (SELECT * FROM ledger_accounts x WHERE x.account_id = ids.account_id AND x.owner_type = 'MANAGED_USER' OFFSET 0) a
    JOIN managed_users u ON u.user_id = a.owner_id
    JOIN assets s ON s.asset = a.currency
   ORDER BY a.account_id;
  PERFORM pg_notify('user_stream', '');
END $$;
