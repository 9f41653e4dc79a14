import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createHmac } from 'node:crypto';
import { Redis } from 'ioredis';
import { ADMIN_TOKEN, closeTestDatabase, startService, testDatabase, type TestService } from './helpers/service.ts';
import { rawRequest } from './helpers/raw-http.ts';
import { missingTool } from './helpers/tools.ts';
import { callbackUrlViolation, guardedLookup, isForbiddenAddress } from '../src/platform/http/ssrf.ts';
import { postWebhook } from '../src/domains/events/testing.ts';
import { CardServiceError } from '../sdk/index.ts';
import { createOperatorViaApi } from './helpers/console.ts';
import { totpCode } from './helpers/totp.ts';

/** Hostile traffic (issue 13): each numbered item of the attack report, against the real listening server. */

const PRODUCTION_ENV = { CARDSVC_ENV: 'production', CARD_CVK: '0123456789abcdeffedcba9876543210' };

/** Sends raw bytes, keeps the connection open as told, and resolves with everything the server wrote until it closed. */
function slowClient(port: number, first: string, options: { trickle?: string; everyMs?: number; giveUpMs: number }): Promise<{ reply: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => {
      clearInterval(timer);
      socket.destroy();
      reject(new Error(`the server kept the connection open for ${options.giveUpMs} ms`));
    }, options.giveUpMs);
    socket.on('connect', () => {
      socket.write(first);
      if (options.trickle) timer = setInterval(() => socket.writable && socket.write(options.trickle!), options.everyMs ?? 200);
    });
    socket.on('data', (chunk) => { reply += chunk.toString('utf8'); });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(giveUp);
      clearInterval(timer);
      resolve({ reply, closedAfterMs: Date.now() - started });
    });
  });
}

function envelopeOf(reply: string): { code: string; message: string } {
  return JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4));
}

