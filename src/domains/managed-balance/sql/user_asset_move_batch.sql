-- user_asset_move_batch: several credits or debits in one call and one commit (issue 34), each decided
-- by user_asset_move exactly as when called alone (the rules live there only). Called by the movement
-- lane (src/domains/managed-balance/movements-store.ts) with the movements that arrived while its
-- previous batch was in the database: position k of every array is movement k; p_blockers is the
-- batch's (a lane carries one direction, so one list of blockers).
--
-- Lock order: user_asset_move locks the user's contra stripe (user_funds_stripe), then the user's account
-- in the asset; movements of other partners or assets share no lock. The batch decides its movements
-- in the order (partner, asset, stripe, user), so batches in flight together (of this instance or of
-- others) and single calls take their locks in one order and never wait on each other in a cycle. A
-- movement whose user does not exist yet is ordered by the id its call would give it.
--
-- Lock waits are bounded (lock_timeout 100 ms): a batch that would wait longer on a lock held elsewhere
-- (a long transaction of another path) fails, and the lane decides its items again alone, outside the
-- lane, so the lane never waits longer than that for one owner. The lane sends a batch of one here too.
--
-- Any error rolls the whole batch back (one statement); the lane then decides each movement alone.
-- Returns one row per movement: (item, outcome, body), item its position in the arrays (1-based). A
-- concurrent copy of an externalTranId raises CS409 as user_asset_move does.
CREATE OR REPLACE FUNCTION user_asset_move_batch(
  p_partner_id text[], p_external_user_id text[], p_new_user_id text[], p_external_tran_id text[], p_type text[], p_direction text[],
  p_asset text[], p_amount numeric[], p_remark text[], p_blockers text[], p_now timestamptz[],
  p_movement_id text[], p_posting_id text[], p_new_account_id text[], p_new_contra_id text[]
) RETURNS TABLE (item integer, outcome text, body text) LANGUAGE plpgsql
SET lock_timeout = '100ms' AS $$
DECLARE
  k integer;
  r record;
BEGIN
  FOR k IN
    -- One index probe per item (OFFSET 0 keeps it from being flattened into a join, whose cached generic
    -- plan scanned every managed user while there were few).
    SELECT u.k FROM unnest(p_partner_id, p_external_user_id, p_new_user_id, p_asset) WITH ORDINALITY AS u(partner_id, external_user_id, new_user_id, asset, k)
      LEFT JOIN LATERAL (SELECT x.user_id FROM managed_users x
                          WHERE x.partner_id = u.partner_id AND x.external_user_id = u.external_user_id OFFSET 0) m ON true
     ORDER BY u.partner_id, u.asset, user_funds_stripe(COALESCE(m.user_id, u.new_user_id)), COALESCE(m.user_id, u.new_user_id), u.k
  LOOP
    SELECT * INTO r FROM user_asset_move(p_partner_id[k], p_external_user_id[k], p_new_user_id[k], p_external_tran_id[k], p_type[k],
      p_direction[k], p_asset[k], p_amount[k], p_remark[k], p_blockers, p_now[k], p_movement_id[k], p_posting_id[k],
      p_new_account_id[k], p_new_contra_id[k]);
    item := k; outcome := r.outcome; body := r.body;
    RETURN NEXT;
  END LOOP;
END $$;
