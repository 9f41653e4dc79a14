import type { Queryable } from '../../platform/db/db.ts';
import { pendingDeliveryCounts, webhookHealthRow, type WebhookHealthRow } from './operator-store.ts';

/** The webhook delivery job's backlog for the operator console (issue 29). */
export function deliveryBacklog(q: Queryable, now: Date): Promise<{ pending: string; due: string }> {
  return pendingDeliveryCounts(q, now);
}

/** How many of a partner's newest events the console's webhook health looks at. */
export const WEBHOOK_HEALTH_WINDOW = 200;

/** A partner's webhook health for the console (issue 29): the delivery attempts of its newest events. */
export function webhookHealth(q: Queryable, partnerId: string): Promise<WebhookHealthRow> {
  return webhookHealthRow(q, partnerId, WEBHOOK_HEALTH_WINDOW);
}
