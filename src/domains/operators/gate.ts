import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../platform/context.ts';
import { roleAllows, type AdminCaller, type OperatorRole } from '../../platform/caller.ts';
import { constantTimeEqual } from '../../platform/crypto/secrets.ts';
import { ApiError } from '../../platform/errors.ts';
import { requiredRole, type RouteDef } from '../../platform/http/router.ts';
import { appendAudit, redact } from './audit.ts';
import { checkSession, csrfMatches, type OperatorSession, type SessionCheck } from './service.ts';

/** The admin CLI's user agent: its bearer-token calls are recorded with channel cli. */
export const ADMIN_CLI_USER_AGENT = 'cardsvc-admin-cli';
export const CSRF_HEADER = 'x-csrf-token';
export const BEARER_ACTOR = 'admin-token';

/** Body fields that name what an admin action acts on, most specific first (the audit's target). */
const TARGET_FIELDS = ['operatorId', 'cardId', 'customerId', 'organizationId', 'subjectId', 'partnerId', 'networkKeyId', 'cardProfileId',
  'eventId', 'externalUserId', 'asset', 'name'];

export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * Who may do what on the admin API and the console (issue 29). An admin route is called either
 * with the bearer token (automation and bootstrap: actor `admin-token`, role admin) or with an
 * operator's console session cookie, whose changes also carry the session's CSRF token in the
 * X-CSRF-Token header. The route's declared role (RouteDef.role, default admin) is then checked;
 * a refused change is recorded in the audit trail as DENIED, every answered change as DONE (in the
 * change's own transaction) or FAILED.
 */
export class OperatorGate {
  readonly cookieName: string;
  private readonly secureCookie: boolean;

  constructor(private readonly ctx: AppContext) {
    // Production: Secure, and the __Host- prefix (no Domain, Path=/) so no other host or path can set it.
    this.secureCookie = ctx.config.env === 'production';
    this.cookieName = this.secureCookie ? '__Host-cardsvc_console' : 'cardsvc_console';
  }

  sessionCookie(token: string): string {
    return `${this.cookieName}=${token}; Path=/; HttpOnly; SameSite=Strict${this.secureCookie ? '; Secure' : ''}`;
  }

  clearedCookie(): string {
    return `${this.cookieName}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${this.secureCookie ? '; Secure' : ''}`;
  }

  /** The console session a request's cookie names (idle and absolute timeouts applied). */
  session(req: FastifyRequest): Promise<SessionCheck> {
    return checkSession(this.ctx, cookieValue(req.headers.cookie, this.cookieName));
  }

  callerOf(session: OperatorSession, channel: AdminCaller['channel']): AdminCaller {
    return { actor: session.operator.name, operatorId: session.operator.operatorId, role: session.operator.role, channel };
  }

  /** Authentication of an admin API request (throws SYS_UNAUTHORIZED); sets req.admin. */
  async authenticate(req: FastifyRequest): Promise<void> {
    const header = req.headers.authorization;
    if (header !== undefined) {
      const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
      if (!token || !constantTimeEqual(token, this.ctx.config.adminToken)) throw new ApiError('SYS_UNAUTHORIZED');
      const cli = (req.headers['user-agent'] ?? '').startsWith(ADMIN_CLI_USER_AGENT);
      req.admin = { actor: BEARER_ACTOR, operatorId: null, role: 'admin', channel: cli ? 'cli' : 'admin-api' };
      return;
    }
    const check = await this.session(req);
    if (!check.ok) throw new ApiError('SYS_UNAUTHORIZED', 'Missing or wrong admin bearer token, or no open operator session');
    req.admin = this.callerOf(check.session, 'admin-api');
    // A change made with a session cookie must prove it comes from the console's own page (a HEAD
    // is its GET without the body: a read).
    if (req.method !== 'GET' && req.method !== 'HEAD' && !csrfMatches(check.session, req.headers[CSRF_HEADER])) {
      await this.record(req, req.admin, `${req.method} ${req.routeOptions.url ?? req.url}`, null, { reason: 'missing or wrong CSRF token' }, 'DENIED');
      throw new ApiError('SYS_FORBIDDEN', 'Missing or wrong CSRF token');
    }
  }

  /** The role check of an admin route, after authentication. */
  async authorize(req: FastifyRequest, def: RouteDef): Promise<void> {
    const caller = req.admin!;
    const needs = requiredRole(def);
    if (roleAllows(caller.role, needs)) return;
    if (def.method !== 'GET') await this.record(req, caller, `${def.method} ${def.url}`, targetOf(req.body), { reason: `needs role ${needs}` }, 'DENIED');
    throw new ApiError('SYS_FORBIDDEN', `Your role (${caller.role}) does not allow this action; it needs ${needs}`);
  }

  /** The router's audit hook: an admin POST, run with its entry (see recorded). */
  audited(req: FastifyRequest, def: RouteDef, action: () => Promise<unknown>): Promise<unknown> {
    return this.recorded(req, req.admin!, `${def.method} ${def.url}`, targetOf(req.body), { request: redact(req.body ?? {}) }, action);
  }

  /**
   * Runs an administrative action (admin API, console or CLI) and appends its DONE entry in the same
   * database transaction (PCI DSS 10.2): if the append fails, or the process dies before the commit,
   * the action did not happen either. An action that fails is rolled back, then recorded as FAILED
   * with its error code.
   */
  async recorded<T>(req: FastifyRequest, caller: AdminCaller, action: string, target: string | null, summary: Record<string, unknown>,
    run: () => Promise<T>): Promise<T> {
    try {
      return await this.ctx.db.atomic(async () => {
        const result = await run();
        await this.record(req, caller, action, target, summary, 'DONE');
        return result;
      });
    } catch (error) {
      const code = error instanceof ApiError ? error.code : 'SYS_INTERNAL_ERROR';
      try {
        await this.record(req, caller, action, target, { ...summary, error: code }, 'FAILED');
      } catch (appendError) {
        // The action did not happen (rolled back); its caller gets the action's own error.
        req.log.error({ err: appendError }, 'audit entry of a failed action not recorded');
      }
      throw error;
    }
  }

  /** Appends one entry for this request. */
  async record(req: FastifyRequest, caller: AdminCaller, action: string, target: string | null, summary: Record<string, unknown>,
    outcome: 'DONE' | 'DENIED' | 'FAILED'): Promise<void> {
    await appendAudit(this.ctx.db, this.ctx.config.masterKey, {
      caller, action, target, summary, outcome, sourceIp: req.ip, requestId: String(req.id),
    }, new Date(this.ctx.clock.now()));
  }

  allows(caller: AdminCaller, needs: OperatorRole): boolean {
    return roleAllows(caller.role, needs);
  }
}

export function targetOf(body: unknown): string | null {
  if (!body || typeof body !== 'object') return null;
  const b = body as Record<string, unknown>;
  for (const f of TARGET_FIELDS) if (typeof b[f] === 'string') return b[f] as string;
  return null;
}
