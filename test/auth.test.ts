import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { CardServiceClient as Client, type CardServiceClient } from '../sdk/index.ts';

const SETTINGS = '/open-api/partner/v1/settings';

describe('request authentication (5.2-5.4, D5-D7)', () => {
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

  async function expectAuthError(res: Promise<{ status: number; envelope: { code: string; data: unknown } }>, status: number, code: string) {
    const { status: got, envelope } = await res;
    assert.equal(envelope.code, code);
    assert.equal(got, status);
    assert.equal(envelope.data, null);
  }

  it('the SDK signs the worked example of docs/api-guide.md', () => {
    const sdk = new Client({ baseUrl: 'http://x', apiKey: '0123456789abcdef0123456789abcdef', secretKey: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345' });
    assert.equal(sdk.http.sign('1795305600000', '12345', 'customerId=cusmwxdk8zr9bf0f6582'), 'e6e6316c06f97cd7045f7d2280467fb443893788d1e6807977de08030a664d07');
  });

  it('when every header is right, then the call succeeds (control)', async () => {
    const settings = await client.partner.settings();
    assert.equal(settings.apiKey, client.http.apiKey);
  });

  it('when the API key is missing or unknown, then DAPI_API_KEY_INVALID with 401', async () => {
    await expectAuthError(client.http.raw('GET', SETTINGS, { headers: { 'X-DAPI-API-KEY': null } }), 401, 'DAPI_API_KEY_INVALID');
    await expectAuthError(client.http.raw('GET', SETTINGS, { headers: { 'X-DAPI-API-KEY': '0'.repeat(32) } }), 401, 'DAPI_API_KEY_INVALID');
  });

  it('when the timestamp has 10 digits or is not a number, then DAPI_TIMESTAMP_FORMAT_ERROR', async () => {
    const seconds = String(Math.floor(svc.clock.now() / 1000));
    await expectAuthError(client.http.raw('GET', SETTINGS, { timestamp: seconds }), 401, 'DAPI_TIMESTAMP_FORMAT_ERROR');
    await expectAuthError(client.http.raw('GET', SETTINGS, { timestamp: 'abcdefghijklm' }), 401, 'DAPI_TIMESTAMP_FORMAT_ERROR');
    await expectAuthError(client.http.raw('GET', SETTINGS, { headers: { 'X-DAPI-TIMESTAMP': null } }), 401, 'DAPI_TIMESTAMP_FORMAT_ERROR');
  });

  it('when the timestamp is exactly 5000 ms old it passes; 5001 ms fails with DAPI_TIMESTAMP_EXPIRED', async () => {
    // Freeze the service clock so the distance is exact.
    const frozen = svc.clock.now();
    const realNow = svc.clock.now;
    svc.clock.now = () => frozen;
    try {
      const ok = await client.http.raw('GET', SETTINGS, { timestamp: String(frozen - 5000) });
      assert.equal(ok.envelope.code, 'SYS_SUCCESS');
      const okFuture = await client.http.raw('GET', SETTINGS, { timestamp: String(frozen + 5000) });
      assert.equal(okFuture.envelope.code, 'SYS_SUCCESS');
      await expectAuthError(client.http.raw('GET', SETTINGS, { timestamp: String(frozen - 5001) }), 401, 'DAPI_TIMESTAMP_EXPIRED');
      await expectAuthError(client.http.raw('GET', SETTINGS, { timestamp: String(frozen + 5001) }), 401, 'DAPI_TIMESTAMP_EXPIRED');
    } finally {
      svc.clock.now = realNow;
    }
  });

  it('when the nonce is missing, not an integer or outside [10000, 99999], then DAPI_NONCE_INVALID', async () => {
    for (const nonce of ['9999', '100000', '12a45', '1234.5', '-12345', '']) {
      await expectAuthError(client.http.raw('GET', SETTINGS, { nonce }), 401, 'DAPI_NONCE_INVALID');
    }
    await expectAuthError(client.http.raw('GET', SETTINGS, { headers: { 'X-DAPI-NONCE': null } }), 401, 'DAPI_NONCE_INVALID');
    for (const nonce of ['10000', '99999']) {
      const res = await client.http.raw('GET', SETTINGS, { nonce });
      assert.equal(res.envelope.code, 'SYS_SUCCESS', `nonce ${nonce}`);
    }
  });

  it('when the signature is missing, wrong, or uppercase hex, then DAPI_SIGN_INVALID', async () => {
    await expectAuthError(client.http.raw('GET', SETTINGS, { headers: { 'X-DAPI-SIGN': null } }), 401, 'DAPI_SIGN_INVALID');
    await expectAuthError(client.http.raw('GET', SETTINGS, { headers: { 'X-DAPI-SIGN': 'ab'.repeat(32) } }), 401, 'DAPI_SIGN_INVALID');
    const ts = String(svc.clock.now());
    const sign = client.http.sign(ts, '12345', '').toUpperCase();
    await expectAuthError(client.http.raw('GET', SETTINGS, { timestamp: ts, nonce: '12345', headers: { 'X-DAPI-SIGN': sign } }), 401, 'DAPI_SIGN_INVALID');
  });

  it('when the same apiKey, timestamp and nonce come twice, then the second is DAPI_NONCE_REPLAYED', async () => {
    const timestamp = String(svc.clock.now());
    const first = await client.http.raw('GET', SETTINGS, { timestamp, nonce: '54321' });
    assert.equal(first.envelope.code, 'SYS_SUCCESS');
    await expectAuthError(client.http.raw('GET', SETTINGS, { timestamp, nonce: '54321' }), 401, 'DAPI_NONCE_REPLAYED');
  });

  it('when identical signed requests arrive at once, then exactly one is accepted and the others are replays', async () => {
    const timestamp = String(svc.clock.now());
    const results = await Promise.all(Array.from({ length: 8 }, () => client.http.raw('GET', SETTINGS, { timestamp, nonce: '65432' })));
    const codes = results.map((r) => r.envelope.code).sort();
    assert.deepEqual(codes, ['DAPI_NONCE_REPLAYED', 'DAPI_NONCE_REPLAYED', 'DAPI_NONCE_REPLAYED', 'DAPI_NONCE_REPLAYED',
      'DAPI_NONCE_REPLAYED', 'DAPI_NONCE_REPLAYED', 'DAPI_NONCE_REPLAYED', 'SYS_SUCCESS']);
    // Distinct nonces sent together are all accepted.
    const distinct = await Promise.all(Array.from({ length: 8 }, (_, i) => client.http.raw('GET', SETTINGS, { timestamp, nonce: String(65440 + i) })));
    assert.ok(distinct.every((r) => r.envelope.code === 'SYS_SUCCESS'));
  });

  it('when a badly signed request carries a nonce, then the nonce is not consumed (replay store written only after the signature)', async () => {
    const timestamp = String(svc.clock.now());
    await expectAuthError(client.http.raw('GET', SETTINGS, { timestamp, nonce: '22222', headers: { 'X-DAPI-SIGN': 'ff'.repeat(32) } }), 401, 'DAPI_SIGN_INVALID');
    const genuine = await client.http.raw('GET', SETTINGS, { timestamp, nonce: '22222' });
    assert.equal(genuine.envelope.code, 'SYS_SUCCESS');
  });

  it('when checks fail together, then the first in D5 order wins', async () => {
    // Bad timestamp format and bad nonce and bad signature: the timestamp is checked first.
    await expectAuthError(client.http.raw('GET', SETTINGS, { timestamp: '123', nonce: '1', headers: { 'X-DAPI-SIGN': 'x' } }), 401, 'DAPI_TIMESTAMP_FORMAT_ERROR');
    // Expired and bad nonce: the window comes before the nonce.
    await expectAuthError(client.http.raw('GET', SETTINGS, { timestamp: String(svc.clock.now() - 60_000), nonce: '1' }), 401, 'DAPI_TIMESTAMP_EXPIRED');
    // Bad nonce and bad signature: nonce first.
    await expectAuthError(client.http.raw('GET', SETTINGS, { nonce: '1', headers: { 'X-DAPI-SIGN': 'x' } }), 401, 'DAPI_NONCE_INVALID');
  });

  it('the GET signature covers the raw query string exactly as sent, not a re-encoded or re-ordered one', async () => {
    const query = 'b=2&a=%7Ex+y';
    const ok = await client.http.raw('GET', SETTINGS, { query });
    assert.equal(ok.envelope.code, 'SYS_SUCCESS');
    // Signed over the re-ordered form but sent as written: refused.
    const timestamp = String(svc.clock.now());
    const reordered = client.http.sign(timestamp, '33333', 'a=%7Ex+y&b=2');
    await expectAuthError(client.http.raw('GET', SETTINGS, { query, timestamp, nonce: '33333', headers: { 'X-DAPI-SIGN': reordered } }), 401, 'DAPI_SIGN_INVALID');
    // Signed over the decoded form: refused.
    const decoded = client.http.sign(timestamp, '33334', 'b=2&a=~x y');
    await expectAuthError(client.http.raw('GET', SETTINGS, { query, timestamp, nonce: '33334', headers: { 'X-DAPI-SIGN': decoded } }), 401, 'DAPI_SIGN_INVALID');
  });

  it('a HEAD request (Fastify answers one for every GET route) is signed over its query string like the GET (D6)', async () => {
    // Review rvC: HEAD was verified as a method with a body, over an empty payload, so its query
    // string (which the GET handler reads) was not covered by the signature.
    const head = (query: string, payload: string, nonce: string) => {
      const timestamp = String(svc.clock.now());
      return fetch(`${svc.baseUrl}${SETTINGS}?${query}`, {
        method: 'HEAD',
        headers: { 'X-DAPI-API-KEY': client.http.apiKey, 'X-DAPI-TIMESTAMP': timestamp, 'X-DAPI-NONCE': nonce, 'X-DAPI-SIGN': client.http.sign(timestamp, nonce, payload) },
      });
    };
    assert.equal((await head('x=1', '', '45001')).status, 401, 'signed over an empty payload: refused');
    assert.equal((await head('x=1', 'x=1', '45002')).status, 200, 'signed over its query string: accepted');
  });

  it('the POST signature covers the raw body bytes: a body changed after signing is refused', async () => {
    const body = '{"amount": 1.50}';
    const timestamp = String(svc.clock.now());
    const sign = client.http.sign(timestamp, '44444', body);
    const tampered = await client.http.raw('POST', '/open-api/sandbox/v1/decimal-echo', {
      body: '{"amount": 1.51}', timestamp, nonce: '44444', headers: { 'X-DAPI-SIGN': sign },
    });
    assert.equal(tampered.envelope.code, 'DAPI_SIGN_INVALID');
    const exact = await client.http.raw('POST', '/open-api/sandbox/v1/decimal-echo', { body, timestamp, nonce: '44444', headers: { 'X-DAPI-SIGN': sign } });
    assert.equal(exact.envelope.code, 'SYS_SUCCESS');
  });

  it('when a rejected request is retried correctly, then nothing was written by the rejection', async () => {
    const before = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM replay_nonces');
    await client.http.raw('GET', SETTINGS, { headers: { 'X-DAPI-SIGN': 'bad' } });
    await client.http.raw('GET', SETTINGS, { timestamp: '1' });
    await client.http.raw('GET', SETTINGS, { headers: { 'X-DAPI-API-KEY': 'f'.repeat(32) } });
    const afterCount = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM replay_nonces');
    assert.equal(afterCount[0].n, before[0].n);
  });

  it('a partner changed behind this instance\'s cache (as by another instance) is answered and checked on its current row at once', async () => {
    // Issue 34: the replay-store statement reads the partner's row version; the cached row (PARTNER_CACHE_TTL_MS) is not trusted past it.
    assert.equal((await client.partner.settings()).apiKey, client.http.apiKey);
    await svc.db.query(`UPDATE partners SET name = 'renamed-elsewhere' WHERE api_key = $1`, [client.http.apiKey]);
    assert.equal((await client.partner.settings()).name, 'renamed-elsewhere');
    await svc.db.query(`UPDATE partners SET status = 'DISABLED' WHERE api_key = $1`, [client.http.apiKey]);
    try {
      await expectAuthError(client.http.raw('GET', SETTINGS), 401, 'DAPI_API_KEY_INVALID');
    } finally {
      await svc.db.query(`UPDATE partners SET status = 'ACTIVE' WHERE api_key = $1`, [client.http.apiKey]);
    }
  });
});
