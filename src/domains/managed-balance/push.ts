/**
 * Real-time push of the managed-balance model (D39; issue 11): balance changes, consumer card
 * transactions and QR payments of a partner's users, as they commit, over the WebSocket at
 * /card/v1/ws. See docs/push.md.
 *
 * Fed from the database, never from in-process calls, so every instance pushes what any instance
 * committed: writers insert user_stream rows in their own transaction and NOTIFY user_stream; one
 * sequencer at a time (any instance) gives committed rows their final push_seq and NOTIFYs
 * user_stream_ready; each instance's hub (one LISTEN connection, one reader) reads new rows by
 * push_seq and fans them out to its sockets. A poll every PUSH_POLL_INTERVAL_MS covers a lost
 * notification. A client resumes with `since` (the last sequence it saw) and receives exactly
 * what it missed, then live rows, without duplicates or gaps.
 *
 * Slow clients never slow the API or other clients: send() only queues; a socket whose queued bytes
 * exceed PUSH_SEND_BUFFER_BYTES is closed (4008). A client that misses a ping's pong is dropped.
 */
import type { WebSocket } from 'ws';
import type { AppContext } from '../../platform/context.ts';
import { headSequence, partnerRowsBetween, prunedThrough, pruneStream, rowsAfter, sequenceStream, type StreamRow } from './push-store.ts';

/** Close codes (4000-4999 are the application's). */
export const PUSH_CLOSE = {
  /** The client's queued bytes exceeded the send buffer limit. */
  SLOW_CONSUMER: 4008,
  /** `since` is older than what retention keeps: resync (read balances and transactions), then connect without since. */
  RESUME_EXPIRED: 4010,
  /** `since` is ahead of the stream. */
  RESUME_INVALID: 4011,
  /** The service is shutting down: reconnect with since. */
  GOING_AWAY: 1001,
  /**
   * What the connection was authenticated with no longer holds: the partner was disabled, its
   * credentials were replaced, or its address left the API whitelist. A reconnect is authenticated
   * again (and refused unless the partner signs with its current credentials from an allowed address).
   */
  NOT_AUTHORIZED: 4001,
} as const;

const BATCH = 500;
const SEQUENCE_BATCH = 1000;

export type PushDeps = Pick<AppContext, 'db' | 'clock' | 'config'>;

/**
 * What a connection was authenticated with (the upgrade's signed call): checked again while it is
 * open, so a socket outlives neither the partner's credentials nor its access (review rvC).
 */
export interface PushGrant {
  partnerId: string;
  apiKey: string;
  ip: string;
  /** The sealed secret the upgrade was verified with: replaced credentials change it. */
  credential: string;
}

/** Whether a grant still holds (the partner active, the same credentials, the address allowed). */
export type PushGrantCheck = (grant: PushGrant) => Promise<boolean>;

interface PushClient {
  socket: WebSocket;
  partnerId: string;
  grant: PushGrant | null;
  externalUserId: string | null;
  /** The last push_seq this client was sent (or chose to start after). */
  lastSent: bigint;
  /** Replaying its backlog: live rows wait until the replay caught up. */
  replaying: boolean;
  alive: boolean;
}

/** The wire message (sdk/contract/push.ts). */
function message(row: StreamRow): string {
  return `{"sequence":${row.pushSeq},"type":${JSON.stringify(row.kind)},"externalUserId":${JSON.stringify(row.externalUserId)},`
    + `"createTime":${JSON.stringify(row.createdAt.toISOString())},"data":${row.payload}}`;
}

export class PushHub {
  private readonly clients = new Set<PushClient>();
  /** Connections admitted per partner (admit), each counted until its TCP socket closes. */
  private readonly held = new Map<string, number>();
  /** The TCP sockets counted in `held`: a socket is counted once, however many requests it carried. */
  private readonly admitted = new WeakSet<object>();
  /** The highest push_seq this hub has read and dispatched. */
  private head = 0n;
  private started: Promise<void> | null = null;
  private stopListening: Array<() => Promise<void>> = [];
  private timers: NodeJS.Timeout[] = [];
  private running = false;
  private again = false;
  private checking = false;

