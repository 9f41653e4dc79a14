import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { admin, eventsOf, expectCode, newCompany, newEmployee } from './helpers/companies.ts';
import type { CardServiceClient } from '../sdk/index.ts';

describe('employee KYC (D17, D40, D51): states, update-name, asynchronous decision, resubmission', () => {
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

  const kycEvents = async (customerId: string) =>
    (await eventsOf(client, { eventType: 'CUSTOMER_KYC_CHANGED', businessId: customerId })).map((e) => e.data as { customerId: string; kycStatus: string; reason: string | null });

  it('a new employee stays PENDING until decided; update-name while PENDING is KYC_IN_REVIEW and changes nothing', async () => {
    const emp = await newEmployee(client, organizationId);
    assert.equal(emp.kycStatus, 'PENDING');
    svc.clock.advance(60_000);
    assert.equal((await client.customers.query(emp.customerId)).kycStatus, 'PENDING', 'no automatic decision in sandbox (D51)');
    await expectCode(client.customers.updateName(emp.customerId, { firstName: 'Other', lastName: 'Person' }), 'KYC_IN_REVIEW');
    await expectCode(client.customers.updateName(emp.customerId, { firstName: 'Ada', lastName: 'Lovelace' }), 'KYC_IN_REVIEW', undefined);
    assert.deepEqual(await client.customers.query(emp.customerId), { ...emp, modifyTime: emp.modifyTime });
    assert.deepEqual(await kycEvents(emp.customerId), [], 'creation itself emits no KYC event');
  });

  it('the sandbox decision approves, emitting CUSTOMER_KYC_CHANGED with the D49 payload', async () => {
    const emp = await newEmployee(client, organizationId);
    const decided = await client.sandbox.kycDecision({ customerId: emp.customerId, decision: 'APPROVED' });
    assert.deepEqual(decided, { customerId: emp.customerId, kycStatus: 'APPROVED', reason: null });
    assert.equal((await client.customers.query(emp.customerId)).kycStatus, 'APPROVED');
    assert.deepEqual(await kycEvents(emp.customerId), [{ customerId: emp.customerId, kycStatus: 'APPROVED', reason: null }]);
  });

  it('an identical name is accepted without a review; a real change (any part, middleName included) re-opens KYC', async () => {
    const emp = await newEmployee(client, organizationId, { middleName: 'Byron' });
    await client.sandbox.kycDecision({ customerId: emp.customerId, decision: 'APPROVED' });
    const approved = await client.customers.query(emp.customerId);

    await client.customers.updateName(emp.customerId, { firstName: 'Ada', middleName: 'Byron', lastName: 'Lovelace' });
    assert.deepEqual(await client.customers.query(emp.customerId), approved, 'identical name: nothing changes');
    assert.equal((await kycEvents(emp.customerId)).length, 1);

    await client.customers.updateName(emp.customerId, { firstName: 'Ada', lastName: 'Lovelace' });
    const changed = await client.customers.query(emp.customerId);
    assert.equal(changed.middleName, null);
    assert.equal(changed.kycStatus, 'PENDING', 'clearing the middle name is a real change');
    assert.deepEqual((await kycEvents(emp.customerId)).map((e) => e.kycStatus), ['APPROVED', 'PENDING']);
    await expectCode(client.customers.updateName(emp.customerId, { firstName: 'Ada', lastName: 'King' }), 'KYC_IN_REVIEW');

    await client.sandbox.kycDecision({ customerId: emp.customerId, decision: 'APPROVED' });
    await client.customers.updateName(emp.customerId, { firstName: 'ADA', lastName: 'Lovelace' });
    assert.equal((await client.customers.query(emp.customerId)).kycStatus, 'PENDING', 'a case change is a change');
  });

  it('rejection by the operator carries a reason; a rejected employee can resubmit or change the name to re-open KYC', async () => {
    const emp = await newEmployee(client, organizationId);
    await admin(svc).kycDecision(emp.customerId, 'REJECTED', 'document unreadable');
    let view = await client.customers.query(emp.customerId);
    assert.equal(view.kycStatus, 'REJECTED');
    assert.deepEqual((await kycEvents(emp.customerId)).at(-1), { customerId: emp.customerId, kycStatus: 'REJECTED', reason: 'document unreadable' });

    // Identical name while REJECTED: nothing; resubmit: PENDING again.
    await client.customers.updateName(emp.customerId, { firstName: 'Ada', lastName: 'Lovelace' });
    assert.equal((await client.customers.query(emp.customerId)).kycStatus, 'REJECTED');
    await client.customers.resubmit(emp.customerId);
    view = await client.customers.query(emp.customerId);
    assert.equal(view.kycStatus, 'PENDING');
    await expectCode(client.customers.resubmit(emp.customerId), 'KYC_IN_REVIEW');

    // Rejected again, then a real name change re-opens the review by itself.
    await client.sandbox.kycDecision({ customerId: emp.customerId, decision: 'REJECTED', reason: 'name mismatch' });
    await client.customers.updateName(emp.customerId, { firstName: 'Ada', lastName: 'King' });
    assert.equal((await client.customers.query(emp.customerId)).kycStatus, 'PENDING');
    await client.sandbox.kycDecision({ customerId: emp.customerId, decision: 'APPROVED' });
    assert.deepEqual((await kycEvents(emp.customerId)).map((e) => e.kycStatus), ['REJECTED', 'PENDING', 'REJECTED', 'PENDING', 'APPROVED']);

    const before = await client.customers.query(emp.customerId);
    await expectCode(client.customers.resubmit(emp.customerId), 'STATUS_CONFLICT');
    assert.deepEqual(await client.customers.query(emp.customerId), before);
  });

  it('a decision needs a review in flight (STATUS_CONFLICT) and an ACTIVE employee of the caller (CUSTOMER_INVALID)', async () => {
    const emp = await newEmployee(client, organizationId);
    await client.sandbox.kycDecision({ customerId: emp.customerId, decision: 'APPROVED' });
    await expectCode(client.sandbox.kycDecision({ customerId: emp.customerId, decision: 'REJECTED' }), 'STATUS_CONFLICT');
    await expectCode(admin(svc).kycDecision(emp.customerId, 'REJECTED'), 'STATUS_CONFLICT');
    assert.equal((await client.customers.query(emp.customerId)).kycStatus, 'APPROVED');
    await expectCode(client.sandbox.kycDecision({ customerId: 'cus-unknown', decision: 'APPROVED' }), 'CUSTOMER_INVALID');
    await expectCode(client.sandbox.kycDecision({ customerId: emp.customerId, decision: 'MAYBE' as 'APPROVED' }), 'DAPI_PARAM_INVALID', 'decision');
    await expectCode(client.sandbox.kycDecision({ customerId: emp.customerId, decision: 'APPROVED', reason: 'r'.repeat(257) }), 'DAPI_PARAM_INVALID', 'reason');

    const pending = await newEmployee(client, organizationId);
    const { client: other } = await svc.newPartner();
    await expectCode(other.sandbox.kycDecision({ customerId: pending.customerId, decision: 'APPROVED' }), 'CUSTOMER_INVALID');
    await client.customers.terminate(pending.customerId);
    await expectCode(client.sandbox.kycDecision({ customerId: pending.customerId, decision: 'APPROVED' }), 'CUSTOMER_INVALID');
    assert.equal((await client.customers.query(pending.customerId)).kycStatus, 'PENDING');
  });
});
