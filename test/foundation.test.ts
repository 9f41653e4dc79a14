import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, closeTestDatabase, startService, testDatabase, type TestService } from './helpers/service.ts';
import { rawRequest } from './helpers/raw-http.ts';
import { CardServiceClient, CardServiceError, decimal, decimalText } from '../sdk/index.ts';
import { allRoutes } from '../src/app.ts';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DATABASE_FUNCTIONS, databaseFunctions, migrate } from '../src/migrate.ts';
import { migrate as applySchema } from '../src/platform/db/migrate.ts';

const SETTINGS = '/open-api/partner/v1/settings';
const ECHO = '/open-api/sandbox/v1/decimal-echo';

describe('foundation: envelope, framework rejections, exact decimals, whitelists, replay store', () => {
  let svc: TestService;
  let client: CardServiceClient;

  before(async () => {
    svc = await startService();
    ({ client } = await svc.newPartner());
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  function signedHeaders(body: string) {
    const timestamp = String(svc.clock.now());
    const nonce = String(10000 + Math.floor(Math.random() * 89999));
    return {
      'X-DAPI-API-KEY': client.http.apiKey,
      'X-DAPI-TIMESTAMP': timestamp,
      'X-DAPI-NONCE': nonce,
      'X-DAPI-SIGN': client.http.sign(timestamp, nonce, body),
    };
  }

  it('when a POST has no Content-Type, then HTTP 400 SYS_ILLEGAL_PARAM with success:false (D3)', async () => {
    const body = '{"amount":1}';
    const res = await rawRequest(svc.baseUrl, { method: 'POST', path: ECHO, headers: signedHeaders(body), body });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { success: false, code: 'SYS_ILLEGAL_PARAM', message: res.body.message, messageDetail: null, data: null });
  });

  it('when a POST declares text/plain, then HTTP 400 SYS_ILLEGAL_PARAM, never 415', async () => {
    const body = '{"amount":1}';
    const res = await rawRequest(svc.baseUrl, { method: 'POST', path: ECHO, headers: { ...signedHeaders(body), 'Content-Type': 'text/plain' }, body });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'SYS_ILLEGAL_PARAM');
    assert.equal(res.body.success, false);
  });

  it('when the JSON is malformed, then HTTP 400 SYS_ILLEGAL_PARAM with success:false', async () => {
    const res = await client.http.raw('POST', ECHO, { body: '{"amount": 1,' });
    assert.equal(res.status, 400);
    assert.equal(res.envelope.code, 'SYS_ILLEGAL_PARAM');
    assert.equal(res.envelope.success, false);
    assert.equal(res.envelope.data, null);
  });

  it('when the body is 65 KiB, then HTTP 400 SYS_ILLEGAL_PARAM; exactly 64 KiB passes the framework', async () => {
    const big = JSON.stringify({ amount: 1, pad: 'x'.repeat(65 * 1024) });
    const res = await client.http.raw('POST', ECHO, { body: big });
    assert.equal(res.status, 400);
    assert.equal(res.envelope.code, 'SYS_ILLEGAL_PARAM');
    assert.equal(res.envelope.success, false);
    const prefix = '{"amount":1,"pad":"';
    const exact = prefix + 'x'.repeat(64 * 1024 - prefix.length - 2) + '"}';
    assert.equal(Buffer.byteLength(exact), 64 * 1024);
    const ok = await client.http.raw('POST', ECHO, { body: exact });
    assert.equal(ok.status, 200);
    assert.equal(ok.envelope.code, 'SYS_SUCCESS');
  });

  it('when the path is unknown, then HTTP 404 SYS_NOT_FOUND in the envelope', async () => {
    const res = await client.http.raw('GET', '/open-api/nothing/v1/here');
    assert.equal(res.status, 404);
    assert.equal(res.envelope.code, 'SYS_NOT_FOUND');
    assert.equal(res.envelope.data, null);
  });

  it('a path or method with no route is 404 SYS_NOT_FOUND whatever its body: no Content-Type, an empty or malformed body (D2; review h-java)', async () => {
    // What Java's HttpClient sends for .DELETE() and for .POST(BodyPublishers.noBody()): no Content-Type, Content-Length 0.
    const cases: { method: string; path: string; headers: Record<string, string>; body?: string }[] = [
      { method: 'DELETE', path: SETTINGS, headers: { 'Content-Length': '0' } },
      { method: 'POST', path: '/open-api/webhook/v1/tset', headers: { 'Content-Length': '0' } },
      { method: 'POST', path: '/open-api/webhook/v1/tset', headers: { 'Content-Type': 'text/plain' }, body: 'x' },
      { method: 'PUT', path: SETTINGS, headers: { 'Content-Type': 'application/json' }, body: '{"broken' },
      { method: 'DELETE', path: SETTINGS, headers: { 'Content-Type': 'application/json; charset=UTF-8', 'Content-Length': '0' } },
    ];
    for (const c of cases) {
      const res = await rawRequest(svc.baseUrl, c);
      const label = `${c.method} ${c.path} ${JSON.stringify(c.headers)}`;
      assert.equal(res.status, 404, label);
      assert.equal(res.body.code, 'SYS_NOT_FOUND', label);
      assert.equal(res.body.message, `No route ${c.method} ${c.path}`, label);
    }
    // An existing route keeps the framework rejections of D3.
    const empty = await rawRequest(svc.baseUrl, { method: 'POST', path: ECHO, headers: { 'Content-Length': '0' } });
    assert.deepEqual([empty.status, empty.body.code], [400, 'SYS_ILLEGAL_PARAM']);
    const broken = await rawRequest(svc.baseUrl, { method: 'POST', path: ECHO, headers: { 'Content-Type': 'application/json' }, body: '{"broken' });
    assert.deepEqual([broken.status, broken.body.code], [400, 'SYS_ILLEGAL_PARAM']);
  });

  it('success envelope is exactly code/message/messageDetail/data (D1); failures carry the seven display fields', async () => {
    const ok = await client.http.raw('GET', SETTINGS);
    assert.deepEqual(Object.keys(ok.envelope).sort(), ['code', 'data', 'message', 'messageDetail']);
    assert.equal(ok.envelope.message, null);
    assert.equal(ok.envelope.messageDetail, null);
    const bad = await client.http.raw('POST', ECHO, { body: { amount: 'ten' } });
    assert.equal(bad.status, 200);
    assert.equal(bad.envelope.code, 'DAPI_PARAM_INVALID');
    assert.match(bad.envelope.message!, /amount/);
    assert.deepEqual(Object.keys(bad.envelope.messageDetail!).sort(), ['action', 'icon', 'linkTitle', 'linkUrl', 'message', 'title', 'type']);
    assert.equal(bad.envelope.messageDetail!.type, 'ERROR');
    assert.equal('success' in bad.envelope, false);
  });

  it('exact decimals round-trip through a route and the NUMERIC column with every digit (D4)', async () => {
    for (const text of ['0.123456789012345678', '12345678901234567890.123456789012345678', '-0.000000000000000001', '100', '9007199254740993', '10.50', '0.100000000000000000']) {
      const res = await client.sandbox.decimalEcho(decimal(text));
      assert.equal(decimalText(res.amount), text);
      const [row] = await svc.db.query<{ amount: string }>('SELECT amount::text AS amount FROM decimal_probes WHERE probe_id = $1', [res.probeId]);
      assert.equal(row.amount, text);
    }
    // The raw response text carries the digits as a JSON number, not a string.
    const raw = await client.http.raw('POST', ECHO, { body: '{"amount":0.123456789012345678}' });
    assert.match(raw.text, /"amount":0\.123456789012345678[,}]/);
  });

  it('amounts beyond 18 decimals, in exponent form or as strings are DAPI_PARAM_INVALID naming the field', async () => {
    for (const body of ['{"amount":0.1234567890123456789}', '{"amount":1e3}', '{"amount":"1.5"}', '{}']) {
      const res = await client.http.raw('POST', ECHO, { body });
      assert.equal(res.envelope.code, 'DAPI_PARAM_INVALID', body);
      assert.match(res.envelope.message!, /amount/, body);
    }
  });

  it('paging integers of a query string are decimal digits: 0x10, 1e3, " 1", +1, 1.0 are DAPI_PARAM_INVALID naming the field (D9, D10)', async () => {
    const LIST = '/user-asset/v1/transactions';
    for (const value of ['0x10', '1e3', ' 1', '+1', '1.0', '0b1', '']) {
      for (const field of ['page', 'pageSize']) {
        const query = `externalUserId=u1&${field}=${encodeURIComponent(value)}`;
        const res = await client.http.raw('GET', LIST, { query });
        assert.equal(res.envelope.code, 'DAPI_PARAM_INVALID', query);
        assert.match(res.envelope.message!, new RegExp(field), query);
      }
    }
    // Plain digits still work, and the bounds keep their own messages.
    const ok = await client.http.raw<{ page: number; pageSize: number }>('GET', LIST, { query: 'externalUserId=u1&page=02&pageSize=5' });
    assert.equal(ok.envelope.code, 'SYS_SUCCESS');
    assert.deepEqual([ok.envelope.data!.page, ok.envelope.data!.pageSize], [2, 5]);
    const low = await client.http.raw('GET', LIST, { query: 'externalUserId=u1&page=-1' });
    assert.match(low.envelope.message!, /page: must be >= 1/);
  });

  it('an optional field sent as null, as Java\'s Jackson writes every unset field, is read as absent; a required one and operator bodies stay strict (review h-java)', async () => {
    // The bytes a Java partner's request objects become with Jackson's default ObjectMapper (nulls included).
    const credit = await client.http.raw<{ remark: null; amount: unknown }>('POST', '/user-asset/v1/credit', {
      body: '{"externalTranId":"java-null-1","asset":"USDT","amount":1.50,"externalUserId":"java-user","remark":null}',
    });
    assert.equal(credit.envelope.code, 'SYS_SUCCESS', credit.envelope.message ?? '');
    assert.equal(credit.envelope.data!.remark, null);
    const list = await client.http.raw('POST', '/user-asset/v1/transactions', {
      body: '{"externalUserId":"java-user","asset":null,"type":null,"startTime":null,"endTime":null,"page":null,"pageSize":null}',
    });
    assert.equal(list.envelope.code, 'SYS_SUCCESS', list.envelope.message ?? '');
    const org = await client.organizations.create({
      organizationRef: 'java-null-org', organizationName: 'Null Ltd', companyRegistrationNumber: 'N-1', countryCode: 'HK', fundingCurrencies: ['USD'],
    });
    const freeze = await client.http.raw('POST', '/open-api-corp/organization/v1/update-restrictions', {
      body: `{"organizationId":"${org.organizationId}","addRestrictions":["CASH_IN_FROZEN"],"removeRestrictions":null,"remark":null}`,
    });
    assert.equal(freeze.envelope.code, 'SYS_SUCCESS', freeze.envelope.message ?? '');
    // null is absent, so both arrays null is "no code at all" (D47), and a required field is still required.
    const neither = await client.http.raw('POST', '/open-api-corp/organization/v1/update-restrictions', {
      body: `{"organizationId":"${org.organizationId}","addRestrictions":null,"removeRestrictions":null}`,
    });
    assert.equal(neither.envelope.code, 'DAPI_PARAM_INVALID');
    const noAsset = await client.http.raw('POST', '/user-asset/v1/credit', {
      body: '{"externalTranId":"java-null-2","asset":null,"amount":1.50,"externalUserId":"java-user"}',
    });
    assert.equal(noAsset.envelope.code, 'DAPI_PARAM_INVALID');
    assert.match(noAsset.envelope.message!, /asset/);
    // Operator bodies keep refusing it (there an absent field means "unchanged", so null must not pass for it).
    const partnerId = (await svc.newPartner()).partner.partnerId;
    const update = await rawRequest(svc.baseUrl, {
      method: 'POST', path: '/internal/admin/v1/partners/update',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: `{"partnerId":"${partnerId}","name":null}`,
    });
    assert.equal(update.body.code, 'DAPI_PARAM_INVALID');
    assert.match(update.body.message, /name/);
  });

  it("a partner's IP whitelist admits and refuses by address, with CIDR blocks", async () => {
    const { client: allowed } = await svc.newPartner({ ipWhitelist: { api: ['127.0.0.1'] } });
    assert.equal((await allowed.http.raw('GET', SETTINGS)).envelope.code, 'SYS_SUCCESS');
    const { client: block } = await svc.newPartner({ ipWhitelist: { api: ['127.0.0.0/8'] } });
    assert.equal((await block.http.raw('GET', SETTINGS)).envelope.code, 'SYS_SUCCESS');
    const { client: refused } = await svc.newPartner({ ipWhitelist: { api: ['10.20.30.40', '192.168.0.0/16'] } });
    const res = await refused.http.raw('GET', SETTINGS);
    assert.equal(res.status, 403);
    assert.equal(res.envelope.code, 'DAPI_IP_NOT_ALLOWED');
  });

  it('in production an empty whitelist admits nobody (D13)', async () => {
    const { partner } = await svc.newPartner();
    const prod = await startService({ env: { CARDSVC_ENV: 'production', PARTNER_CACHE_TTL_MS: '0' } });
    try {
      const res = await prod.clientFor(partner).http.raw('GET', SETTINGS);
      assert.equal(res.status, 403);
      assert.equal(res.envelope.code, 'DAPI_IP_NOT_ALLOWED');
      await svc.admin.updatePartner(partner.partnerId, { ipWhitelist: { api: ['127.0.0.1'] } });
      assert.equal((await prod.clientFor(partner).http.raw('GET', SETTINGS)).envelope.code, 'SYS_SUCCESS');
      // Production has no sandbox routes.
      assert.equal((await prod.clientFor(partner).http.raw('POST', ECHO, { body: { amount: 1 } })).status, 404);
    } finally {
      await prod.close();
    }
  });

  it('the replay store is shared: a request accepted by one instance is a replay on another', async () => {
    const database = await testDatabase();
    const second = await startService({ db: await database.openAnother(), clock: svc.clock });
    try {
      const timestamp = String(svc.clock.now());
      const first = await client.http.raw('GET', SETTINGS, { timestamp, nonce: '77777' });
      assert.equal(first.envelope.code, 'SYS_SUCCESS');
      const other = new CardServiceClient({ baseUrl: second.baseUrl, apiKey: client.http.apiKey, secretKey: secretOf(client), now: svc.clock.now });
      const replay = await other.http.raw('GET', SETTINGS, { timestamp, nonce: '77777' });
      assert.equal(replay.status, 401);
      assert.equal(replay.envelope.code, 'DAPI_NONCE_REPLAYED');
      // And the other way round.
      const ts2 = String(svc.clock.now() + 1);
      assert.equal((await other.http.raw('GET', SETTINGS, { timestamp: ts2, nonce: '77778' })).envelope.code, 'SYS_SUCCESS');
      assert.equal((await client.http.raw('GET', SETTINGS, { timestamp: ts2, nonce: '77778' })).envelope.code, 'DAPI_NONCE_REPLAYED');
    } finally {
      await second.close();
    }
  });

  it('the admin API refuses a missing or wrong bearer token with 401', async () => {
    const res = await rawRequest(svc.baseUrl, { method: 'GET', path: '/internal/admin/v1/partners', headers: { authorization: 'Bearer wrong-token-of-some-length' } });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'SYS_UNAUTHORIZED');
    const none = await rawRequest(svc.baseUrl, { method: 'GET', path: '/internal/admin/v1/partners' });
    assert.equal(none.status, 401);
  });

  it('admin validation names the field: a bad whitelist entry is DAPI_PARAM_INVALID and creates nothing', async () => {
    const before = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM partners');
    await assert.rejects(svc.admin.createPartner({ name: 'x', ipWhitelist: { api: ['999.1.1.1'] } }), (err: CardServiceError) => {
      assert.equal(err.code, 'DAPI_PARAM_INVALID');
      assert.match(err.message, /ipWhitelist\.api/);
      return true;
    });
    await assert.rejects(svc.admin.createPartner({ name: 'x', externalPublicKey: 'bm90IGEga2V5' }), /DAPI_PARAM_INVALID/);
    const afterCount = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM partners');
    assert.equal(afterCount[0].n, before[0].n);
  });

  it('health and readiness answer; the OpenAPI document lists every route with its error codes', async () => {
    assert.equal((await rawRequest(svc.baseUrl, { method: 'GET', path: '/healthz' })).status, 200);
    const ready = await rawRequest(svc.baseUrl, { method: 'GET', path: '/readyz' });
    assert.equal(ready.status, 200);
    const doc = await rawRequest(svc.baseUrl, { method: 'GET', path: '/openapi.json' });
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.1.0');
    for (const def of allRoutes(svc.ctx)) {
      const path = def.url.replace(/:([A-Za-z]+)/g, '{$1}');
      const op = doc.body.paths[path]?.[def.method.toLowerCase()];
      assert.ok(op, `${def.method} ${def.url} is documented`);
      for (const code of def.errors) assert.ok(op['x-error-codes'].includes(code), `${def.url} lists ${code}`);
      if (def.auth === 'partner') assert.ok(op['x-error-codes'].includes('DAPI_SIGN_INVALID'));
    }
    const page = await rawRequest(svc.baseUrl, { method: 'GET', path: '/docs/' });
    assert.equal(page.status, 200);
    assert.match(String(page.body), /swagger/i);
  });

  it('every response carries a request id, and log lines hold no secret key or signature', async () => {
    const res = await client.http.raw('GET', SETTINGS);
    assert.ok(res.headers.get('x-request-id'));
    const secret = secretOf(client);
    const all = svc.logs.join('');
    assert.ok(all.length > 0);
    assert.ok(!all.includes(secret), 'secret key in logs');
    assert.ok(!/"x-dapi-sign":"[0-9a-f]{64}"/.test(all), 'signature in logs');
  });
});

