import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../platform/context.ts';
import type { AdminCaller, OperatorRole } from '../../platform/caller.ts';
import { ApiError } from '../../platform/errors.ts';
import { CONTROL_CHARACTERS } from '../../platform/http/validation.ts';
import {
  csrfMatches, IDLE_TIMEOUT_MS, login, logout, OPERATOR_NAME, redact, type OperatorGate, type OperatorSession,
} from '../operators/index.ts';
import { FAVICON, html, page, STYLESHEET } from './views.ts';
import { consolePages } from './pages.ts';

export interface ConsoleDeps extends AppContext {
  gate: OperatorGate;
  /** The service's limit of requests per source address before authentication. */
  preAuthLimit(req: FastifyRequest): Promise<void>;
  /**
   * Runs `req.consoleLogin` (which throws SYS_UNAUTHORIZED for a refused attempt) counted against
   * the address's failed-authentication budget: once over it, SYS_RATE_LIMITED before any check.
   */
  loginGuard?(req: FastifyRequest): Promise<void>;
}

/**
 * The operator console's headers: no script at all, styles and images from the service only, no
 * framing, forms only to itself; nothing cached; no referrer leaves.
 */
export const CONSOLE_CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** A change refused (role or CSRF): answered 403 with a page, recorded as DENIED. */
export class ConsoleRefusal extends Error {
  constructor(message: string, readonly status = 403) {
    super(message);
  }
}

export interface ConsoleRequest {
  caller: AdminCaller;
  session: OperatorSession;
  csrf: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    console: ConsoleRequest | null;
    /** The login attempt a console login runs under ConsoleDeps.loginGuard. */
    consoleLogin?: () => Promise<void>;
  }
}

/** Fields of a console form (application/x-www-form-urlencoded). */
export function form(req: FastifyRequest): Record<string, string> {
  return (req.body ?? {}) as Record<string, string>;
}

const PUBLIC_PATHS = new Set(['/console/login', '/console/assets/console.css', '/console/assets/favicon.svg']);

