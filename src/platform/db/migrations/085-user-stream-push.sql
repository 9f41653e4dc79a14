-- The push order of the managed-balance stream (D39; issue 11). `stream_seq` is drawn when a row is
-- inserted, so a transaction that commits late can leave a smaller stream_seq behind rows already
-- readable: a reader resuming "after the last sequence seen" would skip it. The sequencer gives
-- each committed row its `push_seq` (uncommitted rows are invisible to it, so a late commit simply
-- gets a later push_seq), one sequencer at a time (advisory lock held until its commit), so push_seq
-- only grows in the order rows become readable and a reader resuming after N never misses a row.
-- Every instance pushes and resumes by push_seq.
ALTER TABLE user_stream ADD COLUMN push_seq bigint UNIQUE;
CREATE INDEX user_stream_unsequenced ON user_stream (stream_seq) WHERE push_seq IS NULL;
CREATE INDEX user_stream_partner_push ON user_stream (partner_id, push_seq) WHERE push_seq IS NOT NULL;

-- The highest push_seq removed by retention: a resume from before it cannot be served.
CREATE TABLE user_stream_horizon (
  id          integer PRIMARY KEY CHECK (id = 1),
  pruned_through bigint NOT NULL
);
INSERT INTO user_stream_horizon (id, pruned_through) VALUES (1, 0);

-- Sequences up to p_limit committed rows in stream_seq order; answers how many, and how many are
-- still unsequenced after it (-1 sequenced when another sequencer holds the lock).
CREATE FUNCTION user_stream_sequence(p_limit integer) RETURNS TABLE (sequenced integer, waiting integer) LANGUAGE plpgsql AS $$
DECLARE
  v_base bigint;
  v_done integer;
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtextextended('user-stream-sequencer', 0)) THEN
    RETURN QUERY SELECT -1, 0;
    RETURN;
  END IF;
  -- A fresh snapshot after the lock: the previous sequencer's push_seq values are visible.
  SELECT COALESCE(max(push_seq), 0) INTO v_base FROM user_stream;
  UPDATE user_stream s SET push_seq = v_base + r.rn
    FROM (SELECT stream_seq, row_number() OVER (ORDER BY stream_seq) AS rn
            FROM user_stream WHERE push_seq IS NULL ORDER BY stream_seq LIMIT p_limit) r
   WHERE s.stream_seq = r.stream_seq;
  GET DIAGNOSTICS v_done = ROW_COUNT;
  IF v_done > 0 THEN
    PERFORM pg_notify('user_stream_ready', '');
  END IF;
  RETURN QUERY SELECT v_done, (SELECT count(*)::integer FROM user_stream WHERE push_seq IS NULL);
END $$;
