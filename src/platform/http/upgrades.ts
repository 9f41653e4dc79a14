/**
 * Which `Upgrade` requests are upgrades. Node hands every request carrying `Connection: upgrade` to
 * the server's 'upgrade' listeners once one exists (the WebSocket plugin's), so a plain request that
 * merely offers another protocol never reached its route: Java's `java.net.http.HttpClient`, whose
 * default version is HTTP/2, sends `Upgrade: h2c` with `HTTP2-Settings` on its first requests to an
 * http:// address (curl --http2 does too), and was answered 400 by the WebSocket handshake.
 *
 * RFC 9110 7.8 lets a server ignore an upgrade it does not take. Here only `Upgrade: websocket` goes
 * to `webSocketUpgrades` (the emitter the WebSocket plugin listens on); any other request is given
 * back to the HTTP server as the HTTP/1.1 request it also is: its head written again without the
 * upgrade offer and put back in front of the bytes still unread (its body, a pipelined request), the
 * socket then handed to the server as a new connection (Node documents emitting 'connection' for
 * injecting connections). The connection stays keep-alive like any other.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';

/** Hop-by-hop fields of the upgrade offer itself, left out of the request given back. */
const OFFER_FIELDS = new Set(['upgrade', 'http2-settings']);

export function takeOnlyWebSocketUpgrades(server: Server, webSocketUpgrades: EventEmitter): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (isWebSocketUpgrade(req)) {
      webSocketUpgrades.emit('upgrade', req, socket, head);
      return;
    }
    socket.unshift(Buffer.concat([Buffer.from(requestHeadWithoutUpgrade(req), 'latin1'), head]));
    server.emit('connection', socket);
  });
}

/** Whether a request asks to become a WebSocket (`Upgrade: websocket`), the one upgrade this service takes. */
export function isWebSocketUpgrade(req: Pick<IncomingMessage, 'headers'>): boolean {
  return (req.headers.upgrade ?? '').trim().toLowerCase() === 'websocket';
}

/** The request line and fields as received (Node keeps field bytes as latin1), without the offer. */
export function requestHeadWithoutUpgrade(req: IncomingMessage): string {
  let head = `${req.method} ${req.url} HTTP/${req.httpVersion}\r\n`;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (OFFER_FIELDS.has(lower)) continue;
    let value = raw[i + 1]!;
    if (lower === 'connection') {
      value = value.split(',').map((token) => token.trim()).filter((token) => token !== '' && !OFFER_FIELDS.has(token.toLowerCase())).join(', ');
      if (value === '') continue;
    }
    head += `${name}: ${value}\r\n`;
  }
  return `${head}\r\n`;
}