export function registerConsole(deps: ConsoleDeps) {
  const { gate } = deps;
  return async function consolePlugin(app: FastifyInstance): Promise<void> {
    app.decorateRequest('console', null);
    app.decorateRequest('consoleLogin', undefined);
    // Pages, not API operations: kept out of the OpenAPI document.
    app.addHook('onRoute', (opts) => {
      opts.schema = { ...(opts.schema ?? {}), hide: true };
    });
    // Forms only (the service's JSON parser is not inherited: a JSON body could carry non-string
    // fields). Every field follows the rule of every API string (docs/security.md): no control
    // character (no field of a console form is multi-line) and no lone surrogate; a NUL would
    // otherwise reach PostgreSQL (500) and a newline or an escape sequence the partner's event
    // (review rvC).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16_384 }, (_req, body, done) => {
      const fields = Object.fromEntries(new URLSearchParams(body as string));
      const bad = Object.entries(fields).find(([, value]) => CONTROL_CHARACTERS.test(value));
      if (bad) return done(new ConsoleRefusal(`The field "${bad[0].slice(0, 40)}" has a control character; no console field takes one.`, 400), undefined);
      done(null, fields);
    });

    app.addHook('onRequest', async (req, reply) => {
      reply.headers({
        'content-security-policy': CONSOLE_CSP,
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-store',
        'cross-origin-opener-policy': 'same-origin',
        ...(deps.config.env === 'production' ? { 'strict-transport-security': 'max-age=31536000' } : {}),
      });
      await deps.preAuthLimit(req);
    });

    // Every page but the login needs an open session; an expired one goes back to the login.
    app.addHook('preHandler', async (req, reply) => {
      const path = req.url.split('?')[0];
      const crossSite = req.method === 'POST' && sentFromAnotherSite(req);
      if (PUBLIC_PATHS.has(path)) {
        // The login form has no session to carry a CSRF token: a form another site makes the
        // browser post would log the victim into the attacker's account (login CSRF; review rvC).
        if (crossSite) throw new ConsoleRefusal('This form was not sent from the console\'s own page.');
        return;
      }
      const check = await gate.session(req);
      if (!check.ok) {
        reply.header('set-cookie', gate.clearedCookie());
        return reply.redirect(check.reason === 'EXPIRED' ? '/console/login?expired=1' : '/console/login', 303);
      }
      const caller = gate.callerOf(check.session, 'console');
      req.admin = caller;
      req.console = { caller, session: check.session, csrf: check.session.csrfToken };
      if (req.method === 'POST' && (crossSite || !csrfMatches(check.session, form(req)._csrf))) {
        await gate.record(req, caller, `console ${path}`, null, { reason: crossSite ? 'sent from another site' : 'missing or wrong CSRF token' }, 'DENIED');
        throw new ConsoleRefusal('This form was not sent from your console session (missing or wrong CSRF token). Reload the page and try again.');
      }
    });

    app.setErrorHandler(async (error, req, reply) => {
      const status = error instanceof ConsoleRefusal ? error.status : (error as { statusCode?: number }).statusCode ?? 500;
      if (!(error instanceof ConsoleRefusal) && status >= 500) req.log.error({ err: error }, 'console page failed');
      const message = error instanceof ConsoleRefusal ? error.message
        : error instanceof ApiError ? error.message : status < 500 ? 'The request could not be read.' : 'Something went wrong; the log has this request\'s id.';
      reply.code(status).type('text/html; charset=utf-8');
      return page({ title: status === 403 ? 'Not allowed' : 'Error', caller: req.console?.caller ?? null, csrf: req.console?.csrf ?? null, error: message },
        null);
    });

    app.get('/assets/console.css', async (_req, reply) => {
      reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8');
      return STYLESHEET;
    });

    app.get('/assets/favicon.svg', async (_req, reply) => {
      reply.header('cache-control', 'public, max-age=3600').type('image/svg+xml');
      return FAVICON;
    });

    app.get('/login', async (req, reply) => {
      const query = req.query as { expired?: string };
      reply.type('text/html; charset=utf-8');
      return loginPage(query.expired ? `Your session ended after ${IDLE_TIMEOUT_MS / 60_000} minutes without activity. Log in again.` : null, null);
    });

    app.post('/login', async (req, reply) => {
      const f = form(req);
      const name = String(f.name ?? '').trim().slice(0, 40);
      // Every attempt is recorded; a session, or a failure counted toward the lockout, commits with its entry.
      const attempt = () => login(deps, { name, password: String(f.password ?? ''), code: String(f.code ?? '') }, async (o) => {
        const caller: AdminCaller = o.operator
          ? { actor: o.operator.name, operatorId: o.operator.operatorId, role: o.operator.role, channel: 'console' }
          // An unknown name is recorded only when it has an operator name's form: the login form is
          // unauthenticated, and free text (control characters, terminal escapes, other operators'
          // look-alikes) must not be written into the audit trail as an actor (review rvC).
          : { actor: OPERATOR_NAME.test(name) ? name : name ? '(not an operator name)' : '(empty)', operatorId: null, role: 'viewer', channel: 'console' };
        if (o.ok) await gate.record(req, caller, 'login', o.operator.operatorId, {}, 'DONE');
        else await gate.record(req, caller, 'login', caller.operatorId, { reason: o.reason, ...(o.lockedNow ? { lockedNow: true } : {}) }, 'FAILED');
      });
      const made: { outcome?: Awaited<ReturnType<typeof attempt>> } = {};
      req.consoleLogin = async () => {
        made.outcome = await attempt();
        if (!made.outcome.ok) throw new ApiError('SYS_UNAUTHORIZED');
      };
      reply.type('text/html; charset=utf-8');
      try {
        await (deps.loginGuard ?? ((r: FastifyRequest) => r.consoleLogin!()))(req);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (err.code === 'SYS_RATE_LIMITED') {
          // Too many failed logins from this address: refused before any check until the window ends.
          reply.code(429).headers(err.headers);
          return loginPage(null, 'Too many failed logins from this address. Wait a minute and try again.');
        }
        if (made.outcome === undefined) throw err;
      }
      const outcome = made.outcome!;
      if (!outcome.ok) {
        reply.code(401);
        return loginPage(null, outcome.reason === 'LOCKED'
          ? 'This account is locked after repeated failed logins. Try again later or ask an administrator to unlock it.'
          : outcome.reason === 'DISABLED' ? 'This account is disabled.' : 'Name, password or code is wrong.');
      }
      reply.header('set-cookie', gate.sessionCookie(outcome.sessionToken));
      return reply.redirect('/console', 303);
    });

    app.post('/logout', async (req, reply) => {
      const c = req.console!;
      await gate.recorded(req, c.caller, 'logout', c.caller.operatorId, {}, () => logout(deps, c.session));
      reply.header('set-cookie', gate.clearedCookie());
      return reply.redirect('/console/login', 303);
    });

    consolePages(app, deps);
  };
}

