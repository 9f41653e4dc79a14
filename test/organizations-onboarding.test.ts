import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { admin, expectCode, money, newCompany, uniqueRef } from './helpers/companies.ts';
import type { CardServiceClient } from '../sdk/index.ts';

const CREATE = '/open-api-corp/organization/v1/create';

describe('organizations: onboarding, query and list (2.8, D15)', () => {
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

  const body = (overrides: Record<string, unknown> = {}) => ({
    organizationRef: uniqueRef('org'),
    organizationName: 'Acme Trading Limited',
    companyRegistrationNumber: 'CR-1234567',
    countryCode: 'HK',
    fundingCurrencies: ['USD', 'HKD'],
    ...overrides,
  });

  /** Creating must fail with `code` and leave the partner's company list unchanged. */
  async function expectCreateRefused(overrides: Record<string, unknown>, code: string, field?: string) {
    const before = await client.organizations.list({ pageSize: 100 });
    await expectCode(client.http.call('POST', CREATE, { body: body(overrides) }), code, field);
    const afterList = await client.organizations.list({ pageSize: 100 });
    assert.equal(afterList.total, before.total, 'no company was created');
  }

  it('when a company is created, then it is ACTIVE with the 2.8 fields and one pool per funding currency', async () => {
    const input = body();
    const org = await client.organizations.create(input as never);
    assert.match(org.organizationId, /^.{1,20}$/);
    assert.equal(org.organizationRef, input.organizationRef);
    assert.equal(org.organizationName, 'Acme Trading Limited');
    assert.equal(org.companyRegistrationNumber, 'CR-1234567');
    assert.equal(org.countryCode, 'HK');
    assert.deepEqual(org.fundingCurrencies, ['USD', 'HKD']);
    assert.equal(org.status, 'ACTIVE');
    assert.deepEqual(org.restrictions, []);
    assert.match(org.createTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(await client.organizations.query(org.organizationId), org);
    const balance = await client.funding.balance(org.organizationId);
    assert.deepEqual(balance.pools.map((p) => [p.currency, money(p.available), money(p.pending), money(p.total)]),
      [['USD', '0.00', '0.00', '0.00'], ['HKD', '0.00', '0.00', '0.00']]);
    assert.deepEqual(balance.cards, []);
  });

  it('when a company funds only HKD, then it has exactly one HKD pool', async () => {
    const org = await newCompany(client, { fundingCurrencies: ['HKD'] });
    const balance = await client.funding.balance(org.organizationId);
    assert.deepEqual(balance.pools.map((p) => p.currency), ['HKD']);
  });

  it('when the organizationRef is reused by the same partner, then ORGANIZATION_REF_DUPLICATE and nothing is created', async () => {
    const org = await newCompany(client);
    await expectCreateRefused({ organizationRef: org.organizationRef, organizationName: 'Other' }, 'ORGANIZATION_REF_DUPLICATE');
    assert.equal((await client.organizations.query(org.organizationId)).organizationName, 'Acme Trading Limited');
  });

  it('when another partner uses the same organizationRef, then it is accepted (unique per partner)', async () => {
    const org = await newCompany(client);
    const { client: other } = await svc.newPartner();
    const theirs = await newCompany(other, { organizationRef: org.organizationRef });
    assert.notEqual(theirs.organizationId, org.organizationId);
  });

  it('bounds: organizationRef up to 64, organizationName up to 128, companyRegistrationNumber up to 64', async () => {
    await newCompany(client, { organizationRef: 'r'.repeat(54) + uniqueRef('').slice(1) });
    await expectCreateRefused({ organizationRef: 'r'.repeat(65) }, 'DAPI_PARAM_INVALID', 'organizationRef');
    await expectCreateRefused({ organizationRef: '' }, 'DAPI_PARAM_INVALID', 'organizationRef');
    await newCompany(client, { organizationName: 'N'.repeat(128) });
    await expectCreateRefused({ organizationName: 'N'.repeat(129) }, 'DAPI_PARAM_INVALID', 'organizationName');
    await expectCreateRefused({ organizationName: '   ' }, 'DAPI_PARAM_INVALID', 'organizationName');
    await newCompany(client, { companyRegistrationNumber: '9'.repeat(64) });
    await expectCreateRefused({ companyRegistrationNumber: '9'.repeat(65) }, 'DAPI_PARAM_INVALID', 'companyRegistrationNumber');
  });

  it('when a required field is missing, then DAPI_PARAM_INVALID names it', async () => {
    for (const field of ['organizationRef', 'organizationName', 'companyRegistrationNumber', 'countryCode', 'fundingCurrencies']) {
      const b = body();
      delete (b as Record<string, unknown>)[field];
      const before = await client.organizations.list({ pageSize: 1 });
      await expectCode(client.http.call('POST', CREATE, { body: b }), 'DAPI_PARAM_INVALID', field);
      assert.equal((await client.organizations.list({ pageSize: 1 })).total, before.total);
    }
  });

  it('when countryCode is not an upper-case ISO alpha-2 code, then DAPI_PARAM_INVALID', async () => {
    for (const countryCode of ['hk', 'HKG', 'H', 'XX', 'ZZ', '']) {
      await expectCreateRefused({ countryCode }, 'DAPI_PARAM_INVALID', 'countryCode');
    }
  });

  it('when the company country is sanctioned, then COUNTRY_SANCTIONED and nothing is created', async () => {
    for (const countryCode of ['KP', 'IR', 'SY', 'CU']) await expectCreateRefused({ countryCode }, 'COUNTRY_SANCTIONED');
  });

  it('when fundingCurrencies is empty, duplicated, not USD/HKD or too long, then DAPI_PARAM_INVALID', async () => {
    for (const fundingCurrencies of [[], ['USD', 'USD'], ['EUR'], ['usd'], [''], ['USD', 'HKD', 'USD'], 'USD']) {
      await expectCreateRefused({ fundingCurrencies }, 'DAPI_PARAM_INVALID', 'fundingCurrencies');
    }
  });

  it('query: an unknown id is ORGANIZATION_INVALID; organizationId is bounded to 20 characters', async () => {
    await expectCode(client.organizations.query('org' + 'x'.repeat(17)), 'ORGANIZATION_INVALID');
    await expectCode(client.organizations.query('o'.repeat(21)), 'DAPI_PARAM_INVALID', 'organizationId');
    await expectCode(client.http.call('GET', '/open-api-corp/organization/v1/query'), 'DAPI_PARAM_INVALID', 'organizationId');
  });

  it('list: pages newest first with a JSON-number total; pageSize up to 100; page from 1; organizationRef filter', async () => {
    const { client: fresh } = await svc.newPartner();
    const created = [];
    for (let i = 0; i < 3; i++) {
      created.push(await newCompany(fresh));
      svc.clock.advance(10);
    }
    const page1 = await fresh.organizations.list({ page: 1, pageSize: 2 });
    assert.equal(page1.total, 3);
    assert.equal(typeof page1.total, 'number');
    assert.equal(page1.page, 1);
    assert.equal(page1.pageSize, 2);
    assert.deepEqual(page1.result.map((o) => o.organizationId), [created[2].organizationId, created[1].organizationId]);
    const page2 = await fresh.organizations.list({ page: 2, pageSize: 2 });
    assert.deepEqual(page2.result.map((o) => o.organizationId), [created[0].organizationId]);
    const defaults = await fresh.organizations.list();
    assert.equal(defaults.pageSize, 20);
    assert.equal(defaults.page, 1);
    assert.equal((await fresh.organizations.list({ pageSize: 100 })).result.length, 3);
    await expectCode(fresh.organizations.list({ pageSize: 101 }), 'DAPI_PARAM_INVALID', 'pageSize');
    await expectCode(fresh.organizations.list({ pageSize: 0 }), 'DAPI_PARAM_INVALID', 'pageSize');
    await expectCode(fresh.organizations.list({ page: 0 }), 'DAPI_PARAM_INVALID', 'page');
    const filtered = await fresh.organizations.list({ organizationRef: created[1].organizationRef });
    assert.deepEqual(filtered.result.map((o) => o.organizationId), [created[1].organizationId]);
  });

  it('the OpenAPI document lists the company, employee, fund and sandbox routes with their error codes', async () => {
    const res = await fetch(`${svc.baseUrl}/openapi.json`);
    const doc = (await res.json()) as { paths: Record<string, Record<string, { 'x-error-codes'?: string[] }>> };
    for (const path of [
      '/open-api-corp/organization/v1/create', '/open-api-corp/organization/v1/query', '/open-api-corp/organization/v1/list',
      '/open-api-corp/organization/v1/update-restrictions', '/open-api-corp/customer/v1/create', '/open-api-corp/customer/v1/query',
      '/open-api-corp/customer/v1/list', '/open-api-corp/customer/v1/update-name', '/open-api-corp/customer/v1/update-phone',
      '/open-api-corp/customer/v1/update-email', '/open-api-corp/customer/v1/update-address',
      '/open-api-corp/customer/v1/update-restrictions', '/open-api-corp/customer/v1/terminate', '/open-api-corp/customer/v1/resubmit',
      '/open-api-corp/fund/v1/balance', '/open-api-corp/fund/v1/statement', '/open-api-corp/fund/v1/balance-alert-set',
      '/open-api/sandbox/v1/simulate/deposit', '/open-api/sandbox/v1/simulate/kyc-decision', '/internal/admin/v1/restrictions',
      '/internal/admin/v1/outbox-mail', '/internal/admin/v1/sanctioned-countries', '/internal/admin/v1/kyc-decisions',
    ]) {
      assert.ok(doc.paths[path], `${path} documented`);
    }
    const alertSet = doc.paths['/open-api-corp/fund/v1/balance-alert-set'].post['x-error-codes']!;
    for (const code of ['DAPI_PARAM_INVALID', 'SUBJECT_INVALID', 'BALANCE_ALERT_CURRENCY_NO_POOL']) assert.ok(alertSet.includes(code), code);
  });

  it('admin routes need the bearer token', async () => {
    const res = await fetch(`${svc.baseUrl}/internal/admin/v1/sanctioned-countries`);
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { code: string }).code, 'SYS_UNAUTHORIZED');
    const list = await admin(svc).call<{ countryCode: string }[]>('GET', '/internal/admin/v1/sanctioned-countries');
    for (const code of ['KP', 'IR', 'SY', 'CU']) assert.ok(list.some((c) => c.countryCode === code), `${code} seeded`);
  });
});
