import type { FastifyInstance, FastifyRequest, preValidationHookHandler } from 'fastify';
import { ApiError } from '../errors.ts';
import { authenticationFailures, rateLimitRefusals } from '../metrics.ts';
import { rateLimitCounters } from './guards.ts';

/**
 * The service's rate limits (docs/security.md), as one plugin: the per-caller limit of signed
 * routes, the limits by source address (every request to a guarded prefix before authentication,
 * and failed authentications: key and admin-token guessing). One counter store for every limit:
 * Redis when a URL is given (the rate-limit plugin's store, shared by all instances behind the
 * balancer), else this process's WindowCounters (the plugin is then not loaded).
 * Knows no domain: who the caller is and which paths are guarded are parameters.
 */

/** The limits by source address; each counts its refusals in `rateLimitCounters` (GET /internal/admin/v1/connection-guards, /metrics). */
export type AddressLimit = keyof typeof rateLimitCounters;
/** The limits that count failed authentications. */
export type FailureLimit = 'authFailures' | 'adminAuthFailures';

export interface RateLimitOptions {
  /** Shared counter store; null keeps the counters in this process. */
  redisUrl: string | null;
  windowMs: number;
  /** Requests per window of one caller on a route registered with `routeLimit`. */
  callerMax: number;
  /** The key of the per-caller limit (the authenticated caller, else the address). */
  callerKey(req: FastifyRequest): string;
  /** Requests per window and address, by limit. */
  addressMax: Record<AddressLimit, number>;
  /** Which address limit (if any) a request counts against before anything else runs (onRequest). */
  guardedBy(url: string): Exclude<AddressLimit, FailureLimit> | null;
}

export interface RateLimits {
  /**
   * What a route limited per caller adds: with Redis, the plugin's route config; in process, a
   * preValidation hook that runs after the route's authentication (issue 34: no plugin on the path),
   * made per route template (`url`), so a request does not read Fastify's `routeOptions` for it.
   */
  routeLimit: { config: { max: number; timeWindow: number } | false; hook: ((url: string) => preValidationHookHandler) | null };
  /** Counts the request against an address limit; 429 with Retry-After once the address is over it. */
  refuseWhenExceeded(limit: AddressLimit, req: FastifyRequest): void | Promise<void>;
  /**
   * Wraps an authentication step: its 401/403 failures count against the address (`kind` labels
   * the metric). Once an address is over its budget it is refused with 429 before any
   * verification until the window ends, so a guesser learns nothing more; another instance
   * learns it at that address's next failure there.
   */
  countingFailures(limit: FailureLimit, kind: string, authenticate: (req: FastifyRequest) => Promise<void>): (req: FastifyRequest) => Promise<void>;
  /**
   * Charges every request as one failed authentication of its address, against the same budget
   * and block as `countingFailures` (issue 31: the unsigned signature self-check, which answers
   * questions about credentials without requiring them). 429 with Retry-After once over it.
   */
  chargedAsFailure(limit: FailureLimit): (req: FastifyRequest) => Promise<void>;
}

const BLOCKED_ADDRESSES_MAX = 100_000;
/** Keys one in-process counter table holds; past it the oldest window is dropped first. */
const WINDOW_KEYS_MAX = 20_000;

const rateLimited = (ttlMs: number) => new ApiError('SYS_RATE_LIMITED', undefined, { headers: { 'retry-after': String(Math.max(1, Math.ceil(ttlMs / 1000))) } });

/**
 * In-process counters in fixed windows, as the rate-limit plugin's local store counts (a key's
 * window opens at its first hit and lasts `windowMs`), but synchronous: issue 34 measured the
 * plugin's two promise-based checks per signed request at about a fifth of its CPU. Insertion
 * order is window-start order (a new window is re-inserted), so the first key is the oldest one.
 */
export class WindowCounters {
  private readonly windows = new Map<string, { count: number; startMs: number }>();

  constructor(private readonly windowMs: number, private readonly maxKeys = WINDOW_KEYS_MAX) {}

  /** Counts one hit of `key`; answers the milliseconds left in its window when the count is over `max`, else 0. */
  hit(key: string, max: number, nowMs: number): number {
    let w = this.windows.get(key);
    if (w === undefined || w.startMs + this.windowMs <= nowMs) {
      if (w !== undefined) this.windows.delete(key);
      else if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value!);
      w = { count: 0, startMs: nowMs };
      this.windows.set(key, w);
    }
    w.count++;
    return w.count > max ? this.windowMs - (nowMs - w.startMs) : 0;
  }
}

