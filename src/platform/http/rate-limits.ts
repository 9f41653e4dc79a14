import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { ApiError } from '../errors.ts';
import { authenticationFailures, rateLimitRefusals } from '../metrics.ts';
import { rateLimitCounters } from './guards.ts';

/**
 * The service's rate limits (docs/security.md), as one plugin: the per-caller limit of signed
 * routes, the limits by source address (every request to a guarded prefix before authentication,
 * and failed authentications: key and admin-token guessing). One counter store for every limit:
 * Redis when a URL is given (shared by all instances behind the balancer), else in-process.
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
  /** A route's `config.rateLimit`: the per-caller limit. */
  routeLimit: { max: number; timeWindow: number };
  /** Counts the request against an address limit; 429 with Retry-After once the address is over it. */
  refuseWhenExceeded(limit: AddressLimit, req: FastifyRequest): Promise<void>;
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

const rateLimited = (ttlMs: number) => new ApiError('SYS_RATE_LIMITED', undefined, { headers: { 'retry-after': String(Math.max(1, Math.ceil(ttlMs / 1000))) } });

export async function registerRateLimits(app: FastifyInstance, options: RateLimitOptions): Promise<RateLimits> {
  const redis = options.redisUrl ? new (await import('ioredis')).Redis(options.redisUrl, { connectTimeout: 500, maxRetriesPerRequest: 1, lazyConnect: false }) : null;
  if (redis) app.addHook('onClose', async () => void (await redis.quit()));
  await app.register(rateLimit, {
    global: false,
    hook: 'preValidation',
    ...(redis ? { redis, nameSpace: 'cardsvc-rate-limit-' } : {}),
    keyGenerator: options.callerKey,
    errorResponseBuilder: () => {
      rateLimitRefusals.inc({ kind: 'partner' });
      return new ApiError('SYS_RATE_LIMITED');
    },
    // Retry-After (and the limit headers) only on a refusal: every other response stays lean.
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
  });

  const prefixes: Record<AddressLimit, string> = { preAuth: 'preauth', admin: 'admin', authFailures: 'authfail', adminAuthFailures: 'adminfail' };
  const limiters = Object.fromEntries((Object.keys(prefixes) as AddressLimit[]).map((limit) => [limit, app.createRateLimit({
    max: options.addressMax[limit], timeWindow: options.windowMs, keyGenerator: (req: FastifyRequest) => `${prefixes[limit]}:${req.ip}`,
  })])) as Record<AddressLimit, ReturnType<FastifyInstance['createRateLimit']>>;

  const refuseWhenExceeded = async (limit: AddressLimit, req: FastifyRequest) => {
    const state = await limiters[limit](req);
    if (state.isAllowed || !state.isExceeded) return;
    rateLimitCounters[limit]++;
    throw rateLimited(state.ttl);
  };
  app.addHook('onRequest', async (req) => {
    const limit = options.guardedBy(req.url);
    if (limit) await refuseWhenExceeded(limit, req);
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
      const state = await limiters[limit](req);
      if (state.isAllowed || !state.isExceeded) throw err;
      if (blockedUntil.size >= BLOCKED_ADDRESSES_MAX) blockedUntil.clear();
      blockedUntil.set(key, Date.now() + state.ttl);
      rateLimitCounters[limit]++;
      throw rateLimited(state.ttl);
    }
  };

  const chargedAsFailure: RateLimits['chargedAsFailure'] = (limit) => async (req) => {
    const key = `${limit}:${req.ip}`;
    const until = blockedUntil.get(key);
    if (until !== undefined && until > Date.now()) {
      rateLimitCounters[limit]++;
      throw rateLimited(until - Date.now());
    }
    const state = await limiters[limit](req);
    if (state.isAllowed || !state.isExceeded) return;
    if (blockedUntil.size >= BLOCKED_ADDRESSES_MAX) blockedUntil.clear();
    blockedUntil.set(key, Date.now() + state.ttl);
    rateLimitCounters[limit]++;
    throw rateLimited(state.ttl);
  };

  return { routeLimit: { max: options.callerMax, timeWindow: options.windowMs }, refuseWhenExceeded, countingFailures, chargedAsFailure };
}
