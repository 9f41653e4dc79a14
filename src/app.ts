import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import type { DestinationStream } from 'pino';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './platform/clock.ts';
import { isDatabaseUnavailable, ping, type Db, type Queryable } from './platform/db/db.ts';

/** Issue 28: seconds a client should wait before retrying while the database is unreachable. */
const DB_UNAVAILABLE_RETRY_AFTER_S = '1';
import { ApiError, ERROR_CATALOG, paramInvalid } from './platform/errors.ts';
import { errorEnvelope, frameworkRejection } from './platform/http/envelope.ts';
import { parseJson, stringifyJson } from './platform/http/json.ts';
import { operationIdOf, registerRoute, type AuthMode, type RouteDef } from './platform/http/router.ts';
import { IdempotencyKeys } from './platform/http/idempotency.ts';
import { finishOpenApi, type OpenApiExtras } from './platform/http/openapi.ts';
import * as authorizationContract from '../sdk/contract/authorization.ts';
import * as cardsContract from '../sdk/contract/cards.ts';
import * as customersContract from '../sdk/contract/customers.ts';
import * as eventsContract from '../sdk/contract/events.ts';
import * as fundingContract from '../sdk/contract/funding.ts';
import * as organizationsContract from '../sdk/contract/organizations.ts';
import * as partnersContract from '../sdk/contract/partners.ts';
import * as sandboxContract from '../sdk/contract/sandbox.ts';
import * as velocityContract from '../sdk/contract/velocity.ts';
import * as webhooksContract from '../sdk/contract/webhooks.ts';
import * as managedBalanceContract from '../sdk/contract/managed-balance.ts';
import * as consumerCardsContract from '../sdk/contract/consumer-cards.ts';
import * as qrPaymentsContract from '../sdk/contract/qr-payments.ts';
import * as pushContract from '../sdk/contract/push.ts';
import * as cardUpgradesContract from '../sdk/contract/card-upgrades.ts';
import { validatorCompiler } from './platform/http/validation.ts';
import { clientErrorHandler, createGuardedServer, type HttpTimeouts } from './platform/http/guards.ts';
import { registerRateLimits } from './platform/http/rate-limits.ts';
import { signedRequestOf, signedUpgradeOf } from './platform/http/signed-request.ts';
import { Mailer } from './platform/mail.ts';
import {
  createMetricsServer, exposition, EXPOSITION_CONTENT_TYPE, metricsEnabled, observeDatabasePool, observeHttpRequest, startProcessMetrics,
} from './platform/metrics.ts';
import { jobFreshness, observeJobs } from './platform/jobs.ts';
import { endServerSpan, startServerSpan, traceIdOf } from './platform/tracing.ts';
import { backgroundJobs, periodicTasks } from './workers.ts';
import type { AppContext } from './platform/context.ts';
import { cancelCardsOnCustomerTermination, cancelCardsOnOrganizationTermination, cardLookup, cardRoutes, dedicatedCards, useConsumerUpgradeFees } from './domains/cards/index.ts';
import { customerAdminRoutes, customerRoutes, customerSubjects } from './domains/customers/index.ts';
import { diagnosticsRoutes } from './domains/diagnostics/index.ts';
import { eventRoutes, observeWebhooks, wakeParkedEvents } from './domains/events/index.ts';
import { fundingRoutes } from './domains/funding/index.ts';
import { ledgerAdminRoutes, observeLedgerAudit } from './domains/ledger/index.ts';
import {
  companyAdminRoutes, onCustomerTerminated, onOrganizationTerminated, organizationRoutes, useEmployeeSubjects,
} from './domains/organizations/index.ts';
import { authenticatedRow, PartnerAuthenticator, PartnerCache, partnerRoutes } from './domains/partners/index.ts';
import { ipAllowed } from './platform/http/ip.ts';
import { consumerCardRoutes, consumerUpgradeFees, findAsset, PushHub, qrPaymentRoutes, userAssetRoutes, type PushGrant } from './domains/managed-balance/index.ts';
import websocket from '@fastify/websocket';
import { isWebSocketUpgrade, takeOnlyWebSocketUpgrades } from './platform/http/upgrades.ts';
import { sandboxRoutes } from './domains/sandbox/index.ts';
import { scheduleTimeZone, velocityRoutes } from './domains/velocity/index.ts';
import { OperatorGate, operatorRoutes } from './domains/operators/index.ts';
import { registerConsole } from './domains/console/index.ts';
import {
  AuthUrlForwarder, authorizationRoutes, backtestRoutes, NetworkAuthenticator, observedDecisionStage, ServiceKeys, type AssetRate, type PartnerDecisionStage,
} from './domains/authorization/index.ts';

export interface AppDeps {
  config: Config;
  db: Db;
  clock?: Clock;
  /** Where JSON log lines go (default stdout). */
  logStream?: DestinationStream;
  /** The partner-decision stage of the authorization pipeline (D34); tests inject one. */
  partnerDecision?: PartnerDecisionStage;
}

