import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { CardServiceError, nextNonce, parseJsonLossless, type Envelope, type SignedHttpClient } from '../client.ts';
import type { PushMessage as PushMessageSchema } from '../contract/push.ts';
import type { Static } from 'typebox';

/** A message of the push stream (D39): `sequence` only grows; resume after the last one you processed. */
export type PushMessage = Static<typeof PushMessageSchema>;

export interface SubscribeOptions {
  /** Resume after this sequence (the last one you processed); absent: live messages from now on. */
  since?: number;
  /** Only this user's messages. */
  externalUserId?: string;
  onMessage(message: PushMessage): void;
  /** Connection problems; `fatal` when the subscription stopped (refused credentials, resume point expired). */
  onError?(error: Error, fatal: boolean): void;
  /** Each (re)connection that was accepted. */
  onOpen?(): void;
  /** Reconnect after a drop, resuming after the last sequence seen (default true). */
  reconnect?: boolean;
  /** Wait before reconnecting (default 1000 ms, doubling up to 30 s while it fails). */
  reconnectDelayMs?: number;
}

export interface Subscription {
  /** The sequence of the last message delivered to onMessage (null before the first). */
  readonly lastSequence: number | null;
  close(): void;
}

/** Close codes after which reconnecting cannot help (docs/push.md). */
const FATAL_CLOSE = new Set([4010, 4011]);

/** The real-time push of the managed-balance model: /card/v1/ws (D39). */
export class PushResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Opens the WebSocket, signed over an empty payload (D39), and keeps it open: after a drop it
   * reconnects with `since` = the last sequence delivered, so nothing is missed and nothing repeats.
   * @example const sub = client.push.subscribe({ onMessage: (m) => console.log(m.sequence, m.type, m.data) });
   */
  subscribe(options: SubscribeOptions): Subscription {
    let last: number | null = options.since ?? null;
    let socket: WebSocket | null = null;
    let closed = false;
    let delay = options.reconnectDelayMs ?? 1000;
    let timer: NodeJS.Timeout | null = null;
    const report = (error: Error, fatal: boolean) => options.onError?.(error, fatal);
    const retry = () => {
      if (closed || options.reconnect === false) return;
      timer = setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30_000);
    };
    const connect = () => {
      timer = null;
      if (closed) return;
      const query = new URLSearchParams();
      if (last !== null) query.set('since', String(last));
      if (options.externalUserId !== undefined) query.set('externalUserId', options.externalUserId);
      const url = `${this.http.baseUrl.replace(/^http/, 'ws')}/card/v1/ws${query.size ? `?${query}` : ''}`;
      const timestamp = String(this.http.now());
      const nonce = nextNonce();
      const ws = new WebSocket(url, {
        headers: {
          'X-DAPI-API-KEY': this.http.apiKey, 'X-DAPI-TIMESTAMP': timestamp, 'X-DAPI-NONCE': nonce,
          'X-DAPI-SIGN': this.http.sign(timestamp, nonce, ''),
        },
      });
      socket = ws;
      // A refused upgrade (docs/push.md): its envelope says why; the abort that follows is not another error.
      let refused = false;
      ws.on('open', () => {
        delay = options.reconnectDelayMs ?? 1000;
        options.onOpen?.();
      });
      ws.on('message', (raw) => {
        const message = parseJsonLossless(String(raw)) as PushMessage & { sequence: unknown };
        const sequence = Number(String(message.sequence));
        if (last !== null && sequence <= last) return;
        last = sequence;
        options.onMessage({ ...message, sequence });
      });
      ws.on('unexpected-response', (_req, res: IncomingMessage) => {
        refused = true;
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        // The body is read before the handshake is aborted (aborting first would lose it).
        res.on('close', () => {
          let envelope: Envelope | null = null;
          try {
            envelope = parseJsonLossless(text) as Envelope;
          } catch {
            // not an envelope
          }
          const status = res.statusCode ?? 0;
          const error = new CardServiceError(envelope?.code ?? 'INVALID_RESPONSE', envelope?.message ?? `HTTP ${status}`, status, envelope?.data ?? null, envelope);
          // Credentials (401), the address (403) and a parameter (HTTP 200 DAPI_PARAM_INVALID) are
          // refused again on every reconnection; a rate limit (429) or an outage is retried.
          const fatal = status === 400 || status === 401 || status === 403 || envelope?.code === 'DAPI_PARAM_INVALID';
          ws.terminate();
          if (socket === ws) socket = null;
          report(error, fatal);
          if (fatal) closed = true;
          else retry();
        });
      });
      ws.on('error', (err) => {
        if (!refused) report(err, false);
      });
      ws.on('close', (code, reason) => {
        if (socket === ws) socket = null;
        if (closed || refused) return;
        if (FATAL_CLOSE.has(code)) {
          closed = true;
          report(new Error(`push stream closed ${code}: ${String(reason)}`), true);
          return;
        }
        if (code !== 1006 || ws.readyState === WebSocket.CLOSED) retry();
      });
    };
    connect();
    return {
      get lastSequence() {
        return last;
      },
      close() {
        closed = true;
        if (timer) clearTimeout(timer);
        socket?.close(1000, 'client closed');
      },
    };
  }
}
