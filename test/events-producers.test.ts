import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { WebhookReceiver } from './helpers/webhook-receiver.ts';
import { newCompany, newEmployee } from './helpers/companies.ts';
import { deliverDueEvents } from '../src/domains/events/testing.ts';
import type { CardServiceClient } from '../sdk/index.ts';

/**
 * Issue 5, point 5: events recorded by the business capabilities travel through the same outbox
 * and worker. Uses the organization and employee endpoints (issue 3) end to end.
 */
describe('events from business capabilities are delivered by the webhook worker', () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  let client: CardServiceClient;

  before(async () => {
    svc = await startService();
    receiver = await WebhookReceiver.start();
    const created = await svc.newPartner({ webhookUrl: receiver.url });
    client = created.client;
    receiver.useCredentials(created.partner);
  });
  after(async () => {
    await receiver.close();
    await svc.close();
    await closeTestDatabase();
  });

  it('KYC decisions and restriction changes reach the webhook signed, with increasing sequence per businessId', async () => {
    const organization = await newCompany(client);
    const employee = await newEmployee(client, organization.organizationId);
    await client.sandbox.kycDecision({ customerId: employee.customerId, decision: 'APPROVED' });
    await client.customers.updateRestrictions(employee.customerId, { addRestrictions: ['PAYMENT_FROZEN'], remark: 'test' });
    await client.organizations.updateRestrictions(organization.organizationId, { addRestrictions: ['CASH_IN_FROZEN'] });

    await deliverDueEvents(svc.ctx);

    const byType = (type: string) => receiver.requests.filter((r) => r.json.eventType === type);
    const kyc = byType('CUSTOMER_KYC_CHANGED').find((r) => r.json.businessId === employee.customerId);
    const customerStatus = byType('CUSTOMER_STATUS_CHANGED').find((r) => r.json.businessId === employee.customerId);
    const organizationStatus = byType('ORGANIZATION_STATUS_CHANGED').find((r) => r.json.businessId === organization.organizationId);
    for (const hook of [kyc, customerStatus, organizationStatus]) {
      assert.ok(hook, 'event delivered');
      assert.equal(hook.signatureValid, true);
      assert.equal(hook.headers['x-dapi-event-id'], hook.json.eventId);
    }
    assert.equal((kyc!.json.data as { kycStatus: string }).kycStatus, 'APPROVED');
    assert.deepEqual((customerStatus!.json.data as { addRestrictions: string[] }).addRestrictions, ['PAYMENT_FROZEN']);
    assert.ok(customerStatus!.json.sequence > kyc!.json.sequence, 'sequence increases per businessId');

    const log = await client.events.listEvents({ businessId: employee.customerId });
    assert.ok(log.result.length >= 2);
    assert.ok(log.result.every((e) => e.status === 'DELIVERED'));
  });
});
