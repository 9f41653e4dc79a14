import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import WebSocket from 'ws';
import { decimal, decimalText, type CardServiceClient, type CardServiceError, type PushMessage } from '../sdk/index.ts';
import { closeTestDatabase, startService, testDatabase, type TestService } from './helpers/service.ts';

/**
 * Real-time push of the managed-balance model (D39; issue 11): /card/v1/ws fed from the database
 * (LISTEN/NOTIFY and the sequencer user_stream_sequence), so a client on one instance receives what
 * another instance committed; resume by sequence; refusals before the upgrade; isolation; slow
 * clients cut off.
 */
describe('real-time push /card/v1/ws (issue 11, D39)', () => {
  let a: TestService;
  let b: TestService;
  let clientA: CardServiceClient;
  let clientB: CardServiceClient;
  let partner: { apiKey: string | null; secretKey: string | null; partnerId: string };
  before(async () => {
    a = await startService({ env: { PUSH_POLL_INTERVAL_MS: '200' } });
    b = await startService({ db: await (await testDatabase()).openAnother(), clock: a.clock, env: { PUSH_POLL_INTERVAL_MS: '200' } });
    const p = await a.newPartner();
    partner = p.partner;
    clientA = p.client;
    clientB = b.clientFor(p.partner);
  });
  after(async () => {
    await b.close();
    await a.close();
    await closeTestDatabase();
  });

  const uid = () => `user-${randomBytes(4).toString('hex')}`;
  const credit = (c: CardServiceClient, user: string, amount: string) =>
    c.userAssets.credit({ externalTranId: `tx-${randomBytes(6).toString('hex')}`, asset: 'USDT', amount: decimal(amount), externalUserId: user });

  /** Collects messages of a subscription; waitFor resolves once the predicate holds over them. */
  function collector() {
    const messages: PushMessage[] = [];
    const waiters: { until: (m: PushMessage[]) => boolean; resolve: () => void }[] = [];
    return {
      messages,
      onMessage(m: PushMessage) {
        messages.push(m);
        for (const w of [...waiters]) if (w.until(messages)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      },
      waitFor(until: (m: PushMessage[]) => boolean, what: string, ms = 15_000) {
        if (until(messages)) return Promise.resolve();
        return new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${messages.length} messages`)), ms);
          waiters.push({ until, resolve: () => { clearTimeout(timer); resolve(); } });
        });
      },
    };
  }
  const opened = (sub: { onOpen?: () => void }) => new Promise<void>((resolve) => { sub.onOpen = resolve; });

  it('a client of instance B receives the authorization committed through instance A, with the balance change', async () => {
    const user = uid();
    await credit(clientA, user, '25.00');
    const card = await clientA.consumerCards.apply({ externalUserId: user, cardProfileId: 'sbx-visa-consumer', cardholderName: 'Push Test', fundingAsset: 'USDT' });
    const got = collector();
    const options = { externalUserId: user, onMessage: got.onMessage, onError: () => {} } as Parameters<CardServiceClient['push']['subscribe']>[0];
    const ready = opened(options);
    const sub = clientB.push.subscribe(options);
    await ready;
    const auth = await clientA.sandbox.authorize({
      cardId: card.cardId, amount: decimal('7.25'), currency: 'USD', merchantName: 'Coffee', mcc: '5814', merchantCountry: 'HK', channel: 'POS',
    });
    assert.equal(auth.approved, true);
    await got.waitFor((ms) => ms.some((m) => m.type === 'CARD_TRANSACTION' && (m.data as { transId: string }).transId === auth.transId)
      && ms.some((m) => m.type === 'BALANCE' && decimalText((m.data as { balance: { freeze: unknown } }).balance.freeze) === '7.25'), 'the authorization and its balance');
    const txMessage = got.messages.find((m) => m.type === 'CARD_TRANSACTION')!;
    assert.equal(txMessage.externalUserId, user);
    assert.equal((txMessage.data as { status: string }).status, 'PENDING');
    const balance = got.messages.filter((m) => m.type === 'BALANCE').at(-1)!.data as { balance: { asset: string; free: unknown; freeze: unknown; total: unknown } };
    assert.deepEqual([balance.balance.asset, decimalText(balance.balance.free), decimalText(balance.balance.freeze), decimalText(balance.balance.total)],
      ['USDT', '17.75', '7.25', '25']);
    // D39: the pushed balance reads exactly as GET /user-asset/v1/balance writes it, digits included (25, not 25.00).
    const read = (await clientA.userAssets.balance(user)).find((x) => x.asset === 'USDT')!;
    assert.deepEqual([decimalText(read.free), decimalText(read.freeze), decimalText(read.total)],
      [decimalText(balance.balance.free), decimalText(balance.balance.freeze), decimalText(balance.balance.total)]);
    const sequences = got.messages.map((m) => m.sequence);
    assert.deepEqual(sequences, [...sequences].sort((x, y) => x - y), 'sequences only grow');
    sub.close();
  });

  it('resuming with the last sequence seen delivers exactly the missed messages, in order, then live ones', async () => {
    const user = uid();
    const got = collector();
    const options = { externalUserId: user, onMessage: got.onMessage, reconnect: false } as Parameters<CardServiceClient['push']['subscribe']>[0];
    const ready = opened(options);
    const first = clientA.push.subscribe(options);
    await ready;
    await credit(clientB, user, '1');
    await got.waitFor((ms) => ms.length >= 1, 'the first credit');
    const last = first.lastSequence!;
    first.close();
    // Missed while disconnected: three credits through the other instance.
    for (const amount of ['2', '3', '4']) await credit(clientB, user, amount);
    const again = collector();
    const resumeOptions = { since: last, externalUserId: user, onMessage: again.onMessage, reconnect: false } as Parameters<CardServiceClient['push']['subscribe']>[0];
    const resumed = opened(resumeOptions);
    const second = clientB.push.subscribe(resumeOptions);
    await resumed;
    await again.waitFor((ms) => ms.length >= 3, 'the three missed credits');
    assert.deepEqual(again.messages.map((m) => decimalText((m.data as { balance: { free: unknown } }).balance.free)), ['3', '6', '10']);
    assert.ok(again.messages.every((m) => m.sequence > last));
    await credit(clientA, user, '5');
    await again.waitFor((ms) => ms.length >= 4, 'a live credit after the replay');
    assert.equal(decimalText((again.messages[3].data as { balance: { free: unknown } }).balance.free), '15');
    assert.equal(new Set(again.messages.map((m) => m.sequence)).size, again.messages.length, 'no duplicates');
    second.close();
  });

  it('the SDK reconnects by itself after the server drops the connection and misses nothing', async () => {
    const user = uid();
    const got = collector();
    let opens = 0;
    const sub = clientA.push.subscribe({ externalUserId: user, onMessage: got.onMessage, onOpen: () => { opens++; }, reconnectDelayMs: 100 });
    await new Promise<void>((resolve) => { const t = setInterval(() => { if (opens === 1) { clearInterval(t); resolve(); } }, 20); });
    await credit(clientA, user, '1');
    await got.waitFor((ms) => ms.length === 1, 'the first credit');
    for (const s of a.app.websocketServer.clients) s.terminate();
    await credit(clientB, user, '2');
    await credit(clientB, user, '3');
    await got.waitFor((ms) => ms.length === 3, 'the credits made while reconnecting');
    assert.ok(opens >= 2, 'it reconnected');
    assert.deepEqual(got.messages.map((m) => decimalText((m.data as { balance: { free: unknown } }).balance.free)), ['1', '3', '6']);
    sub.close();
  });

  it('credentials are checked before the upgrade: bad signature, stale timestamp and a replayed nonce are refused with the JSON envelope; query parameters work', async () => {
    const url = `${a.baseUrl.replace('http', 'ws')}/card/v1/ws`;
    const sign = (ts: string, nonce: string) => createHmac('sha256', Buffer.from(partner.secretKey!, 'utf8')).update(partner.apiKey! + ts + nonce, 'utf8').digest('hex');
    const attempt = (target: string, headers: Record<string, string>) => new Promise<{ status: number; body: string } | 'open'>((resolve) => {
      const ws = new WebSocket(target, { headers });
      ws.on('open', () => {
        ws.close();
        resolve('open');
      });
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.on('error', () => {});
    });
    const ts = String(a.clock.now());
    const good = { 'x-dapi-api-key': partner.apiKey!, 'x-dapi-timestamp': ts, 'x-dapi-nonce': '12345', 'x-dapi-sign': sign(ts, '12345') };
    const bad = await attempt(url, { ...good, 'x-dapi-sign': sign(ts, '54321') });
    assert.notEqual(bad, 'open');
    assert.equal((bad as { status: number }).status, 401);
    assert.match((bad as { body: string }).body, /"code":"DAPI_SIGN_INVALID"/);
    const stale = String(a.clock.now() - 10 * 60 * 1000);
    const old = await attempt(url, { ...good, 'x-dapi-timestamp': stale, 'x-dapi-sign': sign(stale, '12345') });
    assert.notEqual(old, 'open');
    // Issue 26: the statuses and codes docs/push.md names.
    assert.equal((old as { status: number }).status, 401);
    assert.match((old as { body: string }).body, /"code":"DAPI_TIMESTAMP_EXPIRED"/);
    assert.equal(await attempt(url, good), 'open');
    const replay = await attempt(url, good);
    assert.notEqual(replay, 'open', 'the same nonce twice is a replay');
    assert.equal((replay as { status: number }).status, 401);
    assert.match((replay as { body: string }).body, /"code":"DAPI_NONCE_REPLAYED"/);
    // Browsers cannot set headers: the same four values as query parameters.
    const ts2 = String(a.clock.now());
    const query = new URLSearchParams({ 'x-dapi-api-key': partner.apiKey!, 'x-dapi-timestamp': ts2, 'x-dapi-nonce': '67890', 'x-dapi-sign': sign(ts2, '67890') });
    assert.equal(await attempt(`${url}?${query}`, {}), 'open');
    // Each opened connection has its access line (answered 101), with the path only: a browser's signature
    // values in the query are not logged (review of 2026-11-27: upgrades wrote no access line).
    const opened = a.logs.flatMap((l) => l.split('\n')).filter(Boolean).map((l) => JSON.parse(l) as { url?: string; statusCode?: number; partnerId?: string })
      .filter((l) => l.url === '/card/v1/ws' && l.statusCode === 101);
    assert.ok(opened.length >= 2, `access lines of the two opened connections: ${opened.length}`);
    assert.ok(opened.every((l) => l.partnerId === partner.partnerId));
    assert.ok(!a.logs.some((l) => l.includes(sign(ts2, '67890'))), 'no signature in the logs');
    const badSince = new URLSearchParams({ 'x-dapi-api-key': partner.apiKey!, 'x-dapi-timestamp': ts2, 'x-dapi-nonce': '67891', 'x-dapi-sign': sign(ts2, '67891'), since: '-1' });
    const refused = await attempt(`${url}?${badSince}`, {});
    assert.notEqual(refused, 'open');
    assert.equal((refused as { status: number }).status, 200, 'a parameter refusal is HTTP 200 with the envelope, like every business refusal (D2)');
    assert.match((refused as { body: string }).body, /"code":"DAPI_PARAM_INVALID"/);
  });

  it('the SDK reads a refused upgrade\'s envelope: a parameter or credential refusal stops the subscription with its code (issue 26)', async () => {
    /** The errors a subscription reports until a fatal one (or a third: it kept reconnecting). */
    const errorsOf = (c: CardServiceClient, externalUserId?: string) => new Promise<[string, boolean][]>((resolve) => {
      const errors: [string, boolean][] = [];
      const sub = c.push.subscribe({
        externalUserId, onMessage: () => {}, reconnectDelayMs: 20,
        onError: (e, fatal) => {
          errors.push([(e as CardServiceError).code ?? e.message, fatal]);
          if (fatal || errors.length >= 3) {
            sub.close();
            resolve(errors);
          }
        },
      });
    });
    assert.deepEqual(await errorsOf(clientA, 'x'.repeat(65)), [['DAPI_PARAM_INVALID', true]], 'HTTP 200 DAPI_PARAM_INVALID: not retried');
    assert.deepEqual(await errorsOf(a.clientFor({ ...partner, secretKey: 'not-the-secret-key' })), [['DAPI_SIGN_INVALID', true]]);
  });

  it('partner isolation: another partner\'s client never receives this partner\'s messages; externalUserId filters', async () => {
    const other = await a.newPartner();
    const user = uid();
    const mine = collector();
    const theirs = collector();
    const all = collector();
    const o1 = { onMessage: mine.onMessage, externalUserId: user } as Parameters<CardServiceClient['push']['subscribe']>[0];
    const o2 = { onMessage: theirs.onMessage } as Parameters<CardServiceClient['push']['subscribe']>[0];
    const o3 = { onMessage: all.onMessage } as Parameters<CardServiceClient['push']['subscribe']>[0];
    const r = [opened(o1), opened(o2), opened(o3)];
    const subs = [clientA.push.subscribe(o1), other.client.push.subscribe(o2), clientB.push.subscribe(o3)];
    await Promise.all(r);
    await credit(other.client, user, '9'); // the same externalUserId at another partner is another user
    await credit(clientA, uid(), '1');
    await credit(clientA, user, '2');
    await mine.waitFor((ms) => ms.length >= 1, 'this user\'s credit');
    await all.waitFor((ms) => ms.length >= 2, 'both users of the partner');
    await theirs.waitFor((ms) => ms.length >= 1, 'the other partner\'s own credit');
    assert.deepEqual(mine.messages.map((m) => decimalText((m.data as { balance: { free: unknown } }).balance.free)), ['2']);
    assert.ok(all.messages.every((m) => decimalText((m.data as { balance: { free: unknown } }).balance.free) !== '9'));
    assert.deepEqual(theirs.messages.map((m) => decimalText((m.data as { balance: { free: unknown } }).balance.free)), ['9']);
    for (const s of subs) s.close();
  });

  it('an open connection ends (4001) once its partner is disabled or its address leaves the whitelist, on another instance too', async () => {
    // Review rvC: a socket was authenticated once, at the upgrade, and then streamed for as long as
    // it stayed open: a disabled partner, or an address removed from the API whitelist (a leaked key
    // being shut off) kept receiving its users' balances and card transactions.
    const connect = (p: { apiKey: string | null; secretKey: string | null }, nonce: string) => new Promise<{ ws: WebSocket; closed: Promise<number> }>((resolve, reject) => {
      const ts = String(a.clock.now());
      const sign = createHmac('sha256', Buffer.from(p.secretKey!, 'utf8')).update(p.apiKey! + ts + nonce, 'utf8').digest('hex');
      const ws = new WebSocket(`${b.baseUrl.replace('http', 'ws')}/card/v1/ws`, {
        headers: { 'x-dapi-api-key': p.apiKey!, 'x-dapi-timestamp': ts, 'x-dapi-nonce': nonce, 'x-dapi-sign': sign },
      });
      const closed = new Promise<number>((done) => ws.on('close', (code) => done(code)));
      ws.on('open', () => resolve({ ws, closed }));
      ws.on('unexpected-response', () => reject(new Error('upgrade refused')));
      ws.on('error', () => {});
    });
    const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), ms))]);
    const disabled = (await a.newPartner()).partner;
    const moved = (await a.newPartner()).partner;
    const kept = (await a.newPartner()).partner;
    const [d, m, k] = [await connect(disabled, '31001'), await connect(moved, '31002'), await connect(kept, '31003')];
    // The changes go through instance A; the sockets are on instance B.
    await a.admin.updatePartner(disabled.partnerId, { status: 'DISABLED' });
    await a.admin.updatePartner(moved.partnerId, { ipWhitelist: { api: ['192.0.2.7'], webhook: [], auth: [], retrieval: [] } });
    assert.equal(await within(d.closed, 10_000), 4001, 'the disabled partner\'s socket is closed');
    assert.equal(await within(m.closed, 10_000), 4001, 'the socket from an address no longer allowed is closed');
    assert.equal(await within(k.closed, 1500), 'open', 'an unchanged partner keeps its connection');
    k.ws.close();
  });

  it('one partner holds at most PUSH_MAX_CONNECTIONS_PER_PARTNER connections: one more is refused (429) before the upgrade, a closed one frees its slot, other partners are not affected (D39)', async () => {
    const capped = await startService({ db: await (await testDatabase()).openAnother(), clock: a.clock, env: { PUSH_MAX_CONNECTIONS_PER_PARTNER: '2' } });
    const sockets: WebSocket[] = [];
    try {
      const first = await capped.newPartner();
      const second = await capped.newPartner();
      let nonce = 20000;
      const connect = (p: { apiKey: string | null; secretKey: string | null }) => new Promise<{ status: number; body: string } | WebSocket>((resolve) => {
        const ts = String(capped.clock.now());
        const n = String(nonce++);
        const sign = createHmac('sha256', Buffer.from(p.secretKey!, 'utf8')).update(p.apiKey! + ts + n, 'utf8').digest('hex');
        const ws = new WebSocket(`${capped.baseUrl.replace('http', 'ws')}/card/v1/ws`, {
          headers: { 'x-dapi-api-key': p.apiKey!, 'x-dapi-timestamp': ts, 'x-dapi-nonce': n, 'x-dapi-sign': sign },
        });
        ws.on('open', () => {
          sockets.push(ws);
          resolve(ws);
        });
        ws.on('unexpected-response', (_req, res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        ws.on('error', () => {});
      });
      // Concurrent upgrades cannot all pass one count.
      const burst = await Promise.all([connect(first.partner), connect(first.partner), connect(first.partner), connect(first.partner)]);
      assert.equal(burst.filter((r) => r instanceof WebSocket).length, 2, 'two of four concurrent upgrades open');
      for (const refused of burst.filter((r): r is { status: number; body: string } => !(r instanceof WebSocket))) {
        assert.equal(refused.status, 429);
        assert.match(refused.body, /"code":"SYS_RATE_LIMITED"/);
        assert.match(refused.body, /Too many open push connections/);
      }
      // Signed requests that ask no upgrade (404), several on one kept-alive connection, hold no slot.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let i = 0; i < 3; i++) {
          const ts = String(capped.clock.now());
          const n = String(nonce++);
          const sign = createHmac('sha256', Buffer.from(second.partner.secretKey!, 'utf8')).update(second.partner.apiKey! + ts + n, 'utf8').digest('hex');
          const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
            http.get(`${capped.baseUrl}/card/v1/ws`, { agent, headers: { 'x-dapi-api-key': second.partner.apiKey!, 'x-dapi-timestamp': ts, 'x-dapi-nonce': n, 'x-dapi-sign': sign } }, (res) => {
              let body = '';
              res.on('data', (c) => (body += c));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
            }).on('error', reject);
          });
          assert.equal(answer.status, 404, 'a signed request without an upgrade');
          // Review h-attack2: it was an empty 404; now the envelope, like any path that answers nothing.
          assert.equal(JSON.parse(answer.body).code, 'SYS_NOT_FOUND');
        }
        // The kept-alive connection still open, the partner opens its two connections.
        assert.ok(await connect(second.partner) instanceof WebSocket, 'another partner has its own allowance');
        assert.ok(await connect(second.partner) instanceof WebSocket, 'another partner has its own allowance (2)');
      } finally {
        agent.destroy();
      }
      // A closed connection frees its slot.
      const open = burst.find((r): r is WebSocket => r instanceof WebSocket)!;
      await new Promise<void>((resolve) => {
        open.on('close', () => resolve());
        open.close();
      });
      let again: Awaited<ReturnType<typeof connect>> | undefined;
      for (let i = 0; i < 50 && !((again = await connect(first.partner)) instanceof WebSocket); i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(again instanceof WebSocket, 'a slot is free again once a connection closed');
    } finally {
      for (const ws of sockets) ws.terminate();
      await capped.close();
    }
  });

  it('a client that does not read is cut off at the send buffer limit while the API keeps answering', async () => {
    const slow = await startService({ db: await (await testDatabase()).openAnother(), clock: a.clock, env: { PUSH_SEND_BUFFER_BYTES: '65536' } });
    try {
      const { partner: p, client } = await slow.newPartner();
      // 4,000 stream rows of 4 KB (16 MB) for this partner, more than the socket buffers hold.
      await slow.db.query(
        `INSERT INTO user_stream (partner_id, kind, external_user_id, payload, created_at)
         SELECT $1, 'BALANCE', 'bulk-user', json_build_object('pad', repeat('x', 4000))::text, now() FROM generate_series(1, 4000)`, [p.partnerId]);
      await slow.db.query('SELECT sequenced FROM user_stream_sequence(10000)');
      const ts = String(slow.clock.now());
      const sign = createHmac('sha256', Buffer.from(p.secretKey!, 'utf8')).update(p.apiKey! + ts + '11111', 'utf8').digest('hex');
      const ws = new WebSocket(`${slow.baseUrl.replace('http', 'ws')}/card/v1/ws?since=0`, {
        headers: { 'x-dapi-api-key': p.apiKey!, 'x-dapi-timestamp': ts, 'x-dapi-nonce': '11111', 'x-dapi-sign': sign },
      });
      let received = 0;
      const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
      ws.on('message', () => received++);
      ws.on('error', () => {});
      await new Promise<void>((resolve) => ws.on('upgrade', (res) => { res.socket.pause(); resolve(); }));
      // The API answers while the slow client's socket is stuck.
      const started = Date.now();
      await client.partner.settings();
      assert.ok(Date.now() - started < 5000, 'a signed call completes');
      const waitForCut = new Promise<void>((resolve, reject) => {
        const deadline = Date.now() + 20_000;
        const t = setInterval(() => {
          if (slow.app.websocketServer.clients.size === 0) { clearInterval(t); resolve(); }
          else if (Date.now() > deadline) { clearInterval(t); reject(new Error('the slow client was not cut off')); }
        }, 50);
      });
      await waitForCut;
      (ws as unknown as { _socket: { resume(): void } })._socket.resume();
      const code = await closed;
      assert.ok(received < 4000, `the slow client got ${received} of 4000 messages before the cut`);
      assert.ok(code === 4008 || code === 1006, `closed with ${code}`);
    } finally {
      await slow.close();
    }
  });
});
