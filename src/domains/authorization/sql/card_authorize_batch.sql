-- card_authorize_batch: several authorizations in one call and one commit (issue 34), each decided by
-- card_authorize exactly as when called alone (the rules live there only). Called by the authorization
-- lane (src/domains/authorization/lane.ts) with the authorizations that arrived while its previous batch
-- was in the database: position k of every array is authorization k; p_blockers is the batch's (every
-- authorization passes the same PAYMENT blockers).
--
-- Lock order: every lock card_authorize takes belongs to one funds owner (a corporate card's company:
-- its pool, its cards' own accounts, its employees' and cards' velocity locks and counters, its
-- cards' event sequences and its LOW_BALANCE setting; a consumer card's user: the user's asset
-- account, balance stream and card), and one network message is one card's. The authorizations are
-- decided in the order of their funds owner (then their position), so batches in flight together (of
-- this instance or of others) take their owners' locks in one order and never wait on each other in a
-- cycle: a batch waits, at most, for the one ahead of it on an owner. An unknown card takes no lock but
-- its message's, and goes first.
--
-- Lock waits are bounded (lock_timeout 100 ms): a batch that would wait longer on a lock held elsewhere
-- (a long transaction of another path) fails, and the lane decides its items again alone, outside the
-- lane, so the lane never waits longer than that for one owner. The lane sends a batch of one here too.
--
-- Any error rolls the whole batch back (one statement): the lane then decides each authorization alone,
-- so one failing authorization never fails the others.
-- Returns one row per authorization: (item, outcome, body, answer_partner, stand_in, deadline_ms), item
-- its position in the arrays (1-based).
CREATE OR REPLACE FUNCTION card_authorize_batch(
  p_partner_id text[], p_card_id text[], p_source text[], p_network_id text[], p_replay_guard boolean[],
  p_amount numeric[], p_currency text[], p_billing_amount numeric[], p_billing_currency text[],
  p_merchant_name text[], p_mcc text[], p_country text[], p_channel text[],
  p_now timestamptz[], p_transaction_time timestamptz[], p_blockers text[],
  p_trans_id text[], p_outstanding_id text[], p_posting_id text[], p_event_id text[], p_alert_event_id text[], p_expiry_due_at timestamptz[],
  p_decision_token text[], p_default_deadline_ms integer[], p_decision_grace_ms integer[]
) RETURNS TABLE (item integer, outcome text, body text, answer_partner text, stand_in text, deadline_ms integer) LANGUAGE plpgsql
SET lock_timeout = '100ms' AS $$
DECLARE
  k integer;
  r record;
BEGIN
  FOR k IN
    -- One primary-key probe per card (OFFSET 0 keeps it from being flattened into a join, whose cached
    -- generic plan scanned every card while there were few).
    SELECT u.k FROM unnest(p_card_id) WITH ORDINALITY AS u(card_id, k)
      LEFT JOIN LATERAL (SELECT x.subject_type, x.subject_id, x.organization_id FROM cards x WHERE x.card_id = u.card_id OFFSET 0) c ON true
     ORDER BY CASE WHEN c.subject_type = 'USER' THEN 'U:' || c.subject_id ELSE 'O:' || c.organization_id END NULLS FIRST, u.k
  LOOP
    SELECT * INTO r FROM card_authorize(
      p_partner_id => p_partner_id[k], p_card_id => p_card_id[k], p_source => p_source[k], p_network_id => p_network_id[k],
      p_replay_guard => p_replay_guard[k], p_amount => p_amount[k], p_currency => p_currency[k],
      p_billing_amount => p_billing_amount[k], p_billing_currency => p_billing_currency[k],
      p_merchant_name => p_merchant_name[k], p_mcc => p_mcc[k], p_country => p_country[k], p_channel => p_channel[k],
      p_now => p_now[k], p_transaction_time => p_transaction_time[k], p_blockers => p_blockers,
      p_trans_id => p_trans_id[k], p_outstanding_id => p_outstanding_id[k], p_posting_id => p_posting_id[k],
      p_event_id => p_event_id[k], p_alert_event_id => p_alert_event_id[k], p_expiry_due_at => p_expiry_due_at[k],
      p_decision_token => p_decision_token[k], p_default_deadline_ms => p_default_deadline_ms[k],
      p_decision_grace_ms => p_decision_grace_ms[k]);
    item := k; outcome := r.outcome; body := r.body; answer_partner := r.answer_partner;
    stand_in := r.stand_in; deadline_ms := r.deadline_ms;
    RETURN NEXT;
  END LOOP;
END $$;
