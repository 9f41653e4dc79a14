import type { FastifyInstance, FastifyReply, FastifyRequest, preValidationHookHandler } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { ERROR_CATALOG, ApiError, type ErrorCode } from '../errors.ts';
import { errorEnvelope as failureEnvelope, successEnvelope } from './envelope.ts';
import { stringifyJson } from './json.ts';
import type { AdminCaller, AuthenticatedPartner, OperatorRole } from '../caller.ts';
import { idempotencyKeyOf, type IdempotencyKeys } from './idempotency.ts';
import { inRequestTrace } from '../tracing.ts';

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
  /** OpenAPI operationId; derived from the method and path when absent (see operationIdOf). */
  operationId?: string;
  /**
   * Partner POSTs take an Idempotency-Key (issue 14) unless this is false: a read-like POST whose
   * answer must never be stored (secure card data), which is safe to repeat anyway.
   */
  idempotent?: boolean;
  /** A request body example for the OpenAPI document (wire JSON). */
  example?: unknown;
  body?: B;
  querystring?: Q;
  /** Schema of the envelope's `data` on success (documentation). */
  data?: TSchema;
  /** Business error codes this route can answer with (authentication codes are added). */
  errors: ErrorCode[];
  /** Registered only when the deployment is sandbox (D12, D40). */
  sandboxOnly?: boolean;
  /**
   * An unsigned route that answers questions about credentials (the signature self-check, issue 31):
   * every call counts against the caller's address as one failed authentication, so it is limited
   * exactly like guessing keys or signatures (SYS_RATE_LIMITED with Retry-After once over the budget).
   */
  countsAsFailedAuthentication?: boolean;
  /**
   * Admin routes: the least operator role allowed (issue 29). Absent means admin: a new admin route
   * is open to admins only until it declares otherwise (test/operators-roles.test.ts lists them all).
   */
  role?: OperatorRole;
  handler(ctx: RouteContext<Static<B>, Static<Q>>): Promise<unknown>;
}

/** Keeps the handler's body and query types tied to the route's schemas. */
export function route<B extends TSchema = TSchema, Q extends TSchema = TSchema>(def: RouteDef<B, Q>): RouteDef {
  return def as unknown as RouteDef;
}

/** The role an admin route requires: its declared one, else admin (issue 29). */
export function requiredRole(def: Pick<RouteDef, 'role'>): OperatorRole {
  return def.role ?? 'admin';
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

const PLATFORM_ERRORS: ErrorCode[] = ['SYS_ILLEGAL_PARAM', 'SYS_INTERNAL_ERROR', 'SYS_UNAVAILABLE'];
const COMMON_CODES = new Set<ErrorCode>([...PARTNER_AUTH_ERRORS, ...PLATFORM_ERRORS]);

function envelopeSchema(data: TSchema | undefined) {
  return Type.Object({
    code: Type.String({ description: 'SYS_SUCCESS on success; otherwise the error code' }),
    message: Type.Union([Type.String(), Type.Null()]),
    messageDetail: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    data: data ? Type.Union([data, Type.Null()]) : Type.Null(),
  });
}

/** Business POSTs of partners take an Idempotency-Key (issue 14). */
export function isIdempotent(def: Pick<RouteDef, 'method' | 'auth' | 'idempotent'>): boolean {
  return def.method === 'POST' && def.auth === 'partner' && def.idempotent !== false;
}

const PATH_NOISE = new Set(['open-api', 'open-api-corp', 'internal', 'v1']);

/**
 * The OpenAPI operationId of a route: its explicit one, else the camelCase of its path without the
 * family prefixes and `v1` (`/open-api-corp/card/v1/apply` -> `cardApply`, `/card/v2/apply` ->
 * `cardV2Apply`, `/internal/admin/v1/partners` -> `adminPartners`), with `list`/`get` in front of a
 * GET whose path also has a POST (the caller passes `clash`). Unique across the app (checked).
 */
export function operationIdOf(def: Pick<RouteDef, 'method' | 'url' | 'operationId'>, clash = false): string {
  if (def.operationId) return def.operationId;
  const words = def.url.split('/')
    .filter((seg) => seg && !PATH_NOISE.has(seg) && !seg.startsWith(':'))
    .flatMap((seg) => seg.split(/[-_.]/))
    .filter(Boolean);
  const camel = words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase())).join('');
  if (!clash) return camel;
  return (def.method === 'GET' ? 'list' : 'create') + camel[0].toUpperCase() + camel.slice(1);
}

