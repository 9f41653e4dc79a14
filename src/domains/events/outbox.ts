import type { Queryable } from '../../platform/db/db.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import { stringifyJson } from '../../platform/http/json.ts';
import { insertEvent } from './store.ts';

export interface NewEvent {
  partnerId: string;
  eventType: string;
  businessId: string;
  data: unknown;
  createTime: Date;
}

/**
 * Records an event for the partner in the caller's transaction (transactional outbox, D38). The
 * event becomes visible to the delivery worker (delivery.ts) only when that transaction commits,
 * and is then delivered at least once to the partner's webhook_url.
 * `sequence` increases per (partner, businessId): the upsert takes the row lock, so concurrent
 * writers for one business id are serialized and never share a number.
 */
export async function recordEvent(q: Queryable, event: NewEvent): Promise<{ eventId: string; sequence: number }> {
  const eventId = newId('ev');
  const sequence = await insertEvent(q, {
    eventId, partnerId: event.partnerId, eventType: event.eventType, businessId: event.businessId,
    payload: stringifyJson(event.data ?? null), createTime: event.createTime,
  });
  return { eventId, sequence: Number(sequence) };
}
