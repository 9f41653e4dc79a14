-- The contra account of a user's credits and debits: money outside the service (the partner's treasury),
-- striped over 16 accounts per partner and asset by the user's id, so concurrent movements of different
-- users seldom queue on one row. Its owner name; user_asset_move_batch orders a batch by it.
CREATE OR REPLACE FUNCTION user_funds_stripe(p_user_id text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT 'USER_FUNDS_' || lpad(((hashtext(p_user_id) & 2147483647) % 16)::text, 2, '0')
$$;

-- user_asset_move: credit and debit of a managed user's asset (4.3, 2.3, 2.4; D33, D35) in one
-- database call, the hot path of /user-asset/v1/credit and /debit (src/domains/managed-balance/movements.ts).
--
-- One credit (p_direction CREDIT) or debit (DEBIT) of p_amount of p_asset for the partner's user.
-- Checks in order: asset ACTIVE and the amount within its scale, user (created on first use),
-- capability (p_blockers, first held code wins), externalTranId unused, funds (debit: free >= amount).
-- Then: movement row (its unique index queues concurrent copies), posting and two entries (the user's
-- AVAILABLE against a striped EXTERNAL contra account, so concurrent credits of different users do
-- not queue on one row). Returns (outcome, body): ('OK', movement json) or (refusal, detail):
-- ASSET_INVALID, AMOUNT_SCALE, CAPABILITY_FROZEN, DUPLICATE, INSUFFICIENT_BALANCE.
-- Every refusal is decided before the first write (issue 26): the user and the account are only
-- read (and the account locked) until the request is known to be booked; they are created on the
-- way to the movement. The one refusal left after a write is a concurrent copy of the
-- externalTranId (another user or asset) taking the index entry first: that raises SQLSTATE CS409,
-- which undoes the whole call, and the caller answers EXTERNAL_TRAN_ID_DUPLICATE. The posting is
-- written by ledger_post. Called by src/domains/managed-balance/movements-store.ts.
-- Plans (issue 34): every statement of the call, ledger_post's included, runs its generic plan
-- (plan_cache_mode, set for the call). Under the default mode several statements whose parameters
-- are arrays (ledger_post's entries and balance-stream inserts) found their custom plan cheaper and were
-- planned again on every call: a quarter of the call's machine CPU. The generic plans are the same
-- index scans (docs/benchmarks.md, issue 34, credits step 1).
CREATE OR REPLACE FUNCTION user_asset_move(
  p_partner_id text, p_external_user_id text, p_new_user_id text, p_external_tran_id text, p_type text, p_direction text,
  p_asset text, p_amount numeric, p_remark text, p_blockers text[], p_now timestamptz,
  p_movement_id text, p_posting_id text, p_new_account_id text, p_new_contra_id text
) RETURNS TABLE (outcome text, body text) LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_asset assets;
  v_user_id text;
  v_code text;
  v_account ledger_accounts;
  v_has_account boolean := false;
  v_created boolean := false;
  v_contra_owner text;
  v_contra_id text;
  v_signed numeric := CASE WHEN p_direction = 'CREDIT' THEN p_amount ELSE -p_amount END;
  v_after numeric;
  v_check numeric;
  v_m asset_movements;
BEGIN
  IF p_amount <= 0 OR p_direction NOT IN ('CREDIT', 'DEBIT') THEN
    RAISE EXCEPTION 'user_asset_move: amount % and direction % are checked by the caller', p_amount, p_direction;
  END IF;
  SELECT * INTO v_asset FROM assets WHERE asset = p_asset;
  IF NOT FOUND OR v_asset.status <> 'ACTIVE' THEN
    RETURN QUERY SELECT 'ASSET_INVALID'::text, p_asset;
    RETURN;
  END IF;
  IF min_scale(p_amount) > v_asset.scale THEN
    RETURN QUERY SELECT 'AMOUNT_SCALE'::text, v_asset.scale::text;
    RETURN;
  END IF;

  -- Read only: the user, its restrictions and its account in the asset, which is locked so that
  -- copies of one request for one user serialize here and the later ones find the first one's movement.
  SELECT user_id INTO v_user_id FROM managed_users WHERE partner_id = p_partner_id AND external_user_id = p_external_user_id;
  IF v_user_id IS NOT NULL THEN
    -- Lock order (issue 34): the user's contra stripe, then the user's account, as user_asset_move_batch
    -- orders a batch; so batches and single calls never wait on each other in a cycle. The stripe is
    -- only locked here when it exists (a refusal writes nothing); its first use creates it below. A
    -- new user's stripe is locked once the user is created or found, before its account.
    v_contra_owner := user_funds_stripe(v_user_id);
    SELECT account_id INTO v_contra_id FROM ledger_accounts
     WHERE partner_id = p_partner_id AND owner_type = 'EXTERNAL' AND owner_id = v_contra_owner AND currency = p_asset FOR UPDATE;
    SELECT b.code INTO v_code FROM unnest(p_blockers) WITH ORDINALITY AS b(code, k)
     WHERE EXISTS (SELECT 1 FROM managed_user_restrictions r WHERE r.user_id = v_user_id AND r.code = b.code)
     ORDER BY b.k LIMIT 1;
    IF v_code IS NOT NULL THEN
      RETURN QUERY SELECT 'CAPABILITY_FROZEN'::text, v_code;
      RETURN;
    END IF;
    SELECT * INTO v_account FROM ledger_accounts
     WHERE partner_id = p_partner_id AND owner_type = 'MANAGED_USER' AND owner_id = v_user_id AND currency = p_asset FOR UPDATE;
    v_has_account := FOUND;
  END IF;

  IF EXISTS (SELECT 1 FROM asset_movements WHERE partner_id = p_partner_id AND external_tran_id = p_external_tran_id) THEN
    RETURN QUERY SELECT 'DUPLICATE'::text, p_external_tran_id;
    RETURN;
  END IF;
  -- No account yet is a free balance of zero: every debit is refused.
  IF p_direction = 'DEBIT' AND (NOT v_has_account OR v_account.available < p_amount) THEN
    RETURN QUERY SELECT 'INSUFFICIENT_BALANCE'::text, CASE WHEN v_has_account THEN v_account.available::text ELSE '0' END;
    RETURN;
  END IF;

  -- The request is booked: the user and its account on first use (only a credit gets here without them).
  IF v_user_id IS NULL THEN
    INSERT INTO managed_users (user_id, partner_id, external_user_id, created_at) VALUES (p_new_user_id, p_partner_id, p_external_user_id, p_now)
      ON CONFLICT (partner_id, external_user_id) DO NOTHING
      RETURNING user_id INTO v_user_id;
    v_created := FOUND;
    IF NOT v_created THEN
      -- A concurrent first use created the user (nothing written here yet): its restrictions count.
      SELECT user_id INTO v_user_id FROM managed_users WHERE partner_id = p_partner_id AND external_user_id = p_external_user_id;
      SELECT b.code INTO v_code FROM unnest(p_blockers) WITH ORDINALITY AS b(code, k)
       WHERE EXISTS (SELECT 1 FROM managed_user_restrictions r WHERE r.user_id = v_user_id AND r.code = b.code)
       ORDER BY b.k LIMIT 1;
      IF v_code IS NOT NULL THEN
        RETURN QUERY SELECT 'CAPABILITY_FROZEN'::text, v_code;
        RETURN;
      END IF;
    END IF;
  END IF;
  -- A user created or found just now (this call's first use, or a concurrent one's): its stripe, locked
  -- before its account (the lock order).
  IF v_contra_owner IS NULL THEN
    v_contra_owner := user_funds_stripe(v_user_id);
    SELECT account_id INTO v_contra_id FROM ledger_accounts
     WHERE partner_id = p_partner_id AND owner_type = 'EXTERNAL' AND owner_id = v_contra_owner AND currency = p_asset FOR UPDATE;
  END IF;
  IF NOT v_has_account THEN
    INSERT INTO ledger_accounts (account_id, partner_id, organization_id, owner_type, owner_id, currency, allow_negative, created_at)
      VALUES (p_new_account_id, p_partner_id, NULL, 'MANAGED_USER', v_user_id, p_asset, false, p_now)
      ON CONFLICT (partner_id, owner_type, owner_id, currency) DO NOTHING;
    v_created := v_created OR FOUND;
    SELECT * INTO v_account FROM ledger_accounts
     WHERE partner_id = p_partner_id AND owner_type = 'MANAGED_USER' AND owner_id = v_user_id AND currency = p_asset FOR UPDATE;
  END IF;
  v_after := v_account.available + v_signed;

  -- A copy of this externalTranId (this user and asset, or another) holds the index entry: wait for it,
  -- then nothing is booked here (the posting comes after this insert).
  INSERT INTO asset_movements (movement_id, partner_id, user_id, external_tran_id, type, direction, asset, amount, remark, status,
                               posting_id, free_after, created_at)
    VALUES (p_movement_id, p_partner_id, v_user_id, p_external_tran_id, p_type, p_direction, p_asset, p_amount, p_remark, 'SUCCESS',
            p_posting_id, v_after, p_now)
    ON CONFLICT (partner_id, external_tran_id) WHERE external_tran_id IS NOT NULL DO NOTHING
    RETURNING * INTO v_m;
  IF NOT FOUND THEN
    IF v_created THEN
      -- This call created the user or the account: raising undoes them with the rest of the call.
      RAISE EXCEPTION USING ERRCODE = 'CS409', MESSAGE = 'user_asset_move: externalTranId taken by a concurrent request';
    END IF;
    RETURN QUERY SELECT 'DUPLICATE'::text, p_external_tran_id;
    RETURN;
  END IF;

  -- The contra stripe (user_funds_stripe), locked above; created here by its first use.
  IF v_contra_id IS NULL THEN
    INSERT INTO ledger_accounts (account_id, partner_id, organization_id, owner_type, owner_id, currency, allow_negative, created_at)
      VALUES (p_new_contra_id, p_partner_id, NULL, 'EXTERNAL', v_contra_owner, p_asset, true, p_now)
      ON CONFLICT (partner_id, owner_type, owner_id, currency) DO NOTHING;
    SELECT account_id INTO v_contra_id FROM ledger_accounts
     WHERE partner_id = p_partner_id AND owner_type = 'EXTERNAL' AND owner_id = v_contra_owner AND currency = p_asset;
  END IF;

  -- Account rows in account_id order, the ledger's one lock order.
  -- Pair assertion: the ledger applied exactly what was predicted to the user's account.
  SELECT l.available_after INTO v_check
    FROM ledger_post(p_posting_id, p_partner_id, p_type, false, p_movement_id, p_remark, p_now,
                     ARRAY[least(v_account.account_id, v_contra_id), greatest(v_account.account_id, v_contra_id)],
                     ARRAY[p_asset, p_asset], ARRAY['AVAILABLE', 'AVAILABLE'],
                     CASE WHEN v_account.account_id < v_contra_id THEN ARRAY[v_signed, -v_signed] ELSE ARRAY[-v_signed, v_signed] END) l
   WHERE l.account_id = v_account.account_id;
  IF v_check IS DISTINCT FROM v_after THEN
    RAISE EXCEPTION 'user_asset_move: free of % is % and not % after %', v_account.account_id, v_check, v_after, p_movement_id;
  END IF;

  RETURN QUERY SELECT 'OK'::text, asset_movement_json(v_m, p_external_user_id)::text;
END $$;