export type { AppContext };

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_CONTENT_TYPE = /^application\/json\s*(;.*)?$/i;
const CHARSET_PARAMETER = /;\s*charset\s*=\s*([^;\s]*)/i;
const FRAMEWORK_ERROR_CODES = new Set([
  'FST_ERR_CTP_BODY_TOO_LARGE',
  'FST_ERR_CTP_INVALID_MEDIA_TYPE',
  'FST_ERR_CTP_EMPTY_JSON_BODY',
  'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
  'FST_ERR_CTP_EMPTY_TYPE',
  'FST_ERR_CTP_INVALID_TYPE',
]);

/** D2: the answer to a path, or a method of a path, with no route. */
function notFoundEnvelope(req: FastifyRequest) {
  return errorEnvelope('SYS_NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}`, null);
}

type LogArgs = Parameters<FastifyBaseLogger['info']>;

const ACCESS_MESSAGE = 'request completed';

/**
 * A request's logger (issue 34): the pino child with the request's bindings (reqId, traceId) is
 * made at the first line logged through it. The access line is written by the parent with the
 * bindings in front of its fields, which is byte for byte the child's line, so a request that logs
 * nothing else makes no child (a child per request was about 4 % of a signed GET's CPU).
 */
class RequestLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(private readonly parent: FastifyBaseLogger, private readonly bindings: Record<string, unknown>, private readonly options: object) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  /**
   * The request's one access line (onResponse). Without a child, the line's object is one literal
   * with the bindings Fastify and childLoggerFactory give (reqId, traceId) in front: no object
   * spread per request (issue 34). pino leaves out undefined fields, as the child does.
   */
  access(method: string, url: string, statusCode: number, ms: number, partnerId: string | undefined, ip: string): void {
    if (this.made) {
      this.made.info({ method, url, statusCode, ms, partnerId, ip }, ACCESS_MESSAGE);
      return;
    }
    const { reqId, traceId } = this.bindings as { reqId?: unknown; traceId?: unknown };
    this.parent.info({ reqId, traceId, method, url, statusCode, ms, partnerId, ip }, ACCESS_MESSAGE);
  }

  get level(): string { return this.logger.level; }
  set level(level: string) { this.logger.level = level; }
  child(bindings: Record<string, unknown>, options?: object): FastifyBaseLogger { return this.logger.child(bindings, options); }
  fatal(...args: LogArgs): void { this.logger.fatal(...args); }
  error(...args: LogArgs): void { this.logger.error(...args); }
  warn(...args: LogArgs): void { this.logger.warn(...args); }
  info(...args: LogArgs): void { this.logger.info(...args); }
  debug(...args: LogArgs): void { this.logger.debug(...args); }
  trace(...args: LogArgs): void { this.logger.trace(...args); }
  silent(...args: LogArgs): void { this.logger.silent(...args); }
}

/** Marks a body that is not JSON: a framework-level rejection (D3). */
class MalformedJson extends Error {}

/** Route parameters that are secrets: never logged or traced (the credential link's extract key, 4.1). */
const SECRET_PATH_PARAM = /:extractSecretKey\b/;

export function allRoutes(
  ctx: AppContext,
  partnerCache = new PartnerCache(ctx.db, ctx.config.partnerCacheTtlMs, ctx.config.masterKey),
  partnerDecision?: PartnerDecisionStage,
  serviceKeys = new ServiceKeys(ctx),
): RouteDef[] {
  const forwarder = new AuthUrlForwarder({ ...ctx, keys: serviceKeys });
  return [...partnerRoutes({
    ...ctx, partnerCache,
    onDeliverySettingsChanged: async (q, partnerId) => { await wakeParkedEvents(q, { partnerId, now: new Date(ctx.clock.now()) }); },
    onTimeZoneChanged: (q, partnerId, timeZone, now) => scheduleTimeZone(q, { partnerId, timeZone, now }),
  }), ...diagnosticsRoutes(ctx),
    ...organizationRoutes(ctx), ...customerRoutes(ctx), ...fundingRoutes({ ...ctx, cards: dedicatedCards }), ...sandboxRoutes(ctx), ...companyAdminRoutes(ctx), ...customerAdminRoutes(ctx), ...ledgerAdminRoutes(ctx),
    ...eventRoutes(ctx), ...velocityRoutes({ ...ctx, cards: cardLookup }), ...cardRoutes(ctx),
    ...authorizationRoutes({ ...ctx, partnerDecision: observedDecisionStage(partnerDecision ?? forwarder), forwarder, serviceKeys, assetRate }),
    ...backtestRoutes({ ...ctx, cards: cardLookup }),
    ...userAssetRoutes(ctx), ...consumerCardRoutes(ctx), ...qrPaymentRoutes(ctx), ...operatorRoutes(ctx)];
}

/** The authorization engine's funds seam for consumer cards (D35): the funding asset's current rate. */
async function assetRate(q: Queryable, asset: string): Promise<AssetRate | null> {
  const a = await findAsset(q, asset);
  return a && a.status === 'ACTIVE' ? { usdPegged: a.usdPegged, usdRate: a.usdRate, scale: a.scale } : null;
}

