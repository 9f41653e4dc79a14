import { Type } from 'typebox';
import { IsoTime, Literals, Nullable, Page, PagingQuery } from './wire.ts';

/** The event log behind the webhooks and redelivery (D38, D49). */

export const EVENT_STATUSES = ['PENDING', 'DELIVERED', 'FAILED'] as const;
export const ATTEMPT_OUTCOMES = ['IN_FLIGHT', 'SUCCESS', 'HTTP_ERROR', 'TIMEOUT', 'NETWORK_ERROR', 'BLOCKED', 'NOT_CONFIGURED', 'LEASE_EXPIRED'] as const;

export const EventStatus = Literals(EVENT_STATUSES, {
  description: 'PENDING: not yet answered with 2xx (retrying); DELIVERED: a 2xx was received; FAILED: retries exhausted after at least 24 h',
});
export type EventStatus = (typeof EVENT_STATUSES)[number];
const EventId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });

export const EventItem = Type.Object({
  eventId: Type.String({ description: 'Stable across retries and resends: deduplicate on it' }),
  eventType: Type.String(),
  businessId: Type.String(),
  sequence: Type.Integer({ description: 'Increases per businessId: drop an update older than one already applied' }),
  createTime: IsoTime,
  status: EventStatus,
  attempts: Type.Integer({ description: 'Delivery attempts so far (all cycles)' }),
  lastAttemptTime: Nullable(IsoTime),
  lastHttpStatus: Nullable(Type.Integer()),
  lastError: Nullable(Type.String({
    description: 'Why the last attempt failed, e.g. that the address dialled is not on your webhook IP whitelist (outcome BLOCKED); null when the last attempt succeeded or none was made',
  })),
  nextAttemptTime: Nullable(IsoTime),
  deliveredTime: Nullable(IsoTime),
  failedTime: Nullable(IsoTime),
  data: Type.Unknown({ description: 'The webhook body\'s data, exactly as delivered' }),
});
export const EventPage = Page(EventItem);

export const AttemptItem = Type.Object({
  attemptNo: Type.Integer(),
  attemptTime: IsoTime,
  finishTime: Nullable(IsoTime),
  outcome: Literals(ATTEMPT_OUTCOMES, { description: 'SUCCESS, HTTP_ERROR, TIMEOUT, NETWORK_ERROR, BLOCKED, NOT_CONFIGURED, LEASE_EXPIRED or IN_FLIGHT' }),
  httpStatus: Nullable(Type.Integer()),
  latencyMs: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
});

export const ListEventsQuery = Type.Object({
  eventType: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Z][A-Z0-9_]*$' })),
  status: Type.Optional(EventStatus),
  businessId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  startTime: Type.Optional(IsoTime),
  endTime: Type.Optional(IsoTime),
  ...PagingQuery,
});

export const EventDetailQuery = Type.Object({ eventId: EventId });
export const EventDetail = Type.Intersect([EventItem, Type.Object({ attemptLog: Type.Array(AttemptItem) })]);
export const ResendBody = Type.Object({ eventId: EventId });
export const ResendAnswer = Type.Object({ eventId: Type.String(), status: Type.Literal('PENDING'), nextAttemptTime: IsoTime });
export const EgressIps = Type.Object({ environment: Type.String(), egressIps: Type.Array(Type.String()) });
