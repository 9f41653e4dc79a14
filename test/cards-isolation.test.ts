import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { decimal, expectCode } from './helpers/companies.ts';
import { cardWorld, footprint, issueCard, ref, runJobs, type CardWorld } from './helpers/cards.ts';
import type { Card, CardApplication } from '../sdk/index.ts';

/**
 * Tenant isolation (issue 4 item 10): partner B, PCI-certified, calls every card route with
 * partner A's ids. Each behaves exactly like an id that does not exist, and A's data is untouched.
 */

describe('cards: another partner\'s ids behave like unknown ids, on every route', () => {
  let svc: TestService;
  let a: CardWorld;
  let b: CardWorld;
  let shared: Card;
  let dedicated: Card;
  let pending: CardApplication;
  let pendingRef: string;
  let aProfile: string;
  let aRule: string;

  before(async () => {
    svc = await startService();
    a = await cardWorld(svc, { pciCertified: true });
    b = await cardWorld(svc, { pciCertified: true });
    shared = await issueCard(svc, a);
    dedicated = await issueCard(svc, a, { profile: 'sbx-visa-dedicated' });
    await a.client.cards.openVa(dedicated.cardId, ['USD']);
    await a.client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: a.org.organizationId, currency: 'USD', amount: decimal('100') });
    pendingRef = ref();
    pending = await a.client.cards.apply({
      organizationId: a.org.organizationId, cardApplyRef: pendingRef, cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER', subjectId: a.employee.customerId,
    });
    aProfile = (await svc.admin.call<{ cardProfileId: string }>('POST', '/internal/admin/v1/card-profiles', {
      body: { partnerId: a.partner.partnerId, profileName: 'A only', cardNetwork: 'VISA', cardForm: 'VIRTUAL', balanceMode: 'SHARED', settlementCurrencies: ['USD'], bin: '462280' },
    })).cardProfileId;
    aRule = (await a.client.velocity.createRule({
      organizationId: a.org.organizationId, ruleRef: ref('rule'), ruleName: 'A rule', purchaseControl: { amountLimits: [{ currency: 'USD', daily: decimal('10') }] },
    })).ruleId;
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('every route answers B as if A\'s ids did not exist, and nothing of A changes', async () => {
    const before = await footprint(svc);
    const B = b.client.cards;
    const bApply = { cardApplyRef: ref(), cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER' as const };
    // Applications.
    await expectCode(B.queryApply(pending.cardApplyId), 'APPLY_NOT_FOUND');
    await expectCode(B.cardOrder(pendingRef), 'APPLY_NOT_FOUND');
    await expectCode(B.apply({ ...bApply, organizationId: a.org.organizationId, subjectId: a.employee.customerId }), 'ORGANIZATION_INVALID');
    await expectCode(B.apply({ ...bApply, organizationId: b.org.organizationId, subjectId: a.employee.customerId }), 'CUSTOMER_INVALID');
    await expectCode(B.apply({
      ...bApply, organizationId: b.org.organizationId, subjectType: 'ORGANIZATION', subjectId: b.org.organizationId, custodianCustomerId: a.employee.customerId,
    }), 'CUSTOMER_INVALID');
    await expectCode(B.apply({ ...bApply, organizationId: b.org.organizationId, subjectId: b.employee.customerId, cardProfileId: aProfile }), 'CARD_PROFILE_INVALID');
    await expectCode(B.apply({ ...bApply, organizationId: b.org.organizationId, subjectId: b.employee.customerId, ruleIds: [aRule] }), 'VELOCITY_RULE_NOT_FOUND');
    // Profiles.
    assert.ok(!(await B.listProfiles({ pageSize: 100 })).result.some((p) => p.cardProfileId === aProfile));
    // Cards.
    for (const card of [shared, dedicated]) {
      await expectCode(B.query(card.cardId), 'CARD_INVALID');
      await expectCode(B.block(card.cardId), 'CARD_INVALID');
      await expectCode(B.unblock(card.cardId), 'CARD_INVALID');
      await expectCode(B.cancel(card.cardId), 'CARD_INVALID');
      await expectCode(B.retrieveSecureCard(card.cardId), 'CARD_INVALID');
      await expectCode(B.openVa(card.cardId, ['USD']), 'CARD_INVALID');
      await expectCode(B.depositAccounts('CARD', card.cardId), 'SUBJECT_INVALID');
      await expectCode(b.client.sandbox.deposit({ subjectType: 'CARD', subjectId: card.cardId, currency: 'USD', amount: decimal('1') }), 'CARD_INVALID');
    }
    await expectCode(B.list({ organizationId: a.org.organizationId }), 'ORGANIZATION_INVALID');
    await expectCode(B.depositAccounts('ORGANIZATION', a.org.organizationId), 'SUBJECT_INVALID');
    // Funds.
    const transfer = { cardId: dedicated.cardId, direction: 'POOL_TO_CARD' as const, currency: 'USD', amount: decimal('1'), externalTranId: ref('tx') };
    await expectCode(B.transfer({ ...transfer, organizationId: a.org.organizationId }), 'ORGANIZATION_INVALID');
    await expectCode(B.transfer({ ...transfer, organizationId: b.org.organizationId }), 'CARD_INVALID');
    // B's own list does not show A's cards.
    assert.equal((await B.list({ organizationId: b.org.organizationId })).total, 0);

    assert.deepEqual(await footprint(svc), before, 'A\'s data is untouched');
    // B cannot see A's card events either.
    assert.equal((await b.client.events.listEvents({ eventType: 'CARD_CREATED' })).total, 0);
  });

  it('A still sees and operates its own cards, and its pending application completes', async () => {
    assert.equal((await a.client.cards.query(shared.cardId)).status, 'ACTIVE');
    assert.equal((await a.client.cards.list({ organizationId: a.org.organizationId })).total, 2);
    assert.equal((await a.client.cards.depositAccounts('CARD', dedicated.cardId)).length, 1);
    await runJobs(svc);
    assert.equal((await a.client.cards.queryApply(pending.cardApplyId)).status, 'SUCCESS');
    assert.equal((await a.client.cards.cardOrder(pendingRef)).status, 'SUCCESS');
  });
});