export async function registerRateLimits(app: FastifyInstance, options: RateLimitOptions): Promise<RateLimits> {
  const redis = options.redisUrl ? new (await import('ioredis')).Redis(options.redisUrl, { connectTimeout: 500, maxRetriesPerRequest: 1, lazyConnect: false }) : null;
  const prefixes: Record<AddressLimit, string> = { preAuth: 'preauth', admin: 'admin', authFailures: 'authfail', adminAuthFailures: 'adminfail' };
  /** Counts the request against an address limit: the milliseconds until its window ends when over it, else 0. */
  let overLimitFor: (limit: AddressLimit, req: FastifyRequest) => number | Promise<number>;
  let routeLimit: RateLimits['routeLimit'];
  if (redis) {
    // Shared counters: the rate-limit plugin's Redis store (keys cardsvc-rate-limit-*).
    app.addHook('onClose', async () => void (await redis.quit()));
    await app.register((await import('@fastify/rate-limit')).default, {
      global: false,
      hook: 'preValidation',
      redis,
      nameSpace: 'cardsvc-rate-limit-',
      keyGenerator: options.callerKey,
      errorResponseBuilder: () => {
        rateLimitRefusals.inc({ kind: 'partner' });
        return new ApiError('SYS_RATE_LIMITED');
      },
      // Retry-After (and the limit headers) only on a refusal: every other response stays lean.
      addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    });
    const limiters = Object.fromEntries((Object.keys(prefixes) as AddressLimit[]).map((limit) => [limit, app.createRateLimit({
      max: options.addressMax[limit], timeWindow: options.windowMs, keyGenerator: (req: FastifyRequest) => `${prefixes[limit]}:${req.ip}`,
    })])) as Record<AddressLimit, ReturnType<FastifyInstance['createRateLimit']>>;
    overLimitFor = async (limit, req) => {
      const state = await limiters[limit](req);
      return state.isAllowed || !state.isExceeded ? 0 : Math.max(1, state.ttl);
    };
    routeLimit = { config: { max: options.callerMax, timeWindow: options.windowMs }, hook: null };
  } else {
    const byAddress = Object.fromEntries((Object.keys(prefixes) as AddressLimit[]).map((limit) => [limit, new WindowCounters(options.windowMs)])) as Record<AddressLimit, WindowCounters>;
    overLimitFor = (limit, req) => byAddress[limit].hit(req.ip, options.addressMax[limit], Date.now());
    // Per caller and route, like the plugin's store per route; its refusal carries its headers.
    const byCaller = new WindowCounters(options.windowMs);
    const max = options.callerMax;
    routeLimit = {
      config: false,
      hook: (url) => (req, reply, done) => {
        const ttl = byCaller.hit(`${req.method}${url}-${options.callerKey(req)}`, max, Date.now());
        if (ttl === 0) return done();
        const seconds = String(Math.ceil(ttl / 1000));
        reply.header('x-ratelimit-limit', String(max)).header('x-ratelimit-remaining', '0').header('x-ratelimit-reset', seconds).header('retry-after', seconds);
        rateLimitRefusals.inc({ kind: 'partner' });
        done(new ApiError('SYS_RATE_LIMITED'));
      },
    };
  }

  const refused = (limit: AddressLimit, ttl: number): void => {
    if (ttl === 0) return;
    rateLimitCounters[limit]++;
    throw rateLimited(ttl);
  };
  const refuseWhenExceeded = (limit: AddressLimit, req: FastifyRequest): void | Promise<void> => {
    const ttl = overLimitFor(limit, req);
    return typeof ttl === 'number' ? refused(limit, ttl) : ttl.then((t) => refused(limit, t));
  };
  app.addHook('onRequest', (req, _reply, done) => {
    const limit = options.guardedBy(req.url);
    if (!limit) return done();
    let pending: void | Promise<void>;
    try {
      pending = refuseWhenExceeded(limit, req);
    } catch (err) {
      return done(err as Error);
    }
    if (pending) pending.then(() => done(), done);
    else done();
  });

  const blockedUntil = new Map<string, number>();
  const countingFailures: RateLimits['countingFailures'] = (limit, kind, authenticate) => async (req) => {
    const key = `${limit}:${req.ip}`;
    const until = blockedUntil.get(key);
    if (until !== undefined) {
      if (until > Date.now()) {
        rateLimitCounters[limit]++;
        throw rateLimited(until - Date.now());
      }
      blockedUntil.delete(key);
    }
    try {
      await authenticate(req);
    } catch (err) {
      if (!(err instanceof ApiError) || (err.httpStatus !== 401 && err.httpStatus !== 403)) throw err;
      authenticationFailures.inc({ kind, reason: err.code });
      const ttl = await overLimitFor(limit, req);
      if (ttl === 0) throw err;
      if (blockedUntil.size >= BLOCKED_ADDRESSES_MAX) blockedUntil.clear();
      blockedUntil.set(key, Date.now() + ttl);
      rateLimitCounters[limit]++;
      throw rateLimited(ttl);
    }
  };

  const chargedAsFailure: RateLimits['chargedAsFailure'] = (limit) => async (req) => {
    const key = `${limit}:${req.ip}`;
    const until = blockedUntil.get(key);
    if (until !== undefined && until > Date.now()) {
      rateLimitCounters[limit]++;
      throw rateLimited(until - Date.now());
    }
    const ttl = await overLimitFor(limit, req);
    if (ttl === 0) return;
    if (blockedUntil.size >= BLOCKED_ADDRESSES_MAX) blockedUntil.clear();
    blockedUntil.set(key, Date.now() + ttl);
    rateLimitCounters[limit]++;
    throw rateLimited(ttl);
  };

  return { routeLimit, refuseWhenExceeded, countingFailures, chargedAsFailure };
}
