import { Type, type TSchema } from 'typebox';
import { IsoTime, Page, PagingQuery } from '../../platform/http/schema.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import type { EventDeps } from './delivery.ts';
import { eventDetail, listEvents, resendEvent, webhookEgress } from './service.ts';

const EventStatus = Type.Union([Type.Literal('PENDING'), Type.Literal('DELIVERED'), Type.Literal('FAILED')], {
  description: 'PENDING: not yet answered with 2xx (retrying); DELIVERED: a 2xx was received; FAILED: retries exhausted after at least 24 h',
});
const EventId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });
const Nullable = (t: TSchema) => Type.Union([t, Type.Null()]);

const EventItem = Type.Object({
  eventId: Type.String({ description: 'Stable across retries and resends: deduplicate on it' }),
  eventType: Type.String(),
  businessId: Type.String(),
  sequence: Type.Integer({ description: 'Increases per businessId: drop an update older than one already applied' }),
  createTime: IsoTime,
  status: EventStatus,
  attempts: Type.Integer({ description: 'Delivery attempts so far (all cycles)' }),
  lastAttemptTime: Nullable(IsoTime),
  lastHttpStatus: Nullable(Type.Integer()),
  lastError: Nullable(Type.String()),
  nextAttemptTime: Nullable(IsoTime),
  deliveredTime: Nullable(IsoTime),
  failedTime: Nullable(IsoTime),
  data: Type.Unknown({ description: 'The webhook body\'s data, exactly as delivered' }),
});

const AttemptItem = Type.Object({
  attemptNo: Type.Integer(),
  attemptTime: IsoTime,
  finishTime: Nullable(IsoTime),
  outcome: Type.String({ description: 'SUCCESS, HTTP_ERROR, TIMEOUT, NETWORK_ERROR, BLOCKED, NOT_CONFIGURED, LEASE_EXPIRED or IN_FLIGHT' }),
  httpStatus: Nullable(Type.Integer()),
  latencyMs: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
});

export function eventRoutes(deps: EventDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      url: '/open-api/webhook/v1/events',
      auth: 'partner',
      tag: 'Webhooks',
      summary: 'List your events, newest first (D38, D9)',
      description: 'The event log behind the webhooks, with each event\'s delivery state. Time filters apply to createTime: startTime inclusive, endTime exclusive.',
      querystring: Type.Object({
        eventType: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Z][A-Z0-9_]*$' })),
        status: Type.Optional(EventStatus),
        businessId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        startTime: Type.Optional(IsoTime),
        endTime: Type.Optional(IsoTime),
        ...PagingQuery,
      }),
      data: Page(EventItem),
      errors: [],
      handler: ({ query, partner }) => listEvents(deps, partner.partnerId, query),
    }),
    route({
      method: 'GET',
      url: '/open-api/webhook/v1/event-detail',
      auth: 'partner',
      tag: 'Webhooks',
      summary: 'One of your events with its delivery attempts (latest first)',
      querystring: Type.Object({ eventId: EventId }),
      data: Type.Intersect([EventItem, Type.Object({ attemptLog: Type.Array(AttemptItem) })]),
      errors: ['EVENT_NOT_FOUND'],
      handler: ({ query, partner }) => eventDetail(deps, partner.partnerId, query.eventId),
    }),
    route({
      method: 'POST',
      url: '/open-api/webhook/v1/resend',
      auth: 'partner',
      tag: 'Webhooks',
      summary: 'Deliver one of your events again (D38)',
      description: 'Schedules a new delivery now, whatever the event\'s status, with a fresh retry window. Same eventId, sequence and body.',
      body: Type.Object({ eventId: EventId }),
      data: Type.Object({ eventId: Type.String(), status: Type.Literal('PENDING'), nextAttemptTime: IsoTime }),
      errors: ['EVENT_NOT_FOUND'],
      handler: ({ body, partner }) => resendEvent(deps, partner.partnerId, body.eventId),
    }),
    route({
      method: 'GET',
      url: '/open-api/webhook/v1/egress-ips',
      auth: 'partner',
      tag: 'Webhooks',
      summary: 'Addresses webhooks are sent from, for your webhook IP whitelist (5.5)',
      data: Type.Object({ environment: Type.String(), egressIps: Type.Array(Type.String()) }),
      errors: [],
      handler: async () => webhookEgress(deps.config),
    }),
  ];
}
