-- Webhook delivery state of the event outbox (D38, issue 5).
--
-- An event is PENDING until a delivery attempt gets a 2xx (DELIVERED) or the retry window of at
-- least 24 hours is used up (FAILED). A worker leases a due event by moving next_attempt_at past
-- the attempt's deadline and stamping lease_token, in a short transaction that uses
-- FOR UPDATE SKIP LOCKED; the HTTP call happens after that commit. If the worker dies, the lease
-- simply runs out (next_attempt_at is reached again) and any instance picks the event up: nothing
-- committed is ever lost, at the price of a possible duplicate (at-least-once, partners
-- deduplicate on eventId).
ALTER TABLE events ADD COLUMN status text NOT NULL DEFAULT 'PENDING';
ALTER TABLE events ADD CONSTRAINT events_status_check CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED'));
-- Attempts ever started for the event (shown to partners).
ALTER TABLE events ADD COLUMN attempts integer NOT NULL DEFAULT 0;
-- Attempts in the current delivery cycle (the backoff step); a resend starts a new cycle.
ALTER TABLE events ADD COLUMN delivery_attempts integer NOT NULL DEFAULT 0;
-- First attempt of the current delivery cycle: the retry window is measured from here. Set when
-- the cycle's first attempt is leased (so a createTime in the past does not shorten the window).
ALTER TABLE events ADD COLUMN delivery_started_at timestamptz;
-- When the event is next due (PENDING only); while leased it is the lease expiry.
ALTER TABLE events ADD COLUMN next_attempt_at timestamptz DEFAULT now();
ALTER TABLE events ADD COLUMN lease_token text;
ALTER TABLE events ADD COLUMN last_attempt_at timestamptz;
ALTER TABLE events ADD COLUMN last_http_status integer;
ALTER TABLE events ADD COLUMN last_error text;
ALTER TABLE events ADD COLUMN delivered_at timestamptz;
ALTER TABLE events ADD COLUMN failed_at timestamptz;
UPDATE events SET next_attempt_at = create_time;
ALTER TABLE events ADD CONSTRAINT events_pending_has_due_time CHECK (status <> 'PENDING' OR next_attempt_at IS NOT NULL);

-- The worker's scan: only pending rows, by due time.
CREATE INDEX events_due ON events (next_attempt_at) WHERE status = 'PENDING';
-- The partner's event log filtered by type (events_partner_time of 001 serves the rest).
CREATE INDEX events_partner_type_time ON events (partner_id, event_type, create_time DESC);

-- One row per delivery attempt: when, the outcome, the HTTP status, the latency and the error.
-- Written IN_FLIGHT when the lease is taken; an attempt whose worker died before finishing is
-- marked LEASE_EXPIRED when the event is leased again.
CREATE TABLE event_attempts (
  attempt_id  text PRIMARY KEY,
  event_id    text        NOT NULL REFERENCES events (event_id),
  attempt_no  integer     NOT NULL,
  started_at  timestamptz NOT NULL,
  finished_at timestamptz,
  outcome     text        NOT NULL CHECK (outcome IN ('IN_FLIGHT', 'SUCCESS', 'HTTP_ERROR', 'TIMEOUT',
                'NETWORK_ERROR', 'BLOCKED', 'NOT_CONFIGURED', 'LEASE_EXPIRED')),
  http_status integer,
  latency_ms  integer,
  error       text,
  UNIQUE (event_id, attempt_no)
);