/**
 * Cross-domain wiring, once per process: where a lower domain needs a higher one, the higher one is
 * plugged in here (an interface implementation or a hook), never by an import side effect.
 * Idempotent; buildApp calls it.
 */
export function wireDomains(): void {
  // Subject status (organizations) reaches employee rows through the customers domain.
  useEmployeeSubjects(customerSubjects);
  // D16: terminating an employee or closing a company cancels their cards, in the same transaction.
  onCustomerTerminated(cancelCardsOnCustomerTermination);
  onOrganizationTerminated(cancelCardsOnOrganizationTermination);
  // Issue 30: fees of consumer card upgrades are asset movements, booked by the managed-balance domain.
  useConsumerUpgradeFees(consumerUpgradeFees);
}

/**
 * Builds the HTTP app without listening; the server and the tests both use it. With METRICS_PORT
 * set, `metricsServer` serves GET /metrics on that port from the moment the app is ready (listens).
 */
export async function buildApp(deps: AppDeps): Promise<{ app: FastifyInstance; ctx: AppContext; metricsServer: http.Server | null }> {
  wireDomains();
  const { config, db } = deps;
  const clock = deps.clock ?? systemClock;
  const httpTimeouts: HttpTimeouts = {
    headersTimeoutMs: config.httpHeadersTimeoutMs,
    requestTimeoutMs: config.httpRequestTimeoutMs,
    keepAliveTimeoutMs: config.httpKeepAliveTimeoutMs,
    idleTimeoutMs: config.httpIdleTimeoutMs,
  };
  const app = Fastify({
    logger: {
      level: config.logLevel,
      stream: deps.logStream,
      redact: { paths: ['req.headers["x-dapi-sign"]', 'req.headers.authorization'], censor: '[redacted]' },
    },
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    // Issue 27: every log line of a request carries its trace id (the caller's traceparent, or ours).
    // The request's SERVER span starts here, the first code of the request (tracing.ts).
    childLoggerFactory: (logger, bindings, options, rawReq) => {
      startServerSpan(rawReq);
      // Fastify's bindings object is made for this request: the trace id is added to it, not to a copy.
      const traceId = traceIdOf(rawReq);
      if (traceId) (bindings as Record<string, unknown>).traceId = traceId;
      return new RequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
    },
    // One access line per request (onResponse below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Slow clients are cut off by Node's deadlines; its refusals are answered in the envelope (D3).
    serverFactory: (handler) => createGuardedServer(httpTimeouts, handler),
    clientErrorHandler: clientErrorHandler(httpTimeouts),
    // D3: what the router refuses before any route runs (a path that is not valid percent-encoding,
    // a path segment over the router's length limit) is answered in the envelope too, with the
    // request id, not in Fastify's own error shape.
    frameworkErrors: (error, req, reply: FastifyReply) => {
      const message = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path segment is too long' : 'The request path is not valid percent-encoding';
      req.log.info({ code: 'SYS_ILLEGAL_PARAM', reason: error.code }, 'framework rejection');
      reply.code(400).header('x-request-id', req.id).type('application/json; charset=utf-8').send(stringifyJson(frameworkRejection(message)));
    },
  });
  const mailer = new Mailer(config, db, app.log);
  const startedAtMs = clock.now();
  const ctx: AppContext = { config, db, clock, mailer };
  /** Partners by API key; cleared by this instance whenever it changes a partner. */
  const partnerCache = new PartnerCache(db, config.partnerCacheTtlMs, config.masterKey);

  app.decorateRequest('partner', null);
  app.decorateRequest('admin', null);
  app.decorateRequest('rawBody', null);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(() => (data) => stringifyJson(data));

  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    // Every answer is one caller's data: the one-time credentials of 4.1 (D14), card data (D26, D27),
    // employees' personal data. No browser or proxy cache keeps it, and no browser reads a JSON
    // answer as another type. A route serving a public file (the console's stylesheet) says otherwise.
    reply.header('cache-control', 'no-store');
    reply.header('x-content-type-options', 'nosniff');
    // D3: a method with a body must declare a JSON body; checked before authentication (D5).
    // The operator console (issue 29) posts HTML forms; it parses its own bodies.
    if (req.url.startsWith('/console')) return done();
    // D2: a path (or method) with no route is 404 SYS_NOT_FOUND whatever its body: a DELETE, or a
    // POST without a body to a mistyped path, was answered "Content-Type must be application/json"
    // (review h-java). The body of such a request is not parsed (error handler below).
    if (req.is404) return done();
    if (BODY_METHODS.has(req.method) && !JSON_CONTENT_TYPE.test(req.headers['content-type'] ?? '')) {
      reply.code(400).type('application/json; charset=utf-8').send(stringifyJson(frameworkRejection('Content-Type must be application/json')));
      return;
    }
    // Bodies are read as UTF-8 (RFC 8259); a body declared in another charset is refused, not misread.
    const charset = CHARSET_PARAMETER.exec(req.headers['content-type'] ?? '');
    if (BODY_METHODS.has(req.method) && charset && !/^"?utf-?8"?$/i.test(charset[1])) {
      reply.code(400).type('application/json; charset=utf-8').send(stringifyJson(frameworkRejection('Content-Type charset must be utf-8')));
      return;
    }
    done();
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    const raw = body as Buffer;
    req.rawBody = raw;
    // RFC 8259 8.1: JSON text is UTF-8. A lenient decode would turn every invalid or overlong byte
    // sequence into U+FFFD and store that in place of what the partner signed (review rvC).
    if (!isUtf8(raw)) return done(new MalformedJson('Body is not valid UTF-8'), undefined);
    try {
      done(null, parseJson(raw.toString('utf8')));
    } catch {
      done(new MalformedJson('Body is not valid JSON'), undefined);
    }
  });

  app.addHook('onResponse', (req, reply, done) => {
    // Issue 27: labelled by the route template, never the raw path (bounded series).
    const route = req.routeOptions.url;
    const seconds = reply.elapsedTime / 1000;
    observeHttpRequest(req.method, route, reply.statusCode, seconds);
    // A path that carries a secret (the one-time extract key of 4.1) is logged and traced as its
    // route with the secret replaced: a refused call leaves the link valid (D14, D54; review rvC).
    const secretPath = route !== undefined && SECRET_PATH_PARAM.test(route) ? route.replace(SECRET_PATH_PARAM, '[redacted]') : undefined;
    endServerSpan(req.raw, route, reply.statusCode, secretPath);
    const queryAt = req.url.indexOf('?');
    (req.log as unknown as RequestLogger).access(req.method, secretPath ?? (queryAt === -1 ? req.url : req.url.slice(0, queryAt)), reply.statusCode,
      Math.round(reply.elapsedTime * 10) / 10, req.partner?.partnerId, req.ip);
    done();
  });

  app.setErrorHandler((error: FastifyError | ApiError | Error, req, reply) => {
    if (error instanceof ApiError) {
      if (error.httpStatus >= 500) req.log.error({ err: error }, 'request failed');
      else req.log.info({ code: error.code }, 'request refused');
      reply.code(error.httpStatus).headers(error.headers).type('application/json; charset=utf-8');
      return reply.send(stringifyJson(errorEnvelope(error.code, error.message, error.data)));
    }
    const code = (error as FastifyError).code;
    if (req.is404 && (error instanceof MalformedJson || (code && FRAMEWORK_ERROR_CODES.has(code)))) {
      return reply.code(404).type('application/json; charset=utf-8').send(stringifyJson(notFoundEnvelope(req)));
    }
    if (error instanceof MalformedJson || (code && FRAMEWORK_ERROR_CODES.has(code))) {
      const message = error instanceof MalformedJson ? error.message
        : code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? `Body exceeds ${config.bodyLimitBytes} bytes` : 'Illegal request';
      req.log.info({ code: 'SYS_ILLEGAL_PARAM', reason: code ?? 'MALFORMED_JSON' }, 'framework rejection');
      return reply.code(400).type('application/json; charset=utf-8').send(stringifyJson(frameworkRejection(message)));
    }
    if ((error as FastifyError).validation) {
      return reply.code(200).type('application/json; charset=utf-8')
        .send(stringifyJson(errorEnvelope('DAPI_PARAM_INVALID', `Invalid parameter: ${error.message}`, null)));
    }
    if (isDatabaseUnavailable(error)) {
      // Issue 28: the database is down or failing over; the transaction did not commit.
      req.log.warn({ code: 'SYS_UNAVAILABLE', error: error.message }, 'database unavailable');
      return reply.code(503).header('retry-after', DB_UNAVAILABLE_RETRY_AFTER_S).type('application/json; charset=utf-8')
        .send(stringifyJson(errorEnvelope('SYS_UNAVAILABLE', ERROR_CATALOG.SYS_UNAVAILABLE.message, null)));
    }
    req.log.error({ err: error }, 'unexpected failure');
    return reply.code(500).type('application/json; charset=utf-8')
      .send(stringifyJson(errorEnvelope('SYS_INTERNAL_ERROR', 'Internal error', null)));
  });

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).type('application/json; charset=utf-8').send(stringifyJson(notFoundEnvelope(req)));
  });

  await app.register(swagger, {
    // Issue 14: servers, shared components, examples, webhooks, partner routes first (openapi.ts).
    transformObject: (document) => finishOpenApi((document as { openapiObject: Record<string, unknown> }).openapiObject, openApiExtras(config)),
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Card Issuing and Company Management Service',
        version: '1.0.0',
        description: 'Signed HTTP/JSON interface for partners. Every response uses the envelope of D1; `code` is the only success criterion. See docs/api-guide.md.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-DAPI-API-KEY' },
          timestamp: { type: 'apiKey', in: 'header', name: 'X-DAPI-TIMESTAMP', description: '13-digit Unix epoch milliseconds' },
          nonce: { type: 'apiKey', in: 'header', name: 'X-DAPI-NONCE', description: 'Integer in [10000, 99999], fresh per request' },
          sign: { type: 'apiKey', in: 'header', name: 'X-DAPI-SIGN', description: 'lowercase hex HmacSHA256(apiKey + timestamp + nonce + payload, secretKey)' },
          adminToken: { type: 'http', scheme: 'bearer' },
          networkKey: { type: 'apiKey', in: 'header', name: 'X-DAPI-API-KEY', description: 'Card network ingress key issued by an operator (not a partner key); requests are signed like partner requests' },
        },
      },
    },
  });
  // The browsable explorer is loaded only where it is served (issue 28: what a configuration does not use stays unloaded).
  if (config.apiExplorer) await app.register((await import('@fastify/swagger-ui')).default, { routePrefix: '/docs' });
  // Limits by caller and by source address (docs/security.md): every request to the API before
  // authentication, the admin API, and failed authentications (key and admin-token guessing).
  const limits = await registerRateLimits(app, {
    redisUrl: config.redisUrl,
    windowMs: config.rateLimitWindowMs,
    callerMax: config.rateLimitMax,
    callerKey: (req) => req.partner?.partnerId ?? req.ip,
    addressMax: {
      preAuth: config.preAuthRateLimitMax, admin: config.adminRateLimitMax,
      authFailures: config.authFailureLimitMax, adminAuthFailures: config.adminAuthFailureLimitMax,
    },
    // The card network ingress is exempt: its own addresses carry every authorization of every
    // partner (D40); its failed authentications still count.
    guardedBy: (url) => (url.startsWith('/internal/admin/') ? 'admin' : url.startsWith('/open-api') ? 'preAuth' : null),
  });

  // Issue 31: the signature self-check is unsigned and charged one failed authentication per call.
  const selfCheckHook = limits.chargedAsFailure('authFailures');

  // Issue 29: the bearer token or an operator's console session, then the route's role.
  const operatorGate = new OperatorGate(ctx);
  const adminHook = limits.countingFailures('adminAuthFailures', 'admin', (req) => operatorGate.authenticate(req));
  const authenticator = new PartnerAuthenticator(ctx, partnerCache);
  const partnerHook = limits.countingFailures('authFailures', 'signed', async (req) => {
    req.partner = await authenticator.authenticate(signedRequestOf(req));
  });
  const networkAuthenticator = new NetworkAuthenticator(ctx);
  const networkHook = limits.countingFailures('authFailures', 'signed', async (req) => {
    await networkAuthenticator.authenticate(signedRequestOf(req));
  });
  const authHook = (mode: AuthMode, def: RouteDef) => (mode === 'partner' ? partnerHook
    : mode === 'admin' ? async (req: FastifyRequest) => { await adminHook(req); await operatorGate.authorize(req, def); }
      : mode === 'network' ? networkHook : def.countsAsFailedAuthentication ? selfCheckHook : null);
  const idempotency = new IdempotencyKeys(db, clock);

  // D37: the service's RSA key pair exists before the first request (generated at first start).
  const serviceKeys = new ServiceKeys(ctx);
  await serviceKeys.ensure();
  const routes = allRoutes(ctx, partnerCache, deps.partnerDecision, serviceKeys).filter((def) => !def.sandboxOnly || config.env === 'sandbox');
  for (const [def, operationId] of operationIds(routes)) {
    registerRoute(app, def, { authHook, rateLimit: limits.routeLimit, idempotency, operationId, audit: (req, d, action) => operatorGate.audited(req, d, action) });
  }

  // D39: the push stream of the managed-balance model (docs/push.md). Authenticated before the
  // upgrade, like any partner call: the four 5.2 values as headers or, for browsers, as query
  // parameters of the same names, signed over an empty payload. A refusal is a normal JSON answer.
  // An open connection is checked again at every poll interval (review rvC): it is closed (4001) once
  // its partner is disabled, its credentials replaced or its address removed from the API whitelist.
  const pushGrantHolds = async (grant: PushGrant): Promise<boolean> => {
    const partner = await partnerCache.get(grant.apiKey);
    return partner !== null && partner.partnerId === grant.partnerId && partner.secretKeyEnc === grant.credential
      && ipAllowed(partner.ipWhitelist.api, grant.ip, config.env);
  };
  const pushHub = new PushHub(ctx, (err) => app.log.warn({ err }, 'push stream read failed; reading again at the next notification or poll'), pushGrantHolds);
  app.addHook('onClose', async () => pushHub.close());
  // Only `Upgrade: websocket` requests reach the WebSocket plugin; another protocol's offer (h2c) is
  // answered as the HTTP/1.1 request it also is (src/platform/http/upgrades.ts).
  const webSocketUpgrades = new EventEmitter();
  takeOnlyWebSocketUpgrades(app.server, webSocketUpgrades);
  await app.register(websocket, { options: { maxPayload: 4096, server: webSocketUpgrades as unknown as http.Server } });
  const pushHook = limits.countingFailures('authFailures', 'signed', async (req) => {
    req.partner = await authenticator.authenticate(signedUpgradeOf(req));
  });
  // Where each connection without `since` starts, fixed before its upgrade is answered (PushHub.position).
  const pushFrom = new WeakMap<FastifyRequest, string>();
  /** When each upgrade request reached its checks (its access line's duration; onResponse does not run for it). */
  const pushStartedAt = new WeakMap<FastifyRequest, number>();
  app.route({
    method: 'GET',
    url: '/card/v1/ws',
    schema: { hide: true },
    preValidation: async (req: FastifyRequest) => {
      pushStartedAt.set(req, performance.now());
      await limits.refuseWhenExceeded('preAuth', req);
      await pushHook(req);
      const query = req.query as Record<string, unknown>;
      if (query.since !== undefined && !(typeof query.since === 'string' && /^(0|[1-9][0-9]{0,17})$/.test(query.since))) {
        throw paramInvalid('since', 'must be the sequence of a message received (a non-negative integer)');
      }
      if (query.externalUserId !== undefined && !(typeof query.externalUserId === 'string' && query.externalUserId.length >= 1 && query.externalUserId.length <= 64)) {
        throw paramInvalid('externalUserId', 'must be 1 to 64 characters');
      }
      pushFrom.set(req, await pushHub.position());
      // D39: at most PUSH_MAX_CONNECTIONS_PER_PARTNER open connections per partner on this instance
      // (a request that asks no upgrade is answered 404 and holds nothing).
      if (isWebSocketUpgrade(req.raw) && !pushHub.admit(req.partner!.partnerId, req.raw.socket)) {
        throw new ApiError('SYS_RATE_LIMITED', `Too many open push connections for this partner (at most ${config.pushMaxConnectionsPerPartner} on one instance); close one or retry later`,
          { headers: { 'retry-after': '5' } });
      }
    },
    // A signed request that asks no upgrade: the envelope, like any unknown path (not an empty 404).
    handler: async (req, reply) => {
      reply.code(404).type('application/json; charset=utf-8')
        .send(stringifyJson(errorEnvelope('SYS_NOT_FOUND', 'GET /card/v1/ws is a WebSocket: connect with a WebSocket client (Upgrade: websocket)', null)));
    },
    wsHandler: (socket, req) => {
      // An upgrade is answered by the WebSocket library (the reply is hijacked), so onResponse never runs:
      // its access line and SERVER span end here, with the 101 it was answered (path only: a browser's
      // signature values travel in the query).
      const ms = Math.round((performance.now() - (pushStartedAt.get(req) ?? performance.now())) * 10) / 10;
      endServerSpan(req.raw, '/card/v1/ws', 101, undefined);
      (req.log as unknown as RequestLogger).access('GET', '/card/v1/ws', 101, ms, req.partner?.partnerId, req.ip);
      const query = req.query as { since?: string; externalUserId?: string };
      const row = authenticatedRow(req.partner!);
      const grant: PushGrant | undefined = row ? { partnerId: row.partnerId, apiKey: row.apiKey, ip: req.ip, credential: row.secretKeyEnc ?? '' } : undefined;
      void pushHub.attach(socket, req.partner!.partnerId, { since: query.since ?? null, from: pushFrom.get(req)!, externalUserId: query.externalUserId ?? null, grant });
    },
  });

  // A failed console login counts like a wrong admin token (review rvC): each costs a memory-hard
  // password check, and names can be sprayed across accounts below each one's lockout.
  const consoleLoginGuard = limits.countingFailures('adminAuthFailures', 'console-login', async (req) => req.consoleLogin!());
  await app.register(registerConsole({
    ...ctx, gate: operatorGate, preAuthLimit: async (req) => limits.refuseWhenExceeded('preAuth', req), loginGuard: consoleLoginGuard,
  }), { prefix: '/console' });

  app.get('/openapi.json', { schema: { hide: true } }, async (_req, reply) => {
    reply.type('application/json; charset=utf-8').send(JSON.stringify(app.swagger()));
  });
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  // Issue 27 (docs/observability.md): the database, and each background job's freshness on an
  // instance that runs them. Only the database decides readiness (503): taking an instance out
  // of the balancer does not unstick a job; a stale job is reported (and alerted on) instead.
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const started = performance.now();
    let database: { status: 'up'; latencyMs: number } | { status: 'down'; error: string };
    try {
      await ping(db);
      database = { status: 'up', latencyMs: Math.round((performance.now() - started) * 10) / 10 };
    } catch (err) {
      // The driver's message names the database's address, port and user: logged for the operator,
      // not answered to whoever asks this unauthenticated endpoint (review rvC).
      app.log.warn({ err }, 'readiness: database unreachable');
      database = { status: 'down', error: 'unreachable (see the service log)' };
    }
    const jobs = config.workers ? jobFreshness(clock.now(), startedAtMs) : [];
    if (database.status === 'down') reply.code(503);
    return {
      status: database.status === 'down' ? 'database unreachable' : jobs.some((j) => j.status === 'stale') ? 'degraded' : 'ready',
      database,
      workers: config.workers,
      jobs,
    };
  });

  // Issue 27: the Prometheus exposition, on its own port (METRICS_PORT) or here behind the admin token.
  startProcessMetrics();
  observeDatabasePool(db);
  observeJobs({ db, clock }, { jobs: backgroundJobs(ctx), tasks: periodicTasks(ctx) });
  observeWebhooks({ db, clock });
  observeLedgerAudit(db);
  let metricsServer: http.Server | null = null;
  if (!metricsEnabled) {
    // METRICS_ENABLED=false: nothing is recorded and nothing is served.
  } else if (config.metricsPort === null) {
    app.get('/metrics', { schema: { hide: true }, preValidation: adminHook }, async (_req, reply) => {
      reply.type(EXPOSITION_CONTENT_TYPE);
      return exposition();
    });
  } else {
    const server = createMetricsServer();
    metricsServer = server;
    // onReady is awaited by listen() (onListen is not): the port answers once listen() resolves.
    app.addHook('onReady', async () => {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.metricsPort!, config.host, () => resolve());
      });
    });
    app.addHook('onClose', async () => {
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    });
  }

  return { app, ctx, metricsServer };
}

