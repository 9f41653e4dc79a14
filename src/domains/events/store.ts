import type { EventStatus } from '../../../sdk/contract/events.ts';
import type { Queryable } from '../../platform/db/db.ts';
import type { AttemptOutcome } from './webhook-http.ts';
import type { WebhookTarget } from '../partners/index.ts';
import { Where } from '../../platform/db/where.ts';

/** PENDING, DELIVERED or FAILED: a wire value, defined by the contract. */
export type { EventStatus };

/**
 * When a delivery is due (migration 157): still PENDING, its time has come, and no lease runs (a lease
 * sets lease_until, not next_attempt_at, so that it changes no indexed column). `d` is the table's
 * alias with its dot (or ''), `now` the placeholder of the instant.
 */
export function dueCondition(d: string, now: string): string {
  return `${d}status = 'PENDING' AND ${d}next_attempt_at <= ${now} AND (${d}lease_until IS NULL OR ${d}lease_until <= ${now})`;
}

/** The next attempt's time as the API shows it: while a lease runs, its expiry. */
const NEXT_ATTEMPT_AT = 'GREATEST(d.next_attempt_at, d.lease_until)';

/** A new event: the fields that never change (its sequence is the next of its partner and business id). */
export type EventRecord = Pick<LeasedEventRow, 'eventId' | 'partnerId' | 'eventType' | 'businessId' | 'payload' | 'createTime'>;

/**
 * Records the event with the next sequence of (partner, businessId) and its delivery state, due at
 * once (D38: the worker sees it when the caller's transaction commits), in one statement
 * (sql/event_record.sql). Answers the sequence, as text (BIGINT).
 */
export async function insertEvent(q: Queryable, e: EventRecord): Promise<string> {
  const [{ sequence }] = await q.query<{ sequence: string }>(
    `SELECT event_record($1, $2, $3, $4, $5, $6)::text AS sequence`,
    [e.eventId, e.partnerId, e.eventType, e.businessId, e.payload, e.createTime],
  );
  return sequence;
}

/** An event as the delivery worker holds it while its lease runs. */
export interface LeasedEvent extends LeasedEventRow, WebhookTarget {
  attemptId: string;
  startedAt: Date;
}


/** The event row as the lease statement returns it. */
export interface LeasedEventRow {
  eventId: string;
  partnerId: string;
  eventType: string;
  businessId: string;
  /** BIGINT as text (db.ts): printed into the body as-is. */
  sequence: string;
  /** Lossless JSON text of `data`. */
  payload: string;
  createTime: Date;
  /** Attempt number of this attempt, over the event's whole life. */
  attemptNo: number;
  /** Attempt number within the current delivery cycle (the backoff step). */
  deliveryAttempt: number;
  deliveryStartedAt: Date;
  leaseToken: string;
}

/** Events due for delivery now and the oldest due time (metrics, issue 27): what the next lease would take. */
export async function dueEventsBacklog(q: Queryable, now: Date): Promise<{ pending: number; oldestDueAt: Date | null }> {
  const [row] = await q.query<{ pending: number; oldestDueAt: Date | null }>(
    `SELECT count(*)::int AS pending, min(next_attempt_at) AS "oldestDueAt" FROM event_deliveries WHERE ${dueCondition('', '$1')}`,
    [now],
  );
  return row;
}

/** Events not delivered yet (due, waiting for a retry or for the partner's settings) and the creation time of the oldest. */
export async function undeliveredEvents(q: Queryable): Promise<{ pending: number; oldestCreatedAt: Date | null }> {
  const [row] = await q.query<{ pending: number; oldestCreatedAt: Date | null }>(
    `SELECT count(*)::int AS pending, min(e.create_time) AS "oldestCreatedAt"
       FROM event_deliveries d JOIN events e ON e.event_id = d.event_id WHERE d.status = 'PENDING'`,
  );
  return row;
}

/**
 * A delivery run's claim in one statement (issue 34), atomic on its own so it needs no BEGIN/COMMIT:
 * leases up to `limit` due events (FOR UPDATE SKIP LOCKED: another instance skips them instead of
 * waiting; lease_until set to the lease expiry, so no other worker sees them as due until it runs out), closes the attempts a dead worker left IN_FLIGHT for them
 * (LEASE_EXPIRED), and opens this attempt's IN_FLIGHT row for each. The data-modifying parts see
 * one snapshot, so the attempts closed are never the ones this statement opens.
 */