describe('per-partner rate limit', () => {
  it('when a partner exceeds its budget, then HTTP 429 SYS_RATE_LIMITED with Retry-After; other partners are unaffected', async () => {
    const svc = await startService({ env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' } });
    try {
      const { client } = await svc.newPartner();
      const { client: other } = await svc.newPartner();
      for (let i = 0; i < 3; i++) assert.equal((await client.http.raw('GET', SETTINGS)).envelope.code, 'SYS_SUCCESS');
      const limited = await client.http.raw('GET', SETTINGS);
      assert.equal(limited.status, 429);
      assert.equal(limited.envelope.code, 'SYS_RATE_LIMITED');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      assert.equal((await other.http.raw('GET', SETTINGS)).envelope.code, 'SYS_SUCCESS');
    } finally {
      await svc.close();
      await closeTestDatabase();
    }
  });
});

describe('schema: numbered migrations, then each database function from its one file (issue 33)', () => {
  after(closeTestDatabase);

  it('the database holds exactly the functions and triggers of the domain SQL files, and starting again rewrites none', async () => {
    const { db } = await testDatabase();
    const files = databaseFunctions();
    assert.equal(files.length, DATABASE_FUNCTIONS.length);
    const text = files.map((f) => readFileSync(f.file, 'utf8')).join('\n');
    const defined = [...text.matchAll(/^CREATE OR REPLACE FUNCTION (\w+)/gm)].map((m) => m[1]).sort();
    const triggers = [...text.matchAll(/^CREATE OR REPLACE TRIGGER (\w+)/gm)].map((m) => m[1]).sort();
    const inDb = (await db.query<{ name: string }>(
      `SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = current_schema() ORDER BY 1`)).map((r) => r.name);
    assert.deepEqual(inDb, defined, 'one database function per definition, no leftover of an older migration');
    const triggersInDb = (await db.query<{ name: string }>(
      `SELECT t.tgname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND NOT t.tgisinternal ORDER BY 1`)).map((r) => r.name);
    assert.deepEqual(triggersInDb, triggers);
    const recorded = await db.query<{ name: string; sha256: string }>('SELECT name, sha256 FROM schema_functions ORDER BY name');
    assert.deepEqual(recorded, files.map((f) => ({ name: f.name, sha256: createHash('sha256').update(readFileSync(f.file, 'utf8')).digest('hex') }))
      .sort((a, b) => (a.name < b.name ? -1 : 1)));
    assert.deepEqual(await migrate(db), { versions: [], repeatable: [] }, 'nothing changed: nothing applied');
  });

  it('a changed file is applied again, alone, once by two instances starting together; a file no longer listed loses its record', async () => {
    const { db, openAnother } = await testDatabase();
    const dir = mkdtempSync(path.join(tmpdir(), 'issue33-'));
    const probe = { name: 'test/sql/issue33_probe.sql', file: path.join(dir, 'issue33_probe.sql') };
    const write = (n: number) => writeFileSync(probe.file, `CREATE OR REPLACE FUNCTION issue33_probe() RETURNS integer LANGUAGE sql AS $$ SELECT ${n} $$;\n`);
    const value = async () => (await db.query<{ v: number }>('SELECT issue33_probe() AS v'))[0].v;
    try {
      const list = [...databaseFunctions(), probe];
      write(1);
      assert.deepEqual(await applySchema(db, list), { versions: [], repeatable: [probe.name] });
      assert.equal(await value(), 1);
      assert.deepEqual(await applySchema(db, list), { versions: [], repeatable: [] });

      write(2);
      const other = await openAnother();
      const both = await Promise.all([applySchema(db, list), applySchema(other, list)]);
      assert.deepEqual(both.map((r) => r.repeatable).sort(), [[], [probe.name]], 'the advisory lock: one instance applies it, the other finds it done');
      assert.equal(await value(), 2);

      // A DROP in a numbered migration deletes the file's record: the next start applies it again.
      await db.query('DROP FUNCTION issue33_probe()');
      await db.query('DELETE FROM schema_functions WHERE name = $1', [probe.name]);
      assert.deepEqual(await applySchema(db, list), { versions: [], repeatable: [probe.name] });
      assert.equal(await value(), 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await db.query('DROP FUNCTION IF EXISTS issue33_probe()');
    }
    assert.deepEqual(await migrate(db), { versions: [], repeatable: [] });
    assert.deepEqual((await db.query('SELECT name FROM schema_functions WHERE name = $1', [probe.name])), [], 'the record of a file no longer listed is gone');
  });
});

/** The secret key the SDK client signs with (kept private in the SDK; tests read it back). */
function secretOf(client: CardServiceClient): string {
  return (client.http as unknown as { secretKey: string }).secretKey;
}
