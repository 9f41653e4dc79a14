import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { DeploymentEnv } from '../../platform/deployment.ts';
import { ipAllowed } from '../../platform/http/ip.ts';
import { callbackUrlViolation, ForbiddenAddressError, guardedLookup, hostOf } from '../../platform/http/ssrf.ts';
import { outgoingRequest, type ClientSpan } from '../../platform/tracing.ts';

export type AttemptOutcome = 'SUCCESS' | 'HTTP_ERROR' | 'TIMEOUT' | 'NETWORK_ERROR' | 'BLOCKED' | 'NOT_CONFIGURED';

export interface PostResult {
  outcome: AttemptOutcome;
  httpStatus: number | null;
  /** Wall-clock duration of the attempt (DNS, connect, answer), whatever the service clock says. */
  latencyMs: number;
  error: string | null;
}

export interface PostOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** No complete answer (status line, headers and body) within this: TIMEOUT. */
  timeoutMs: number;
  /** Production: refuse loopback, private and link-local destinations (D38). */
  blockPrivateAddresses: boolean;
  /**
   * 5.5, D56: the partner's webhook IP whitelist and the environment that reads it. The address
   * dialled must be on it; an empty list admits any address in sandbox and none in production.
   */
  whitelist: { entries: string[]; env: DeploymentEnv };
}

/** The address a webhook would be dialled to is not on the partner's webhook IP whitelist (D56). */
export class NotOnWebhookWhitelistError extends Error {
  readonly code = 'EWHITELIST';
  constructor(host: string, addresses: string[], empty: boolean) {
    const where = host === addresses.join(', ') ? host : `${host} (${addresses.join(', ')})`;
    super(empty
      ? `${where} is not on the webhook IP whitelist (ipWhitelist.webhook): the list is empty, and production delivers to no address until it lists one`
      : `${where} is not on the webhook IP whitelist (ipWhitelist.webhook)`);
    this.name = 'NotOnWebhookWhitelistError';
  }
}

/** The system resolver, unguarded (sandbox: local receivers are allowed, D38). */
const plainLookup: LookupFunction = (hostname, options, callback) => dnsLookup(hostname, options, callback as never);

/**
 * The socket lookup of a webhook: the SSRF guard (production), then only the addresses on the
 * whitelist are given to the socket, so the address dialled is always a listed one; none listed
 * fails the attempt with NotOnWebhookWhitelistError.
 */
function whitelistedLookup(options: PostOptions): LookupFunction {
  const resolve = options.blockPrivateAddresses ? guardedLookup : plainLookup;
  const { entries, env } = options.whitelist;
  return (hostname, lookupOptions, callback) => {
    resolve(hostname, { ...lookupOptions, all: true }, (err, resolved) => {
      if (err) return callback(err, '', 0);
      const addresses = resolved as unknown as LookupAddress[];
      if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      const listed = addresses.filter((a) => ipAllowed(entries, a.address, env));
      if (listed.length === 0) {
        const refused = new NotOnWebhookWhitelistError(hostname, addresses.map((a) => a.address), entries.length === 0);
        return callback(refused as NodeJS.ErrnoException, '', 0);
      }
      if (lookupOptions.all) return callback(null, listed);
      return callback(null, listed[0].address, listed[0].family);
    });
  };
}

/** How much of a partner's error answer is kept in the attempt log. */
const ERROR_BODY_KEEP_CHARS = 200;
/** At most this much of an answer body is read; the rest is discarded with the connection. */
const ANSWER_READ_LIMIT_BYTES = 4096;

function printable(text: string): string {
  return text.replace(/[\x00-\x1f\x7f]+/g, ' ').trim().slice(0, ERROR_BODY_KEEP_CHARS);
}

/**
 * POSTs one webhook with node:http(s). Redirects are never followed (a 3xx is a failed attempt),
 * one deadline covers DNS, connect, TLS and the answer, and in production the destination address
 * is checked inside the socket's lookup (no gap between check and connect), as is the partner's
 * webhook IP whitelist everywhere (D56). Never throws.
 */
