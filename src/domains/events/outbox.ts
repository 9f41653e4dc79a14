import type { Queryable } from '../../platform/db/db.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import { stringifyJson } from '../../platform/http/json.ts';

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
  const [{ sequence }] = await q.query<{ sequence: string }>(
    `INSERT INTO event_sequences (partner_id, business_id, last_sequence) VALUES ($1, $2, 1)
     ON CONFLICT (partner_id, business_id) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1
     RETURNING last_sequence AS sequence`,
    [event.partnerId, event.businessId],
  );
  const eventId = newId('ev');
  await q.query(
    // Due for delivery at once (D38): the delivery worker picks it up after this transaction commits.
    `INSERT INTO events (event_id, partner_id, event_type, business_id, sequence, payload, create_time,
       status, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'PENDING', $7)`,
    [eventId, event.partnerId, event.eventType, event.businessId, sequence, stringifyJson(event.data ?? null), event.createTime],
  );
  return { eventId, sequence: Number(sequence) };
}
