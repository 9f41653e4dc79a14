import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { recordEvent } from '../../src/domains/events/index.ts';
import type { Db } from '../../src/platform/db/db.ts';

/** How the receiver answers one request. */
export interface Answer {
  status?: number;
  /** Wait this long before answering (a slow partner). */
  delayMs?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Send the status line, headers and the first byte of a longer body, then drop the connection. */
  cutBodyShort?: boolean;
}

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  /** The raw body exactly as received. */
  body: string;
  /** Parsed with JSON.parse (tests compare raw text for exact digits). */
  json: { eventId: string; eventType: string; businessId: string; sequence: number; createTime: string; data: unknown };
  /** Checked here independently of the service and the SDK: HmacSHA256(apiKey + ts + nonce + body). */
  signatureValid: boolean;
  answeredStatus: number;
}

/**
 * A partner's webhook endpoint on 127.0.0.1 for tests: records every request, verifies its
 * signature with the partner's secret, and answers from a queue of planned answers (default 200).
 */
export class WebhookReceiver {
  readonly requests: ReceivedWebhook[] = [];
  private readonly plan: Answer[] = [];
  private credentials: { apiKey: string; secretKey: string } | null = null;
  private readonly pending = new Set<ServerResponse>();

  private constructor(private readonly server: http.Server, readonly url: string) {}

  static async start(path = '/hooks/cardsvc'): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | null = null;
    const server = http.createServer((req, res) => receiver!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new WebhookReceiver(server, `http://127.0.0.1:${port}${path}`);
    return receiver;
  }

  /** The partner's credentials, known once the partner exists. */
  useCredentials(partner: { apiKey: string | null; secretKey: string | null }): this {
    this.credentials = { apiKey: partner.apiKey!, secretKey: partner.secretKey! };
    return this;
  }

  /** Answers for the next requests, in order; afterwards 200. */
  answerNext(...answers: Answer[]): this {
    this.plan.push(...answers);
    return this;
  }

  requestsFor(eventId: string): ReceivedWebhook[] {
    return this.requests.filter((r) => r.json.eventId === eventId);
  }

  private verify(headers: IncomingHttpHeaders, body: string): boolean {
    if (!this.credentials) return false;
    const { apiKey, secretKey } = this.credentials;
    const ts = String(headers['x-dapi-timestamp'] ?? '');
    const nonce = String(headers['x-dapi-nonce'] ?? '');
    const sign = String(headers['x-dapi-sign'] ?? '');
    if (headers['x-dapi-api-key'] !== apiKey) return false;
    const expected = createHmac('sha256', Buffer.from(secretKey, 'utf8')).update(apiKey + ts + nonce + body, 'utf8').digest('hex');
    return sign.length === expected.length && timingSafeEqual(Buffer.from(sign), Buffer.from(expected));
  }

  private handle(req: http.IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answer = this.plan.shift() ?? {};
      const status = answer.status ?? 200;
      let json: ReceivedWebhook['json'];
      try {
        json = JSON.parse(body);
      } catch {
        json = { eventId: '', eventType: '', businessId: '', sequence: -1, createTime: '', data: null };
      }
      this.requests.push({ headers: req.headers, body, json, signatureValid: this.verify(req.headers, body), answeredStatus: status });
      const send = () => {
        this.pending.delete(res);
        if (res.destroyed) return;
        const text = answer.body ?? (status < 300 ? 'ok' : 'not ok');
        if (answer.cutBodyShort) {
          res.writeHead(status, { 'content-type': 'text/plain', 'content-length': String(Buffer.byteLength(text) + 100), ...answer.headers });
          res.write(text.slice(0, 1), () => setTimeout(() => res.socket?.destroy(), 50).unref());
          return;
        }
        res.writeHead(status, { 'content-type': 'text/plain', ...answer.headers });
        res.end(text);
      };
      this.pending.add(res);
      if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
      else send();
    });
  }

  async close(): Promise<void> {
    for (const res of this.pending) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A URL on 127.0.0.1 where nothing listens (a receiver that is down). */
export async function downUrl(path = '/hooks/down'): Promise<string> {
  const receiver = await WebhookReceiver.start(path);
  const url = receiver.url;
  await receiver.close();
  return url;
}

/** Records an event through the outbox's public producer API, as a business transaction would. */
export async function recordTestEvent(
  svc: { db: Db; clock: { now(): number } },
  partnerId: string,
  event: { eventType?: string; businessId?: string; data?: unknown } = {},
): Promise<{ eventId: string; sequence: number }> {
  return svc.db.tx((q) => recordEvent(q, {
    partnerId,
    eventType: event.eventType ?? 'CUSTOMER_KYC_CHANGED',
    businessId: event.businessId ?? `cu${randomBytes(6).toString('hex')}`,
    data: event.data ?? { kycStatus: 'APPROVED', reason: null },
    createTime: new Date(svc.clock.now()),
  }));
}

export interface EventState {
  status: string;
  attempts: number;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  createTime: Date;
  lastError: string | null;
}

/** The delivery state of one event, read straight from the outbox table. */
export async function eventState(db: Db, eventId: string): Promise<EventState> {
  const [row] = await db.query<EventState>(
    `SELECT status, attempts, GREATEST(next_attempt_at, lease_until) AS "nextAttemptAt", last_attempt_at AS "lastAttemptAt",
            e.create_time AS "createTime", last_error AS "lastError"
       FROM events e JOIN event_deliveries d ON d.event_id = e.event_id WHERE e.event_id = $1`,
    [eventId],
  );
  return row;
}

export async function attemptsOf(db: Db, eventId: string): Promise<Array<{ attemptNo: number; outcome: string; httpStatus: number | null; startedAt: Date; latencyMs: number | null; error: string | null }>> {
  return db.query(
    `SELECT attempt_no AS "attemptNo", outcome, http_status AS "httpStatus", started_at AS "startedAt",
            latency_ms AS "latencyMs", error
       FROM event_attempts WHERE event_id = $1 ORDER BY attempt_no`,
    [eventId],
  );
}
