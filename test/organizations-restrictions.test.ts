import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { admin, decimal, eventsOf, expectCode, newCompany, newEmployee } from './helpers/companies.ts';
import type { CardServiceClient, RestrictionCode } from '../sdk/index.ts';
import { checkCapability, type Capability, type SubjectState } from '../src/domains/organizations/testing.ts';
import { mergedStatus } from '../src/domains/organizations/index.ts';

const ORG_RESTRICT = '/open-api-corp/organization/v1/update-restrictions';
const CUS_RESTRICT = '/open-api-corp/customer/v1/update-restrictions';
const FIVE: RestrictionCode[] = ['ACCOUNT_FROZEN', 'CASH_IN_FROZEN', 'CASH_OUT_FROZEN', 'PAYMENT_FROZEN', 'CARD_FROZEN'];
/** 4.5 rule 4: values outside the five, including the named ones and fine-grained codes. */
const INVALID_VALUES = ['KYC_FROZEN', 'TRANSFER_FROZEN', 'SUSPENDED', 'RESTRICTED', 'FROZEN', 'ACTIVE', 'PAYMENT_FROZEN_ATM',
  'CARD_APPLY_FROZEN', 'card_frozen', '', ' CARD_FROZEN', 'ACCOUNT_FROZEN ', 'ATM_FROZEN'];

