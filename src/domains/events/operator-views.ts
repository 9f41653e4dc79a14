import type { Queryable } from '../../platform/db/db.ts';
import { pendingDeliveryCounts } from './operator-store.ts';

/** The webhook delivery job's backlog for the operator console (issue 29). */
export function deliveryBacklog(q: Queryable, now: Date): Promise<{ pending: string; due: string }> {
  return pendingDeliveryCounts(q, now);
}
