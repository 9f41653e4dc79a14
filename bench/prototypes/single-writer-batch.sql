-- A measurement prototype for issue 34, not used by the service (bench/single-writer.ts loads it into a
-- copy of the authorization bench's world; docs/benchmarks.md "Issue 34: what a single writer per
-- partition would write"). It writes what p_b approvals decided elsewhere (in one writer's memory:
-- cards, balances and usage held by the process that owns their partition) must leave in PostgreSQL,
-- in one call: each approval's transaction record with its hold (the same columns and index entries as
-- card_authorize writes), one balance update per funds account of the batch, one usage upsert per
-- subject of the batch (card and employee), and each approval's CARD_TRANSACTION event with its
-- per-card sequence and a payload of the usual size. No check is made: the writer decided. The ledger
-- audit's invariant (balances = entries + holds) holds after it (bench/single-writer.ts checks it).
-- p_r is unused but by the posting mark (it varies the call as pgbench's variables do).
CREATE SEQUENCE IF NOT EXISTS proto_batches;
CREATE TABLE IF NOT EXISTS proto_cards AS
  SELECT row_number() OVER (ORDER BY c.card_id)::int AS i, c.card_id, c.partner_id, c.organization_id, c.subject_type, c.subject_id, a.account_id
    FROM cards c JOIN ledger_accounts a ON a.partner_id = c.partner_id AND a.owner_type = 'ORGANIZATION_POOL'
                                     AND a.owner_id = c.organization_id AND a.currency = 'USD';

-- Cards picked at random among the world's, 1.00 USD each.
CREATE OR REPLACE FUNCTION proto_write_batch(p_b int, p_r bigint) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  v_keys text[];
  v_now timestamptz := now();
  v_n int;
  v_batch bigint := nextval('proto_batches');
  v_cards int := (SELECT count(*) FROM proto_cards);
  v_tid text[]; v_card text[]; v_partner text[]; v_org text[]; v_st text[]; v_sid text[]; v_acc text[]; v_amt numeric[]; v_seq bigint[];
BEGIN
  SELECT array_agg('pw' || v_batch || '-' || x.g ORDER BY x.g), array_agg(c.card_id ORDER BY x.g), array_agg(c.partner_id ORDER BY x.g),
         array_agg(c.organization_id ORDER BY x.g), array_agg(c.subject_type ORDER BY x.g), array_agg(c.subject_id ORDER BY x.g),
         array_agg(c.account_id ORDER BY x.g), array_agg(1.00::numeric ORDER BY x.g), array_agg(nextval('ledger_entries_entry_id_seq') ORDER BY x.g)
    INTO v_tid, v_card, v_partner, v_org, v_st, v_sid, v_acc, v_amt, v_seq
    FROM (SELECT g, 1 + floor(random() * v_cards)::int AS ci FROM generate_series(1, p_b) g) x JOIN proto_cards c ON c.i = x.ci;
  SELECT velocity_period_keys(partner_id, v_now) INTO v_keys FROM proto_cards LIMIT 1;
  PERFORM set_config('cardsvc.ledger_posting', 'proto:' || p_r, true);
  WITH s AS (SELECT account_id, sum(amt) AS amt FROM (SELECT * FROM unnest(v_tid, v_card, v_partner, v_org, v_st, v_sid, v_acc, v_amt, v_seq) WITH ORDINALITY AS t(trans_id, card_id, partner_id, organization_id, subject_type, subject_id, account_id, amt, seq, k)) d GROUP BY account_id ORDER BY account_id),
       u AS (UPDATE ledger_accounts a SET available = a.available - s.amt, pending = a.pending + s.amt
               FROM s WHERE a.account_id = s.account_id RETURNING a.account_id, a.available, a.pending),
       r AS (SELECT d.*, u.available + sum(d.amt) OVER w - d.amt AS avail_after, u.pending - sum(d.amt) OVER w + d.amt AS pend_after
               FROM (SELECT * FROM unnest(v_tid, v_card, v_partner, v_org, v_st, v_sid, v_acc, v_amt, v_seq) WITH ORDINALITY AS t(trans_id, card_id, partner_id, organization_id, subject_type, subject_id, account_id, amt, seq, k)) d JOIN u USING (account_id) WINDOW w AS (PARTITION BY d.account_id ORDER BY d.k DESC))
  INSERT INTO card_transactions (trans_id, partner_id, card_id, organization_id, subject_type, subject_id, message_type, auth_type,
      debit_credit_indicator, source, network_transaction_id, amount, currency, billing_amount, billing_currency, merchant_name, mcc,
      merchant_country, channel, status, hold_amount, funds_account_id, outstanding_transaction_id,
      posting_id, expiry_due_at, transaction_time, created_at, updated_at, hold_seq, hold_funds, hold_available_after, hold_pending_after)
    SELECT r.trans_id, r.partner_id, r.card_id, r.organization_id, r.subject_type, r.subject_id, 'AUTHORIZATION', 'EXPEND', 'D', 'SANDBOX',
           'pn' || r.trans_id, r.amt, 'USD', r.amt, 'USD', 'Bench shop', '5411', 'SG', 'POS', 'PENDING', r.amt, r.account_id, 'po' || r.trans_id,
           'pp' || r.trans_id, v_now + interval '30 days', v_now, v_now, v_now, r.seq, r.amt, r.avail_after, r.pend_after
      FROM r;
  PERFORM set_config('cardsvc.ledger_posting', '', true);
  INSERT INTO velocity_counters AS u (partner_id, subject_type, subject_id, control, currency, as_of,
        daily_key, daily_amount, daily_count, monthly_key, monthly_amount, monthly_count,
        quarterly_key, quarterly_amount, quarterly_count, yearly_key, yearly_amount, yearly_count)
    SELECT partner_id, kind, id, 'PURCHASE', 'USD', v_now, v_keys[1], amt, n, v_keys[2], amt, n, v_keys[3], amt, n, v_keys[4], amt, n
      FROM (SELECT d.partner_id, s.kind, s.id, sum(d.amt) AS amt, count(*)::int AS n
              FROM (SELECT * FROM unnest(v_tid, v_card, v_partner, v_org, v_st, v_sid, v_acc, v_amt, v_seq) WITH ORDINALITY AS t(trans_id, card_id, partner_id, organization_id, subject_type, subject_id, account_id, amt, seq, k)) d, LATERAL (VALUES ('CARD', d.card_id), ('CUSTOMER', d.subject_id)) s(kind, id)
             GROUP BY 1, 2, 3 ORDER BY 2, 3) x
    ON CONFLICT (partner_id, subject_type, subject_id, control, currency) DO UPDATE SET
      daily_amount = CASE WHEN u.daily_key = excluded.daily_key THEN u.daily_amount + excluded.daily_amount ELSE excluded.daily_amount END,
      daily_count = CASE WHEN u.daily_key = excluded.daily_key THEN u.daily_count + excluded.daily_count ELSE excluded.daily_count END,
      daily_key = excluded.daily_key,
      monthly_amount = CASE WHEN u.monthly_key = excluded.monthly_key THEN u.monthly_amount + excluded.monthly_amount ELSE excluded.monthly_amount END,
      monthly_count = CASE WHEN u.monthly_key = excluded.monthly_key THEN u.monthly_count + excluded.monthly_count ELSE excluded.monthly_count END,
      monthly_key = excluded.monthly_key,
      quarterly_amount = CASE WHEN u.quarterly_key = excluded.quarterly_key THEN u.quarterly_amount + excluded.quarterly_amount ELSE excluded.quarterly_amount END,
      quarterly_count = CASE WHEN u.quarterly_key = excluded.quarterly_key THEN u.quarterly_count + excluded.quarterly_count ELSE excluded.quarterly_count END,
      quarterly_key = excluded.quarterly_key,
      yearly_amount = CASE WHEN u.yearly_key = excluded.yearly_key THEN u.yearly_amount + excluded.yearly_amount ELSE excluded.yearly_amount END,
      yearly_count = CASE WHEN u.yearly_key = excluded.yearly_key THEN u.yearly_count + excluded.yearly_count ELSE excluded.yearly_count END,
      yearly_key = excluded.yearly_key, as_of = GREATEST(u.as_of, excluded.as_of);
  WITH s AS (
    INSERT INTO event_sequences AS q (partner_id, business_id, last_sequence)
      SELECT partner_id, card_id, count(*) FROM (SELECT * FROM unnest(v_tid, v_card, v_partner, v_org, v_st, v_sid, v_acc, v_amt, v_seq) WITH ORDINALITY AS t(trans_id, card_id, partner_id, organization_id, subject_type, subject_id, account_id, amt, seq, k)) d GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (partner_id, business_id) DO UPDATE SET last_sequence = q.last_sequence + excluded.last_sequence
      RETURNING q.partner_id, q.business_id, q.last_sequence),
       c AS (SELECT card_id, count(*) AS n FROM (SELECT * FROM unnest(v_tid, v_card, v_partner, v_org, v_st, v_sid, v_acc, v_amt, v_seq) WITH ORDINALITY AS t(trans_id, card_id, partner_id, organization_id, subject_type, subject_id, account_id, amt, seq, k)) d GROUP BY 1)
  INSERT INTO events (event_id, partner_id, event_type, business_id, sequence, payload, create_time, status, next_attempt_at)
    SELECT 'pe' || d.trans_id, d.partner_id, 'CARD_TRANSACTION', d.card_id,
           s.last_sequence - c.n + row_number() OVER (PARTITION BY d.card_id ORDER BY d.k),
           repeat('x', 880) || d.trans_id, v_now, 'PENDING', v_now
      FROM (SELECT * FROM unnest(v_tid, v_card, v_partner, v_org, v_st, v_sid, v_acc, v_amt, v_seq) WITH ORDINALITY AS t(trans_id, card_id, partner_id, organization_id, subject_type, subject_id, account_id, amt, seq, k)) d JOIN s ON s.partner_id = d.partner_id AND s.business_id = d.card_id JOIN c ON c.card_id = d.card_id;
  GET DIAGNOSTICS v_n = ROW_COUNT;
  RETURN v_n;
END $$;