export async function leaseDueWithAttempts(
  q: Queryable,
  args: { now: Date; leaseUntil: Date; leaseToken: string; limit: number },
): Promise<(LeasedEventRow & { attemptId: string })[]> {
  return q.query<LeasedEventRow & { attemptId: string }>(
    // Partner by partner, in turns (review of 2026-11-27): the oldest due event of every partner with one,
    // then each one's second, and so on, oldest first within a turn. Taken oldest first overall, a
    // partner whose endpoint hangs (each attempt waits out the timeout) with a backlog of N events held
    // every other partner's events back for N / batch runs of the timeout each. The candidates are read
    // without locks (the partners with undelivered events by a loose scan of event_deliveries_due, then at most a
    // batch per partner, one probe each; twice a batch kept, so the lock step joins them by primary key),
    // then locked in turn order, skipping those another instance holds.
    `WITH RECURSIVE owners AS (
       -- The partners with undelivered events, one probe of event_deliveries_due each (a loose index scan),
       -- with each one's earliest due time: the index entry the probe found first. The partner's due events
       -- are read from there on, so the second read skips the dead entries that leases and settlements
       -- leave at the head of the partner's range until vacuum (the first read stepped over them already;
       -- one statement, one snapshot: no undelivered event of the partner is due earlier).
       (SELECT partner_id, next_attempt_at AS earliest FROM event_deliveries WHERE status = 'PENDING'
         ORDER BY partner_id, next_attempt_at, event_id LIMIT 1)
       UNION ALL
       SELECT n.partner_id, n.earliest FROM owners o CROSS JOIN LATERAL (
         SELECT d.partner_id, d.next_attempt_at AS earliest FROM event_deliveries d WHERE d.status = 'PENDING' AND d.partner_id > o.partner_id
          ORDER BY d.partner_id, d.next_attempt_at, d.event_id LIMIT 1) n
     ), candidates AS (
       SELECT c.event_id, c.next_attempt_at,
              row_number() OVER (PARTITION BY o.partner_id ORDER BY c.next_attempt_at, c.event_id) AS turn
         FROM owners o
         CROSS JOIN LATERAL (
           SELECT d.event_id, d.next_attempt_at FROM event_deliveries d
            WHERE d.partner_id = o.partner_id AND d.next_attempt_at >= o.earliest AND ${dueCondition('d.', '$1')}
            ORDER BY d.next_attempt_at, d.event_id
            LIMIT $4
         ) c
        ORDER BY turn, c.next_attempt_at, c.event_id
        LIMIT $4 * 2
     ), due AS (
       SELECT d.event_id FROM event_deliveries d JOIN candidates c ON c.event_id = d.event_id
        WHERE ${dueCondition('d.', '$1')}
        ORDER BY c.turn, c.next_attempt_at, c.event_id
        LIMIT $4
        FOR UPDATE OF d SKIP LOCKED
     ), leased AS (
       -- The narrow delivery row changes, and no indexed column of it (a HOT update); the event itself
       -- is only read (migration 157).
       UPDATE event_deliveries d
          SET lease_until = $2, lease_token = $3, attempts = d.attempts + 1,
              delivery_attempts = d.delivery_attempts + 1,
              delivery_started_at = COALESCE(d.delivery_started_at, $1)
         FROM due WHERE d.event_id = due.event_id
       RETURNING d.*
     ), abandoned AS (
       UPDATE event_attempts a SET outcome = 'LEASE_EXPIRED', finished_at = $1,
              error = 'the worker holding this attempt stopped before recording an answer; the lease ran out'
         FROM leased l WHERE a.event_id = l.event_id AND a.outcome = 'IN_FLIGHT'
     ), opened AS (
       INSERT INTO event_attempts (attempt_id, event_id, attempt_no, started_at, outcome)
       SELECT 'ea' || substr(md5(l.event_id || ':' || l.attempts || ':' || $3), 1, 18), l.event_id, l.attempts, $1, 'IN_FLIGHT'
         FROM leased l
       RETURNING attempt_id, event_id
     )
     SELECT l.event_id AS "eventId", l.partner_id AS "partnerId", e.event_type AS "eventType",
            e.business_id AS "businessId", e.sequence::text AS "sequence", e.payload, e.create_time AS "createTime",
            l.attempts AS "attemptNo", l.delivery_attempts AS "deliveryAttempt",
            l.delivery_started_at AS "deliveryStartedAt", l.lease_token AS "leaseToken", o.attempt_id AS "attemptId"
       FROM leased l JOIN opened o ON o.event_id = l.event_id JOIN events e ON e.event_id = l.event_id`,
    [args.now, args.leaseUntil, args.leaseToken, args.limit],
  );
}