  /**
   * `onReadError`: a failed read of the stream (logged by the caller); the next notification or poll
   * reads again. `grantHolds`: re-checks every open connection's grant at each poll interval.
   */
  constructor(private readonly deps: PushDeps, private readonly onReadError: (err: unknown) => void = () => {},
    private readonly grantHolds: PushGrantCheck | null = null) {}

  get connections(): number {
    return this.clients.size;
  }

  /**
   * Admits one more connection of `partnerId` on this instance, or refuses it (false) when the partner
   * already holds PUSH_MAX_CONNECTIONS_PER_PARTNER (D39: one partner's sockets must not exhaust the
   * instance's sockets and send buffers). Called as the last check before the upgrade, synchronously,
   * so concurrent upgrades cannot all pass one count. The connection is counted until its TCP socket
   * closes (whether the upgrade completed, failed, or the socket was later dropped), so a
   * refused or failed upgrade never keeps a slot.
   */
  admit(partnerId: string, socket: { once(event: 'close', listener: () => void): unknown }): boolean {
    if (this.admitted.has(socket)) return true;
    const held = this.held.get(partnerId) ?? 0;
    if (held >= this.deps.config.pushMaxConnectionsPerPartner) return false;
    this.held.set(partnerId, held + 1);
    this.admitted.add(socket);
    socket.once('close', () => {
      const left = (this.held.get(partnerId) ?? 1) - 1;
      if (left > 0) this.held.set(partnerId, left);
      else this.held.delete(partnerId);
    });
    return true;
  }

  /** Starts listening on first use (a service that never has a WebSocket client opens no LISTEN connection). */
  private start(): Promise<void> {
    this.started ??= (async () => {
      this.head = BigInt(await headSequence(this.deps.db));
      for (const channel of ['user_stream', 'user_stream_ready']) {
        this.stopListening.push(await this.deps.db.listen(channel, () => this.kick()));
      }
      this.timers.push(setInterval(() => {
        this.kick();
        void this.checkGrants();
      }, this.deps.config.pushPollIntervalMs).unref());
      this.timers.push(setInterval(() => this.ping(), this.deps.config.pushPingIntervalMs).unref());
    })().catch((err: unknown) => {
      // The database was unreachable: the next connection tries again (the refusal answers this one).
      this.started = null;
      throw err;
    });
    return this.started;
  }

