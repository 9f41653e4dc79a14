import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { admin, expectCode, newCompany, newEmployee, uniqueRef } from './helpers/companies.ts';
import type { Address, CardServiceClient, Customer } from '../sdk/index.ts';

const C = '/open-api-corp/customer/v1';

describe('employees: create, query, list, profile updates, terminate (2.7, 4.5, D16, D43, D48)', () => {
  let svc: TestService;
  let client: CardServiceClient;
  let organizationId: string;

  before(async () => {
    svc = await startService();
    ({ client } = await svc.newPartner());
    organizationId = (await newCompany(client)).organizationId;
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  const address = (overrides: Partial<Address> = {}): Address => ({
    addressType: 'SHIPPING_ADDRESS',
    postalCode: '000000',
    addressLine1: 'Flat A, 12/F, 1 Queen\'s Road Central',
    addressLine2: '',
    addressLine3: 'Tower 2',
    city: 'Central and Western',
    state: 'Hong Kong Island',
    addressCountryCode: 'HK',
    ...overrides,
  });

  /** A profile update that must fail with `code`, leaving the employee exactly as it was. */
  async function expectUpdateRefused(customerId: string, endpoint: string, body: Record<string, unknown>, code: string, field?: string) {
    const before = await client.customers.query(customerId);
    await expectCode(client.http.call('POST', `${C}/${endpoint}`, { body: { customerId, ...body } }), code, field);
    assert.deepEqual(await client.customers.query(customerId), before, `${endpoint} changed nothing`);
  }

  async function expectCreateRefused(overrides: Record<string, unknown>, code: string, field?: string, orgId = organizationId) {
    const before = await client.customers.list({ organizationId: orgId, pageSize: 1 });
    const body = { organizationId: orgId, customerRef: uniqueRef('emp'), firstName: 'Ada', lastName: 'Lovelace', ...overrides };
    await expectCode(client.http.call('POST', `${C}/create`, { body }), code, field);
    assert.equal((await client.customers.list({ organizationId: orgId, pageSize: 1 })).total, before.total, 'no employee created');
  }

  describe('create and read', () => {
    it('when an employee is created, then it is ACTIVE, KYC PENDING, with 2.7 fields and addresses an array', async () => {
      const ref = uniqueRef('emp');
      const emp = await client.customers.create({
        organizationId, customerRef: ref, firstName: 'Ada', middleName: 'King', lastName: 'Lovelace',
        phoneCountryCode: 'GB', phoneNumber: '7700900123', email: 'ada@example.com',
      });
      assert.match(emp.customerId, /^.{1,20}$/);
      assert.equal(emp.customerRef, ref);
      assert.equal(emp.organizationId, organizationId);
      assert.equal(emp.middleName, 'King');
      assert.equal(emp.status, 'ACTIVE');
      assert.equal(emp.kycStatus, 'PENDING');
      assert.deepEqual(emp.addresses, [], '2.7: empty when never maintained');
      assert.deepEqual(emp.restrictions, []);
      assert.deepEqual(await client.customers.query(emp.customerId), emp);
      const minimal = await client.customers.create({ organizationId, customerRef: uniqueRef('emp'), firstName: 'Li', lastName: 'Wei' });
      assert.equal(minimal.phoneNumber, null);
      assert.equal(minimal.email, null);
      assert.equal(minimal.middleName, null);
    });

    it('when created with an address, then the address is returned whole', async () => {
      const emp = await newEmployee(client, organizationId, { addresses: [address()] });
      assert.deepEqual(emp.addresses, [address()]);
      const noOptional = await newEmployee(client, organizationId, {
        addresses: [{ addressType: 'SHIPPING_ADDRESS', addressLine1: '1 Road', city: 'Kowloon City', state: 'Kowloon', addressCountryCode: 'HK' }],
      });
      assert.deepEqual(noOptional.addresses[0], {
        addressType: 'SHIPPING_ADDRESS', postalCode: null, addressLine1: '1 Road', addressLine2: null, addressLine3: null,
        city: 'Kowloon City', state: 'Kowloon', addressCountryCode: 'HK',
      });
    });

    it('customerRef is unique per organization (CUSTOMER_REF_DUPLICATE) but may repeat in another company', async () => {
      const emp = await newEmployee(client, organizationId);
      await expectCreateRefused({ customerRef: emp.customerRef }, 'CUSTOMER_REF_DUPLICATE');
      const other = await newCompany(client);
      const again = await newEmployee(client, other.organizationId, { customerRef: emp.customerRef });
      assert.equal(again.customerRef, emp.customerRef);
    });

    it('the organization must exist, be the partner\'s and be ACTIVE (ORGANIZATION_INVALID)', async () => {
      await expectCode(client.http.call('POST', `${C}/create`, {
        body: { organizationId: 'org-missing', customerRef: 'x', firstName: 'A', lastName: 'B' },
      }), 'ORGANIZATION_INVALID');
      const closing = await newCompany(client);
      await admin(svc).terminateOrganization(closing.organizationId);
      await expectCreateRefused({}, 'ORGANIZATION_INVALID', undefined, closing.organizationId);
    });

    it('create validates every field like the updates (names, phone, email, addresses, sanctioned countries)', async () => {
      await expectCreateRefused({ firstName: 'A'.repeat(65) }, 'DAPI_PARAM_INVALID', 'firstName');
      await expectCreateRefused({ lastName: 'O\'Brien' }, 'DAPI_PARAM_INVALID', 'lastName');
      await expectCreateRefused({ phoneCountryCode: 'HK' }, 'DAPI_PARAM_INVALID', 'phoneNumber');
      await expectCreateRefused({ phoneNumber: '91234567' }, 'DAPI_PARAM_INVALID', 'phoneCountryCode');
      await expectCreateRefused({ phoneCountryCode: 'KP', phoneNumber: '91234567' }, 'DAPI_PARAM_INVALID', 'phoneCountryCode');
      await expectCreateRefused({ email: 'not-an-email' }, 'DAPI_PARAM_INVALID', 'email');
      await expectCreateRefused({ addresses: [address(), address()] }, 'DAPI_PARAM_INVALID', 'addressType');
      await expectCreateRefused({ addresses: [address({ addressCountryCode: 'IR' })] }, 'COUNTRY_SANCTIONED');
      await expectCreateRefused({ customerRef: 'r'.repeat(65) }, 'DAPI_PARAM_INVALID', 'customerRef');
      await expectCreateRefused({ customerRef: '' }, 'DAPI_PARAM_INVALID', 'customerRef');
      await newEmployee(client, organizationId, { customerRef: 'r'.repeat(54) + uniqueRef('').slice(1) });
    });

    it('query: unknown id is CUSTOMER_INVALID; customerId bounded to 36', async () => {
      await expectCode(client.customers.query('c'.repeat(36)), 'CUSTOMER_INVALID');
      await expectCode(client.customers.query('c'.repeat(37)), 'DAPI_PARAM_INVALID', 'customerId');
    });

    it('list pages a company\'s employees newest first, with a customerRef filter; unknown company is ORGANIZATION_INVALID', async () => {
      const org = await newCompany(client);
      const made: Customer[] = [];
      for (let i = 0; i < 3; i++) {
        made.push(await newEmployee(client, org.organizationId));
        svc.clock.advance(10);
      }
      const page = await client.customers.list({ organizationId: org.organizationId, page: 1, pageSize: 2 });
      assert.equal(page.total, 3);
      assert.deepEqual(page.result.map((c) => c.customerId), [made[2].customerId, made[1].customerId]);
      assert.ok(page.result.every((c) => Array.isArray(c.addresses)));
      const byRef = await client.customers.list({ organizationId: org.organizationId, customerRef: made[0].customerRef });
      assert.deepEqual(byRef.result.map((c) => c.customerId), [made[0].customerId]);
      await expectCode(client.customers.list({ organizationId: 'org-missing' }), 'ORGANIZATION_INVALID');
      await expectCode(client.customers.list({ organizationId: org.organizationId, pageSize: 101 }), 'DAPI_PARAM_INVALID', 'pageSize');
    });
  });

  describe('update-name (4.5 rule 1)', () => {
    // KYC must not be in review for name changes: approve first.
    async function approved() {
      const emp = await newEmployee(client, organizationId, { middleName: 'Byron' });
      await client.sandbox.kycDecision({ customerId: emp.customerId, decision: 'APPROVED' });
      return emp;
    }

    it('replaces the name as a whole; an omitted middleName is cleared', async () => {
      const emp = await approved();
      await client.customers.updateName(emp.customerId, { firstName: 'Augusta', lastName: 'King' });
      const after = await client.customers.query(emp.customerId);
      assert.deepEqual([after.firstName, after.middleName, after.lastName], ['Augusta', null, 'King']);
    });

    it('bounds: each part up to 64 letters, digits and spaces; one past the limit or any other character is DAPI_PARAM_INVALID', async () => {
      const emp = await approved();
      const longest = { firstName: 'F'.repeat(64), middleName: 'M'.repeat(64), lastName: 'L'.repeat(64) };
      await client.customers.updateName(emp.customerId, longest);
      await client.sandbox.kycDecision({ customerId: emp.customerId, decision: 'APPROVED' });
      for (const part of ['firstName', 'middleName', 'lastName'] as const) {
        await expectUpdateRefused(emp.customerId, 'update-name', { ...longest, [part]: 'X'.repeat(65) }, 'DAPI_PARAM_INVALID', part);
      }
      for (const bad of ['Jean-Luc', "O'Neil", 'Ann.', 'Ann,Lee', 'Tab\tName', 'Émile!', '   ', 'Line\nBreak', '李@']) {
        await expectUpdateRefused(emp.customerId, 'update-name', { firstName: bad, lastName: 'Ok' }, 'DAPI_PARAM_INVALID', 'firstName');
      }
      await expectUpdateRefused(emp.customerId, 'update-name', { firstName: '', lastName: 'Ok' }, 'DAPI_PARAM_INVALID', 'firstName');
      await expectUpdateRefused(emp.customerId, 'update-name', { lastName: 'Ok' }, 'DAPI_PARAM_INVALID', 'firstName');
      await expectUpdateRefused(emp.customerId, 'update-name', { firstName: 'Ok' }, 'DAPI_PARAM_INVALID', 'lastName');
      await expectUpdateRefused(emp.customerId, 'update-name', { firstName: 'Ok', lastName: 'Fine', middleName: 'Jean-Paul' }, 'DAPI_PARAM_INVALID', 'middleName');
      // Letters of any script, digits and inner spaces are accepted.
      await client.customers.updateName(emp.customerId, { firstName: 'Zoë Anne 2', middleName: '', lastName: '陈 大文' });
      const after = await client.customers.query(emp.customerId);
      assert.deepEqual([after.firstName, after.middleName, after.lastName], ['Zoë Anne 2', null, '陈 大文']);
    });
  });

  describe('update-phone, update-email', () => {
    it('phone: a 2-letter code on the supported list and up to 15 digits', async () => {
      const emp = await newEmployee(client, organizationId);
      await client.customers.updatePhone(emp.customerId, { phoneCountryCode: 'SG', phoneNumber: '123456789012345' });
      let after = await client.customers.query(emp.customerId);
      assert.deepEqual([after.phoneCountryCode, after.phoneNumber], ['SG', '123456789012345']);
      assert.equal(after.kycStatus, 'PENDING', 'phone changes do not touch KYC');
      const refuse = (body: Record<string, unknown>, field: string) => expectUpdateRefused(emp.customerId, 'update-phone', body, 'DAPI_PARAM_INVALID', field);
      await refuse({ phoneCountryCode: 'SG', phoneNumber: '1234567890123456' }, 'phoneNumber');
      await refuse({ phoneCountryCode: 'SG', phoneNumber: '+6581234567' }, 'phoneNumber');
      await refuse({ phoneCountryCode: 'SG', phoneNumber: '8123 4567' }, 'phoneNumber');
      await refuse({ phoneCountryCode: 'SG', phoneNumber: '81234abc' }, 'phoneNumber');
      await refuse({ phoneCountryCode: 'SG', phoneNumber: '' }, 'phoneNumber');
      await refuse({ phoneCountryCode: 'SG', phoneNumber: 81234567 }, 'phoneNumber');
      await refuse({ phoneCountryCode: 'sg', phoneNumber: '81234567' }, 'phoneCountryCode');
      await refuse({ phoneCountryCode: 'SGP', phoneNumber: '81234567' }, 'phoneCountryCode');
      await refuse({ phoneCountryCode: '65', phoneNumber: '81234567' }, 'phoneCountryCode');
      await refuse({ phoneCountryCode: 'XX', phoneNumber: '81234567' }, 'phoneCountryCode');
      await refuse({ phoneCountryCode: 'KP', phoneNumber: '81234567' }, 'phoneCountryCode');
      await refuse({ phoneNumber: '81234567' }, 'phoneCountryCode');
      await refuse({ phoneCountryCode: 'SG' }, 'phoneNumber');
      await client.customers.updatePhone(emp.customerId, { phoneCountryCode: 'US', phoneNumber: '2025550123' });
      after = await client.customers.query(emp.customerId);
      assert.deepEqual([after.phoneCountryCode, after.phoneNumber], ['US', '2025550123']);
    });

    it('email: up to 128 characters, a valid address', async () => {
      const emp = await newEmployee(client, organizationId);
      const longest = 'a'.repeat(116) + '@example.com';
      assert.equal(longest.length, 128);
      await client.customers.updateEmail(emp.customerId, longest);
      assert.equal((await client.customers.query(emp.customerId)).email, longest);
      await expectUpdateRefused(emp.customerId, 'update-email', { email: 'a' + longest }, 'DAPI_PARAM_INVALID', 'email');
      for (const bad of ['plainaddress', '@example.com', 'a@', 'a b@example.com', '']) {
        await expectUpdateRefused(emp.customerId, 'update-email', { email: bad }, 'DAPI_PARAM_INVALID', 'email');
      }
      await expectUpdateRefused(emp.customerId, 'update-email', {}, 'DAPI_PARAM_INVALID', 'email');
    });
  });

  describe('update-address (4.5 rule 3)', () => {
    it('replaces the whole object of its addressType', async () => {
      const emp = await newEmployee(client, organizationId, { addresses: [address()] });
      const replacement = { addressType: 'SHIPPING_ADDRESS' as const, addressLine1: '8 Finance Street', city: 'Singapore', state: 'Central', addressCountryCode: 'SG' };
      await client.customers.updateAddress(emp.customerId, [replacement]);
      const after = await client.customers.query(emp.customerId);
      assert.deepEqual(after.addresses, [{ ...replacement, postalCode: null, addressLine2: null, addressLine3: null }], 'no per-field merge');
      assert.equal(after.kycStatus, emp.kycStatus, 'address changes do not touch KYC');
    });

    it('requires addressLine1, city, state and addressCountryCode; at least one element; only SHIPPING_ADDRESS; no repeats', async () => {
      const emp = await newEmployee(client, organizationId, { addresses: [address()] });
      for (const field of ['addressLine1', 'city', 'state', 'addressCountryCode'] as const) {
        const missing = address();
        delete (missing as Partial<Address>)[field];
        await expectUpdateRefused(emp.customerId, 'update-address', { addresses: [missing] }, 'DAPI_PARAM_INVALID', field);
        await expectUpdateRefused(emp.customerId, 'update-address', { addresses: [address({ [field]: '' })] }, 'DAPI_PARAM_INVALID', field);
      }
      await expectUpdateRefused(emp.customerId, 'update-address', { addresses: [] }, 'DAPI_PARAM_INVALID', 'addresses');
      await expectUpdateRefused(emp.customerId, 'update-address', {}, 'DAPI_PARAM_INVALID', 'addresses');
      await expectUpdateRefused(emp.customerId, 'update-address', { addresses: [address({ addressType: 'BILLING_ADDRESS' as 'SHIPPING_ADDRESS' })] }, 'DAPI_PARAM_INVALID', 'addressType');
      await expectUpdateRefused(emp.customerId, 'update-address', { addresses: [address(), address({ city: 'Other' })] }, 'DAPI_PARAM_INVALID', 'addressType');
      for (const code of ['hk', 'HKG', 'XX']) {
        await expectUpdateRefused(emp.customerId, 'update-address', { addresses: [address({ addressCountryCode: code })] }, 'DAPI_PARAM_INVALID', 'addressCountryCode');
      }
    });

    it('bounds of the address parts (documented): lines 128, city 64, state 64, postalCode 20', async () => {
      const emp = await newEmployee(client, organizationId);
      const atLimit = address({ addressLine1: 'a'.repeat(128), addressLine2: 'b'.repeat(128), addressLine3: 'c'.repeat(128), city: 'd'.repeat(64), state: 'e'.repeat(64), postalCode: '1'.repeat(20) });
      await client.customers.updateAddress(emp.customerId, [atLimit]);
      assert.deepEqual((await client.customers.query(emp.customerId)).addresses, [atLimit]);
      const past: [keyof Address, number][] = [['addressLine1', 129], ['addressLine2', 129], ['addressLine3', 129], ['city', 65], ['state', 65], ['postalCode', 21]];
      for (const [field, length] of past) {
        await expectUpdateRefused(emp.customerId, 'update-address', { addresses: [address({ [field]: 'x'.repeat(length) })] }, 'DAPI_PARAM_INVALID', field);
      }
    });

    it('refuses a sanctioned country with COUNTRY_SANCTIONED; the list is operator-editable', async () => {
      const emp = await newEmployee(client, organizationId, { addresses: [address()] });
      for (const code of ['KP', 'IR', 'SY', 'CU']) {
        await expectUpdateRefused(emp.customerId, 'update-address', { addresses: [address({ addressCountryCode: code })] }, 'COUNTRY_SANCTIONED');
      }
      // Operators add a country: refused from then on; removing it allows it again.
      await admin(svc).call('POST', '/internal/admin/v1/sanctioned-countries/update', { addCountries: ['VE'], remark: 'test' });
      await expectUpdateRefused(emp.customerId, 'update-address', { addresses: [address({ addressCountryCode: 'VE' })] }, 'COUNTRY_SANCTIONED');
      const list = await admin(svc).call<{ countryCode: string }[]>('POST', '/internal/admin/v1/sanctioned-countries/update', { removeCountries: ['VE'] });
      assert.ok(!list.some((c) => c.countryCode === 'VE'));
      await client.customers.updateAddress(emp.customerId, [address({ addressCountryCode: 'VE' })]);
      assert.equal((await client.customers.query(emp.customerId)).addresses[0].addressCountryCode, 'VE');
      await expectCode(admin(svc).call('POST', '/internal/admin/v1/sanctioned-countries/update', { addCountries: ['XX'] }), 'DAPI_PARAM_INVALID', 'addCountries');
      await expectCode(admin(svc).call('POST', '/internal/admin/v1/sanctioned-countries/update', {}), 'DAPI_PARAM_INVALID');
    });
  });

  describe('terminate (D16, D43)', () => {
    it('ends the lifecycle: query still shows the employee as TERMINATED, every update is CUSTOMER_INVALID', async () => {
      const emp = await newEmployee(client, organizationId, { addresses: [address()] });
      await client.customers.terminate(emp.customerId, 'left the company');
      const after = await client.customers.query(emp.customerId);
      assert.equal(after.status, 'TERMINATED');
      const events = await client.events.listEvents({ eventType: 'CUSTOMER_STATUS_CHANGED', businessId: emp.customerId });
      assert.equal(events.total, 1);
      assert.equal((events.result[0].data as { status: string }).status, 'TERMINATED');
      await expectUpdateRefused(emp.customerId, 'update-name', { firstName: 'New', lastName: 'Name' }, 'CUSTOMER_INVALID');
      await expectUpdateRefused(emp.customerId, 'update-phone', { phoneCountryCode: 'HK', phoneNumber: '98765432' }, 'CUSTOMER_INVALID');
      await expectUpdateRefused(emp.customerId, 'update-email', { email: 'x@example.com' }, 'CUSTOMER_INVALID');
      await expectUpdateRefused(emp.customerId, 'update-address', { addresses: [address({ city: 'Elsewhere' })] }, 'CUSTOMER_INVALID');
      await expectUpdateRefused(emp.customerId, 'terminate', {}, 'CUSTOMER_INVALID');
      await expectUpdateRefused(emp.customerId, 'resubmit', {}, 'CUSTOMER_INVALID');
      await expectUpdateRefused(emp.customerId, 'update-restrictions', { addRestrictions: ['CARD_FROZEN'] }, 'STATUS_CONFLICT');
      const listed = await client.customers.list({ organizationId, customerRef: emp.customerRef });
      assert.equal(listed.result[0].status, 'TERMINATED');
    });

    it('an ACCOUNT_FROZEN employee cannot be closed (4.5: closure) until unfrozen', async () => {
      const emp = await newEmployee(client, organizationId);
      await client.customers.updateRestrictions(emp.customerId, { addRestrictions: ['ACCOUNT_FROZEN'] });
      const err = await expectCode(client.customers.terminate(emp.customerId), 'CAPABILITY_FROZEN');
      assert.equal((err.data as { errorCode: string }).errorCode, 'ACCOUNT_FROZEN');
      assert.equal((await client.customers.query(emp.customerId)).status, 'FROZEN');
      await client.customers.updateRestrictions(emp.customerId, { removeRestrictions: ['ACCOUNT_FROZEN'] });
      await client.customers.terminate(emp.customerId);
      assert.equal((await client.customers.query(emp.customerId)).status, 'TERMINATED');
    });
  });
});
