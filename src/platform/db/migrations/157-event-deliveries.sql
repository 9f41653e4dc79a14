-- Issue 34: an event's delivery state moves out of the event into a narrow row of its own.
--
-- An event (001) is written once and never changes: its id, partner, type, business id, sequence,
-- payload and creation time. Its delivery state (010) changes at least twice per attempt: the lease
-- and the settlement. In one row, each of those changes copied the whole event (about 1 KB with the
-- CARD_TRANSACTION payload) and, since the due time is indexed, added an entry to each of the event's
-- five indexes. Here the same changes rewrite a row of about 100 bytes with two indexes, and the
-- event row is never updated again. Each event has exactly one delivery row, written with it
-- (events/sql/event_record.sql). Columns, meaning and defaults are those of 010, but for the lease:
-- 010 moved next_attempt_at to the lease's expiry, a change of an indexed column, so every lease
-- wrote a new entry into each index and left a dead one in the due index. Here a lease sets
-- lease_until, which no index holds, so it can be a HOT update (fillfactor leaves each page room for
-- it): an event is due when next_attempt_at has come and no lease runs (lease_until, if any, has
-- passed); what 010 read as next_attempt_at is GREATEST(next_attempt_at, lease_until).
CREATE TABLE event_deliveries (
  event_id            text PRIMARY KEY REFERENCES events (event_id),
  -- The event's partner (never changes): the due index is keyed by it (155).
  partner_id          text         NOT NULL,
  status              event_status NOT NULL DEFAULT 'PENDING',
  attempts            integer      NOT NULL DEFAULT 0,
  delivery_attempts   integer      NOT NULL DEFAULT 0,
  delivery_started_at timestamptz,
  next_attempt_at     timestamptz,
  lease_token         text,
  -- The lease's expiry while an attempt holds the event (src/domains/events/store.ts).
  lease_until         timestamptz,
  last_attempt_at     timestamptz,
  last_http_status    integer,
  last_error          text,
  delivered_at        timestamptz,
  failed_at           timestamptz,
  CONSTRAINT event_deliveries_pending_has_due_time CHECK (status <> 'PENDING' OR next_attempt_at IS NOT NULL)
) WITH (fillfactor = 70);

-- A leased event of 010 (a token, PENDING) is due when its lease ends: lease_until is that expiry.
INSERT INTO event_deliveries (event_id, partner_id, status, attempts, delivery_attempts, delivery_started_at, next_attempt_at,
                              lease_token, lease_until, last_attempt_at, last_http_status, last_error, delivered_at, failed_at)
SELECT event_id, partner_id, status, attempts, delivery_attempts, delivery_started_at, next_attempt_at,
       lease_token, CASE WHEN status = 'PENDING' AND lease_token IS NOT NULL THEN next_attempt_at END,
       last_attempt_at, last_http_status, last_error, delivered_at, failed_at
  FROM events;

-- The delivery worker's scan (155), on the narrow rows.
CREATE INDEX event_deliveries_due ON event_deliveries (partner_id, next_attempt_at, event_id) WHERE status = 'PENDING';

-- A queue's dead rows: each settlement moves the event's entry in event_deliveries_due,
-- and the old entries stay until vacuum, at the head of each partner's range, where every claim starts
-- (and steps over them: 3.1 ms per claim after 45,000 events in the bench, 0.26 ms after a VACUUM of
-- 56 ms). With the default scale factor (20 % of the table) that head grows with the table's history;
-- here autovacuum takes the table after a few thousand dead rows, at full speed (narrow rows: cheap).
ALTER TABLE event_deliveries SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 5000,
  autovacuum_vacuum_cost_delay = 0, autovacuum_analyze_scale_factor = 0.05);

-- Attempts belong to a delivery.
ALTER TABLE event_attempts DROP CONSTRAINT event_attempts_event_id_fkey,
  ADD CONSTRAINT event_attempts_event_id_fkey FOREIGN KEY (event_id) REFERENCES event_deliveries (event_id);

-- events_due and events_pending_has_due_time go with the columns.
ALTER TABLE events
  DROP COLUMN status, DROP COLUMN attempts, DROP COLUMN delivery_attempts, DROP COLUMN delivery_started_at,
  DROP COLUMN next_attempt_at, DROP COLUMN lease_token, DROP COLUMN last_attempt_at, DROP COLUMN last_http_status,
  DROP COLUMN last_error, DROP COLUMN delivered_at, DROP COLUMN failed_at;
