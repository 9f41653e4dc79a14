import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import type { CardServiceClient, CreatedPartner } from '../sdk/index.ts';

/**
 * Issue 31, section 1: the sandbox signature self-check. Through the real server: a check answers
 * each step of authentication (D5 order, 5.2-5.4, D6, D7) without the right signature or anything
 * made with the secret, does not use up the nonce, is rate limited as a failed authentication, and
 * does not exist in production.
 */
const CHECK = '/open-api/sandbox/v1/signature-check';
const SETTINGS = '/open-api/partner/v1/settings';
const sha256 = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

interface Values { apiKey: string; timestamp: string; nonce: string; method: 'GET' | 'POST'; payload: string; signature: string }

async function check(svc: TestService, values: object) {
  const res = await fetch(`${svc.baseUrl}${CHECK}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(values) });
  return { status: res.status, headers: res.headers, text: await res.clone().text(), body: await res.json() as { code: string; message: string | null; data: any } };
}

describe('signature self-check (issue 31, sandbox)', () => {
  let svc: TestService;
  let partner: CreatedPartner;
  let client: CardServiceClient;
  let nonceSeq = 20000;
  const freshNonce = () => String(nonceSeq++);

  before(async () => {
    svc = await startService();
    ({ partner, client } = await svc.newPartner());
    // The service clock stands still, so skews and server times are exact.
    const frozen = svc.clock.now();
    svc.clock.now = () => frozen;
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  const signed = (payload: string, method: 'GET' | 'POST' = 'GET', timestamp = String(svc.clock.now())): Values => {
    const nonce = freshNonce();
    return { apiKey: partner.apiKey!, timestamp, nonce, method, payload, signature: client.http.sign(timestamp, nonce, payload) };
  };

  it('when the values are right, every step passes and the verdict is SYS_SUCCESS; the string to sign is the partner\'s own (length, SHA-256)', async () => {
    const values = signed('');
    const { status, body } = await check(svc, values);
    assert.equal(status, 200);
    assert.equal(body.code, 'SYS_SUCCESS');
    const r = body.data;
    assert.equal(r.verdict, 'SYS_SUCCESS');
    assert.deepEqual(r.apiKey, { formatOk: true, known: true });
    assert.equal(r.ipAddress.allowed, true);
    assert.equal(r.serverTimeMs, svc.clock.now());
    assert.equal(r.serverTime, new Date(svc.clock.now()).toISOString());
    assert.deepEqual(r.timestamp, { value: values.timestamp, formatOk: true, withinWindow: true, skewMs: 0, windowMs: 5000 });
    assert.equal(r.nonce.valid, true);
    assert.equal(r.nonce.alreadyUsed, false);
    const own = values.apiKey + values.timestamp + values.nonce;
    assert.equal(r.stringToSign.length, Buffer.byteLength(own));
    assert.equal(r.stringToSign.sha256, sha256(own));
    assert.deepEqual(r.stringToSign.parts.payload, { length: 0, sha256: sha256('') });
    assert.deepEqual(r.signature, { formatOk: true, matches: true });
    assert.deepEqual(r.hints, []);
  });

  it('when checked first, the nonce is not used up: the real request with the same values passes, and a check afterwards says it was used', async () => {
    const values = signed('');
    assert.equal((await check(svc, values)).body.data.verdict, 'SYS_SUCCESS');
    const real = await client.http.raw('GET', SETTINGS, { timestamp: values.timestamp, nonce: values.nonce });
    assert.equal(real.envelope.code, 'SYS_SUCCESS', 'the check did not burn the nonce');
    const after = (await check(svc, values)).body.data;
    assert.equal(after.nonce.alreadyUsed, true);
    assert.equal(after.signature.matches, true);
    assert.equal(after.verdict, 'DAPI_NONCE_REPLAYED');
    // And the real authentication agrees: the same values again are a replay.
    assert.equal((await client.http.raw('GET', SETTINGS, { timestamp: values.timestamp, nonce: values.nonce })).envelope.code, 'DAPI_NONCE_REPLAYED');
  });

  it('when a POST body has non-ASCII text and whitespace, the check and the real authentication agree on its UTF-8 bytes', async () => {
    const body = `{\n  "organizationRef": "sig-check-${nonceSeq}",\n  "organizationName": "Café Zürich 東京 🚀",\n  "companyRegistrationNumber": "CH-1",\n`
      + '  "countryCode": "CH",\n  "fundingCurrencies": ["USD"]\n}';
    const values = signed(body, 'POST');
    const r = (await check(svc, values)).body.data;
    assert.equal(r.verdict, 'SYS_SUCCESS');
    assert.equal(r.stringToSign.parts.payload.length, Buffer.byteLength(body, 'utf8'));
    assert.notEqual(r.stringToSign.parts.payload.length, body.length, 'bytes, not UTF-16 code units');
    assert.equal(r.stringToSign.sha256, sha256(values.apiKey + values.timestamp + values.nonce + body));
    const real = await client.http.raw('POST', '/open-api-corp/organization/v1/create', { body, timestamp: values.timestamp, nonce: values.nonce });
    assert.equal(real.envelope.code, 'SYS_SUCCESS');
  });

  it('when signed with another secret, matches is false and DAPI_SIGN_INVALID, and the answer holds neither the right signature nor the secret', async () => {
    const { client: other } = await svc.newPartner();
    const values = signed('customerId=cu123');
    const right = values.signature;
    values.signature = other.http.sign(values.timestamp, values.nonce, values.payload);
    const { text, body } = await check(svc, values);
    const r = body.data;
    assert.equal(r.verdict, 'DAPI_SIGN_INVALID');
    assert.deepEqual(r.signature, { formatOk: true, matches: false });
    assert.equal(r.stringToSign.sha256, sha256(values.apiKey + values.timestamp + values.nonce + values.payload), 'the string to sign does not depend on the secret');
    assert.ok(r.hints.some((h: string) => /another secretKey/.test(h)), JSON.stringify(r.hints));
    assert.ok(!text.includes(right), 'the right signature is never answered');
    assert.ok(!text.includes(partner.secretKey!), 'nor the secret');
    // Every 64-hex value of the answer is the caller's own signature or a SHA-256 of the caller's own values.
    const own = new Set([values.signature, sha256(values.apiKey + values.timestamp + values.nonce + values.payload), sha256(values.payload)]);
    for (const hex of text.match(/[0-9a-f]{64}/g) ?? []) assert.ok(own.has(hex), `unexpected ${hex}`);
    // Negative control: the real authentication refuses the same values with the code the check named.
    const real = await client.http.raw('GET', '/open-api-corp/customer/v1/query', { query: values.payload, timestamp: values.timestamp, nonce: values.nonce, headers: { 'X-DAPI-SIGN': values.signature } });
    assert.equal(real.envelope.code, 'DAPI_SIGN_INVALID');
  });

  it('when the key is unknown, known and matches are false and the verdict is DAPI_API_KEY_INVALID', async () => {
    const values = { ...signed('a=1'), apiKey: '0123456789abcdef0123456789abcdef' };
    const r = (await check(svc, values)).body.data;
    assert.equal(r.verdict, 'DAPI_API_KEY_INVALID');
    assert.deepEqual(r.apiKey, { formatOk: true, known: false });
    assert.equal(r.ipAddress.allowed, null);
    assert.equal(r.nonce.alreadyUsed, null);
    assert.deepEqual(r.signature, { formatOk: true, matches: false });
    const upper = (await check(svc, { ...values, apiKey: partner.apiKey!.toUpperCase() })).body.data;
    assert.deepEqual(upper.apiKey, { formatOk: false, known: false });
    assert.ok(upper.hints.some((h: string) => /uppercase/.test(h)));
  });

  it('answers each failing step with the code the real request would get, in the order of D5, and a hint', async () => {
    const seconds = signed('', 'GET', String(Math.floor(svc.clock.now() / 1000)));
    let r = (await check(svc, seconds)).body.data;
    assert.equal(r.verdict, 'DAPI_TIMESTAMP_FORMAT_ERROR');
    assert.equal(r.timestamp.formatOk, false);
    assert.equal(r.timestamp.skewMs, null);
    assert.ok(r.hints.some((h: string) => /seconds/.test(h)));

    const stale = signed('', 'GET', String(svc.clock.now() - 60_000));
    r = (await check(svc, stale)).body.data;
    assert.equal(r.verdict, 'DAPI_TIMESTAMP_EXPIRED');
    assert.deepEqual([r.timestamp.withinWindow, r.timestamp.skewMs], [false, -60_000]);
    assert.equal(r.signature.matches, true, 'the signature itself is still checked');
    assert.ok(r.hints.some((h: string) => /60000 ms behind/.test(h)), JSON.stringify(r.hints));

    const badNonce = { ...signed(''), nonce: '0123' };
    r = (await check(svc, badNonce)).body.data;
    assert.equal(r.verdict, 'DAPI_NONCE_INVALID');
    assert.equal(r.nonce.valid, false);
    assert.match(r.nonce.rule, /10000, 99999/);

    const upper = signed('');
    upper.signature = upper.signature.toUpperCase();
    r = (await check(svc, upper)).body.data;
    assert.equal(r.verdict, 'DAPI_SIGN_INVALID');
    assert.deepEqual(r.signature, { formatOk: false, matches: false });
    assert.ok(r.hints.some((h: string) => /lowercase/.test(h)));

    const base64 = signed('');
    base64.signature = Buffer.from(base64.signature, 'hex').toString('base64');
    assert.ok((await check(svc, base64)).body.data.hints.some((h: string) => /Base64/.test(h)));

    const question = signed('?customerId=cu123');
    r = (await check(svc, question)).body.data;
    assert.equal(r.verdict, 'SYS_SUCCESS', 'signed consistently, so it matches, but the real request would sign without "?"');
    assert.ok(r.hints.some((h: string) => /leading "\?"/.test(h)));
  });

  it('when the key\'s API whitelist excludes the caller, the verdict is DAPI_IP_NOT_ALLOWED', async () => {
    const fenced = await svc.newPartner({ ipWhitelist: { api: ['203.0.113.0/24'], webhook: [], auth: [], retrieval: [] } });
    const timestamp = String(svc.clock.now());
    const nonce = freshNonce();
    const r = (await check(svc, { apiKey: fenced.partner.apiKey!, timestamp, nonce, method: 'GET', payload: '', signature: fenced.client.http.sign(timestamp, nonce, '') })).body.data;
    assert.equal(r.verdict, 'DAPI_IP_NOT_ALLOWED');
    assert.equal(r.ipAddress.allowed, false);
    assert.equal(r.signature.matches, true);
  });

  it('takes any payload text (newlines, tabs) but refuses lone surrogates and other methods, naming the field', async () => {
    const tabbed = signed('{\t"a":\r\n1}', 'POST');
    assert.equal((await check(svc, tabbed)).body.data.verdict, 'SYS_SUCCESS');
    const surrogate = await check(svc, { ...signed(''), payload: 'a\ud800b' });
    assert.equal(surrogate.body.code, 'DAPI_PARAM_INVALID');
    assert.match(surrogate.body.message ?? '', /payload/);
    const put = await check(svc, { ...signed(''), method: 'PUT' as 'GET' });
    assert.equal(put.body.code, 'DAPI_PARAM_INVALID');
    assert.match(put.body.message ?? '', /method/);
    const missing = await check(svc, { apiKey: partner.apiKey! });
    assert.equal(missing.body.code, 'DAPI_PARAM_INVALID');
  });

  it('the SDK method sends the client\'s apiKey by default', async () => {
    const values = signed('page=1&pageSize=20');
    const { apiKey: _apiKey, ...rest } = values;
    const r = await client.sandbox.signatureCheck(rest);
    assert.equal(r.verdict, 'SYS_SUCCESS');
    assert.equal(r.apiKey.known, true);
  });
});

describe('signature self-check limits and environments (issue 31)', () => {
  after(async () => {
    await closeTestDatabase();
  });

  it('counts each check as a failed authentication of the address: over the budget it is 429 with Retry-After, and so are signed calls that fail', async () => {
    const svc = await startService({ env: { AUTH_FAILURE_LIMIT_MAX: '3' } });
    try {
      const { partner, client } = await svc.newPartner();
      const timestamp = String(svc.clock.now());
      const values = { apiKey: partner.apiKey!, timestamp, nonce: '33333', method: 'GET' as const, payload: '', signature: client.http.sign(timestamp, '33333', '') };
      for (let i = 0; i < 3; i++) assert.equal((await check(svc, values)).body.code, 'SYS_SUCCESS', `check ${i + 1}`);
      const refused = await check(svc, values);
      assert.equal(refused.status, 429);
      assert.equal(refused.body.code, 'SYS_RATE_LIMITED');
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      const wrong = await client.http.raw('GET', SETTINGS, { headers: { 'X-DAPI-SIGN': '0'.repeat(64) } });
      assert.equal(wrong.status, 429, 'the same budget as failed authentications');
    } finally {
      await svc.close();
    }
  });

  it('in production the route does not exist (404 SYS_NOT_FOUND) and is not in the OpenAPI document', async () => {
    const prod = await startService({ env: { CARDSVC_ENV: 'production' } });
    try {
      const res = await check(prod, { apiKey: '0123456789abcdef0123456789abcdef', timestamp: '1795305600000', nonce: '12345', method: 'GET', payload: '', signature: '0'.repeat(64) });
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'SYS_NOT_FOUND');
      const doc = await (await fetch(`${prod.baseUrl}/openapi.json`)).json() as { paths: Record<string, unknown> };
      assert.equal(doc.paths[CHECK], undefined);
    } finally {
      await prod.close();
    }
  });
});