/** Leases one PENDING event now, whatever its due time (a test send right after its insert). */
export async function leaseEventNow(
  q: Queryable,
  args: { eventId: string; now: Date; leaseUntil: Date; leaseToken: string },
): Promise<LeasedEventRow[]> {
  return q.query<LeasedEventRow>(
    `UPDATE event_deliveries d
        SET lease_until = $3, lease_token = $4, attempts = d.attempts + 1,
            delivery_attempts = d.delivery_attempts + 1, delivery_started_at = COALESCE(d.delivery_started_at, $2)
       FROM events e
      WHERE d.event_id = $1 AND d.status = 'PENDING' AND e.event_id = d.event_id
     RETURNING e.event_id AS "eventId", e.partner_id AS "partnerId", e.event_type AS "eventType",
            e.business_id AS "businessId", e.sequence::text AS "sequence", e.payload, e.create_time AS "createTime",
            d.attempts AS "attemptNo", d.delivery_attempts AS "deliveryAttempt",
            d.delivery_started_at AS "deliveryStartedAt", d.lease_token AS "leaseToken"`,
    [args.eventId, args.now, args.leaseUntil, args.leaseToken],
  );
}

/** Attempts left IN_FLIGHT by a worker that never finished (its lease ran out). */
export async function markAbandonedAttempts(q: Queryable, eventIds: string[], now: Date): Promise<void> {
  if (eventIds.length === 0) return;
  await q.query(
    `UPDATE event_attempts SET outcome = 'LEASE_EXPIRED', finished_at = $2,
            error = 'the worker holding this attempt stopped before recording an answer; the lease ran out'
      WHERE event_id = ANY($1::text[]) AND outcome = 'IN_FLIGHT'`,
    [eventIds, now],
  );
}

/** Opens an IN_FLIGHT attempt for each leased event, in one statement. */
export async function insertAttempts(q: Queryable, startedAt: Date, attempts: { attemptId: string; eventId: string; attemptNo: number }[]): Promise<void> {
  if (attempts.length === 0) return;
  await q.query(
    `INSERT INTO event_attempts (attempt_id, event_id, attempt_no, started_at, outcome)
     SELECT a.attempt_id, a.event_id, a.attempt_no, $4, 'IN_FLIGHT'
       FROM unnest($1::text[], $2::text[], $3::int[]) AS a(attempt_id, event_id, attempt_no)`,
    [attempts.map((a) => a.attemptId), attempts.map((a) => a.eventId), attempts.map((a) => a.attemptNo), startedAt],
  );
}

export interface AttemptResult {
  outcome: AttemptOutcome;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
  finishedAt: Date;
}

export type NextState =
  | { status: 'DELIVERED' }
  | { status: 'PENDING'; nextAttemptAt: Date }
  | { status: 'FAILED' };

export interface AttemptSettlement {
  eventId: string;
  leaseToken: string;
  attemptId: string;
  result: AttemptResult;
  next: NextState;
}

/**
 * Records the answers of attempts in one statement: every attempt row gets its answer (a late
 * answer is kept in the log too), but an event takes its outcome only while this worker still
 * holds the lease: a resend (or an expired lease taken by another worker) clears or replaces the
 * token, and then the stale answer must not overwrite the newer schedule. Returns the ids of the
 * events settled; the others' leases were lost.
 */
