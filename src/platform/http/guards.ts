import http from 'node:http';
import type { Socket } from 'node:net';
import { frameworkRejection } from './envelope.ts';
import { beforeScrape, counter, rateLimitRefusals } from '../metrics.ts';

/**
 * Connection-level guards (issue 13, docs/security.md): slow clients are cut off by Node's own
 * timers, and what Node refuses before a request reaches a route (a request not received in time,
 * headers or URL too large, a malformed request line) is answered in the D3 envelope, counted, and
 * the connection closed.
 */

export interface HttpTimeouts {
  /** All request headers must arrive within this (slowloris). */
  headersTimeoutMs: number;
  /** The whole request, headers and body, must arrive within this (slow body). */
  requestTimeoutMs: number;
  /** A kept-alive connection with no request in flight is closed after this. */
  keepAliveTimeoutMs: number;
  /** A socket with no traffic at all for this long is destroyed. */
  idleTimeoutMs: number;
}

/** How often Node checks the header and request deadlines (its default, 30 s, would let a slow client overstay by that much). */
const DEADLINE_CHECK_INTERVAL_MS = 1000;

/** What the guards refused since the process started (GET /internal/admin/v1/connection-guards). */
export const connectionGuardCounters = {
  requestTimeouts: 0,
  headersTooLarge: 0,
  malformedRequests: 0,
  idleTimeouts: 0,
};

export type ConnectionGuardCounters = typeof connectionGuardCounters;

/** The HTTP server the service listens with: Node's deadlines set from the configuration. */
export function createGuardedServer(timeouts: HttpTimeouts, handler: http.RequestListener): http.Server {
  const server = http.createServer({
    headersTimeout: timeouts.headersTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    connectionsCheckingInterval: DEADLINE_CHECK_INTERVAL_MS,
  }, handler);
  server.setTimeout(timeouts.idleTimeoutMs, (socket: Socket) => {
    connectionGuardCounters.idleTimeouts++;
    socket.destroy();
  });
  return server;
}

function answer(socket: Socket, status: number, reason: string, message: string): void {
  const body = JSON.stringify(frameworkRejection(message));
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/**
 * Fastify's clientErrorHandler: Node's refusals in the envelope (D3), instead of a bare status
 * line: 408 for a request not received in time, 431 for headers (or a URL) over the limit, 400
 * for anything else malformed.
 */
export function clientErrorHandler(timeouts: HttpTimeouts) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      connectionGuardCounters.requestTimeouts++;
      answer(socket, 408, 'Request Timeout', `Request not received within ${timeouts.requestTimeoutMs} ms (headers within ${timeouts.headersTimeoutMs} ms)`);
      return;
    }
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      connectionGuardCounters.headersTooLarge++;
      answer(socket, 431, 'Request Header Fields Too Large', 'Request line and headers exceed 16 KiB');
      return;
    }
    connectionGuardCounters.malformedRequests++;
    answer(socket, 400, 'Bad Request', 'Malformed HTTP request');
  };
}

/** Requests refused with 429 by the limits by source address (the per-partner limit is not counted here). */
export const rateLimitCounters = {
  preAuth: 0,
  admin: 0,
  authFailures: 0,
  adminAuthFailures: 0,
};

/** The refusals above as metrics (issue 27): each scrape adds what was counted since the last one. */
const guardRefusals = counter('http_connection_refusals_total', 'Connections refused by the connection guards, by reason (requestTimeouts, headersTooLarge, malformedRequests, idleTimeouts)', ['reason']);
const mirrored = { guards: { ...connectionGuardCounters }, limits: { ...rateLimitCounters } };
for (const reason of Object.keys(connectionGuardCounters)) guardRefusals.inc({ reason }, 0);
for (const kind of [...Object.keys(rateLimitCounters), 'partner']) rateLimitRefusals.inc({ kind }, 0);
beforeScrape('http-guards', async () => {
  for (const [reason, value] of Object.entries(connectionGuardCounters) as [keyof ConnectionGuardCounters, number][]) {
    if (value > mirrored.guards[reason]) guardRefusals.inc({ reason }, value - mirrored.guards[reason]);
    mirrored.guards[reason] = value;
  }
  for (const [kind, value] of Object.entries(rateLimitCounters) as [keyof typeof rateLimitCounters, number][]) {
    if (value > mirrored.limits[kind]) rateLimitRefusals.inc({ kind }, value - mirrored.limits[kind]);
    mirrored.limits[kind] = value;
  }
});
