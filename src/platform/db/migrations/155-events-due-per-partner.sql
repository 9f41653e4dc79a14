-- Webhook delivery takes due events partner by partner (src/domains/events/store.ts leaseDueWithAttempts):
-- one partner's backlog behind a slow or failing endpoint no longer holds every other partner's events
-- back. The due-events index is keyed by partner first, so each partner's oldest due events are one
-- index probe; it replaces the index by due time alone (still one index on the event's insert).
DROP INDEX IF EXISTS events_due;
CREATE INDEX events_due ON events (partner_id, next_attempt_at, event_id) WHERE status = 'PENDING';
