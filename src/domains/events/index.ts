/**
 * Events: the transactional outbox, the partner's event log and signed webhook delivery (D38, D49).
 * The public entry of the domain: other domains and the top level import only from here.
 *
 * Producers call `recordEvent(q, {partnerId, eventType, businessId, data, createTime})` inside their
 * business transaction; the event is delivered at least once after that transaction commits.
 */
export { recordEvent } from './outbox.ts';
export { eventRoutes } from './routes.ts';
export { eventDetail, listEvents, resendEvent } from './service.ts';
export { observeWebhooks, webhookDeliveryJob, wakeParkedEvents } from './delivery.ts';
export { deliveryBacklog, webhookHealth } from './operator-views.ts';
