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

-- The sequencer, user_stream_sequence: src/domains/managed-balance/sql/user_stream_sequence.sql.