export async function settleAttempts(q: Queryable, settlements: AttemptSettlement[]): Promise<Set<string>> {
  if (settlements.length === 0) return new Set();
  const rows = await q.query<{ eventId: string }>(
    `WITH s AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[], $7::text[], $8::timestamptz[],
                            $9::text[], $10::timestamptz[])
         AS s(event_id, lease_token, attempt_id, outcome, http_status, latency_ms, error, finished_at, status, next_attempt_at)
     ), finished AS (
       UPDATE event_attempts a SET outcome = s.outcome, http_status = s.http_status, latency_ms = s.latency_ms, error = s.error,
              finished_at = s.finished_at
         FROM s WHERE a.attempt_id = s.attempt_id
     )
     UPDATE event_deliveries d SET status = s.status, lease_token = NULL, lease_until = NULL, last_attempt_at = s.finished_at, last_http_status = s.http_status,
            last_error = s.error, next_attempt_at = s.next_attempt_at,
            delivered_at = CASE WHEN s.status = 'DELIVERED' THEN s.finished_at ELSE d.delivered_at END,
            failed_at = CASE WHEN s.status = 'FAILED' THEN s.finished_at ELSE NULL END
       FROM s WHERE d.event_id = s.event_id AND d.lease_token = s.lease_token
     RETURNING d.event_id AS "eventId"`,
    [
      settlements.map((s) => s.eventId), settlements.map((s) => s.leaseToken), settlements.map((s) => s.attemptId),
      settlements.map((s) => s.result.outcome), settlements.map((s) => s.result.httpStatus), settlements.map((s) => s.result.latencyMs),
      settlements.map((s) => s.result.error), settlements.map((s) => s.result.finishedAt.toISOString()),
      settlements.map((s) => s.next.status), settlements.map((s) => (s.next.status === 'PENDING' ? s.next.nextAttemptAt.toISOString() : null)),
    ],
  );
  return new Set(rows.map((r) => r.eventId));
}

/**
 * The partner's delivery settings changed (webhook_url, status, credentials): its PENDING events that
 * wait for a later attempt (parked after NOT_CONFIGURED, or in backoff) are due now. An event whose
 * attempt is in flight keeps its lease (never two attempts of one event at once).
 */
export async function makeWaitingEventsDue(q: Queryable, args: { partnerId: string; now: Date }): Promise<number> {
  const rows = await q.query(
    `UPDATE event_deliveries SET next_attempt_at = $2
      WHERE partner_id = $1 AND status = 'PENDING' AND lease_token IS NULL AND next_attempt_at > $2
      RETURNING event_id`,
    [args.partnerId, args.now],
  );
  return rows.length;
}

/**
 * After an unexpected failure of the worker (not an answer of the partner): the event is due again
 * at `retryAt`, or FAILED when `retryAt` is null (attempts exhausted); only while the lease holds.
 */
export async function rescheduleLeasedEvent(
  q: Queryable,
  args: { eventId: string; leaseToken: string; retryAt: Date | null; error: string; now: Date },
): Promise<boolean> {
  const rows = await q.query(
    `UPDATE event_deliveries SET lease_token = NULL, lease_until = NULL, last_error = $4,
            status = CASE WHEN $3::timestamptz IS NULL THEN 'FAILED' ELSE status END,
            next_attempt_at = $3, failed_at = CASE WHEN $3::timestamptz IS NULL THEN $5::timestamptz ELSE NULL END
      WHERE event_id = $1 AND lease_token = $2 AND status = 'PENDING'
      RETURNING event_id`,
    [args.eventId, args.leaseToken, args.retryAt, args.error, args.now],
  );
  return rows.length === 1;
}

export interface EventRow {
  eventId: string;
  eventType: string;
  businessId: string;
  sequence: string;
  payload: string;
  createTime: Date;
  status: EventStatus;
  attempts: number;
  lastAttemptAt: Date | null;
  lastHttpStatus: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  failedAt: Date | null;
}

/** An event (e) with its delivery state (d, migration 157). */
const EVENT_COLUMNS = `e.event_id AS "eventId", e.event_type AS "eventType", e.business_id AS "businessId",
  e.sequence::text AS "sequence", e.payload, e.create_time AS "createTime", d.status, d.attempts,
  d.last_attempt_at AS "lastAttemptAt", d.last_http_status AS "lastHttpStatus", d.last_error AS "lastError",
  ${NEXT_ATTEMPT_AT} AS "nextAttemptAt", d.delivered_at AS "deliveredAt", d.failed_at AS "failedAt"`;
const EVENTS_WITH_DELIVERY = 'events e JOIN event_deliveries d ON d.event_id = e.event_id';

