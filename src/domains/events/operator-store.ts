import type { Queryable } from '../../platform/db/db.ts';

/** Webhook deliveries waiting, and those already due (the delivery job's backlog), across partners. */
export async function pendingDeliveryCounts(q: Queryable, now: Date): Promise<{ pending: string; due: string }> {
  const rows = await q.query<{ pending: string; due: string }>(
    `SELECT count(*)::bigint AS pending, count(*) FILTER (WHERE next_attempt_at <= $1)::bigint AS due FROM events WHERE status = 'PENDING'`,
    [now],
  );
  return rows[0];
}