/**
 * A browser's own word that another site (or a sibling subdomain) made it send this request
 * (Fetch Metadata, `Sec-Fetch-Site`). Absent (a script, an older browser) or `same-origin` / `none`
 * (typed, bookmarked) passes; the CSRF token and SameSite=Strict remain the other layers.
 */
function sentFromAnotherSite(req: FastifyRequest): boolean {
  const site = req.headers['sec-fetch-site'];
  return site !== undefined && site !== 'same-origin' && site !== 'none';
}

function loginPage(notice: string | null, error: string | null): string {
  return page({ title: 'Log in', caller: null, csrf: null, notice, error }, loginForm());
}

function loginForm() {
  return html`<form method="post" action="/console/login" class="stack">
    <label for="name">Name</label>
    <input id="name" name="name" autocomplete="username" required autofocus />
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required />
    <label for="code">Code from your authenticator app</label>
    <input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" autocomplete="one-time-code" required />
    <button type="submit">Log in</button>
  </form>`;
}

/**
 * The role check of a console action: refused changes are recorded as DENIED (the caller's name,
 * the action, the target) and answered 403.
 */
export async function need(gate: OperatorGate, req: FastifyRequest, role: OperatorRole, action: string, target: string | null): Promise<AdminCaller> {
  const caller = req.console!.caller;
  if (gate.allows(caller, role)) return caller;
  if (req.method === 'POST') await gate.record(req, caller, action, target, { reason: `needs role ${role}`, request: redact(withoutCsrf(form(req))) }, 'DENIED');
  throw new ConsoleRefusal(`Your role (${caller.role}) does not allow this; it needs ${role}.`);
}

export function withoutCsrf(f: Record<string, string>): Record<string, string> {
  const { _csrf: _ignored, ...rest } = f;
  return rest;
}

/** What a page says after a change; the query names one of these (no free text from a link). */
export const NOTICES = {
  blocked: 'Card blocked.',
  unblocked: 'Card unblocked.',
  approved: 'KYC approved.',
  rejected: 'KYC rejected.',
  resent: 'Event scheduled for redelivery.',
  updated: 'Operator updated.',
} as const;

/** Redirect after a change (post/redirect/get), with a notice for the next page. */
export function done(reply: FastifyReply, to: string, notice: keyof typeof NOTICES) {
  const sep = to.includes('?') ? '&' : '?';
  return reply.redirect(`${to}${sep}notice=${notice}`, 303);
}

export function noticeOf(req: FastifyRequest): string | null {
  const key = (req.query as { notice?: string }).notice;
  return key && key in NOTICES ? NOTICES[key as keyof typeof NOTICES] : null;
}
