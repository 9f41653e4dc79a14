/**
 * Events: the transactional outbox, the partner's event log and signed webhook delivery (D38, D49).
 * The public entry of the domain: other domains and the top level import only from here.
 *
 * Producers call `recordEvent(q, {partnerId, eventType, businessId, data, createTime})` inside their
 * business transaction; the event is delivered at least once after that transaction commits.
 */
export { recordEvent, type NewEvent } from './outbox.ts';
export { eventRoutes } from './routes.ts';
export { eventDetail, eventView, listEvents, resendEvent, webhookEgress, type ListEventsInput } from './service.ts';
export {
  deliverDueEvents, deliverLeased, observeWebhooks, leaseDueEvents, leaseDurationMs, nextStateAfter, retryDelayMs, webhookBody, webhookDeliveryJob,
  wakeParkedEvents, webhookHeaders, DELIVERY_BATCH_SIZE, FIRST_RETRY_DELAY_MS, LEASE_MARGIN_MS, MAX_RETRY_DELAY_MS,
  RETRY_BACKOFF_FACTOR, RETRY_JITTER_RATIO, RETRY_WINDOW_MS, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_POLL_INTERVAL_MS,
  type DeliveryLog, type DeliveryResult, type DeliverySummary, type EventDeps,
} from './delivery.ts';
export { postWebhook, type AttemptOutcome, type PostOptions, type PostResult } from './webhook-http.ts';
export type { EventStatus, LeasedEvent, WebhookTarget } from './store.ts';
export { deliveryBacklog, webhookHealth } from './operator-views.ts';