describe('restrictions: set semantics, sources, merged status, events (section 3, 4.5 rule 4, 4.6, D18-D21, D47)', () => {
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

  for (const kind of ['organization', 'customer'] as const) {
    const path = kind === 'organization' ? ORG_RESTRICT : CUS_RESTRICT;
    const idField = kind === 'organization' ? 'organizationId' : 'customerId';
    const eventType = kind === 'organization' ? 'ORGANIZATION_STATUS_CHANGED' : 'CUSTOMER_STATUS_CHANGED';

    async function subject() {
      const org = await newCompany(client);
      if (kind === 'organization') return { id: org.organizationId, org };
      const emp = await newEmployee(client, org.organizationId);
      return { id: emp.customerId, org };
    }
    const read = async (id: string) => (kind === 'organization' ? client.organizations.query(id) : client.customers.query(id));
    const restrict = (id: string, b: Record<string, unknown>) => client.http.call<unknown>('POST', path, { body: { [idField]: id, ...b } });
    const statusEvents = async (id: string) => eventsOf(client, { eventType, businessId: id });

    /** The call must fail with `code`; the subject and its events are unchanged. */
    async function expectRefused(id: string, b: Record<string, unknown>, code: string, field?: string) {
      const before = await read(id);
      const eventsBefore = await statusEvents(id);
      await expectCode(restrict(id, b), code, field);
      assert.deepEqual(await read(id), before, 'subject unchanged');
      assert.equal((await statusEvents(id)).length, eventsBefore.length, 'no event');
    }

    describe(`${kind} update-restrictions`, () => {
      it('adds codes as a set: repeats change nothing and emit no second event; removes lift them', async () => {
        const { id } = await subject();
        const first = await restrict(id, { addRestrictions: ['CARD_FROZEN', 'PAYMENT_FROZEN'], remark: 'fraud check' });
        if (kind === 'organization') assert.equal(first, null, '4.6: data null');
        else assert.deepEqual(first, {
          restrictions: [{ code: 'PAYMENT_FROZEN', source: 'PARTNER' }, { code: 'CARD_FROZEN', source: 'PARTNER' }],
          retainedRestrictions: [],
        });
        let view = await read(id);
        assert.equal(view.status, 'RESTRICTED');
        assert.deepEqual(view.restrictions.map((r) => r.code), ['PAYMENT_FROZEN', 'CARD_FROZEN']);
        const modifyTime = view.modifyTime;

        // Idempotent: the same add again, with a repeat inside the array, changes nothing.
        await restrict(id, { addRestrictions: ['CARD_FROZEN', 'CARD_FROZEN'] });
        view = await read(id);
        assert.deepEqual(view.restrictions.map((r) => r.code), ['PAYMENT_FROZEN', 'CARD_FROZEN']);
        assert.equal(view.modifyTime, modifyTime);
        let events = await statusEvents(id);
        assert.equal(events.length, 1);
        const data = events[0].data as Record<string, unknown>;
        assert.equal(events[0].businessId, id);
        assert.deepEqual(data.addRestrictions, ['PAYMENT_FROZEN', 'CARD_FROZEN']);
        assert.deepEqual(data.removeRestrictions, []);
        assert.equal(data.remark, 'fraud check');
        assert.equal(data[idField], id);

        // Removing an absent code is a no-op too; removing a held one lifts it.
        await restrict(id, { removeRestrictions: ['CASH_OUT_FROZEN'] });
        assert.equal((await statusEvents(id)).length, 1);
        await restrict(id, { removeRestrictions: ['CARD_FROZEN'], addRestrictions: [] });
        view = await read(id);
        assert.deepEqual(view.restrictions.map((r) => r.code), ['PAYMENT_FROZEN']);
        events = await statusEvents(id);
        assert.equal(events.length, 2);
        const second = events[1].data as Record<string, unknown>;
        assert.deepEqual(second.addRestrictions, []);
        assert.deepEqual(second.removeRestrictions, ['CARD_FROZEN']);
        assert.equal(second.remark, null, 'D48: absent remark is null');

        await restrict(id, { removeRestrictions: ['PAYMENT_FROZEN'] });
        assert.equal((await read(id)).status, 'ACTIVE');
      });

      it('accepts each of the five codes, and all five at once', async () => {
        const { id } = await subject();
        for (const code of FIVE) {
          await restrict(id, { addRestrictions: [code] });
          assert.ok((await read(id)).restrictions.some((r) => r.code === code), code);
          await restrict(id, { removeRestrictions: [code] });
        }
        await restrict(id, { addRestrictions: FIVE });
        assert.deepEqual((await read(id)).restrictions.map((r) => r.code), FIVE);
      });

      it('rejects every value outside the five codes, in either array, with DAPI_PARAM_INVALID and no change', async () => {
        const { id } = await subject();
        await restrict(id, { addRestrictions: ['CARD_FROZEN'] });
        for (const value of INVALID_VALUES) {
          await expectRefused(id, { addRestrictions: [value] }, 'DAPI_PARAM_INVALID', 'addRestrictions');
          await expectRefused(id, { removeRestrictions: ['CARD_FROZEN', value] }, 'DAPI_PARAM_INVALID', 'removeRestrictions');
        }
        await expectRefused(id, { addRestrictions: 'CARD_FROZEN' }, 'DAPI_PARAM_INVALID', 'addRestrictions');
        await expectRefused(id, { addRestrictions: [1] }, 'DAPI_PARAM_INVALID', 'addRestrictions');
        await expectRefused(id, { addRestrictions: null }, 'DAPI_PARAM_INVALID', 'addRestrictions');
      });

      it('rejects a request holding no code (both absent, both empty, one empty and one absent) and a code both added and removed', async () => {
        const { id } = await subject();
        await expectRefused(id, {}, 'DAPI_PARAM_INVALID');
        await expectRefused(id, { remark: 'only a remark' }, 'DAPI_PARAM_INVALID');
        await expectRefused(id, { addRestrictions: [], removeRestrictions: [] }, 'DAPI_PARAM_INVALID');
        await expectRefused(id, { addRestrictions: [] }, 'DAPI_PARAM_INVALID');
        await expectRefused(id, { removeRestrictions: [] }, 'DAPI_PARAM_INVALID');
        await expectRefused(id, { addRestrictions: ['CARD_FROZEN'], removeRestrictions: ['CARD_FROZEN'] }, 'DAPI_PARAM_INVALID');
      });

      it('bounds: remark up to 256; the id up to its length; the arrays up to 20 entries', async () => {
        const { id } = await subject();
        await restrict(id, { addRestrictions: ['CARD_FROZEN'], remark: 'r'.repeat(256) });
        await expectRefused(id, { removeRestrictions: ['CARD_FROZEN'], remark: 'r'.repeat(257) }, 'DAPI_PARAM_INVALID', 'remark');
        await expectRefused(id, { addRestrictions: Array(21).fill('CASH_IN_FROZEN') }, 'DAPI_PARAM_INVALID', 'addRestrictions');
        const max = kind === 'organization' ? 20 : 36;
        await expectCode(client.http.call('POST', path, { body: { [idField]: 'x'.repeat(max), addRestrictions: ['CARD_FROZEN'] } }),
          kind === 'organization' ? 'ORGANIZATION_INVALID' : 'CUSTOMER_INVALID');
        await expectCode(client.http.call('POST', path, { body: { [idField]: 'x'.repeat(max + 1), addRestrictions: ['CARD_FROZEN'] } }),
          'DAPI_PARAM_INVALID', idField);
        await expectCode(client.http.call('POST', path, { body: { addRestrictions: ['CARD_FROZEN'] } }), 'DAPI_PARAM_INVALID', idField);
      });

      it('D19: a partner never lifts RISK, REGULATORY or JUDICIAL codes; operators lift only their own source', async () => {
        const { id } = await subject();
        const subjectType = kind === 'organization' ? 'ORGANIZATION' : 'CUSTOMER';
        const ops = admin(svc);
        const opResult = await ops.restrictions({ subjectType, subjectId: id, addRestrictions: ['CASH_OUT_FROZEN', 'ACCOUNT_FROZEN'], source: 'JUDICIAL', remark: 'court order' });
        assert.equal(opResult.status, 'FROZEN');
        await ops.restrictions({ subjectType, subjectId: id, addRestrictions: ['PAYMENT_FROZEN'], source: 'RISK' });
        await restrict(id, { addRestrictions: ['PAYMENT_FROZEN', 'CARD_FROZEN'] });
        let view = await read(id);
        assert.deepEqual(view.restrictions, [
          { code: 'ACCOUNT_FROZEN', source: 'JUDICIAL' },
          { code: 'CASH_OUT_FROZEN', source: 'JUDICIAL' },
          { code: 'PAYMENT_FROZEN', source: 'PARTNER' },
          { code: 'PAYMENT_FROZEN', source: 'RISK' },
          { code: 'CARD_FROZEN', source: 'PARTNER' },
        ]);

        const answer = await restrict(id, { removeRestrictions: ['ACCOUNT_FROZEN', 'PAYMENT_FROZEN', 'CARD_FROZEN'] });
        if (kind === 'customer') {
          assert.deepEqual((answer as { retainedRestrictions: string[] }).retainedRestrictions, ['ACCOUNT_FROZEN', 'PAYMENT_FROZEN']);
        }
        view = await read(id);
        assert.deepEqual(view.restrictions, [
          { code: 'ACCOUNT_FROZEN', source: 'JUDICIAL' },
          { code: 'CASH_OUT_FROZEN', source: 'JUDICIAL' },
          { code: 'PAYMENT_FROZEN', source: 'RISK' },
        ]);
        assert.equal(view.status, 'FROZEN');

        // RISK lifting ACCOUNT_FROZEN does not lift the JUDICIAL one.
        const risk = await ops.restrictions({ subjectType, subjectId: id, removeRestrictions: ['ACCOUNT_FROZEN', 'PAYMENT_FROZEN'], source: 'RISK' });
        assert.deepEqual(risk.retainedRestrictions, ['ACCOUNT_FROZEN']);
        const judicial = await ops.restrictions({ subjectType, subjectId: id, removeRestrictions: ['ACCOUNT_FROZEN', 'CASH_OUT_FROZEN'], source: 'JUDICIAL' });
        assert.equal(judicial.status, 'ACTIVE');
        assert.deepEqual(judicial.restrictions, []);
        // Operator changes are reported to the partner too, with their source.
        const sources = (await statusEvents(id)).map((e) => (e.data as { source: string }).source);
        assert.deepEqual(sources, ['JUDICIAL', 'RISK', 'PARTNER', 'PARTNER', 'RISK', 'JUDICIAL']);
      });

      it('STATUS_CONFLICT when the subject is SUSPENDED or TERMINATED (D18), with nothing changed', async () => {
        const { id, org } = await subject();
        const subjectType = kind === 'organization' ? 'ORGANIZATION' : 'CUSTOMER';
        await restrict(id, { addRestrictions: ['CARD_FROZEN'] });
        await admin(svc).suspend(subjectType, id, true);
        assert.equal((await read(id)).status, 'SUSPENDED');
        await expectRefused(id, { removeRestrictions: ['CARD_FROZEN'] }, 'STATUS_CONFLICT');
        await expectRefused(id, { addRestrictions: ['ACCOUNT_FROZEN'] }, 'STATUS_CONFLICT');
        await admin(svc).suspend(subjectType, id, false);
        assert.equal((await read(id)).status, 'RESTRICTED');
        await restrict(id, { addRestrictions: ['ACCOUNT_FROZEN'] });
        assert.equal((await read(id)).status, 'FROZEN', 'a FROZEN subject still accepts restriction changes');
        if (kind === 'organization') await admin(svc).terminateOrganization(org.organizationId);
        else await admin(svc).call('POST', '/internal/admin/v1/organizations/terminate', { organizationId: org.organizationId });
        assert.equal((await read(id)).status, 'TERMINATED');
        await expectRefused(id, { removeRestrictions: ['CARD_FROZEN'] }, 'STATUS_CONFLICT');
      });
    });
  }

  it('merged status table (D18) for companies and employees, in precedence order', async () => {
    const org = await newCompany(client);
    const emp = await newEmployee(client, org.organizationId);
    const cases: { codes: RestrictionCode[]; status: string }[] = [
      { codes: [], status: 'ACTIVE' },
      { codes: ['CASH_IN_FROZEN'], status: 'RESTRICTED' },
      { codes: ['CASH_OUT_FROZEN'], status: 'RESTRICTED' },
      { codes: ['PAYMENT_FROZEN'], status: 'RESTRICTED' },
      { codes: ['CARD_FROZEN'], status: 'RESTRICTED' },
      { codes: ['CARD_FROZEN', 'PAYMENT_FROZEN', 'CASH_IN_FROZEN', 'CASH_OUT_FROZEN'], status: 'RESTRICTED' },
      { codes: ['ACCOUNT_FROZEN'], status: 'FROZEN' },
      { codes: FIVE, status: 'FROZEN' },
    ];
    for (const c of cases) {
      for (const [id, read, path, idField] of [
        [org.organizationId, (x: string) => client.organizations.query(x), ORG_RESTRICT, 'organizationId'],
        [emp.customerId, (x: string) => client.customers.query(x), CUS_RESTRICT, 'customerId'],
      ] as const) {
        const current = (await read(id)).restrictions.map((r) => r.code);
        if (current.length) await client.http.call('POST', path, { body: { [idField]: id, removeRestrictions: current } });
        if (c.codes.length) await client.http.call('POST', path, { body: { [idField]: id, addRestrictions: c.codes } });
        assert.equal((await read(id)).status, c.status, `${idField} with ${c.codes.join('+') || 'nothing'}`);
      }
    }
    // SUSPENDED overrides FROZEN; TERMINATED overrides everything.
    await admin(svc).suspend('CUSTOMER', emp.customerId, true);
    assert.equal((await client.customers.query(emp.customerId)).status, 'SUSPENDED');
    assert.equal((await client.organizations.query(org.organizationId)).status, 'FROZEN', 'the company is not suspended by its employee');
    await admin(svc).suspend('ORGANIZATION', org.organizationId, true);
    assert.equal((await client.organizations.query(org.organizationId)).status, 'SUSPENDED');
    await admin(svc).terminateOrganization(org.organizationId);
    assert.equal((await client.customers.query(emp.customerId)).status, 'TERMINATED');
    assert.equal((await client.organizations.query(org.organizationId)).status, 'TERMINATED');

    // The pure function agrees with the table.
    assert.equal(mergedStatus({ lifecycle: 'TERMINATED', suspended: true, codes: ['ACCOUNT_FROZEN'] }), 'TERMINATED');
    assert.equal(mergedStatus({ lifecycle: 'ACTIVE', suspended: true, codes: ['ACCOUNT_FROZEN'] }), 'SUSPENDED');
    assert.equal(mergedStatus({ lifecycle: 'ACTIVE', suspended: false, codes: ['CARD_FROZEN', 'ACCOUNT_FROZEN'] }), 'FROZEN');
    assert.equal(mergedStatus({ lifecycle: 'ACTIVE', suspended: false, codes: ['CARD_FROZEN'] }), 'RESTRICTED');
    assert.equal(mergedStatus({ lifecycle: 'ACTIVE', suspended: false, codes: [] }), 'ACTIVE');
  });

  it('capability enforcement (D20): the pure check names the refusing code in precedence order', () => {
    const state = (codes: RestrictionCode[], extra: Partial<SubjectState> = {}): SubjectState => ({
      subjectType: 'CUSTOMER', subjectId: 'cus1', partnerId: 'p', lifecycle: 'ACTIVE', suspended: false,
      codes: new Set(codes), status: 'ACTIVE', ...extra,
    });
    const detail = (s: SubjectState, c: Capability) => {
      const d = checkCapability(s, c);
      return d.allowed ? 'ALLOWED' : d.declineDetail;
    };
    const table: [RestrictionCode[], Capability, string][] = [
      [[], 'PAYMENT', 'ALLOWED'],
      [['PAYMENT_FROZEN'], 'PAYMENT', 'PAYMENT_FROZEN'],
      [['ACCOUNT_FROZEN'], 'PAYMENT', 'ACCOUNT_FROZEN'],
      [['ACCOUNT_FROZEN', 'PAYMENT_FROZEN'], 'PAYMENT', 'PAYMENT_FROZEN'],
      [['CARD_FROZEN', 'CASH_IN_FROZEN', 'CASH_OUT_FROZEN'], 'PAYMENT', 'ALLOWED'],
      [['CARD_FROZEN'], 'CARD', 'CARD_FROZEN'],
      [['ACCOUNT_FROZEN'], 'CARD', 'ACCOUNT_FROZEN'],
      [['PAYMENT_FROZEN'], 'CARD', 'ALLOWED'],
      [['CASH_IN_FROZEN'], 'CASH_IN', 'CASH_IN_FROZEN'],
      [['ACCOUNT_FROZEN', 'PAYMENT_FROZEN', 'CARD_FROZEN', 'CASH_OUT_FROZEN'], 'CASH_IN', 'ALLOWED'],
      [['CASH_OUT_FROZEN'], 'CASH_OUT', 'CASH_OUT_FROZEN'],
      [['ACCOUNT_FROZEN'], 'CASH_OUT', 'ACCOUNT_FROZEN'],
      [['ACCOUNT_FROZEN'], 'ACCOUNT', 'ACCOUNT_FROZEN'],
      [['CARD_FROZEN'], 'ACCOUNT', 'ALLOWED'],
    ];
    for (const [codes, capability, want] of table) assert.equal(detail(state(codes), capability), want, `${codes.join('+')} / ${capability}`);
    assert.equal(detail(state([], { suspended: true }), 'CASH_IN'), 'SUSPENDED');
    assert.equal(detail(state(['ACCOUNT_FROZEN'], { lifecycle: 'TERMINATED', suspended: true }), 'PAYMENT'), 'TERMINATED');
  });

  it('a refused call answers CAPABILITY_FROZEN with data.errorCode naming the code, and changes nothing', async () => {
    const org = await newCompany(client);
    const emp = await newEmployee(client, org.organizationId);
    await client.customers.updateRestrictions(emp.customerId, { addRestrictions: ['ACCOUNT_FROZEN'] });
    const before = await client.customers.query(emp.customerId);
    const err = await expectCode(client.customers.updatePhone(emp.customerId, { phoneCountryCode: 'SG', phoneNumber: '81234567' }), 'CAPABILITY_FROZEN');
    assert.equal((err.data as { errorCode: string }).errorCode, 'ACCOUNT_FROZEN');
    const emailErr = await expectCode(client.customers.updateEmail(emp.customerId, 'new@example.com'), 'CAPABILITY_FROZEN');
    assert.equal((emailErr.data as { errorCode: string }).errorCode, 'ACCOUNT_FROZEN');
    assert.deepEqual(await client.customers.query(emp.customerId), before);

    await client.organizations.updateRestrictions(org.organizationId, { addRestrictions: ['CASH_IN_FROZEN'] });
    const balanceBefore = await client.funding.balance(org.organizationId);
    const depositErr = await expectCode(client.sandbox.deposit({
      subjectType: 'ORGANIZATION', subjectId: org.organizationId, currency: 'USD', amount: decimal('10.00'),
    }), 'CAPABILITY_FROZEN');
    assert.equal((depositErr.data as { errorCode: string }).errorCode, 'CASH_IN_FROZEN');
    assert.deepEqual(await client.funding.balance(org.organizationId), balanceBefore);
  });

  it('when the employee restriction call is foreign or unknown, then CUSTOMER_INVALID; for companies ORGANIZATION_INVALID', async () => {
    await expectCode(client.customers.updateRestrictions('cus-unknown', { addRestrictions: ['CARD_FROZEN'] }), 'CUSTOMER_INVALID');
    await expectCode(client.organizations.updateRestrictions('org-unknown', { addRestrictions: ['CARD_FROZEN'] }), 'ORGANIZATION_INVALID');
    await expectCode(admin(svc).restrictions({ subjectType: 'CUSTOMER', subjectId: 'nope', addRestrictions: ['CARD_FROZEN'], source: 'RISK' }), 'CUSTOMER_INVALID');
    await expectCode(admin(svc).restrictions({ subjectType: 'ORGANIZATION', subjectId: 'nope', addRestrictions: ['CARD_FROZEN'], source: 'RISK' }), 'ORGANIZATION_INVALID');
    await expectCode(admin(svc).restrictions({ subjectType: 'ORGANIZATION', subjectId: 'nope', addRestrictions: ['CARD_FROZEN'], source: 'PARTNER' }), 'DAPI_PARAM_INVALID', 'source');
  });
});