/**
 * Admin bodies refuse unknown fields (issue 14: an operator's typo must not pass silently); partner
 * bodies keep D10 (unknown fields ignored). Objects inside allOf/anyOf keep their own rule.
 */
export function closedSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closedSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const node = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = key === 'allOf' || key === 'anyOf' || key === 'oneOf' ? value : closedSchema(value);
  }
  if (node.type === 'object' && node.properties && node.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

export function errorCodesOf(def: RouteDef): ErrorCode[] {
  // The network ingress signs like a partner but has no per-partner rate limit.
  const auth = def.countsAsFailedAuthentication ? (['SYS_RATE_LIMITED'] as ErrorCode[])
    : def.auth === 'partner' ? PARTNER_AUTH_ERRORS
    : def.auth === 'network' ? PARTNER_AUTH_ERRORS.filter((c) => c !== 'SYS_RATE_LIMITED')
      : def.auth === 'admin' ? (['SYS_UNAUTHORIZED', 'SYS_FORBIDDEN'] as ErrorCode[]) : [];
  const needsParams = def.body !== undefined || def.querystring !== undefined;
  const idempotency: ErrorCode[] = isIdempotent(def) ? ['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_IN_USE'] : [];
  return [...new Set([...auth, ...PLATFORM_ERRORS, ...(needsParams || idempotency.length ? (['DAPI_PARAM_INVALID'] as ErrorCode[]) : []), ...def.errors, ...idempotency])];
}

/** One documented response per HTTP status the route can answer with, naming its codes (D2). */
function responsesOf(def: RouteDef, codes: ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CATALOG[code].httpStatus;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = {
    200: { description: byStatus.has(200) ? `Envelope: SYS_SUCCESS with data, or one of ${byStatus.get(200)!.join(', ')}` : 'Envelope: SYS_SUCCESS with data', ...envelopeSchema(def.data) },
  };
  for (const [status, list] of byStatus) {
    if (status === 200) continue;
    responses[status] = { description: `Envelope with code ${list.join(' or ')}`, ...envelopeSchema(undefined) };
  }
  return responses;
}

export interface RegisterOptions {
  /** preValidation hook that authenticates the caller for the route's auth mode (and, admin, its role). */
  authHook(mode: AuthMode, def: RouteDef): ((req: FastifyRequest) => Promise<void>) | null;
  /**
   * Admin POSTs (issue 29): runs the action (the handler) and appends its audit entry in one
   * transaction, or records the failure once the action was rolled back; resolves to the answer.
   */
  audit?(req: FastifyRequest, def: RouteDef, action: () => Promise<unknown>): Promise<unknown>;
  /** The per-caller limit of partner routes (rate-limits.ts): the plugin's route config, or a hook run after authentication. */
  rateLimit: { config: object | false; hook: ((url: string) => preValidationHookHandler) | null };
  /** The Idempotency-Key store (issue 14); partner POSTs use it when the header is sent. */
  idempotency?: IdempotencyKeys;
  /** The route's operationId (unique in the app); derived from the path when absent. */
  operationId?: string;
}

/** A handler's RouteContext; a class, so a request allocates one object and no getter (issue 34). */
class HandlerContext implements RouteContext<unknown, unknown> {
  readonly body: unknown;
  readonly query: unknown;
  readonly params: Record<string, string>;
  readonly ip: string;

  constructor(readonly req: FastifyRequest, readonly reply: FastifyReply) {
    this.body = req.body;
    this.query = req.query;
    this.params = req.params as Record<string, string>;
    this.ip = req.ip;
  }

  get partner(): AuthenticatedPartner {
    if (!this.req.partner) throw new ApiError('SYS_INTERNAL_ERROR', 'route has no authenticated partner');
    return this.req.partner;
  }
}

export function registerRoute(app: FastifyInstance, def: RouteDef, options: RegisterOptions): void {
  const codes = errorCodesOf(def);
  // The authentication and platform codes every signed route shares are described once, in the
  // document's description; each operation's table lists its own codes (x-error-codes lists all).
  const ownCodes = codes.filter((c) => !COMMON_CODES.has(c));
  const codeTable = ownCodes.map((c) => `| \`${c}\` | ${ERROR_CATALOG[c].httpStatus} | ${ERROR_CATALOG[c].message} |`).join('\n');
  const hook = options.authHook(def.auth, def);
  const audited = def.auth === 'admin' && def.method === 'POST' && options.audit !== undefined;
  const idempotent = isIdempotent(def) && options.idempotency !== undefined;
  app.route({
    method: def.method,
    url: def.url,
    schema: {
      tags: [def.tag],
      summary: def.summary,
      operationId: options.operationId ?? operationIdOf(def),
      description: `${def.description ?? def.summary}\n\n` + (ownCodes.length
        ? `| Error code | HTTP | Meaning |\n| --- | --- | --- |\n${codeTable}\n\n`
        : '') + (def.auth === 'admin' ? `Operator role: ${requiredRole(def)} or above. Also: \`SYS_UNAUTHORIZED\` (401), \`SYS_FORBIDDEN\` (403) and the common codes.` : 'Also: the common authentication and platform codes (see the introduction).'),
      ...(def.body ? { body: def.auth === 'admin' ? closedSchema(def.body) : def.body } : {}),
      ...(def.querystring ? { querystring: def.querystring } : {}),
      ...(def.auth === 'partner' ? { security: [{ apiKey: [], timestamp: [], nonce: [], sign: [] }] } : {}),
      ...(def.auth === 'admin' ? { security: [{ adminToken: [] }] } : {}),
      ...(def.auth === 'network' ? { security: [{ networkKey: [], timestamp: [], nonce: [], sign: [] }] } : {}),
      ...(def.auth === 'none' ? { security: [] } : {}),
      ...(def.example !== undefined ? { 'x-request-example': def.example } : {}),
      ...(def.method === 'POST' && def.auth === 'partner' && !isIdempotent(def) ? { 'x-idempotent': false } : {}),
      response: responsesOf(def, codes),
      'x-error-codes': codes,
    },
    config: { rateLimit: def.auth === 'partner' ? options.rateLimit.config : false },
    preValidation: [...(hook ? [hook] : []), ...(def.auth === 'partner' && options.rateLimit.hook ? [options.rateLimit.hook(def.url)] : [])],
    handler: async (req, reply) => {
      const ctx = new HandlerContext(req, reply);
      const idempotencyKey = idempotent ? idempotencyKeyOf(req.headers) : undefined;
      if (idempotencyKey === undefined) {
        // Issue 27: the handler's business steps are spans under the request's SERVER span.
        const handle = () => inRequestTrace(req.raw, () => def.handler(ctx));
        const data = audited ? await options.audit!(req, def, handle) : await handle();
        reply.type('application/json; charset=utf-8').send(stringifyJson(successEnvelope(data)));
        return reply;
      }
      // Issue 14: the answer of a business POST under an Idempotency-Key is stored with the key;
      // business codes (HTTP 200) are answers too, anything else propagates and frees the key.
      const answer = await options.idempotency!.run(
        { partnerId: ctx.partner.partnerId, key: idempotencyKey, method: req.method, path: req.url.split('?')[0], body: req.rawBody },
        async () => {
          try {
            return { httpStatus: 200, body: stringifyJson(successEnvelope(await inRequestTrace(req.raw, () => def.handler(ctx)))) };
          } catch (err) {
            if (err instanceof ApiError && err.httpStatus === 200) {
              req.log.info({ code: err.code }, 'request refused');
              return { httpStatus: 200, body: stringifyJson(failureEnvelope(err.code, err.message, err.data)) };
            }
            throw err;
          }
        },
      );
      if (answer.replayed) reply.header('idempotent-replayed', 'true');
      reply.code(answer.httpStatus).type('application/json; charset=utf-8').send(answer.body);
      return reply;
    },
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    partner: AuthenticatedPartner | null;
    /** The operator or bearer token of an admin route or the console (issue 29). */
    admin: AdminCaller | null;
    rawBody: Buffer | null;
  }
}