/** Each route with its OpenAPI operationId (derived from the path, unique: a clash is a bug). */
export function operationIds(routes: RouteDef[]): [RouteDef, string][] {
  const postPaths = new Set(routes.filter((r) => r.method === 'POST').map((r) => r.url));
  const getPaths = new Set(routes.filter((r) => r.method === 'GET').map((r) => r.url));
  const seen = new Set<string>();
  return routes.map((def) => {
    const clash = postPaths.has(def.url) && getPaths.has(def.url);
    const id = operationIdOf(def, clash);
    if (seen.has(id)) throw new Error(`duplicate operationId ${id} (${def.method} ${def.url}): give the route an explicit operationId`);
    seen.add(id);
    return [def, id];
  });
}

/**
 * Real sandbox answers of every operation, a success and an error each (issue 32): written by
 * `npm run openapi:examples` (test/openapi-examples/), kept true by test/openapi-examples.test.ts.
 */
const RESPONSE_EXAMPLES = JSON.parse(readFileSync(new URL('./openapi-examples.json', import.meta.url), 'utf8')) as OpenApiExtras['responseExamples'];

/** What the generated OpenAPI document is finished with (src/platform/http/openapi.ts). */
function openApiExtras(config: Config): OpenApiExtras {
  const namedSchemas: Record<string, unknown> = {};
  for (const contract of [partnersContract, organizationsContract, customersContract, fundingContract, cardsContract, velocityContract,
    authorizationContract, eventsContract, sandboxContract, webhooksContract, managedBalanceContract, consumerCardsContract, qrPaymentsContract, pushContract, cardUpgradesContract]) {
    for (const [name, value] of Object.entries(contract)) {
      if (value && typeof value === 'object' && !Array.isArray(value) && !(name in namedSchemas)) namedSchemas[name] = value;
    }
  }
  return {
    servers: [{ url: config.publicBaseUrl, description: `This deployment (${config.env})` }],
    description: [
      'Signed HTTP/JSON interface for partners of the card-issuing service.',
      '',
      '**Signing.** Every partner call carries `X-DAPI-API-KEY`, `X-DAPI-TIMESTAMP` (13-digit epoch milliseconds), `X-DAPI-NONCE` (integer in',
      '[10000, 99999], fresh per request) and `X-DAPI-SIGN` = lowercase hex HmacSHA256(apiKey + timestamp + nonce + payload) keyed with your',
      'secretKey; payload is the raw query string (GET) or the raw body (POST). The timestamp must be within 5 s of the service clock.',
      '',
      '**Envelope.** Every answer is `{code, message, messageDetail, data}`; `code` = `SYS_SUCCESS` is the only success criterion.',
      'Business errors come with HTTP 200; each operation lists its codes with their HTTP status.',
      '',
      '**Amounts** are JSON numbers with exact digits: parse them with a lossless JSON reader.',
      '',
      '**Retries.** Send an `Idempotency-Key` header on business POSTs: a retry with the same key and body answers the first response',
      'without a second write (24 hours).',
      '',
      '**Webhooks.** The `webhooks` section lists every event POSTed to your webhookUrl; `POST /open-api/webhook/v1/test` sends one now,',
      '`POST /open-api/webhook/v1/sample` a signed example of any event type (marked `data.test` = true).',
      '',
      '**Signature trouble?** In sandbox, `POST /open-api/sandbox/v1/signature-check` (unsigned) says step by step why a signature is refused;',
      'the published test vectors are in the SDK package (`test-vectors/signing.json`).',
      '',
      '**Common codes** (every signed route): DAPI_API_KEY_INVALID, DAPI_TIMESTAMP_FORMAT_ERROR, DAPI_TIMESTAMP_EXPIRED, DAPI_NONCE_INVALID,',
      'DAPI_SIGN_INVALID, DAPI_NONCE_REPLAYED (HTTP 401), DAPI_IP_NOT_ALLOWED (403), SYS_RATE_LIMITED (429, Retry-After), SYS_ILLEGAL_PARAM',
      '(400: Content-Type, malformed JSON, body over 64 KiB), SYS_INTERNAL_ERROR (500), SYS_NOT_FOUND (404, unknown path).',
      '',
      'Operator routes (tag Admin, bearer token) are listed last. The partner SDK (`card-issuing-sdk`) wraps every partner route.',
    ].join('\n'),
    namedSchemas,
    webhooks: webhooksContract.WEBHOOK_EVENTS,
    responseExamples: RESPONSE_EXAMPLES,
    tagOrder: [
      { name: 'Partner', description: 'Your own settings' },
      { name: 'Organizations', description: 'Companies, restrictions' },
      { name: 'Employees', description: 'Employees, KYC, restrictions' },
      { name: 'Funds', description: 'Funding pools, statements, low-balance alerts' },
      { name: 'Cards', description: 'Card profiles, applications, cards, secure card data, VAs, transfers' },
      { name: 'Velocity rules', description: 'Spend-limit rules, bindings, quotas' },
      { name: 'Transactions', description: 'Card transactions' },
      { name: 'User assets', description: 'Managed users\' balances per asset: credit, debit, conversion, movements' },
      { name: 'Consumer cards', description: 'Cards of managed users spending their assets, verification codes, card transactions' },
      { name: 'QR payments', description: 'QR payment records of managed users (PAY, REFUND, REFUND_PART, REVERSAL)' },
      { name: 'Push', description: 'Real-time push over WebSocket' },
      { name: 'Authorization forwarding', description: 'Deciding your cards\' spend at your auth_url' },
      { name: 'Webhooks', description: 'Event log, redelivery, test events, webhook signing secret' },
      { name: 'Sandbox', description: 'Simulations (sandbox only)' },
      { name: 'Credentials', description: 'One-time credential retrieval' },
      { name: 'Network ingress', description: 'Card network messages (operators of the network link only)' },
    ],
    operatorTags: ['Admin'],
    extraPaths: { '/card/v1/ws': { get: PUSH_OPERATION } },
  };
}

