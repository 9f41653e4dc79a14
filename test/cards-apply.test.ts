import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { admin, approvedEmployee, expectCode, newCompany, newEmployee } from './helpers/companies.ts';
import { applyAndProcess, cardWorld, footprint, issueCard, outboxEvents, ref, runJobs, type CardWorld } from './helpers/cards.ts';
import { CARD_APPLY_LEASE_MS, leaseCardApplications, processCardApplications } from '../src/domains/cards/testing.ts';
import { decimal, type ApplyCardParams, type CardServiceClient } from '../sdk/index.ts';

/**
 * Card profiles (D22, D48) and card application (D23, D24, D44): every synchronous check with
 * its trigger and proof that nothing changed, then the asynchronous job (lease, re-check,
 * screening, creation or rejection, events).
 */

async function usdRule(client: CardServiceClient, organizationId: string, currency: 'USD' | 'HKD' = 'USD') {
  return client.velocity.createRule({
    organizationId,
    ruleRef: ref('rule'),
    ruleName: `limit ${currency}`,
    purchaseControl: { amountLimits: [{ currency, daily: decimal('500.00') }] },
  });
}

describe('card profiles (D22, D48)', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService();
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('sandbox starts with a shared and a dedicated virtual profile on each network', async () => {
    const { client } = await svc.newPartner();
    const page = await client.cards.listProfiles({ pageSize: 100 });
    for (const network of ['VISA', 'MASTERCARD'] as const) {
      for (const mode of ['SHARED', 'DEDICATED'] as const) {
        const p = page.result.find((x) => x.cardNetwork === network && x.balanceMode === mode && x.cardForm === 'VIRTUAL' && x.status === 'ACTIVE');
        assert.ok(p, `${network} ${mode} virtual profile`);
        assert.deepEqual(p.settlementCurrencies, ['USD', 'HKD']);
        for (const field of ['cardProfileId', 'cardNetwork', 'cardForm', 'balanceMode', 'settlementCurrencies', 'status']) assert.ok(field in p, field);
      }
    }
    assert.equal(typeof page.total, 'number');
    const dedicated = await client.cards.listProfiles({ balanceMode: 'DEDICATED', pageSize: 100 });
    assert.ok(dedicated.result.length >= 2 && dedicated.result.every((p) => p.balanceMode === 'DEDICATED'));
  });

  it('operators create profiles; a partner-specific profile is offered to that partner only', async () => {
    const a = await svc.newPartner();
    const b = await svc.newPartner();
    const created = await svc.admin.call<{ cardProfileId: string; bin: string }>('POST', '/internal/admin/v1/card-profiles', {
      body: {
        partnerId: a.partner.partnerId, profileName: 'A private USD', cardNetwork: 'MASTERCARD', cardForm: 'VIRTUAL', balanceMode: 'SHARED',
        settlementCurrencies: ['USD'], bin: '22210012', fees: { issuanceFee: decimal('1.50') },
      },
    });
    const seenByA = await a.client.cards.listProfiles({ pageSize: 100 });
    const mine = seenByA.result.find((p) => p.cardProfileId === created.cardProfileId);
    assert.ok(mine);
    assert.equal(String(mine.fees.issuanceFee), '1.5');
    assert.ok(!('bin' in mine), 'partners do not see the BIN');
    const seenByB = await b.client.cards.listProfiles({ pageSize: 100 });
    assert.ok(!seenByB.result.some((p) => p.cardProfileId === created.cardProfileId));
  });

  it('operator input is validated: BIN outside the network range, taken id, unknown partner', async () => {
    const base = { profileName: 'x', cardNetwork: 'VISA', cardForm: 'VIRTUAL', balanceMode: 'SHARED', settlementCurrencies: ['USD'], bin: '462299' };
    const bad = await svc.admin.raw('POST', '/internal/admin/v1/card-profiles', { body: { ...base, bin: '531993' } });
    assert.equal(bad.envelope.code, 'DAPI_PARAM_INVALID');
    assert.match(bad.envelope.message ?? '', /bin/);
    const dup = await svc.admin.raw('POST', '/internal/admin/v1/card-profiles', { body: { ...base, cardProfileId: 'sbx-visa-shared' } });
    assert.equal(dup.envelope.code, 'DAPI_PARAM_INVALID');
    const twice = await svc.admin.raw('POST', '/internal/admin/v1/card-profiles', { body: { ...base, settlementCurrencies: ['USD', 'USD'] } });
    assert.equal(twice.envelope.code, 'DAPI_PARAM_INVALID');
    const partner = await svc.admin.raw('POST', '/internal/admin/v1/card-profiles', { body: { ...base, partnerId: 'ptnope' } });
    assert.equal(partner.envelope.code, 'PARTNER_INVALID');
  });
});