export function postWebhook(options: PostOptions): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.max(0, Math.round(performance.now() - started));
  return new Promise<PostResult>((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let span: ClientSpan | undefined;
    const settle = (r: Omit<PostResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      span?.end({ status: r.httpStatus, ...(r.error !== null ? { error: r.error } : {}) });
      resolve({ ...r, latencyMs: elapsed() });
    };

    let url: URL;
    try {
      url = new URL(options.url);
    } catch {
      settle({ outcome: 'NOT_CONFIGURED', httpStatus: null, error: 'webhook_url is not a valid URL' });
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      settle({ outcome: 'NOT_CONFIGURED', httpStatus: null, error: 'webhook_url must be http or https' });
      return;
    }
    const violation = callbackUrlViolation(url, options.blockPrivateAddresses);
    if (violation) {
      settle({ outcome: 'BLOCKED', httpStatus: null, error: `webhook_url ${violation}` });
      return;
    }
    // An address literal is dialled without a lookup: its whitelist check is here.
    const host = hostOf(url);
    if (isIP(host) && !ipAllowed(options.whitelist.entries, host, options.whitelist.env)) {
      settle({ outcome: 'BLOCKED', httpStatus: null, error: new NotOnWebhookWhitelistError(host, [host], options.whitelist.entries.length === 0).message });
      return;
    }

    const transport = url.protocol === 'https:' ? https : http;
    // Issue 27: a CLIENT span under the delivery's span (webhook.deliver, active while the job
    // starts the POST), its traceparent on the request.
    const traced: Record<string, string> = { ...options.headers };
    span = outgoingRequest('POST', url, traced);
    const req = transport.request(url, {
      method: 'POST',
      headers: { ...traced, 'content-length': String(Buffer.byteLength(options.body, 'utf8')), connection: 'close' },
      agent: false,
      lookup: whitelistedLookup(options),
    });
    timer = setTimeout(() => {
      settle({ outcome: 'TIMEOUT', httpStatus: null, error: `no answer within ${options.timeoutMs} ms` });
      req.destroy();
    }, options.timeoutMs);

    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof ForbiddenAddressError || err instanceof NotOnWebhookWhitelistError) {
        settle({ outcome: 'BLOCKED', httpStatus: null, error: err.message });
      } else {
        settle({ outcome: 'NETWORK_ERROR', httpStatus: null, error: printable(`${err.code ?? 'ERROR'}: ${err.message}`) });
      }
    });
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      const chunks: Buffer[] = [];
      let read = 0;
      const finish = () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (ok) {
          settle({ outcome: 'SUCCESS', httpStatus: status, error: null });
        } else {
          const where = status >= 300 && status < 400 ? `redirect not followed${res.headers.location ? ` (Location: ${res.headers.location})` : ''}` : '';
          settle({ outcome: 'HTTP_ERROR', httpStatus: status, error: printable([`HTTP ${status}`, where, text].filter(Boolean).join(': ')) });
        }
        res.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        if (read < ANSWER_READ_LIMIT_BYTES) chunks.push(chunk);
        read += chunk.length;
        if (read >= ANSWER_READ_LIMIT_BYTES) finish();
      });
      res.on('end', finish);
      // An answer counts only when it is complete (docs/webhooks.md, D38): a 2xx whose body is cut
      // short (the connection reset or closed before its end) is a failed attempt and is retried, as
      // a 2xx whose body is late is a TIMEOUT. A non-2xx fails either way, with what arrived of it.
      const cutShort = (err?: NodeJS.ErrnoException) => {
        if (!ok) return finish();
        settle({ outcome: 'NETWORK_ERROR', httpStatus: status, error: printable(`HTTP ${status}: the answer was cut short before its end${err ? ` (${err.code ?? 'ERROR'}: ${err.message})` : ''}`) });
        res.destroy();
      };
      res.on('error', cutShort);
      res.on('close', () => cutShort());
    });
    req.end(options.body);
  });
}
