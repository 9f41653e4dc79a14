-- Issue 34: the replay store (D5, D7) without WAL. Its keys matter for the 5-second signing window
-- only, so the table is UNLOGGED: no WAL record and no commit flush per batch. PostgreSQL empties an
-- unlogged table when it recovers from a crash (and a promoted standby starts with it empty), so the
-- store records when it started being complete: replay_store_epoch, itself unlogged, is emptied by the
-- same recovery. A process that finds no epoch row starts a new epoch at its clock, and every
-- instance refuses a signed timestamp not later than that epoch plus the window (a key accepted
-- before the crash can carry no later timestamp). Argued in docs/security.md.
ALTER TABLE replay_nonces SET UNLOGGED;
-- One index instead of two: the primary key leads with ts, which also serves the sweep (ts < $1).
DROP INDEX replay_nonces_ts;
ALTER TABLE replay_nonces DROP CONSTRAINT replay_nonces_pkey;
ALTER TABLE replay_nonces ADD PRIMARY KEY (ts, api_key, nonce);

CREATE UNLOGGED TABLE replay_store_epoch (
  id       integer PRIMARY KEY CHECK (id = 1),
  -- Epoch milliseconds from which the store holds every accepted key; 0: since the store was created.
  since_ms bigint  NOT NULL
);
INSERT INTO replay_store_epoch (id, since_ms) VALUES (1, 0);
