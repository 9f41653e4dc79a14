import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { closeTestDatabase, startService, testDatabase, type TestService } from './helpers/service.ts';
import type { CardServiceClient } from '../sdk/index.ts';

/**
 * Issue 14, item 4: Idempotency-Key on business POSTs with Stripe's semantics, stored in the
 * database (so it holds across instances), concurrent copies executed once.
 */
const ORG_PATH = '/open-api-corp/organization/v1/create';

describe('Idempotency-Key on business POSTs (issue 14)', () => {
  let svc: TestService;
  let client: CardServiceClient;

  const orgBody = (ref: string) => ({
    organizationRef: ref, organizationName: 'Acme Ltd', companyRegistrationNumber: 'C-1', countryCode: 'HK', fundingCurrencies: ['USD'],
  });
  const post = (c: CardServiceClient, body: unknown, key?: string, path = ORG_PATH) =>
    c.http.raw<any>('POST', path, { body, headers: key === undefined ? {} : { 'Idempotency-Key': key } });
  const orgCount = async (c: CardServiceClient) => (await c.organizations.list({ pageSize: 100 })).total;

  before(async () => {
    svc = await startService();
    ({ client } = await svc.newPartner());
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('the same key and body answer the original response without a second write', async () => {
    const key = randomUUID();
    const before = await orgCount(client);
    const first = await post(client, orgBody('idem-1'), key);
    assert.equal(first.envelope.code, 'SYS_SUCCESS');
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const again = await post(client, orgBody('idem-1'), key);
    assert.equal(again.status, 200);
    assert.equal(again.text, first.text, 'byte-identical answer');
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(await orgCount(client), before + 1);
    // Without a key the retry is a second create: refused as a duplicate, with no data.
    const unkeyed = await post(client, orgBody('idem-1'));
    assert.equal(unkeyed.envelope.code, 'ORGANIZATION_REF_DUPLICATE');
  });

  it('the same key with another body (or another path) is IDEMPOTENCY_KEY_REUSED and changes nothing', async () => {
    const key = randomUUID();
    assert.equal((await post(client, orgBody('idem-2'), key)).envelope.code, 'SYS_SUCCESS');
    const count = await orgCount(client);
    const other = await post(client, orgBody('idem-2b'), key);
    assert.equal(other.envelope.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(other.status, 200);
    assert.equal(other.envelope.data, null);
    const otherPath = await post(client, { organizationId: 'og1', addRestrictions: ['CARD_FROZEN'] }, key, '/open-api-corp/organization/v1/update-restrictions');
    assert.equal(otherPath.envelope.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(await orgCount(client), count);
  });

  it('a business refusal is an answer: it is replayed too', async () => {
    await post(client, orgBody('idem-3'));
    const key = randomUUID();
    const refused = await post(client, orgBody('idem-3'), key);
    assert.equal(refused.envelope.code, 'ORGANIZATION_REF_DUPLICATE');
    const again = await post(client, orgBody('idem-3'), key);
    assert.equal(again.text, refused.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
  });

  it('a request refused before it ran (validation) does not use the key up', async () => {
    const key = randomUUID();
    const invalid = await post(client, { ...orgBody('idem-4'), countryCode: 'hk' }, key);
    assert.equal(invalid.envelope.code, 'DAPI_PARAM_INVALID');
    const valid = await post(client, orgBody('idem-4'), key);
    assert.equal(valid.envelope.code, 'SYS_SUCCESS');
  });

  it('concurrent copies with one key execute once and all answer the same', async () => {
    const key = randomUUID();
    const before = await orgCount(client);
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(client, orgBody('idem-5'), key)));
    for (const a of answers) assert.equal(a.envelope.code, 'SYS_SUCCESS', a.text);
    assert.equal(new Set(answers.map((a) => a.envelope.data.organizationId)).size, 1);
    assert.equal(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true').length, 5);
    assert.equal(await orgCount(client), before + 1);
  });

  it('keys are per partner, and a bad key is refused naming the header', async () => {
    const key = randomUUID();
    const { client: other } = await svc.newPartner();
    assert.equal((await post(client, orgBody('idem-6'), key)).envelope.code, 'SYS_SUCCESS');
    const theirs = await post(other, orgBody('idem-6'), key);
    assert.equal(theirs.envelope.code, 'SYS_SUCCESS');
    assert.equal(theirs.headers.get('idempotent-replayed'), null);
    const bad = await post(client, orgBody('idem-7'), 'x'.repeat(256));
    assert.equal(bad.envelope.code, 'DAPI_PARAM_INVALID');
    assert.match(bad.envelope.message ?? "", /Idempotency-Key/);
  });

  it('the stored answer holds on another instance sharing the database, and for 24 hours only', async () => {
    const key = randomUUID();
    const first = await post(client, orgBody('idem-8'), key);
    assert.equal(first.envelope.code, 'SYS_SUCCESS');
    const second = await startService({ db: await (await testDatabase()).openAnother(), clock: svc.clock });
    try {
      const client2 = second.clientFor({ apiKey: client.http.apiKey, secretKey: (client.http as unknown as { secretKey: string }).secretKey });
      const replay = await post(client2, orgBody('idem-8'), key);
      assert.equal(replay.text, first.text);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    } finally {
      await second.close();
    }
    svc.clock.advance(24 * 3_600_000 + 1_000);
    try {
      // The key expired: the request runs again (and meets the organization it created).
      const later = await post(client, orgBody('idem-8'), key);
      assert.equal(later.envelope.code, 'ORGANIZATION_REF_DUPLICATE');
      assert.equal(later.headers.get('idempotent-replayed'), null);
    } finally {
      svc.clock.advance(-(24 * 3_600_000 + 1_000));
    }
  });
});
