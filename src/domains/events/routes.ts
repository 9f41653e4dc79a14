import { route, type RouteDef } from '../../platform/http/router.ts';
import { EgressIps, EventDetail, EventDetailQuery, EventPage, ListEventsQuery, ResendAnswer, ResendBody } from '../../../sdk/contract/events.ts';
import type { EventDeps } from './delivery.ts';
import { eventDetail, listEvents, resendEvent, sendSampleEvent, sendTestEvent, webhookEgress } from './service.ts';
import { RotatedWebhookSecret, RotateWebhookSecretBody, SampleEventBody, TestWebhookBody, WebhookSecretStatus } from '../../../sdk/contract/webhooks.ts';
import { rotateWebhookSecret, webhookSecretStatus, WEBHOOK_SECRET_DEFAULT_OVERLAP_S } from '../partners/index.ts';

export function eventRoutes(deps: EventDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      url: '/open-api/webhook/v1/events',
      auth: 'partner',
      tag: 'Webhooks',
      summary: 'List your events, newest first',
      description: 'The event log behind the webhooks, with each event\'s delivery state. Time filters apply to createTime: startTime inclusive, endTime exclusive.',
      querystring: ListEventsQuery,
      data: EventPage,
      errors: [],
      handler: ({ query, partner }) => listEvents(deps, partner.partnerId, query),
    }),
    route({
      method: 'GET',
      url: '/open-api/webhook/v1/event-detail',
      auth: 'partner',
      tag: 'Webhooks',
      summary: 'One of your events with its delivery attempts (latest first)',
      querystring: EventDetailQuery,
      data: EventDetail,
      errors: ['EVENT_NOT_FOUND'],
      handler: ({ query, partner }) => eventDetail(deps, partner.partnerId, query.eventId),
    }),
    route({
      method: 'POST',
      url: '/open-api/webhook/v1/resend',
      auth: 'partner',
      tag: 'Webhooks',
      summary: 'Deliver one of your events again',
      description: 'Schedules a new delivery now, whatever the event\'s status, with a fresh retry window. Same eventId, sequence and body.',
      body: ResendBody,
      data: ResendAnswer,
      errors: ['EVENT_NOT_FOUND'],
      handler: ({ body, partner }) => resendEvent(deps, partner.partnerId, body.eventId),
    }),
    route({
      method: 'GET',
      url: '/open-api/webhook/v1/egress-ips',
      auth: 'partner',
      tag: 'Webhooks',
      summary: 'Addresses webhooks are sent from, for your webhook IP whitelist',
      data: EgressIps,
      errors: [],
      handler: async () => webhookEgress(deps.config),
    }),
    route({
      method: 'POST',
      url: '/open-api/webhook/v1/test',
      auth: 'partner',
      tag: 'Webhooks',
      summary: 'Send a WEBHOOK_TEST event to your webhook_url now and answer it with its attempt',
      description: 'The event is logged (businessId = your partnerId) and signed like every webhook; it is attempted once, never retried, '
        + 'so the answer shows at once what your endpoint did: status DELIVERED or FAILED, and attemptLog[0] with outcome, httpStatus, latencyMs, error.',
      body: TestWebhookBody,
      data: EventDetail,
      errors: ['WEBHOOK_NOT_CONFIGURED'],
      handler: ({ body, partner }) => sendTestEvent(deps, partner.partnerId, body.message),
    }),
    route({
      method: 'POST',
      url: '/open-api/webhook/v1/sample',
      auth: 'partner',
      tag: 'Webhooks',
      summary: 'Send a signed example of any event type you can receive to your webhook_url now, marked as a test',
      description: 'Try your webhook handler before real traffic: the body is the example of that event type in the webhooks section of this document '
        + '(valid against its schema) with the current time, and `data.test` = true so your handler can tell it from a real event. It is logged, '
        + 'signed and sent like every webhook, attempted once and never retried; the answer shows what your endpoint did: status DELIVERED or FAILED, '
        + 'and attemptLog[0] with outcome, httpStatus, latencyMs, error. The ids in it are examples, not your resources.',
      body: SampleEventBody,
      data: EventDetail,
      example: { eventType: 'CARD_TRANSACTION' },
      errors: ['WEBHOOK_EVENT_TYPE_INVALID', 'WEBHOOK_NOT_CONFIGURED'],
      handler: ({ body, partner }) => sendSampleEvent(deps, partner.partnerId, body.eventType),
    }),
    route({
      method: 'POST',
      url: '/open-api/webhook/v1/secret/rotate',
      auth: 'partner',
      tag: 'Webhooks',
      summary: 'Create or rotate your webhook signing secret; the previous one keeps signing during the overlap',
      description: 'Webhooks then also carry X-DAPI-WEBHOOK-SIGN: `v1=<hex>` per valid secret (newest first), each HmacSHA256(apiKey + timestamp + nonce + body) '
        + 'keyed with that secret. X-DAPI-SIGN (your API secretKey) stays. The new secret is shown only in this answer.',
      body: RotateWebhookSecretBody,
      data: RotatedWebhookSecret,
      errors: [],
      handler: ({ body, partner }) => rotateWebhookSecret(deps, partner.partnerId, body.overlapSeconds ?? WEBHOOK_SECRET_DEFAULT_OVERLAP_S),
    }),
    route({
      method: 'GET',
      url: '/open-api/webhook/v1/secret',
      auth: 'partner',
      tag: 'Webhooks',
      summary: 'Your valid webhook signing secrets: when each was made and until when it signs (never the secret)',
      data: WebhookSecretStatus,
      errors: [],
      handler: ({ partner }) => webhookSecretStatus(deps, partner.partnerId),
    }),
  ];
}
