import { route, type RouteDef } from '../../platform/http/router.ts';
import { EgressIps, EventDetail, EventDetailQuery, EventPage, ListEventsQuery, ResendAnswer, ResendBody } from '../../../sdk/contract/events.ts';
import type { EventDeps } from './delivery.ts';
import { eventDetail, listEvents, resendEvent, webhookEgress } from './service.ts';

export function eventRoutes(deps: EventDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      url: '/open-api/webhook/v1/events',
      auth: 'partner',
      tag: 'Webhooks',
      summary: 'List your events, newest first (D38, D9)',
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
      summary: 'Deliver one of your events again (D38)',
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
      summary: 'Addresses webhooks are sent from, for your webhook IP whitelist (5.5)',
      data: EgressIps,
      errors: [],
      handler: async () => webhookEgress(deps.config),
    }),
  ];
}
