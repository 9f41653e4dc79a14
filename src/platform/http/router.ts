import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { ERROR_CATALOG, ApiError, type ErrorCode } from '../errors.ts';
import { successEnvelope } from './envelope.ts';
import { stringifyJson } from './json.ts';
import type { AuthenticatedPartner } from '../caller.ts';

/** partner: a partner's signed call; network: the card network ingress key (D40); admin: operator bearer token. */
export type AuthMode = 'partner' | 'network' | 'admin' | 'none';

export interface RouteContext<B, Q> {
  body: B;
  query: Q;
  params: Record<string, string>;
  /** The authenticated caller; only on auth: 'partner' routes. */
  partner: AuthenticatedPartner;
  ip: string;
  req: FastifyRequest;
  reply: FastifyReply;
}

export interface RouteDef<B extends TSchema = TSchema, Q extends TSchema = TSchema> {
  method: 'GET' | 'POST';
  url: string;
  auth: AuthMode;
  tag: string;
  summary: string;
  description?: string;
  body?: B;
  querystring?: Q;
  /** Schema of the envelope's `data` on success (documentation). */
  data?: TSchema;
  /** Business error codes this route can answer with (authentication codes are added). */
  errors: ErrorCode[];
  /** Registered only when the deployment is sandbox (D12, D40). */
  sandboxOnly?: boolean;
  handler(ctx: RouteContext<Static<B>, Static<Q>>): Promise<unknown>;
}

/** Keeps the handler's body and query types tied to the route's schemas. */
export function route<B extends TSchema = TSchema, Q extends TSchema = TSchema>(def: RouteDef<B, Q>): RouteDef {
  return def as unknown as RouteDef;
}

export const PARTNER_AUTH_ERRORS: ErrorCode[] = [
  'DAPI_API_KEY_INVALID',
  'DAPI_IP_NOT_ALLOWED',
  'DAPI_TIMESTAMP_FORMAT_ERROR',
  'DAPI_TIMESTAMP_EXPIRED',
  'DAPI_NONCE_INVALID',
  'DAPI_SIGN_INVALID',
  'DAPI_NONCE_REPLAYED',
  'SYS_RATE_LIMITED',
];

const PLATFORM_ERRORS: ErrorCode[] = ['SYS_ILLEGAL_PARAM', 'SYS_INTERNAL_ERROR'];

function envelopeSchema(data: TSchema | undefined) {
  return Type.Object({
    code: Type.String({ description: 'SYS_SUCCESS on success; otherwise the error code' }),
    message: Type.Union([Type.String(), Type.Null()]),
    messageDetail: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    data: data ? Type.Union([data, Type.Null()]) : Type.Null(),
  });
}

export function errorCodesOf(def: RouteDef): ErrorCode[] {
  // The network ingress signs like a partner but has no per-partner rate limit.
  const auth = def.auth === 'partner' ? PARTNER_AUTH_ERRORS
    : def.auth === 'network' ? PARTNER_AUTH_ERRORS.filter((c) => c !== 'SYS_RATE_LIMITED')
      : def.auth === 'admin' ? (['SYS_UNAUTHORIZED'] as ErrorCode[]) : [];
  const needsParams = def.body !== undefined || def.querystring !== undefined;
  return [...new Set([...auth, ...PLATFORM_ERRORS, ...(needsParams ? (['DAPI_PARAM_INVALID'] as ErrorCode[]) : []), ...def.errors])];
}

/** One documented response per HTTP status the route can answer with, naming its codes (D2). */
function responsesOf(def: RouteDef, codes: ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CATALOG[code].httpStatus;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = {
    200: { description: `Envelope (D1): SYS_SUCCESS with data, or one of ${(byStatus.get(200) ?? []).join(', ') || 'no business code'}`, ...envelopeSchema(def.data) },
  };
  for (const [status, list] of byStatus) {
    if (status === 200) continue;
    responses[status] = { description: `Envelope with code ${list.join(' or ')}`, ...envelopeSchema(undefined) };
  }
  return responses;
}

export interface RegisterOptions {
  /** preValidation hook that authenticates the caller for the route's auth mode. */
  authHook(mode: AuthMode): ((req: FastifyRequest) => Promise<void>) | null;
  rateLimit: object | false;
}

export function registerRoute(app: FastifyInstance, def: RouteDef, options: RegisterOptions): void {
  const codes = errorCodesOf(def);
  const codeTable = codes.map((c) => `| \`${c}\` | ${ERROR_CATALOG[c].httpStatus} | ${ERROR_CATALOG[c].message} |`).join('\n');
  const hook = options.authHook(def.auth);
  app.route({
    method: def.method,
    url: def.url,
    schema: {
      tags: [def.tag],
      summary: def.summary,
      description: `${def.description ?? def.summary}\n\n| Error code | HTTP | Meaning |\n| --- | --- | --- |\n${codeTable}`,
      ...(def.body ? { body: def.body } : {}),
      ...(def.querystring ? { querystring: def.querystring } : {}),
      ...(def.auth === 'partner' ? { security: [{ apiKey: [], timestamp: [], nonce: [], sign: [] }] } : {}),
      ...(def.auth === 'admin' ? { security: [{ adminToken: [] }] } : {}),
      ...(def.auth === 'network' ? { security: [{ networkKey: [], timestamp: [], nonce: [], sign: [] }] } : {}),
      response: responsesOf(def, codes),
      'x-error-codes': codes,
    },
    config: { rateLimit: def.auth === 'partner' ? options.rateLimit : false },
    preValidation: hook ? [hook] : [],
    handler: async (req, reply) => {
      const ctx: RouteContext<unknown, unknown> = {
        body: req.body,
        query: req.query,
        params: req.params as Record<string, string>,
        get partner(): AuthenticatedPartner {
          if (!req.partner) throw new ApiError('SYS_INTERNAL_ERROR', 'route has no authenticated partner');
          return req.partner;
        },
        ip: req.ip,
        req,
        reply,
      };
      const data = await def.handler(ctx);
      reply.type('application/json; charset=utf-8').send(stringifyJson(successEnvelope(data)));
      return reply;
    },
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    partner: AuthenticatedPartner | null;
    rawBody: Buffer | null;
  }
}
