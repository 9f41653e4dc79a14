/**
 * The test entry of the events domain (issue 33): what tests need beyond the public entry
 * (index.ts), which exports only what other domains and the top level use. Production code never
 * imports this file (test/architecture-boundaries.test.ts).
 */
export {
  deliverDueEvents, deliverLeased, leaseDueEvents, leaseDurationMs, webhookBody, webhookHeaders, FIRST_RETRY_DELAY_MS,
  MAX_RETRY_DELAY_MS, RETRY_BACKOFF_FACTOR, RETRY_JITTER_RATIO, RETRY_WINDOW_MS,
} from './delivery.ts';
export { postWebhook } from './webhook-http.ts';
