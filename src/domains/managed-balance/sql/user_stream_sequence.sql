-- Sequences up to p_limit committed rows in stream_seq order; answers how many, and how many are
-- still unsequenced after it (-1 sequenced when another sequencer holds the lock).
CREATE OR REPLACE FUNCTION user_stream_sequence(p_limit integer) RETURNS TABLE (sequenced integer, waiting integer) LANGUAGE plpgsql AS $$
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