const queryParam = (name: string, description: string, schema: Record<string, unknown>, required = false) => ({ name, in: 'query', required, description, schema });

/** The WebSocket of D39 as an operation (no route definition describes an upgrade). See docs/push.md. */
const PUSH_OPERATION = {
  operationId: 'subscribePush',
  summary: 'Real-time push of your users\' balance changes, card transactions and QR payments (WebSocket)',
  description: 'A WebSocket upgrade (`GET` with `Upgrade: websocket`), authenticated before the upgrade with the four signature values signed over an empty payload, '
    + 'as the usual headers or, for browsers, as query parameters of the same names. A refusal is an ordinary JSON envelope, never a 101: '
    + '401 DAPI_*, 403 DAPI_IP_NOT_ALLOWED, 429 SYS_RATE_LIMITED, or HTTP 200 DAPI_PARAM_INVALID (like every business refusal). '
    + 'Then one PushMessage per text frame, as changes commit on any instance. `sequence` only grows (not contiguous): reconnect with `since` = the last one processed '
    + 'to receive exactly what was missed. Close codes: 4008 send buffer exceeded (reconnect with since), 4010 since too old (resync, connect without since), '
    + '4011 since ahead of the stream, 1001 shutting down. The SDK: `client.push.subscribe({ onMessage })`.',
  tags: ['Push'],
  security: [{ apiKey: [], timestamp: [], nonce: [], sign: [] }],
  parameters: [
    queryParam('since', 'The last sequence processed: first every message after it, then live ones', { type: 'string', pattern: '^(0|[1-9][0-9]{0,17})$' }),
    queryParam('externalUserId', 'Only this user\'s messages', { type: 'string', minLength: 1, maxLength: 64 }),
    ...['x-dapi-api-key', 'x-dapi-timestamp', 'x-dapi-nonce', 'x-dapi-sign'].map((n) => queryParam(n, `Browsers only: the ${n.slice(7)} header's value`, { type: 'string' })),
  ],
  responses: {
    '101': { description: 'Switching Protocols: then one message per text frame', content: { 'application/json': { schema: pushContract.PushMessage } } },
    '200': { description: 'Not upgraded: DAPI_PARAM_INVALID (since, externalUserId), HTTP 200 like every business refusal', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
    '401': { description: 'The signature checks of every partner call (DAPI_API_KEY_INVALID, DAPI_SIGN_INVALID, DAPI_NONCE_INVALID, DAPI_NONCE_REPLAYED, DAPI_TIMESTAMP_FORMAT_ERROR, DAPI_TIMESTAMP_EXPIRED)', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
    '403': { description: 'DAPI_IP_NOT_ALLOWED: the caller address is not on the API whitelist', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
    '429': { description: 'SYS_RATE_LIMITED: too many requests or failed authentications from the address; retry after the seconds in Retry-After', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
  },
};
