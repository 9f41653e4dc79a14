/**
 * The HTTP leg of authorization forwarding (D37, D38): one POST to the partner's auth_url with a
 * deadline covering DNS, connect and the whole answer. Redirects are never followed. In production
 * a destination on a loopback, private or link-local address is refused at connect time (the
 * address actually dialled); when the partner registered an authorization-forwarding IP list
 * (5.5, ipWhitelist.auth) the dialled address must be on it as well. Connections are kept alive
 * per partner, so a forwarding normally costs no connect; a request reset on a reused connection
 * before any answer is sent once more on a new one. Never throws.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { ipAllowed } from '../../platform/http/ip.ts';
import { callbackUrlViolation, ForbiddenAddressError, hostOf, isForbiddenAddress } from '../../platform/http/ssrf.ts';
import { outgoingRequest, type ClientSpan, type TracePosition } from '../../platform/tracing.ts';

export type TransportFailure = 'TIMEOUT' | 'TRANSPORT_ERROR' | 'BLOCKED' | 'HTTP_STATUS';

export type AnswerResult =
  | { ok: true; httpStatus: number; body: string; latencyMs: number }
  | { ok: false; failure: TransportFailure; httpStatus: number | null; error: string; latencyMs: number };

/** Largest answer read: 64 RSA blocks in Base64 plus the signature and JSON framing. */
const ANSWER_LIMIT_BYTES = 64 * 1024;
const ERROR_KEEP_CHARS = 200;

export interface AuthUrlTarget {
  partnerId: string;
  url: string;
  /** 5.5 authorization-forwarding list of the partner; empty = no restriction beyond SSRF. */
  allowList: string[];
  blockPrivateAddresses: boolean;
}

class NotOnListError extends Error {
  constructor(readonly address: string) {
    super(`address ${address} is not on the partner's authorization-forwarding IP list`);
  }
}

function addressAllowed(target: AuthUrlTarget, address: string): Error | null {
  if (target.blockPrivateAddresses && isForbiddenAddress(address)) return new ForbiddenAddressError(address, address);
  // ipAllowed treats an empty list per environment; here an empty list means no extra restriction.
  if (target.allowList.length > 0 && !ipAllowed(target.allowList, address, 'production')) return new NotOnListError(address);
  return null;
}

function lookupFor(target: AuthUrlTarget): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      for (const a of addresses) {
        const refused = addressAllowed(target, a.address);
        if (refused) return callback(refused as NodeJS.ErrnoException, '', 0);
      }
      if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** Keep-alive agents per partner and destination policy. */
const agents = new Map<string, http.Agent>();
const AGENTS_MAX = 1000;
function agentFor(target: AuthUrlTarget, secure: boolean): http.Agent {
  const key = `${target.partnerId}|${secure}|${target.blockPrivateAddresses}|${target.allowList.join(',')}`;
  let agent = agents.get(key);
  if (!agent) {
    if (agents.size >= AGENTS_MAX) {
      for (const a of agents.values()) a.destroy();
      agents.clear();
    }
    const options = { keepAlive: true, maxSockets: 64, lookup: lookupFor(target) };
    agent = secure ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

function printable(text: string): string {
  return text.replace(/[\x00-\x1f\x7f]+/g, ' ').trim().slice(0, ERROR_KEEP_CHARS);
}

/**
 * `here`: the position in the trace of the step that asks (issue 27): the request is a CLIENT span
 * under it and carries its `traceparent`.
 */
export function postToAuthUrl(target: AuthUrlTarget, body: string, headers: Record<string, string>, deadlineMs: number, here?: TracePosition): Promise<AnswerResult> {
  const started = performance.now();
  const elapsed = () => Math.max(0, Math.round(performance.now() - started));
  return new Promise<AnswerResult>((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let span: ClientSpan | undefined;
    const fail = (failure: TransportFailure, error: string, httpStatus: number | null = null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      span?.end({ status: httpStatus, error });
      resolve({ ok: false, failure, httpStatus, error: printable(error), latencyMs: elapsed() });
    };
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      fail('TRANSPORT_ERROR', 'auth_url is not a valid URL');
      return;
    }
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') {
      fail('TRANSPORT_ERROR', 'auth_url must be http or https');
      return;
    }
    const violation = callbackUrlViolation(url, target.blockPrivateAddresses);
    if (violation) {
      fail('BLOCKED', `auth_url ${violation}`);
      return;
    }
    const host = hostOf(url);
    if (isIP(host)) {
      const refused = addressAllowed(target, host);
      if (refused) {
        fail('BLOCKED', refused.message);
        return;
      }
    }
    let current: http.ClientRequest | undefined;
    const traced: Record<string, string> = { ...headers };
    span = outgoingRequest('POST', url, traced, here);
    timer = setTimeout(() => {
      fail('TIMEOUT', `no answer within ${deadlineMs} ms`);
      current?.destroy();
    }, deadlineMs);
    const send = (retry: boolean) => {
      const req = (secure ? https : http).request(url, {
        method: 'POST',
        headers: { ...traced, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body, 'utf8')) },
        // The retry dials a connection of its own (same address checks), never another pooled one.
        ...(retry ? { agent: false, lookup: lookupFor(target) } : { agent: agentFor(target, secure) }),
      });
      current = req;
      let answered = false;
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (settled) return;
        // A kept-alive connection the partner closed as this request went out (its idle timeout
        // racing ours): nothing was answered, so the request goes once more on a new connection,
        // within the same deadline (Node's documented pattern, request.reusedSocket). The partner may
        // then see a transId twice, as it does for a network retry (D37), and answers it the same way.
        if (!retry && !answered && req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
          send(true);
          return;
        }
        if (err instanceof ForbiddenAddressError || err instanceof NotOnListError) fail('BLOCKED', err.message);
        else fail('TRANSPORT_ERROR', `${err.code ?? 'ERROR'}: ${err.message}`);
      });
      req.on('response', (res: IncomingMessage) => {
        answered = true;
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > ANSWER_LIMIT_BYTES) {
            fail('TRANSPORT_ERROR', `answer exceeds ${ANSWER_LIMIT_BYTES} bytes`, status);
            res.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (status < 200 || status >= 300) {
            fail('HTTP_STATUS', `HTTP ${status}${status >= 300 && status < 400 ? ': redirect not followed' : ''}`, status);
            return;
          }
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          span?.end({ status });
          resolve({ ok: true, httpStatus: status, body: text, latencyMs: elapsed() });
        });
        res.on('error', (err) => fail('TRANSPORT_ERROR', err.message, status));
      });
      req.end(body);
    };
    send(false);
  });
}