export interface EventFilter {
  partnerId: string;
  eventType?: string;
  status?: EventStatus;
  businessId?: string;
  /** Inclusive. */
  startTime?: Date;
  /** Exclusive. */
  endTime?: Date;
}

/** The partner's events, newest first (D9). */
export async function listEventRows(q: Queryable, f: EventFilter, limit: number, offset: number): Promise<{ total: number; rows: EventRow[] }> {
  const w = new Where();
  w.and(`e.partner_id = ${w.arg(f.partnerId, 'text')}`);
  w.eq('e.event_type', f.eventType);
  w.eq('d.status', f.status);
  w.eq('e.business_id', f.businessId);
  if (f.startTime !== undefined) w.and(`e.create_time >= ${w.arg(f.startTime, 'timestamptz')}`);
  if (f.endTime !== undefined) w.and(`e.create_time < ${w.arg(f.endTime, 'timestamptz')}`);
  // The count reads the delivery rows only when the status is a filter.
  const counted = f.status !== undefined ? EVENTS_WITH_DELIVERY : 'events e';
  const [{ total }] = await q.query<{ total: number }>(`SELECT count(*)::int AS total FROM ${counted} WHERE ${w.sql}`, w.params);
  const rows = await q.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM ${EVENTS_WITH_DELIVERY} WHERE ${w.sql}
      ORDER BY e.create_time DESC, e.sequence DESC, e.event_id DESC
      LIMIT ${w.next()} OFFSET ${w.next(1)}`,
    [...w.params, limit, offset],
  );
  return { total, rows };
}

/** One event of the partner; another partner's event is "not found" (never revealed). */
export async function findEventRow(q: Queryable, partnerId: string, eventId: string, forUpdate = false): Promise<EventRow | null> {
  const rows = await q.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM ${EVENTS_WITH_DELIVERY} WHERE e.partner_id = $1 AND e.event_id = $2${forUpdate ? ' FOR UPDATE OF d' : ''}`,
    [partnerId, eventId],
  );
  return rows[0] ?? null;
}

export interface AttemptRow {
  attemptNo: number;
  startedAt: Date;
  finishedAt: Date | null;
  outcome: string;
  httpStatus: number | null;
  latencyMs: number | null;
  error: string | null;
}

export async function listAttemptRows(q: Queryable, eventId: string, limit: number): Promise<AttemptRow[]> {
  return q.query<AttemptRow>(
    `SELECT attempt_no AS "attemptNo", started_at AS "startedAt", finished_at AS "finishedAt", outcome,
            http_status AS "httpStatus", latency_ms AS "latencyMs", error
       FROM event_attempts WHERE event_id = $1 ORDER BY attempt_no DESC LIMIT $2`,
    [eventId, limit],
  );
}

/**
 * Redelivery: the event is due again now and starts a new delivery cycle (a fresh retry window,
 * counted from the cycle's first attempt, and backoff). An attempt in flight keeps its slot: the event becomes due when that lease ends,
 * and the in-flight answer, whatever it is, no longer settles the event: its token is replaced by
 * one no worker holds, not cleared, so that the slot stays taken until the lease ends (D38: never two
 * attempts of one event at once): a second resend keeps that due time, and a change of the partner's
 * webhook settings (makeWaitingEventsDue, which wakes only events without a lease) leaves it alone.
 */
export async function scheduleRedelivery(q: Queryable, eventId: string, now: Date): Promise<{ nextAttemptAt: Date }> {
  const [row] = await q.query<{ nextAttemptAt: Date }>(
    `UPDATE event_deliveries d
        SET next_attempt_at = $2,
            lease_token = CASE WHEN status = 'PENDING' AND lease_token IS NOT NULL AND lease_until > $2
                               THEN 'superseded-' || md5(event_id || ':' || random()::text) END,
            lease_until = CASE WHEN status = 'PENDING' AND lease_token IS NOT NULL AND lease_until > $2 THEN lease_until END,
            status = 'PENDING', delivery_attempts = 0, delivery_started_at = NULL, failed_at = NULL
      WHERE event_id = $1
      RETURNING ${NEXT_ATTEMPT_AT} AS "nextAttemptAt"`,
    [eventId, now],
  );
  return row;
}