describe('hardening against hostile traffic (issue 13)', () => {
  let svc: TestService;

  before(async () => {
    svc = await startService({ env: { HTTP_HEADERS_TIMEOUT_MS: '600', HTTP_REQUEST_TIMEOUT_MS: '900', HTTP_IDLE_TIMEOUT_MS: '5000' } });
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('1. a NUL or other control character in any id or string is DAPI_PARAM_INVALID naming the field, never a 5xx', async () => {
    const { client } = await svc.newPartner();
    const post = await client.http.raw('POST', '/open-api-corp/card/v1/block', { body: '{"cardId":"a\\u0000b"}' });
    assert.equal(post.status, 200);
    assert.equal(post.envelope.code, 'DAPI_PARAM_INVALID');
    assert.match(post.envelope.message ?? '', /cardId/);
    const get = await client.http.raw('GET', '/open-api-corp/card/v1/query', { query: 'cardId=a%00b' });
    assert.equal(get.status, 200);
    assert.equal(get.envelope.code, 'DAPI_PARAM_INVALID');
    assert.match(get.envelope.message ?? '', /cardId/);
    for (const bad of ['\\u0007', '\\u001b[31m', '\\u007f', '\\u0085', '\\ud800', 'line\\nbreak', 'tab\\there']) {
      const res = await client.http.raw('POST', '/open-api-corp/organization/v1/create', {
        body: `{"organizationRef":"r-${Date.now()}","organizationName":"Acme${bad}","companyRegistrationNumber":"CR-1","countryCode":"HK","fundingCurrencies":["USD"]}`,
      });
      assert.equal(res.envelope.code, 'DAPI_PARAM_INVALID', bad);
      assert.match(res.envelope.message ?? '', /organizationName/, bad);
    }
    // Printable Unicode (accents, CJK, emoji as a surrogate pair) is not a control character.
    const fine = await client.http.raw('POST', '/open-api-corp/card/v1/block', { body: '{"cardId":"caf\u00e9-\u5361-\ud83d\udcb3"}' });
    assert.notEqual(fine.envelope.code, 'DAPI_PARAM_INVALID');
    assert.ok(svc.logs.every((line) => !line.includes('"level":50')), 'no error was logged');
  });

  it('2. a client that sends headers and then trickles (or stops sending) its body is cut off with 408 in the envelope, and counted', async () => {
    const port = Number(new URL(svc.baseUrl).port);
    const before = (await svc.admin.call<{ connections: { requestTimeouts: number } }>('GET', '/internal/admin/v1/connection-guards')).connections.requestTimeouts;
    const stalled = await slowClient(port, 'POST /open-api-corp/card/v1/block HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{', { giveUpMs: 6000 });
    assert.match(stalled.reply, /^HTTP\/1\.1 408 /);
    assert.equal(envelopeOf(stalled.reply).code, 'SYS_ILLEGAL_PARAM');
    assert.ok(stalled.closedAfterMs < 4000, `closed after ${stalled.closedAfterMs} ms`);
    const trickling = await slowClient(port, 'POST /open-api-corp/card/v1/block HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n', { trickle: ' ', everyMs: 100, giveUpMs: 6000 });
    assert.match(trickling.reply, /^HTTP\/1\.1 408 /);
    const slowHeaders = await slowClient(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n', { trickle: 'X-A: b\r\n', everyMs: 100, giveUpMs: 6000 });
    assert.match(slowHeaders.reply, /^HTTP\/1\.1 408 /);
    const after = (await svc.admin.call<{ connections: { requestTimeouts: number } }>('GET', '/internal/admin/v1/connection-guards')).connections.requestTimeouts;
    assert.ok(after - before >= 3, `counted ${after - before} timeouts`);
  });

  it('3. bad signatures, unknown keys and wrong admin tokens from one address get 429 once over the budget; a good partner is not locked out', async () => {
    const limited = await startService({ env: { AUTH_FAILURE_LIMIT_MAX: '5', ADMIN_AUTH_FAILURE_LIMIT_MAX: '3' }, clock: svc.clock });
    try {
      const { client } = await limited.newPartner();
      const codes: string[] = [];
      for (let i = 0; i < 8; i++) {
        const res = await client.http.raw('GET', '/open-api/partner/v1/settings', { headers: { 'X-DAPI-SIGN': '0'.repeat(64) } });
        codes.push(`${res.status} ${res.envelope.code}`);
      }
      assert.deepEqual(codes, [...Array(5).fill('401 DAPI_SIGN_INVALID'), ...Array(3).fill('429 SYS_RATE_LIMITED')]);
      // Beyond the budget even a correct signature from that address waits (no verification at all) ...
      const blocked = await client.http.raw('GET', '/open-api/partner/v1/settings');
      assert.equal(blocked.status, 429);
      assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
      const admin: string[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await rawRequest(limited.baseUrl, { method: 'GET', path: '/internal/admin/v1/partners', headers: { authorization: `Bearer wrong-token-${i}` } });
        admin.push(`${res.status} ${res.body.code}`);
      }
      assert.deepEqual(admin, [...Array(3).fill('401 SYS_UNAUTHORIZED'), ...Array(2).fill('429 SYS_RATE_LIMITED')]);
      // ... and the right admin token guessed after the budget is refused too.
      const guessed = await rawRequest(limited.baseUrl, { method: 'GET', path: '/internal/admin/v1/partners', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.equal(guessed.status, 429);
    } finally {
      await limited.close();
    }
    const capped = await startService({ env: { PREAUTH_RATE_LIMIT_MAX: '4' }, clock: svc.clock });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await rawRequest(capped.baseUrl, { method: 'GET', path: '/open-api/partner/v1/settings' })).status);
      assert.deepEqual(statuses, [401, 401, 401, 401, 429, 429], 'limited by address before authentication');
    } finally {
      await capped.close();
    }
  });

  it('3. the counters are shared by every instance through Redis when REDIS_URL is set', async (t) => {
    const probe = net.connect(6379, '127.0.0.1');
    const reachable = await new Promise<boolean>((resolve) => {
      probe.once('connect', () => resolve(true));
      probe.once('error', () => resolve(false));
    });
    probe.destroy();
    const skip = missingTool(reachable ? null : 'no Redis at 127.0.0.1:6379');
    if (skip) {
      t.skip(skip);
      return;
    }
    const env = { ADMIN_AUTH_FAILURE_LIMIT_MAX: '4', REDIS_URL: 'redis://127.0.0.1:6379' };
    // The test's address is always 127.0.0.1: start from an empty counter for it.
    const redis = new Redis('redis://127.0.0.1:6379');
    const stale = await redis.keys('cardsvc-rate-limit-*adminfail:127.0.0.1');
    if (stale.length > 0) await redis.del(...stale);
    await redis.quit();
    const first = await startService({ env, clock: svc.clock });
    const second = await startService({ env, clock: svc.clock });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const target = i % 2 === 0 ? first : second;
        statuses.push((await rawRequest(target.baseUrl, { method: 'GET', path: '/internal/admin/v1/partners', headers: { authorization: `Bearer nope-${i}` } })).status);
      }
      assert.deepEqual(statuses, [401, 401, 401, 401, 429, 429], 'two instances, one budget');
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('4. SSRF: every special-purpose range is refused, NAT64, Teredo and 6to4 included, whatever they embed', () => {
    const refused = [
      '0.0.0.0', '10.0.0.1', '100.64.0.1', '127.0.0.1', '169.254.169.254', '172.16.0.1', '192.0.0.1', '192.0.2.1', '192.88.99.1',
      '192.168.1.1', '198.18.0.1', '198.51.100.1', '203.0.113.1', '224.0.0.1', '240.0.0.1', '255.255.255.255',
      '::', '::1', '::127.0.0.1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'fe80::1', 'fc00::1', 'fd12::1', 'ff02::1', '100::1', '2001:db8::1',
      '64:ff9b::a00:1', '64:ff9b::808:808', '64:ff9b:1::a00:1', '2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2002:c0a8:101::1', '2002:808:808::1',
      'fe80::1%eth0', 'not-an-ip', '',
    ];
    for (const address of refused) assert.equal(isForbiddenAddress(address), true, address);
    for (const address of ['93.184.215.14', '8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700::1111', '2a00:1450:4001::200e']) {
      assert.equal(isForbiddenAddress(address), false, address);
    }
  });

  it('4. SSRF: local names (trailing dots too), internal literals and user:password@ are refused at store time', async () => {
    const production = await startService({ env: PRODUCTION_ENV, clock: svc.clock });
    try {
      for (const url of ['http://localhost./hook', 'http://LOCALHOST../hook', 'http://api.localhost/hook', 'http://[64:ff9b:1::a00:1]/', 'http://[64:ff9b::7f00:1]/',
        'http://[2001::1]/', 'http://[2002:7f00:1::1]/', 'http://[::ffff:7f00:1]/', 'http://0x7f.1/', 'http://user:pw@hooks.example.com/']) {
        for (const field of ['webhookUrl', 'authUrl'] as const) {
          await assert.rejects(production.admin.createPartner({ name: 'ssrf', [field]: url }), (err: unknown) =>
            err instanceof CardServiceError && err.code === 'DAPI_PARAM_INVALID' && err.message.includes(field), `${field} ${url}`);
        }
      }
      // Credentials in a callback URL are refused in sandbox too.
      await assert.rejects(svc.admin.createPartner({ name: 'creds', webhookUrl: 'http://user:pw@127.0.0.1:9/hook' }),
        (err: unknown) => err instanceof CardServiceError && err.code === 'DAPI_PARAM_INVALID');
    } finally {
      await production.close();
    }
  });

  it('4. SSRF: the same rules at connect time, for literals and for names resolved to internal addresses', async () => {
    assert.match(callbackUrlViolation(new URL('http://localhost./x'), true) ?? '', /names this machine/);
    assert.equal(callbackUrlViolation(new URL('http://hooks.example.com/x'), true), null);
    for (const url of ['http://[64:ff9b:1::a00:1]:9/hook', 'http://[2002:7f00:1::1]:9/hook', 'http://localhost.:9/hook', 'http://u:p@hooks.example.com/hook']) {
      const result = await postWebhook({ url, body: '{}', headers: {}, timeoutMs: 1000, blockPrivateAddresses: true, whitelist: { entries: ['0.0.0.0/0', '::/0'], env: 'production' } });
      assert.equal(result.outcome, 'BLOCKED', url);
    }
    const error = await new Promise<Error | null>((resolve) => guardedLookup('localhost', {}, (err) => resolve(err)));
    assert.match(error?.message ?? '', /non-public address/);
  });

  it('6. a body declared in a charset other than UTF-8 is refused; an over-long URL gets 431 in the envelope', async () => {
    const { client } = await svc.newPartner();
    const latin1 = await client.http.raw('POST', '/open-api-corp/card/v1/block', { body: '{"cardId":"x"}', headers: { 'Content-Type': 'application/json; charset=iso-8859-1' } });
    assert.equal(latin1.status, 400);
    assert.equal(latin1.envelope.code, 'SYS_ILLEGAL_PARAM');
    const utf8 = await client.http.raw('POST', '/open-api-corp/card/v1/block', { body: '{"cardId":"x"}', headers: { 'Content-Type': 'application/json; charset=UTF-8' } });
    assert.equal(utf8.status, 200);
    const port = Number(new URL(svc.baseUrl).port);
    const long = await slowClient(port, `GET /open-api-corp/card/v1/query?cardId=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, { giveUpMs: 5000 });
    assert.match(long.reply, /^HTTP\/1\.1 431 /);
    assert.equal(envelopeOf(long.reply).code, 'SYS_ILLEGAL_PARAM');
  });

  it('8. behind a proxy (TRUST_PROXY=true: proxies on private addresses), the IP whitelist sees the address the proxy saw, not one the client wrote into X-Forwarded-For', async () => {
    // Review rvC: TRUST_PROXY=true trusted every hop (this test's proxy is the loopback client), so the left-most X-Forwarded-For entry, which
    // the client writes itself in front of the one its load balancer appends, was the caller's
    // address: any caller passed any IP whitelist with a forged header.
    const proxied = await startService({ db: await (await testDatabase()).openAnother(), clock: svc.clock, env: { TRUST_PROXY: 'true' } });
    try {
      const { client } = await proxied.newPartner({ ipWhitelist: { api: ['203.0.113.7'], webhook: [], auth: [], retrieval: [] } });
      const call = (xff: string) => client.http.raw('GET', '/open-api/partner/v1/settings', { headers: { 'X-Forwarded-For': xff } });
      const forged = await call('203.0.113.7, 198.51.100.20');
      assert.equal(forged.status, 403, 'the client wrote the allowed address; the proxy saw another');
      assert.equal(forged.envelope.code, 'DAPI_IP_NOT_ALLOWED');
      assert.equal((await call('198.51.100.20, 203.0.113.7')).envelope.code, 'SYS_SUCCESS', 'the proxy saw the allowed address');
    } finally {
      await proxied.close();
    }
  });

  it('9. failed console logins from one address count like wrong admin tokens: over the budget, every login (a right one too) is 429 before any check', async () => {
    // Review rvC: console logins were limited only by the per-address limit of unauthenticated
    // traffic (12,000 a minute): each one a memory-hard password check, and names could be sprayed
    // across every account, each staying below its own lockout.
    const limited = await startService({ env: { ADMIN_AUTH_FAILURE_LIMIT_MAX: '3' }, clock: svc.clock });
    try {
      const created = await createOperatorViaApi(limited, 'sid.spray', 'viewer');
      const login = (name: string, password: string) => {
        limited.clock.advance(30_000);
        return fetch(`${limited.baseUrl}/console/login`, {
          method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ name, password, code: totpCode(created.credentials.totpSecret, limited.clock.now()) }),
        });
      };
      const statuses: number[] = [];
      for (const name of ['ann.a', 'ben.b', 'cat.c', 'dan.d', 'eve.e']) statuses.push((await login(name, 'guess')).status);
      assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
      const right = await login('sid.spray', created.credentials.password);
      assert.equal(right.status, 429, 'the right credentials wait too');
      assert.ok(Number(right.headers.get('retry-after')) >= 1);
      assert.equal(right.headers.get('set-cookie'), null);
    } finally {
      await limited.close();
    }
  });

  it('10. /readyz (unauthenticated) says the database is down without the driver\'s message (address, port, user)', async () => {
    // Review rvC: the body carried the first 200 characters of the driver's error.
    const db = svc.db as unknown as { query: (...args: unknown[]) => Promise<unknown> };
    const query = db.query;
    db.query = (...args: unknown[]) => args[0] === 'SELECT 1'
      ? Promise.reject(new Error('password authentication failed for user "cardsvc_prod" at 10.20.30.40:5432'))
      : query.apply(svc.db, args);
    try {
      const res = await fetch(`${svc.baseUrl}/readyz`);
      assert.equal(res.status, 503);
      const text = await res.text();
      assert.equal(JSON.parse(text).database.status, 'down');
      assert.ok(!/cardsvc_prod|10\.20\.30\.40/.test(text), text);
      assert.ok(svc.logs.some((l) => l.includes('10.20.30.40')), 'the operator finds the reason in the log');
    } finally {
      db.query = query;
    }
  });

  it('7. a body whose bytes are not UTF-8 (invalid or overlong sequences) is refused, not stored with U+FFFD in place of the bytes', async () => {
    // Review rvC: the body was decoded leniently, so a correctly signed body with the byte 0xFF in a
    // name created the organization "A\uFFFDB" (RFC 8259 8.1: JSON text is UTF-8).
    const { partner, client } = await svc.newPartner();
    const post = (name: Buffer) => {
      const body = Buffer.concat([Buffer.from('{"organizationRef":"utf8-probe","organizationName":"'), name,
        Buffer.from('","companyRegistrationNumber":"C1","countryCode":"US","fundingCurrencies":["USD"]}')]);
      const timestamp = String(svc.clock.now());
      const nonce = String(20000 + Math.floor(Math.random() * 70000));
      const sign = createHmac('sha256', partner.secretKey!).update(partner.apiKey! + timestamp + nonce).update(body).digest('hex');
      return fetch(`${svc.baseUrl}/open-api-corp/organization/v1/create`, {
        method: 'POST', body,
        headers: { 'content-type': 'application/json', 'x-dapi-api-key': partner.apiKey!, 'x-dapi-timestamp': timestamp, 'x-dapi-nonce': nonce, 'x-dapi-sign': sign },
      }).then(async (res) => ({ status: res.status, envelope: await res.json() as { code: string } }));
    };
    for (const bytes of [[0x41, 0xff, 0x42], [0x41, 0xc0, 0xaf], [0x41, 0xed, 0xa0, 0x80], [0x41, 0xe2, 0x82]]) {
      const refused = await post(Buffer.from(bytes));
      assert.equal(refused.status, 400, Buffer.from(bytes).toString('hex'));
      assert.equal(refused.envelope.code, 'SYS_ILLEGAL_PARAM');
    }
    const list = await client.http.raw<{ total: number }>('GET', '/open-api-corp/organization/v1/list');
    assert.equal(list.envelope.data!.total, 0, 'nothing was created');
    const ok = await post(Buffer.from('A\u00e9\u4e2d B', 'utf8'));
    assert.equal(ok.envelope.code, 'SYS_SUCCESS', 'well-formed multi-byte UTF-8 is accepted');
  });

  it('11. a request offering HTTP/2 (Upgrade: h2c, as Java\'s HttpClient sends by default) is answered as HTTP/1.1 by its route, body and keep-alive intact', async () => {
    // Every request with `Connection: Upgrade` went to the WebSocket handshake, which answered 400
    // "Invalid Upgrade header" in text/html; RFC 9110 7.8 lets a server ignore an upgrade it does not take.
    const { partner } = await svc.newPartner();
    const signed = (method: string, path: string, body: string) => {
      const timestamp = String(svc.clock.now());
      const nonce = String(20000 + Math.floor(Math.random() * 70000));
      const sign = createHmac('sha256', partner.secretKey!).update(partner.apiKey! + timestamp + nonce + body).digest('hex');
      // The header block java.net.http.HttpClient (version HTTP_2, the default) writes for an http:// URI.
      return `${method} ${path} HTTP/1.1\r\nConnection: Upgrade, HTTP2-Settings\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`
        + `Host: 127.0.0.1\r\nHTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA\r\nUpgrade: h2c\r\nUser-Agent: Java-http-client/17.0.15\r\n`
        + `Content-Type: application/json; charset=UTF-8\r\nX-DAPI-API-KEY: ${partner.apiKey}\r\nX-DAPI-TIMESTAMP: ${timestamp}\r\n`
        + `X-DAPI-NONCE: ${nonce}\r\nX-DAPI-SIGN: ${sign}\r\n\r\n${body}`;
    };
    const socket = net.connect(Number(new URL(svc.baseUrl).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.on('data', (chunk) => { received += chunk.toString('utf8'); });
    /** The next whole answer on the socket (headers and Content-Length bytes of body). */
    const answer = async (): Promise<{ head: string; body: any }> => {
      for (let waited = 0; waited < 5000; waited += 10) {
        const end = received.indexOf('\r\n\r\n');
        const length = end < 0 ? -1 : Number(/content-length: (\d+)/i.exec(received.slice(0, end))?.[1]);
        if (end >= 0 && Buffer.byteLength(received.slice(end + 4)) >= length) {
          const head = received.slice(0, end);
          const body = received.slice(end + 4, end + 4 + length);
          received = received.slice(end + 4 + length);
          return { head, body: JSON.parse(body) };
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`no whole answer: ${JSON.stringify(received)}`);
    };
    socket.write(signed('POST', '/open-api-corp/organization/v1/create',
      '{"organizationRef":"h2c-probe","organizationName":"Java GmbH","companyRegistrationNumber":"C1","countryCode":"DE","fundingCurrencies":["USD"]}'));
    const created = await answer();
    assert.match(created.head, /^HTTP\/1\.1 200 /);
    assert.equal(created.body.code, 'SYS_SUCCESS', JSON.stringify(created.body));
    socket.write(signed('GET', '/open-api-corp/organization/v1/list', ''));
    const listed = await answer();
    assert.match(listed.head, /^HTTP\/1\.1 200 /, 'the same connection carries the next request');
    assert.equal(listed.body.data.total, 1);
    assert.equal(listed.body.data.result[0].organizationId, created.body.data.organizationId);
    socket.destroy();
  });

  it('12. a path the router cannot read (bad percent-encoding, a path segment over its length limit) is refused in the D3 envelope with a request id, not in Fastify\'s own error shape', async () => {
    // Review h-attack2: `/console/cards/%ZZ` answered {"error":"Bad Request","code":"FST_ERR_BAD_URL",...}
    // and a 101-character console path segment 414 {"code":"FST_ERR_MAX_PARAM_LENGTH",...}, without x-request-id.
    for (const path of ['/console/cards/%ZZ', '/%ZZ', `/console/cards/${'a'.repeat(101)}`]) {
      const res = await fetch(`${svc.baseUrl}${path}`);
      assert.equal(res.status, 400, path);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.ok(res.headers.get('x-request-id'), `${path} carries a request id`);
      const body = await res.json() as Record<string, unknown>;
      assert.deepEqual(Object.keys(body), ['success', 'code', 'message', 'messageDetail', 'data'], path);
      assert.equal(body.code, 'SYS_ILLEGAL_PARAM');
      assert.equal(body.success, false);
    }
  });
});