  /** Sequence what committed, read what is new, fan it out; coalesces concurrent kicks. */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.pump().finally(() => {
      this.running = false;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const s = await sequenceStream(this.deps.db, SEQUENCE_BATCH);
        const rows = await rowsAfter(this.deps.db, this.head.toString(), BATCH);
        for (const row of rows) this.dispatch(row);
        if (rows.length > 0) this.head = BigInt(rows[rows.length - 1].pushSeq);
        if (rows.length < BATCH && s.sequenced < SEQUENCE_BATCH) return;
      }
    } catch (err) {
      // The database is unreachable or the service is closing: nothing was sent past what was read;
      // the next notification or poll reads again from the same head.
      this.onReadError(err);
    }
  }

  private dispatch(row: StreamRow): void {
    const seq = BigInt(row.pushSeq);
    for (const c of this.clients) {
      if (c.replaying || c.partnerId !== row.partnerId || seq <= c.lastSent) continue;
      if (c.externalUserId !== null && c.externalUserId !== row.externalUserId) continue;
      this.send(c, message(row), seq);
    }
  }

  private send(c: PushClient, text: string, seq: bigint): void {
    if (c.socket.readyState !== c.socket.OPEN) return;
    if (c.socket.bufferedAmount + text.length > this.deps.config.pushSendBufferBytes) {
      this.drop(c, PUSH_CLOSE.SLOW_CONSUMER, 'send buffer limit exceeded: reconnect with since');
      return;
    }
    c.socket.send(text);
    c.lastSent = seq;
  }

  private drop(c: PushClient, code: number, reason: string): void {
    this.clients.delete(c);
    try {
      c.socket.close(code, reason);
    } catch {
      c.socket.terminate();
    }
    // A client that does not read cannot complete the closing handshake either.
    setTimeout(() => c.socket.terminate(), 2000).unref();
  }

  /**
   * Closes (4001) every connection whose grant no longer holds: a disabled partner, replaced
   * credentials or a removed address stop the stream within a poll interval, on every instance,
   * instead of lasting as long as the socket. One check per distinct grant; a failed check (the
   * database unreachable) keeps the connections until the next one.
   */
  async checkGrants(): Promise<void> {
    if (this.checking || this.grantHolds === null || this.clients.size === 0) return;
    this.checking = true;
    try {
      const verdicts = new Map<string, Promise<boolean>>();
      const keyOf = (g: PushGrant) => `${g.partnerId}\n${g.apiKey}\n${g.ip}\n${g.credential}`;
      for (const c of this.clients) {
        if (c.grant && !verdicts.has(keyOf(c.grant))) verdicts.set(keyOf(c.grant), this.grantHolds(c.grant));
      }
      const settled = new Map<string, boolean>();
      for (const [key, verdict] of verdicts) {
        try {
          settled.set(key, await verdict);
        } catch (err) {
          this.onReadError(err);
        }
      }
      for (const c of [...this.clients]) {
        if (c.grant && settled.get(keyOf(c.grant)) === false) this.drop(c, PUSH_CLOSE.NOT_AUTHORIZED, 'credentials or access no longer valid');
      }
    } finally {
      this.checking = false;
    }
  }

  private ping(): void {
    for (const c of this.clients) {
      if (!c.alive) {
        this.clients.delete(c);
        c.socket.terminate();
        continue;
      }
      c.alive = false;
      c.socket.ping();
    }
  }

  /**
   * Where a connection without `since` starts: the hub's head, read before the upgrade is answered.
   * So everything committed after the client sees its connection open reaches it, even when another
   * instance sequences it before `attach` runs (the hub's head may have moved past it by then).
   */
  async position(): Promise<string> {
    await this.start();
    return this.head.toString();
  }

  /**
   * A new authenticated connection. With `since`, first the partner's rows after it (up to what the
   * hub has read), then live rows; without, live rows from `from` on (`position()` before the upgrade).
   */
  async attach(socket: WebSocket, partnerId: string,
    options: { since: string | null; from: string; externalUserId: string | null; grant?: PushGrant }): Promise<void> {
    await this.start();
    const c: PushClient = {
      socket, partnerId, grant: options.grant ?? null, externalUserId: options.externalUserId, lastSent: this.head, replaying: true, alive: true,
    };
    socket.on('pong', () => {
      c.alive = true;
    });
    socket.on('close', () => this.clients.delete(c));
    socket.on('error', () => this.clients.delete(c));
    // Clients only listen: anything they send is ignored.
    socket.on('message', () => {});
    this.clients.add(c);
    let since = BigInt(options.from);
    if (options.since !== null) {
      since = BigInt(options.since);
      if (since > BigInt(await headSequence(this.deps.db))) {
        this.drop(c, PUSH_CLOSE.RESUME_INVALID, 'since is ahead of the stream');
        return;
      }
      if (since < BigInt(await prunedThrough(this.deps.db))) {
        this.drop(c, PUSH_CLOSE.RESUME_EXPIRED, 'since is older than the retained stream: resync, then connect without since');
        return;
      }
    }
    c.lastSent = since;
    try {
      // Replay up to the hub's head; the head may move while replaying: loop until caught up. Live
      // rows above lastSent are dispatched to the client once replaying is false (no await between).
      while (c.lastSent < this.head && this.clients.has(c)) {
        const upTo = this.head;
        const rows = await partnerRowsBetween(this.deps.db, partnerId, c.lastSent.toString(), upTo.toString(), c.externalUserId, BATCH);
        for (const row of rows) this.send(c, message(row), BigInt(row.pushSeq));
        // A short page covered everything up to upTo (rows of other partners or users included).
        if (rows.length < BATCH && c.lastSent < upTo) c.lastSent = upTo;
      }
    } finally {
      c.replaying = false;
    }
    this.kick();
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    for (const stop of this.stopListening) await stop();
    this.stopListening = [];
    for (const c of [...this.clients]) this.drop(c, PUSH_CLOSE.GOING_AWAY, 'service shutting down');
  }
}

/** Retention (D39): sequenced rows older than PUSH_RETENTION_HOURS are removed, in batches. */
export async function pruneUserStream(deps: PushDeps): Promise<number> {
  const before = new Date(deps.clock.now() - deps.config.pushRetentionMs);
  let total = 0;
  for (;;) {
    const n = await pruneStream(deps.db, before, 5000);
    total += n;
    if (n < 5000) return total;
  }
}
