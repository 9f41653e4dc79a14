import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { decimal, newCompany, newEmployee } from './helpers/companies.ts';
import type { CardServiceClient, Customer, Organization } from '../sdk/index.ts';

/**
 * Tenant isolation (issue item 8): another partner's organization or employee id behaves exactly
 * like an id that does not exist, on every endpoint: same code, same message, same data, and the
 * owner's data is untouched.
 */
describe('tenant isolation: a foreign id is indistinguishable from an unknown one, on every route', () => {
  let svc: TestService;
  let owner: CardServiceClient;
  let intruder: CardServiceClient;
  let org: Organization;
  let emp: Customer;

  const UNKNOWN_ORG = 'org00000000000000000';
  const UNKNOWN_CUS = 'cus00000000000000000';

  before(async () => {
    svc = await startService();
    ({ client: owner } = await svc.newPartner());
    ({ client: intruder } = await svc.newPartner());
    org = await newCompany(owner);
    emp = await newEmployee(owner, org.organizationId);
    await owner.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: org.organizationId, currency: 'USD', amount: decimal('50.00') });
    await owner.funding.setBalanceAlert({ organizationId: org.organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('10.00') }], emailSettings: ['o@example.com'] });
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  async function ownerView() {
    return {
      org: await owner.organizations.query(org.organizationId),
      emp: await owner.customers.query(emp.customerId),
      employees: await owner.customers.list({ organizationId: org.organizationId }),
      balance: await owner.funding.balance(org.organizationId),
      statement: await owner.funding.statement({ organizationId: org.organizationId }),
      alerts: await owner.funding.queryBalanceAlert(org.organizationId),
    };
  }

  type Call = { name: string; method: 'GET' | 'POST'; path: string; code: string; params(id: string): Record<string, unknown> };
  const orgCalls: Call[] = [
    { name: 'organization query', method: 'GET', path: '/open-api-corp/organization/v1/query', code: 'ORGANIZATION_INVALID', params: (id) => ({ organizationId: id }) },
    { name: 'organization update-restrictions', method: 'POST', path: '/open-api-corp/organization/v1/update-restrictions', code: 'ORGANIZATION_INVALID', params: (id) => ({ organizationId: id, addRestrictions: ['CARD_FROZEN'] }) },
    { name: 'customer create', method: 'POST', path: '/open-api-corp/customer/v1/create', code: 'ORGANIZATION_INVALID', params: (id) => ({ organizationId: id, customerRef: 'intruder', firstName: 'Eve', lastName: 'Intruder' }) },
    { name: 'customer list', method: 'GET', path: '/open-api-corp/customer/v1/list', code: 'ORGANIZATION_INVALID', params: (id) => ({ organizationId: id }) },
    { name: 'fund balance', method: 'GET', path: '/open-api-corp/fund/v1/balance', code: 'ORGANIZATION_INVALID', params: (id) => ({ organizationId: id }) },
    { name: 'fund statement', method: 'GET', path: '/open-api-corp/fund/v1/statement', code: 'ORGANIZATION_INVALID', params: (id) => ({ organizationId: id }) },
    { name: 'balance-alert-set', method: 'POST', path: '/open-api-corp/fund/v1/balance-alert-set', code: 'SUBJECT_INVALID', params: (id) => ({ organizationId: id, balanceSettings: [{ currency: 'USD', threshold: 1000 }] }) },
    { name: 'balance-alert-query', method: 'GET', path: '/open-api-corp/fund/v1/balance-alert-query', code: 'SUBJECT_INVALID', params: (id) => ({ organizationId: id }) },
    { name: 'simulate/deposit', method: 'POST', path: '/open-api/sandbox/v1/simulate/deposit', code: 'SUBJECT_INVALID', params: (id) => ({ subjectType: 'ORGANIZATION', subjectId: id, currency: 'USD', amount: 1 }) },
  ];
  const customerCalls: Call[] = [
    { name: 'customer query', method: 'GET', path: '/open-api-corp/customer/v1/query', code: 'CUSTOMER_INVALID', params: (id) => ({ customerId: id }) },
    { name: 'update-name', method: 'POST', path: '/open-api-corp/customer/v1/update-name', code: 'CUSTOMER_INVALID', params: (id) => ({ customerId: id, firstName: 'Eve', lastName: 'Intruder' }) },
    { name: 'update-phone', method: 'POST', path: '/open-api-corp/customer/v1/update-phone', code: 'CUSTOMER_INVALID', params: (id) => ({ customerId: id, phoneCountryCode: 'HK', phoneNumber: '99999999' }) },
    { name: 'update-email', method: 'POST', path: '/open-api-corp/customer/v1/update-email', code: 'CUSTOMER_INVALID', params: (id) => ({ customerId: id, email: 'eve@example.com' }) },
    { name: 'update-address', method: 'POST', path: '/open-api-corp/customer/v1/update-address', code: 'CUSTOMER_INVALID', params: (id) => ({ customerId: id, addresses: [{ addressType: 'SHIPPING_ADDRESS', addressLine1: 'x', city: 'x', state: 'x', addressCountryCode: 'HK' }] }) },
    { name: 'update-restrictions', method: 'POST', path: '/open-api-corp/customer/v1/update-restrictions', code: 'CUSTOMER_INVALID', params: (id) => ({ customerId: id, addRestrictions: ['ACCOUNT_FROZEN'] }) },
    { name: 'terminate', method: 'POST', path: '/open-api-corp/customer/v1/terminate', code: 'CUSTOMER_INVALID', params: (id) => ({ customerId: id }) },
    { name: 'resubmit', method: 'POST', path: '/open-api-corp/customer/v1/resubmit', code: 'CUSTOMER_INVALID', params: (id) => ({ customerId: id }) },
    { name: 'simulate/kyc-decision', method: 'POST', path: '/open-api/sandbox/v1/simulate/kyc-decision', code: 'CUSTOMER_INVALID', params: (id) => ({ customerId: id, decision: 'APPROVED' }) },
  ];

  async function send(client: CardServiceClient, call: Call, id: string) {
    const params = call.params(id);
    const res = call.method === 'GET'
      ? await client.http.raw('GET', call.path, { query: params as Record<string, string> })
      : await client.http.raw('POST', call.path, { body: params });
    return { status: res.status, envelope: res.envelope };
  }

  for (const [calls, foreignId, unknownId] of [[orgCalls, () => org.organizationId, UNKNOWN_ORG], [customerCalls, () => emp.customerId, UNKNOWN_CUS]] as const) {
    for (const call of calls) {
      it(`${call.name}: foreign id answers exactly like an unknown id (${call.code}) and changes nothing`, async () => {
        const before = await ownerView();
        const foreign = await send(intruder, call, foreignId());
        const unknown = await send(intruder, call, unknownId);
        assert.equal(foreign.envelope.code, call.code);
        assert.deepEqual(foreign, unknown, 'same status, code, message, messageDetail and data');
        assert.deepEqual(await ownerView(), before, "the owner's data is untouched");
      });
    }
  }

  it('lists show only the caller\'s companies; references are per partner', async () => {
    const mine = await intruder.organizations.list({ pageSize: 100 });
    assert.ok(!mine.result.some((o) => o.organizationId === org.organizationId));
    const byRef = await intruder.organizations.list({ organizationRef: org.organizationRef });
    assert.equal(byRef.total, 0);
    const twin = await newCompany(intruder, { organizationRef: org.organizationRef });
    const twinEmployee = await newEmployee(intruder, twin.organizationId, { customerRef: emp.customerRef });
    assert.equal(twinEmployee.customerRef, emp.customerRef);
    assert.equal((await owner.customers.list({ organizationId: org.organizationId })).total, 1);
  });
});
