import type { Queryable } from '../../platform/db/db.ts';
import { dueCondition } from './store.ts';

/** Webhook deliveries waiting, and those already due (the delivery job's backlog), across partners. */
export async function pendingDeliveryCounts(q: Queryable, now: Date): Promise<{ pending: string; due: string }> {
  const rows = await q.query<{ pending: string; due: string }>(
    `SELECT count(*)::bigint AS pending, count(*) FILTER (WHERE ${dueCondition('', '$1')})::bigint AS due
       FROM event_deliveries WHERE status = 'PENDING'`,
    [now],
  );
  return rows[0];
}

export interface WebhookHealthRow {
  events: number;
  succeeded: number;
  failed: number;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  lastFailure: string | null;
  medianLatencyMs: number | null;
}

/**
 * Delivery attempts of a partner's newest `window` events (events_partner_time, then the attempts'
 * (event_id, attempt_no) index): bounded work on a partner of any size.
 */
export async function webhookHealthRow(q: Queryable, partnerId: string, window: number): Promise<WebhookHealthRow> {
  const rows = await q.query<WebhookHealthRow>(
    `WITH recent AS (SELECT event_id FROM events WHERE partner_id = $1 ORDER BY create_time DESC LIMIT $2)
     SELECT (SELECT count(*) FROM recent)::int AS events,
            count(a.attempt_id) FILTER (WHERE a.outcome = 'SUCCESS')::int AS succeeded,
            count(a.attempt_id) FILTER (WHERE a.outcome NOT IN ('SUCCESS', 'IN_FLIGHT'))::int AS failed,
            max(a.finished_at) FILTER (WHERE a.outcome = 'SUCCESS') AS "lastSuccessAt",
            max(a.started_at) FILTER (WHERE a.outcome NOT IN ('SUCCESS', 'IN_FLIGHT')) AS "lastFailureAt",
            (array_agg(a.outcome || COALESCE(' ' || a.http_status::text, '') ORDER BY a.started_at DESC)
               FILTER (WHERE a.outcome NOT IN ('SUCCESS', 'IN_FLIGHT')))[1] AS "lastFailure",
            (percentile_disc(0.5) WITHIN GROUP (ORDER BY a.latency_ms) FILTER (WHERE a.latency_ms IS NOT NULL))::int AS "medianLatencyMs"
       FROM recent r JOIN event_attempts a ON a.event_id = r.event_id`,
    [partnerId, window],
  );
  return rows[0];
}