describe('card application: synchronous checks of D44, in order, each changing nothing', () => {
  let svc: TestService;
  let w: CardWorld;
  let base: ApplyCardParams;

  before(async () => {
    svc = await startService();
    w = await cardWorld(svc);
    base = { organizationId: w.org.organizationId, cardApplyRef: '', cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER', subjectId: w.employee.customerId };
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  /** The call fails with `code` and every card-related table is as before. */
  async function refused(params: Partial<ApplyCardParams> & Record<string, unknown>, code: string, messageIncludes?: string, client = w.client) {
    const before = await footprint(svc);
    const err = await expectCode(client.cards.apply({ ...base, cardApplyRef: ref(), ...params } as ApplyCardParams), code, messageIncludes);
    assert.deepEqual(await footprint(svc), before, `nothing changed after ${code}`);
    return err;
  }

  it('fields and bounds: DAPI_PARAM_INVALID naming the field', async () => {
    await refused({ organizationId: undefined }, 'DAPI_PARAM_INVALID', 'organizationId');
    await refused({ organizationId: 'o'.repeat(21) }, 'DAPI_PARAM_INVALID', 'organizationId');
    await refused({ cardApplyRef: 'r'.repeat(65) }, 'DAPI_PARAM_INVALID', 'cardApplyRef');
    await refused({ cardApplyRef: 'has space' }, 'DAPI_PARAM_INVALID', 'cardApplyRef');
    await refused({ subjectType: 'CARD' as never }, 'DAPI_PARAM_INVALID', 'subjectType');
    await refused({ subjectId: 'c'.repeat(37) }, 'DAPI_PARAM_INVALID', 'subjectId');
    await refused({ cardholderName: 'A'.repeat(27) }, 'DAPI_PARAM_INVALID', 'cardholderName');
    await refused({ cardholderName: 'Ada 1' }, 'DAPI_PARAM_INVALID', 'cardholderName');
    await refused({ ruleIds: ['r'.repeat(33)] }, 'DAPI_PARAM_INVALID', 'ruleIds');
    await refused({ ruleIds: 'r1' as never }, 'DAPI_PARAM_INVALID', 'ruleIds');
    await refused({ subjectType: 'ORGANIZATION', subjectId: w.org.organizationId }, 'DAPI_PARAM_INVALID', 'custodianCustomerId');
    await refused({ subjectType: 'ORGANIZATION', subjectId: 'other', custodianCustomerId: w.employee.customerId }, 'DAPI_PARAM_INVALID', 'subjectId');
    await refused({ custodianCustomerId: 'someone-else' }, 'DAPI_PARAM_INVALID', 'custodianCustomerId');
  });

  it('bounds at their limit are accepted: 64-character cardApplyRef, 26-character cardholderName', async () => {
    const accepted = await w.client.cards.apply({ ...base, cardApplyRef: 'R'.repeat(60) + ref('').slice(-4), cardholderName: 'A'.repeat(26) });
    assert.equal(accepted.cardApplyRef.length, 64);
    assert.equal(accepted.status, 'PENDING');
  });

  it('CARD_APPLY_REF_DUPLICATE: a cardApplyRef is unique per partner, checked before everything else', async () => {
    const cardApplyRef = ref();
    await w.client.cards.apply({ ...base, cardApplyRef });
    await refused({ cardApplyRef }, 'CARD_APPLY_REF_DUPLICATE');
    await refused({ cardApplyRef, organizationId: 'nope', cardProfileId: 'nope' }, 'CARD_APPLY_REF_DUPLICATE');
    // Another partner may use the same reference.
    const other = await cardWorld(svc);
    const theirs = await other.client.cards.apply({ ...base, cardApplyRef, organizationId: other.org.organizationId, subjectId: other.employee.customerId });
    assert.equal(theirs.cardApplyRef, cardApplyRef);
  });

  it('ORGANIZATION_INVALID: unknown, another partner\'s, or terminated company', async () => {
    await refused({ organizationId: 'org-does-not-exist' }, 'ORGANIZATION_INVALID');
    const other = await cardWorld(svc);
    await refused({ organizationId: other.org.organizationId }, 'ORGANIZATION_INVALID');
    const closing = await newCompany(w.client);
    const closingEmployee = await approvedEmployee(w.client, closing.organizationId);
    await admin(svc).terminateOrganization(closing.organizationId);
    await refused({ organizationId: closing.organizationId, subjectId: closingEmployee.customerId }, 'ORGANIZATION_INVALID');
  });

  it('CARD_PROFILE_INVALID: unknown, INACTIVE, another partner\'s, physical, or settling in no currency the company funds', async () => {
    await refused({ cardProfileId: 'no-such-profile' }, 'CARD_PROFILE_INVALID');
    const mk = (body: Record<string, unknown>) => svc.admin.call<{ cardProfileId: string }>('POST', '/internal/admin/v1/card-profiles', {
      body: { profileName: 'test', cardNetwork: 'VISA', cardForm: 'VIRTUAL', balanceMode: 'SHARED', settlementCurrencies: ['USD'], bin: '462270', ...body },
    });
    const inactive = await mk({ status: 'INACTIVE' });
    await refused({ cardProfileId: inactive.cardProfileId }, 'CARD_PROFILE_INVALID');
    const foreign = await svc.newPartner();
    const theirs = await mk({ partnerId: foreign.partner.partnerId });
    await refused({ cardProfileId: theirs.cardProfileId }, 'CARD_PROFILE_INVALID');
    const physical = await mk({ cardForm: 'PHYSICAL' });
    await refused({ cardProfileId: physical.cardProfileId }, 'CARD_PROFILE_INVALID', 'virtual');
    const hkdOnly = await mk({ settlementCurrencies: ['HKD'] });
    const usdCompany = await newCompany(w.client, { fundingCurrencies: ['USD'] });
    const usdEmployee = await approvedEmployee(w.client, usdCompany.organizationId);
    await refused({ organizationId: usdCompany.organizationId, subjectId: usdEmployee.customerId, cardProfileId: hkdOnly.cardProfileId }, 'CARD_PROFILE_INVALID', 'currency');
    // Re-activated, the profile is accepted again.
    await svc.admin.call('POST', '/internal/admin/v1/card-profiles/update', { body: { cardProfileId: inactive.cardProfileId, status: 'ACTIVE' } });
    assert.equal((await w.client.cards.apply({ ...base, cardApplyRef: ref(), cardProfileId: inactive.cardProfileId })).status, 'PENDING');
  });

  it('CUSTOMER_INVALID: unknown, another company\'s, another partner\'s or terminated employee; a custodian who is not a current employee', async () => {
    await refused({ subjectId: 'cu-does-not-exist' }, 'CUSTOMER_INVALID');
    const otherCompany = await newCompany(w.client);
    const stranger = await approvedEmployee(w.client, otherCompany.organizationId);
    await refused({ subjectId: stranger.customerId }, 'CUSTOMER_INVALID');
    const foreign = await cardWorld(svc);
    await refused({ subjectId: foreign.employee.customerId }, 'CUSTOMER_INVALID');
    const leaver = await approvedEmployee(w.client, w.org.organizationId);
    await w.client.customers.terminate(leaver.customerId);
    await refused({ subjectId: leaver.customerId }, 'CUSTOMER_INVALID');
    const company = { subjectType: 'ORGANIZATION' as const, subjectId: w.org.organizationId };
    await refused({ ...company, custodianCustomerId: stranger.customerId }, 'CUSTOMER_INVALID', 'custodian');
    await refused({ ...company, custodianCustomerId: leaver.customerId }, 'CUSTOMER_INVALID', 'custodian');
  });

  it('KYC_NOT_APPROVED: the employee, or the custodian of a company card, is PENDING or REJECTED', async () => {
    const pending = await newEmployee(w.client, w.org.organizationId);
    await refused({ subjectId: pending.customerId }, 'KYC_NOT_APPROVED');
    await refused({ subjectType: 'ORGANIZATION', subjectId: w.org.organizationId, custodianCustomerId: pending.customerId }, 'KYC_NOT_APPROVED');
    const rejected = await newEmployee(w.client, w.org.organizationId);
    await w.client.sandbox.kycDecision({ customerId: rejected.customerId, decision: 'REJECTED' });
    await refused({ subjectId: rejected.customerId }, 'KYC_NOT_APPROVED');
  });

  it('CAPABILITY_FROZEN (D20, D45): card management frozen on the company or, for an employee card, the employee', async () => {
    const company = await newCompany(w.client);
    const employee = await approvedEmployee(w.client, company.organizationId);
    const params = { organizationId: company.organizationId, subjectId: employee.customerId };
    await w.client.organizations.updateRestrictions(company.organizationId, { addRestrictions: ['CARD_FROZEN'] });
    let err = await refused(params, 'CAPABILITY_FROZEN');
    assert.deepEqual((err.data as { errorCode: string }).errorCode, 'CARD_FROZEN');
    await w.client.organizations.updateRestrictions(company.organizationId, { removeRestrictions: ['CARD_FROZEN'] });
    await w.client.customers.updateRestrictions(employee.customerId, { addRestrictions: ['ACCOUNT_FROZEN'] });
    err = await refused(params, 'CAPABILITY_FROZEN');
    assert.equal((err.data as { errorCode: string }).errorCode, 'ACCOUNT_FROZEN');
    // D45: a company card checks the company, not the custodian.
    const companyCard = await w.client.cards.apply({
      ...base, cardApplyRef: ref(), organizationId: company.organizationId, subjectType: 'ORGANIZATION', subjectId: company.organizationId,
      custodianCustomerId: employee.customerId,
    });
    assert.equal(companyCard.status, 'PENDING');
    // Other codes do not touch card management.
    await w.client.customers.updateRestrictions(employee.customerId, { removeRestrictions: ['ACCOUNT_FROZEN'], addRestrictions: ['CASH_OUT_FROZEN'] });
    assert.equal((await w.client.cards.apply({ ...base, ...params, cardApplyRef: ref() })).status, 'PENDING');
  });

  it('rules: duplicates DAPI_PARAM_INVALID, unknown or foreign VELOCITY_RULE_NOT_FOUND, INACTIVE VELOCITY_RULE_STATUS_INVALID, no shared currency VELOCITY_RULE_CURRENCY_MISMATCH', async () => {
    const rule = await usdRule(w.client, w.org.organizationId);
    await refused({ ruleIds: [rule.ruleId, rule.ruleId] }, 'DAPI_PARAM_INVALID', 'ruleIds');
    await refused({ ruleIds: [rule.ruleId, 'vr-unknown'] }, 'VELOCITY_RULE_NOT_FOUND');
    const otherCompany = await newCompany(w.client);
    const elsewhere = await usdRule(w.client, otherCompany.organizationId);
    await refused({ ruleIds: [elsewhere.ruleId] }, 'VELOCITY_RULE_NOT_FOUND');
    const foreign = await cardWorld(svc);
    const foreignRule = await usdRule(foreign.client, foreign.org.organizationId);
    await refused({ ruleIds: [foreignRule.ruleId] }, 'VELOCITY_RULE_NOT_FOUND');
    const paused = await usdRule(w.client, w.org.organizationId);
    await w.client.velocity.changeRuleStatus({ organizationId: w.org.organizationId, ruleId: paused.ruleId, status: 'INACTIVE', ruleVersion: paused.ruleVersion });
    await refused({ ruleIds: [paused.ruleId] }, 'VELOCITY_RULE_STATUS_INVALID');
    const usdProfile = await svc.admin.call<{ cardProfileId: string }>('POST', '/internal/admin/v1/card-profiles', {
      body: { profileName: 'USD only', cardNetwork: 'VISA', cardForm: 'VIRTUAL', balanceMode: 'SHARED', settlementCurrencies: ['USD'], bin: '462271' },
    });
    const hkdRule = await usdRule(w.client, w.org.organizationId, 'HKD');
    await refused({ cardProfileId: usdProfile.cardProfileId, ruleIds: [hkdRule.ruleId] }, 'VELOCITY_RULE_CURRENCY_MISMATCH');
    // Empty or absent ruleIds are fine; a valid rule is accepted.
    assert.equal((await w.client.cards.apply({ ...base, cardApplyRef: ref(), ruleIds: [] })).status, 'PENDING');
    assert.equal((await w.client.cards.apply({ ...base, cardApplyRef: ref(), ruleIds: [rule.ruleId] })).status, 'PENDING');
  });

  it('when several checks fail, the first in D44 order is reported', async () => {
    const pending = await newEmployee(w.client, w.org.organizationId);
    await refused({ cardProfileId: 'nope', subjectId: pending.customerId }, 'CARD_PROFILE_INVALID');
    await refused({ subjectId: pending.customerId, ruleIds: ['x', 'x'] }, 'KYC_NOT_APPROVED');
    await w.client.organizations.updateRestrictions(w.org.organizationId, { addRestrictions: ['CARD_FROZEN'] });
    try {
      await refused({ ruleIds: ['vr-unknown'] }, 'CAPABILITY_FROZEN');
      await refused({ subjectId: 'nobody' }, 'CUSTOMER_INVALID');
    } finally {
      await w.client.organizations.updateRestrictions(w.org.organizationId, { removeRestrictions: ['CARD_FROZEN'] });
    }
  });
});

describe('card application: the asynchronous job', () => {
  let svc: TestService;
  let w: CardWorld;

  before(async () => {
    svc = await startService();
    w = await cardWorld(svc);
    await runJobs(svc);
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('when the checks and screening pass, then PENDING -> PROCESSING -> SUCCESS, the card exists, rules are bound and CARD_CREATED is in the outbox', async () => {
    const rule = await usdRule(w.client, w.org.organizationId);
    const cardApplyRef = ref();
    const accepted = await w.client.cards.apply({
      organizationId: w.org.organizationId, cardApplyRef, cardProfileId: 'sbx-mc-dedicated', subjectType: 'CUSTOMER',
      subjectId: w.employee.customerId, ruleIds: [rule.ruleId],
    });
    assert.equal(accepted.status, 'PENDING');
    assert.ok(accepted.cardApplyId.length <= 20);
    assert.equal(accepted.cardId, null);
    assert.equal(accepted.rejectReason, null);
    assert.equal((await w.client.cards.queryApply(accepted.cardApplyId)).status, 'PENDING');
    assert.equal((await w.client.cards.cardOrder(cardApplyRef)).cardApplyId, accepted.cardApplyId);

    // A worker leases it: the partner sees PROCESSING.
    const owner = randomUUID();
    const leased = await leaseCardApplications(svc.ctx, { limit: 10, owner });
    assert.deepEqual(leased.map((a) => a.cardApplyId), [accepted.cardApplyId]);
    assert.equal((await w.client.cards.queryApply(accepted.cardApplyId)).status, 'PROCESSING');
    // Still leased: another run does not take it.
    assert.equal((await processCardApplications(svc.ctx)).leased, 0);

    // The worker died; after the lease timeout the next run takes the application over.
    svc.clock.advance(CARD_APPLY_LEASE_MS + 1);
    const run = await processCardApplications(svc.ctx);
    assert.deepEqual([run.leased, run.succeeded], [1, 1]);

    const done = await w.client.cards.queryApply(accepted.cardApplyId);
    assert.equal(done.status, 'SUCCESS');
    assert.ok(done.cardId);
    assert.equal(done.rejectReason, null);
    assert.deepEqual(await w.client.cards.cardOrder(cardApplyRef), done);

    const card = await w.client.cards.query(done.cardId);
    assert.deepEqual(
      [card.organizationId, card.subjectType, card.subjectId, card.cardProfileId, card.cardNetwork, card.currency, card.status, card.balanceMode],
      [w.org.organizationId, 'CUSTOMER', w.employee.customerId, 'sbx-mc-dedicated', 'MASTERCARD', 'USD', 'ACTIVE', 'DEDICATED'],
    );
    assert.equal(card.panFirst6, '531994');
    assert.match(card.panLast4, /^\d{4}$/);
    assert.equal(card.cardholderName, 'ADA LOVELACE', 'an employee card without a name is embossed with the employee name');

    const bound = await w.client.velocity.listSubjectRules({ organizationId: w.org.organizationId, subjectType: 'CARD', subjectId: card.cardId });
    assert.deepEqual(bound.result.map((r) => r.ruleId), [rule.ruleId]);

    const events = await outboxEvents(svc, 'CARD_CREATED', card.cardId);
    assert.equal(events.length, 1);
    const data = events[0].data;
    assert.equal(data.cardApplyId, accepted.cardApplyId);
    assert.equal(data.cardApplyRef, cardApplyRef);
    assert.equal(data.status, 'SUCCESS');
    assert.equal(data.cardStatus, 'ACTIVE');
    for (const field of ['cardId', 'panFirst6', 'panLast4', 'organizationId', 'subjectType', 'subjectId', 'cardProfileId', 'cardNetwork', 'currency']) {
      assert.deepEqual(data[field], (card as unknown as Record<string, unknown>)[field], field);
    }
    // Also visible through the partner's event log.
    const log = await w.client.events.listEvents({ eventType: 'CARD_CREATED', businessId: card.cardId });
    assert.equal(log.total, 1);
  });

  it('a company card names the custodian; without a cardholderName it has none', async () => {
    const done = await applyAndProcess(svc, w.client, {
      organizationId: w.org.organizationId, cardProfileId: 'sbx-visa-shared', subjectType: 'ORGANIZATION',
      subjectId: w.org.organizationId, custodianCustomerId: w.employee.customerId,
    });
    assert.equal(done.status, 'SUCCESS');
    const card = await w.client.cards.query(done.cardId!);
    assert.deepEqual([card.subjectType, card.subjectId, card.custodianCustomerId, card.cardholderName],
      ['ORGANIZATION', w.org.organizationId, w.employee.customerId, null]);
  });

  it('when screening hits (cardholderName containing REJECT), then REJECTED with SCREENING_REJECTED, CARD_REJECTED, and no card', async () => {
    const before = (await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cards'))[0].n;
    const accepted = await w.client.cards.apply({
      organizationId: w.org.organizationId, cardApplyRef: ref(), cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER',
      subjectId: w.employee.customerId, cardholderName: 'Please Reject Me',
    });
    const run = await runJobs(svc);
    assert.deepEqual(run, { succeeded: 0, rejected: 1 });
    const done = await w.client.cards.queryApply(accepted.cardApplyId);
    assert.deepEqual([done.status, done.rejectReason, done.cardId], ['REJECTED', 'SCREENING_REJECTED', null]);
    const events = await outboxEvents(svc, 'CARD_REJECTED', accepted.cardApplyId);
    assert.equal(events.length, 1);
    assert.deepEqual(events[0].data, done as unknown as Record<string, unknown>);
    assert.equal((await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cards'))[0].n, before);
    assert.equal((await outboxEvents(svc, 'CARD_CREATED', accepted.cardApplyId)).length, 0);
  });

  it('when the company country becomes sanctioned before the job runs, then SCREENING_REJECTED', async () => {
    const company = await newCompany(w.client, { countryCode: 'MN' });
    const employee = await approvedEmployee(w.client, company.organizationId);
    const accepted = await w.client.cards.apply({
      organizationId: company.organizationId, cardApplyRef: ref(), cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER', subjectId: employee.customerId,
    });
    await admin(svc).call('POST', '/internal/admin/v1/sanctioned-countries/update', { addCountries: ['MN'] });
    try {
      await runJobs(svc);
    } finally {
      await admin(svc).call('POST', '/internal/admin/v1/sanctioned-countries/update', { removeCountries: ['MN'] });
    }
    const done = await w.client.cards.queryApply(accepted.cardApplyId);
    assert.deepEqual([done.status, done.rejectReason], ['REJECTED', 'SCREENING_REJECTED']);
  });

  it('the job re-checks what may have changed since apply: KYC, capabilities, rules', async () => {
    const company = await newCompany(w.client);
    const kycEmployee = await approvedEmployee(w.client, company.organizationId);
    const frozenEmployee = await approvedEmployee(w.client, company.organizationId);
    const ruleEmployee = await approvedEmployee(w.client, company.organizationId);
    const rule = await usdRule(w.client, company.organizationId);
    const apply = (subjectId: string, ruleIds: string[] = []) => w.client.cards.apply({
      organizationId: company.organizationId, cardApplyRef: ref(), cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER', subjectId, ruleIds,
    });
    const a = await apply(kycEmployee.customerId);
    const b = await apply(frozenEmployee.customerId);
    const c = await apply(ruleEmployee.customerId, [rule.ruleId]);
    await w.client.customers.updateName(kycEmployee.customerId, { firstName: 'Augusta', lastName: 'King' });
    await w.client.customers.updateRestrictions(frozenEmployee.customerId, { addRestrictions: ['CARD_FROZEN'] });
    await w.client.velocity.changeRuleStatus({ organizationId: company.organizationId, ruleId: rule.ruleId, status: 'INACTIVE', ruleVersion: rule.ruleVersion });
    await runJobs(svc);
    const reasons = await Promise.all([a, b, c].map(async (x) => (await w.client.cards.queryApply(x.cardApplyId)).rejectReason));
    assert.deepEqual(reasons, ['KYC_NOT_APPROVED', 'CAPABILITY_FROZEN', 'VELOCITY_RULE_STATUS_INVALID']);
    for (const x of [a, b, c]) assert.equal((await outboxEvents(svc, 'CARD_REJECTED', x.cardApplyId)).length, 1);
  });

  it('several instances process concurrently: every application is decided exactly once', async () => {
    const second = await startService({ db: await (await import('./helpers/service.ts')).testDatabase().then((t) => t.openAnother()), clock: svc.clock });
    try {
      const applications = [];
      for (let i = 0; i < 6; i++) {
        applications.push(await w.client.cards.apply({
          organizationId: w.org.organizationId, cardApplyRef: ref(), cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER', subjectId: w.employee.customerId,
        }));
      }
      const runs = await Promise.all([
        processCardApplications(svc.ctx, { limit: 2 }), processCardApplications(second.ctx, { limit: 2 }),
        processCardApplications(svc.ctx, { limit: 2 }), processCardApplications(second.ctx, { limit: 2 }),
      ]);
      await runJobs(svc);
      assert.ok(runs.reduce((n, r) => n + r.leased, 0) <= 6, 'no application leased twice');
      for (const a of applications) {
        const done = await w.client.cards.queryApply(a.cardApplyId);
        assert.equal(done.status, 'SUCCESS');
        const [{ n }] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cards WHERE card_apply_id = $1', [a.cardApplyId]);
        assert.equal(n, 1);
        assert.equal((await outboxEvents(svc, 'CARD_CREATED', done.cardId!)).length, 1);
      }
    } finally {
      await second.close();
    }
  });

  it('APPLY_NOT_FOUND: unknown application id or card order reference', async () => {
    await expectCode(w.client.cards.queryApply('ca-unknown'), 'APPLY_NOT_FOUND');
    await expectCode(w.client.cards.cardOrder('no-such-ref'), 'APPLY_NOT_FOUND');
    await expectCode(w.client.cards.queryApply('c'.repeat(21)), 'DAPI_PARAM_INVALID', 'cardApplyId');
  });

  it('an issued card is readable right away', async () => {
    const card = await issueCard(svc, w, { profile: 'sbx-mc-shared' });
    assert.equal(card.cardNetwork, 'MASTERCARD');
    assert.equal(card.panFirst6, '531993');
  });
});
