import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { dec, digits, expectCode, uniq } from './helpers/velocity-fixtures.ts';
import { processCardApplications } from '../src/domains/cards/testing.ts';
import { bindRulesToCard, checkRulesForCard } from '../src/domains/velocity/index.ts';
import { ApiError } from '../src/platform/errors.ts';
import type { CardServiceClient, CreateRuleParams, Quota, VelocityRule } from '../sdk/index.ts';

/**
 * Bindings and query-quota end to end (2.10, 2.11, 4.7, D30-D32, D42, D45-D47). Usage comes from
 * approved sandbox authorizations and reversals: the path production counts it on (card_authorize,
 * velocity_usage_give_back; issue 33).
 */

/** A fixed service time in the middle of a day, so period keys are known: 2026-05-17 is in Q2. */
const NOW = Date.parse('2026-05-17T12:00:00.000Z');
const KEYS = { daily: '20260517', monthly: '202605', quarterly: '2026Q2', yearly: '2026' };

describe('velocity bindings and quotas', () => {
  let svc: TestService;
  let client: CardServiceClient;
  let other: CardServiceClient;
  let orgId: string;
  let secondOrgId: string;
  let otherPartnerOrgId: string;
  let employeeId: string;
  let employeeCard: { cardId: string; subjectType: 'CUSTOMER'; subjectId: string };
  let companyCard: { cardId: string; subjectType: 'ORGANIZATION'; subjectId: string };
  let usdOnlyCard: string;
  let usdOnlyProfile: string;

  async function approvedEmployee(organizationId: string): Promise<string> {
    const e = await client.customers.create({
      organizationId, customerRef: uniq('emp'), firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com',
      phoneCountryCode: 'HK', phoneNumber: '91234567',
    });
    await client.sandbox.kycDecision({ customerId: e.customerId, decision: 'APPROVED' });
    return e.customerId;
  }

  async function issueCard(input: { organizationId: string; subjectType: 'CUSTOMER' | 'ORGANIZATION'; subjectId: string; custodianCustomerId?: string; cardProfileId?: string }): Promise<string> {
    const application = await client.cards.apply({
      cardApplyRef: uniq('apply'), cardProfileId: input.cardProfileId ?? 'sbx-visa-shared', cardholderName: 'ADA LOVELACE', ...input,
    });
    await processCardApplications(svc.ctx);
    const done = await client.cards.queryApply(application.cardApplyId);
    assert.equal(done.status, 'SUCCESS', `card application ${done.status} ${done.rejectReason}`);
    return done.cardId!;
  }

  const newOrg = async (c: CardServiceClient, fundingCurrencies: ('USD' | 'HKD')[] = ['USD', 'HKD']) => (await c.organizations.create({
    organizationRef: uniq('org'), organizationName: 'Velocity Quota Ltd', companyRegistrationNumber: uniq('crn'), countryCode: 'HK', fundingCurrencies,
  })).organizationId;

  const createRule = (params: Omit<CreateRuleParams, 'organizationId' | 'ruleRef' | 'ruleName'> & { organizationId?: string; ruleName?: string }) =>
    client.velocity.createRule({ organizationId: orgId, ruleRef: uniq('ref'), ruleName: params.ruleName ?? 'rule', ...params });

  const bind = (rule: VelocityRule, subjectType: 'CARD' | 'CUSTOMER', subjectIds: string[]) =>
    client.velocity.bindRule({ organizationId: rule.organizationId, ruleId: rule.ruleId, subjectType, subjectIds });

  /** An approved authorization on a card (funds are ample): it adds its amount and one count (D32). */
  const spend = async (cardId: string, amount: string, options: { currency?: 'USD' | 'HKD'; channel?: 'POS' | 'ATM' } = {}) => {
    const t = await client.sandbox.authorize({
      cardId, amount: dec(amount), currency: options.currency ?? 'USD', merchantName: 'Quota Shop', mcc: '5814', merchantCountry: 'HK',
      channel: options.channel ?? 'POS',
    });
    assert.equal(t.approved, true, `authorization approved, not ${t.declineReason} ${t.declineDetail}`);
    return t;
  };

  let partnerIds: Map<CardServiceClient, string>;
  const partnerIdOf = (c: CardServiceClient) => partnerIds.get(c)!;

  before(async () => {
    svc = await startService();
    svc.clock.offsetMs = NOW - Date.now();
    const a = await svc.newPartner();
    const b = await svc.newPartner();
    client = a.client;
    other = b.client;
    partnerIds = new Map([[a.client, a.partner.partnerId], [b.client, b.partner.partnerId]]);
    orgId = await newOrg(client);
    secondOrgId = await newOrg(client);
    otherPartnerOrgId = await newOrg(other);
    employeeId = await approvedEmployee(orgId);
    employeeCard = { cardId: await issueCard({ organizationId: orgId, subjectType: 'CUSTOMER', subjectId: employeeId }), subjectType: 'CUSTOMER', subjectId: employeeId };
    companyCard = {
      cardId: await issueCard({ organizationId: orgId, subjectType: 'ORGANIZATION', subjectId: orgId, custodianCustomerId: employeeId }),
      subjectType: 'ORGANIZATION', subjectId: orgId,
    };
    usdOnlyProfile = (await svc.admin.call<{ cardProfileId: string }>('POST', '/internal/admin/v1/card-profiles', {
      body: { profileName: 'USD only virtual', cardNetwork: 'VISA', cardForm: 'VIRTUAL', balanceMode: 'SHARED', settlementCurrencies: ['USD'], bin: '462265' },
    })).cardProfileId;
    usdOnlyCard = await issueCard({ organizationId: orgId, subjectType: 'CUSTOMER', subjectId: employeeId, cardProfileId: usdOnlyProfile });
    for (const currency of ['USD', 'HKD'] as const) {
      await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: orgId, currency, amount: dec('100000.00') });
    }
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  describe('bind-rule, unbind-rule, list-bindings, list-subject-rules (D30)', () => {
    it('when a rule is bound to a card and an employee, then both queries show it and bindingCount is the string "2"', async () => {
      const rule = await createRule({ purchaseControl: { countLimits: { daily: 3 } } });
      svc.clock.advance(10);
      const first = await bind(rule, 'CARD', [employeeCard.cardId]);
      assert.deepEqual(first, { ruleId: rule.ruleId, subjectType: 'CARD', subjectIds: [employeeCard.cardId], changed: 1, bindingCount: '1' });
      svc.clock.advance(10);
      const second = await bind(rule, 'CUSTOMER', [employeeId]);
      assert.equal(second.bindingCount, '2');
      const again = await bind(rule, 'CARD', [employeeCard.cardId]);
      assert.equal(again.changed, 0, 'binding twice is idempotent');
      assert.equal(again.bindingCount, '2');

      const stored = await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId });
      assert.equal(stored.bindingCount, '2');
      assert.equal(stored.ruleVersion, 1, 'binding is not an edit of the rule');
      assert.equal(stored.modifyTime, rule.modifyTime);
      const listed = (await client.velocity.listRules({ organizationId: orgId, pageSize: 100 })).result.find((r) => r.ruleId === rule.ruleId)!;
      assert.equal(listed.bindingCount, '2');

      const bindings = await client.velocity.listBindings({ organizationId: orgId, ruleId: rule.ruleId });
      assert.equal(bindings.total, 2);
      assert.deepEqual(bindings.result.map((b) => [b.subjectType, b.subjectId]), [['CUSTOMER', employeeId], ['CARD', employeeCard.cardId]]);
      const onlyCards = await client.velocity.listBindings({ organizationId: orgId, ruleId: rule.ruleId, subjectType: 'CARD' });
      assert.deepEqual(onlyCards.result.map((b) => b.subjectId), [employeeCard.cardId]);

      const cardRules = await client.velocity.listSubjectRules({ organizationId: orgId, subjectType: 'CARD', subjectId: employeeCard.cardId });
      assert.ok(cardRules.result.some((r) => r.ruleId === rule.ruleId && r.bindingCount === '2' && r.status === 'ACTIVE'));
      const employeeRules = await client.velocity.listSubjectRules({ organizationId: orgId, subjectType: 'CUSTOMER', subjectId: employeeId });
      assert.ok(employeeRules.result.some((r) => r.ruleId === rule.ruleId));

      const removed = await client.velocity.unbindRule({ organizationId: orgId, ruleId: rule.ruleId, subjectType: 'CARD', subjectIds: [employeeCard.cardId] });
      assert.deepEqual([removed.changed, removed.bindingCount], [1, '1']);
      const removedAgain = await client.velocity.unbindRule({ organizationId: orgId, ruleId: rule.ruleId, subjectType: 'CARD', subjectIds: [employeeCard.cardId] });
      assert.deepEqual([removedAgain.changed, removedAgain.bindingCount], [0, '1']);
      const cardRulesAfter = await client.velocity.listSubjectRules({ organizationId: orgId, subjectType: 'CARD', subjectId: employeeCard.cardId });
      assert.ok(!cardRulesAfter.result.some((r) => r.ruleId === rule.ruleId));
      await client.velocity.unbindRule({ organizationId: orgId, ruleId: rule.ruleId, subjectType: 'CUSTOMER', subjectIds: [employeeId] });
    });

    it('when a rule goes INACTIVE, then its bindings are kept, it cannot gain new ones, and it can still be unbound', async () => {
      const rule = await createRule({ purchaseControl: { countLimits: { daily: 3 } } });
      await bind(rule, 'CARD', [companyCard.cardId]);
      const off = await client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: rule.ruleId, status: 'INACTIVE', ruleVersion: 1 });
      assert.equal(off.bindingCount, '1');
      await expectCode(bind(rule, 'CUSTOMER', [employeeId]), 'VELOCITY_RULE_STATUS_INVALID');
      assert.equal((await client.velocity.listBindings({ organizationId: orgId, ruleId: rule.ruleId })).total, 1);
      const on = await client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: rule.ruleId, status: 'ACTIVE', ruleVersion: 2 });
      assert.equal(on.bindingCount, '1', 'constraints apply again without rebinding');
      await client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: rule.ruleId, status: 'INACTIVE', ruleVersion: 3 });
      const removed = await client.velocity.unbindRule({ organizationId: orgId, ruleId: rule.ruleId, subjectType: 'CARD', subjectIds: [companyCard.cardId] });
      assert.equal(removed.bindingCount, '0');
    });

    it('when any subject is invalid, then SUBJECT_INVALID naming it and no subject of the request is bound', async () => {
      const rule = await createRule({ purchaseControl: { countLimits: { daily: 3 } } });
      const foreignEmployee = await approvedEmployee(secondOrgId);
      const cases: [('CARD' | 'CUSTOMER'), string[], string][] = [
        ['CARD', [employeeCard.cardId, 'card-unknown'], 'card-unknown'],
        ['CUSTOMER', [employeeId, foreignEmployee], foreignEmployee],
        ['CUSTOMER', [employeeCard.cardId], employeeCard.cardId],
        ['CARD', [employeeId], employeeId],
      ];
      for (const [subjectType, subjectIds, named] of cases) {
        await expectCode(bind(rule, subjectType, subjectIds), 'SUBJECT_INVALID', named);
      }
      assert.equal((await client.velocity.listBindings({ organizationId: orgId, ruleId: rule.ruleId })).total, 0);
      assert.equal((await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId })).bindingCount, '0');
    });

    it('when the subject type is not CARD or CUSTOMER, then SUBJECT_TYPE_NOT_ALLOWED; malformed lists are DAPI_PARAM_INVALID', async () => {
      const rule = await createRule({ purchaseControl: { countLimits: { daily: 3 } } });
      const call = (body: Record<string, unknown>) => client.http.call('POST', '/open-api-corp/velocity/v1/bind-rule', { body: { organizationId: orgId, ruleId: rule.ruleId, ...body } });
      await expectCode(call({ subjectType: 'ORGANIZATION', subjectIds: [orgId] }), 'SUBJECT_TYPE_NOT_ALLOWED');
      await expectCode(call({ subjectType: 'WALLET', subjectIds: [employeeId] }), 'SUBJECT_TYPE_NOT_ALLOWED');
      await expectCode(call({ subjectType: '', subjectIds: [employeeId] }), 'DAPI_PARAM_INVALID', 'subjectType');
      await expectCode(call({ subjectType: 'CUSTOMER', subjectIds: [] }), 'DAPI_PARAM_INVALID', 'subjectIds');
      await expectCode(call({ subjectType: 'CUSTOMER', subjectIds: [employeeId, employeeId] }), 'DAPI_PARAM_INVALID', 'subjectIds[1]');
      await expectCode(call({ subjectType: 'CUSTOMER', subjectIds: Array.from({ length: 101 }, (_, i) => `e${i}`) }), 'DAPI_PARAM_INVALID', 'subjectIds');
      await expectCode(call({ subjectType: 'CUSTOMER', subjectIds: ['x'.repeat(37)] }), 'DAPI_PARAM_INVALID', 'subjectIds');
      // 100 ids pass the bounds (and fail on the first unknown subject).
      await expectCode(call({ subjectType: 'CUSTOMER', subjectIds: Array.from({ length: 100 }, (_, i) => `e${i}`) }), 'SUBJECT_INVALID');
      assert.equal((await client.velocity.listBindings({ organizationId: orgId, ruleId: rule.ruleId })).total, 0);
    });

    it('when the rule is unknown, in another organization or another partner\'s, then VELOCITY_RULE_NOT_FOUND everywhere', async () => {
      const rule = await createRule({ purchaseControl: { countLimits: { daily: 3 } } });
      await bind(rule, 'CUSTOMER', [employeeId]);
      const key = { ruleId: rule.ruleId, subjectType: 'CUSTOMER' as const, subjectIds: [employeeId] };
      await expectCode(client.velocity.bindRule({ organizationId: orgId, ...key, ruleId: 'vr-unknown' }), 'VELOCITY_RULE_NOT_FOUND');
      await expectCode(client.velocity.bindRule({ organizationId: secondOrgId, ...key }), 'VELOCITY_RULE_NOT_FOUND');
      await expectCode(client.velocity.unbindRule({ organizationId: secondOrgId, ...key }), 'VELOCITY_RULE_NOT_FOUND');
      await expectCode(other.velocity.unbindRule({ organizationId: orgId, ...key }), 'VELOCITY_RULE_NOT_FOUND');
      await expectCode(other.velocity.listBindings({ organizationId: orgId, ruleId: rule.ruleId }), 'VELOCITY_RULE_NOT_FOUND');
      await expectCode(client.velocity.listBindings({ organizationId: orgId, ruleId: 'vr-unknown' }), 'VELOCITY_RULE_NOT_FOUND');
      // Another partner cannot see or bind this partner's subjects either.
      const theirRule = await other.velocity.createRule({ organizationId: otherPartnerOrgId, ruleRef: uniq('ref'), ruleName: 'theirs', purchaseControl: { countLimits: { daily: 1 } } });
      await expectCode(other.velocity.bindRule({ organizationId: otherPartnerOrgId, ruleId: theirRule.ruleId, subjectType: 'CUSTOMER', subjectIds: [employeeId] }), 'SUBJECT_INVALID');
      await expectCode(other.velocity.listSubjectRules({ organizationId: orgId, subjectType: 'CUSTOMER', subjectId: employeeId }), 'SUBJECT_INVALID');
      assert.equal((await client.velocity.listBindings({ organizationId: orgId, ruleId: rule.ruleId })).total, 1);
    });

    it('when an amount-limit rule shares no currency with the card, then VELOCITY_RULE_CURRENCY_MISMATCH; a shared one binds', async () => {
      const hkdOnly = await createRule({ purchaseControl: { amountLimits: [{ currency: 'HKD', daily: dec('100') }] } });
      await expectCode(bind(hkdOnly, 'CARD', [usdOnlyCard]), 'VELOCITY_RULE_CURRENCY_MISMATCH');
      await expectCode(bind(hkdOnly, 'CARD', [employeeCard.cardId, usdOnlyCard]), 'VELOCITY_RULE_CURRENCY_MISMATCH');
      assert.equal((await client.velocity.listBindings({ organizationId: orgId, ruleId: hkdOnly.ruleId })).total, 0);
      const cashHkd = await createRule({ cashAdvanceControl: { amountLimits: [{ currency: 'HKD', daily: dec('100') }] } });
      await expectCode(bind(cashHkd, 'CARD', [usdOnlyCard]), 'VELOCITY_RULE_CURRENCY_MISMATCH');
      // No amount limits: nothing to mismatch. Employees have no settlement currency.
      const countOnly = await createRule({ purchaseControl: { countLimits: { daily: 1 } } });
      assert.equal((await bind(countOnly, 'CARD', [usdOnlyCard])).changed, 1);
      assert.equal((await bind(hkdOnly, 'CUSTOMER', [employeeId])).changed, 1);
      await client.velocity.unbindRule({ organizationId: orgId, ruleId: countOnly.ruleId, subjectType: 'CARD', subjectIds: [usdOnlyCard] });
      await client.velocity.unbindRule({ organizationId: orgId, ruleId: hkdOnly.ruleId, subjectType: 'CUSTOMER', subjectIds: [employeeId] });
    });

    it('paging of both binding queries: pageSize 100 passes, 101 and page 0 fail', async () => {
      const rule = await createRule({ purchaseControl: { countLimits: { daily: 3 } } });
      await expectCode(client.velocity.listBindings({ organizationId: orgId, ruleId: rule.ruleId, pageSize: 101 }), 'DAPI_PARAM_INVALID', 'pageSize');
      await expectCode(client.velocity.listBindings({ organizationId: orgId, ruleId: rule.ruleId, page: 0 }), 'DAPI_PARAM_INVALID', 'page');
      assert.equal((await client.velocity.listBindings({ organizationId: orgId, ruleId: rule.ruleId, pageSize: 100 })).pageSize, 100);
      await expectCode(client.velocity.listSubjectRules({ organizationId: orgId, subjectType: 'CARD', subjectId: employeeCard.cardId, pageSize: 101 }), 'DAPI_PARAM_INVALID', 'pageSize');
      await expectCode(client.http.call('GET', '/open-api-corp/velocity/v1/list-subject-rules', { query: { organizationId: orgId, subjectType: 'ORGANIZATION', subjectId: orgId } }), 'SUBJECT_TYPE_NOT_ALLOWED');
    });
  });

  describe('apply-time rule constraints exported to cards (D44)', () => {
    const check = (ruleIds: string[] | undefined, settlementCurrencies: string[] = ['USD'], organizationId = orgId) =>
      svc.db.tx((q) => checkRulesForCard(q, { partnerId: partnerIdOf(client), organizationId, ruleIds, settlementCurrencies, lock: true }));
    const failsWith = async (promise: Promise<unknown>, code: string, messageIncludes?: string) => {
      await assert.rejects(promise, (err: unknown) => {
        assert.ok(err instanceof ApiError, String(err));
        assert.equal(err.code, code, err.message);
        if (messageIncludes) assert.ok(err.message.includes(messageIncludes), err.message);
        return true;
      });
    };

    it('checks in D44 order across the whole array: duplicates, existence, status, currency', async () => {
      const usdRule = await createRule({ purchaseControl: { amountLimits: [{ currency: 'USD', daily: dec('10') }] } });
      const hkdRule = await createRule({ purchaseControl: { amountLimits: [{ currency: 'HKD', daily: dec('10') }] } });
      const inactive = await createRule({ mccControl: { filterType: 'BLACKLIST', values: ['7995'] } });
      await client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: inactive.ruleId, status: 'INACTIVE', ruleVersion: 1 });
      const foreign = await client.velocity.createRule({ organizationId: secondOrgId, ruleRef: uniq('ref'), ruleName: 'elsewhere', purchaseControl: { countLimits: { daily: 1 } } });

      // A duplicate is rejected first, even when other entries would fail later checks.
      await failsWith(check([hkdRule.ruleId, 'vr-unknown', usdRule.ruleId, usdRule.ruleId]), 'DAPI_PARAM_INVALID', 'ruleIds');
      // Unknown or another organization's rule, before INACTIVE and currency.
      await failsWith(check([hkdRule.ruleId, inactive.ruleId, 'vr-unknown']), 'VELOCITY_RULE_NOT_FOUND', 'vr-unknown');
      await failsWith(check([usdRule.ruleId, foreign.ruleId]), 'VELOCITY_RULE_NOT_FOUND', foreign.ruleId);
      // INACTIVE before the currency check.
      await failsWith(check([hkdRule.ruleId, inactive.ruleId]), 'VELOCITY_RULE_STATUS_INVALID', inactive.ruleId);
      await failsWith(check([usdRule.ruleId, hkdRule.ruleId], ['USD']), 'VELOCITY_RULE_CURRENCY_MISMATCH', hkdRule.ruleId);
      // Passing sets: empty, absent, shared currency, rules without amount limits.
      assert.deepEqual(await check([]), []);
      assert.deepEqual(await check(undefined), []);
      const ok = await check([usdRule.ruleId, hkdRule.ruleId], ['USD', 'HKD']);
      assert.deepEqual(ok.map((r) => r.ruleId), [usdRule.ruleId, hkdRule.ruleId]);
      // Another partner sees none of them.
      await failsWith(svc.db.tx((q) => checkRulesForCard(q, { partnerId: partnerIdOf(other), organizationId: orgId, ruleIds: [usdRule.ruleId], settlementCurrencies: ['USD'] })), 'VELOCITY_RULE_NOT_FOUND');
    });

    it('when a card is applied for with ruleIds, then the rules are bound to the new card and shape its quota', async () => {
      const rule = await createRule({ ruleName: 'at apply', purchaseControl: { amountLimits: [{ currency: 'USD', daily: dec('42.42') }] } });
      const inactive = await createRule({ purchaseControl: { countLimits: { daily: 1 } } });
      await client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: inactive.ruleId, status: 'INACTIVE', ruleVersion: 1 });
      const employee = await approvedEmployee(orgId);
      const apply = (ruleIds: string[]) => client.cards.apply({
        organizationId: orgId, cardApplyRef: uniq('apply'), cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER', subjectId: employee, ruleIds,
      });
      await expectCode(apply([rule.ruleId, rule.ruleId]), 'DAPI_PARAM_INVALID', 'ruleIds');
      await expectCode(apply([rule.ruleId, inactive.ruleId]), 'VELOCITY_RULE_STATUS_INVALID');
      const hkd = await createRule({ purchaseControl: { amountLimits: [{ currency: 'HKD', daily: dec('1') }] } });
      await expectCode(client.cards.apply({
        organizationId: orgId, cardApplyRef: uniq('apply'), cardProfileId: usdOnlyProfile, subjectType: 'CUSTOMER', subjectId: employee, ruleIds: [hkd.ruleId],
      }), 'VELOCITY_RULE_CURRENCY_MISMATCH');
      const application = await apply([rule.ruleId]);
      await processCardApplications(svc.ctx);
      const { cardId } = await client.cards.queryApply(application.cardApplyId);
      const bound = await client.velocity.listSubjectRules({ organizationId: orgId, subjectType: 'CARD', subjectId: cardId! });
      assert.deepEqual(bound.result.map((r) => r.ruleId), [rule.ruleId]);
      const q = await client.velocity.queryQuota({ organizationId: orgId, subjectType: 'CARD', subjectId: cardId!, currency: 'USD' });
      assert.deepEqual([digits(q.purchase.amountLimits[0].daily.limitAmount), q.purchase.amountLimits[0].daily.sourceRuleId], ['42.42', rule.ruleId]);
    });

    it('bindRulesToCard binds the checked rules to the new card, idempotently', async () => {
      const r1 = await createRule({ purchaseControl: { countLimits: { daily: 1 } } });
      const r2 = await createRule({ purchaseControl: { countLimits: { monthly: 1 } } });
      const input = { partnerId: partnerIdOf(client), organizationId: orgId, ruleIds: [r1.ruleId, r2.ruleId], cardId: companyCard.cardId, now: new Date(svc.clock.now()) };
      await svc.db.tx((q) => bindRulesToCard(q, input));
      await svc.db.tx((q) => bindRulesToCard(q, input));
      const rules = await client.velocity.listSubjectRules({ organizationId: orgId, subjectType: 'CARD', subjectId: companyCard.cardId });
      assert.ok([r1.ruleId, r2.ruleId].every((id) => rules.result.some((r) => r.ruleId === id)));
      assert.equal((await client.velocity.queryRule({ organizationId: orgId, ruleId: r1.ruleId })).bindingCount, '1');
      for (const r of [r1, r2]) {
        await client.velocity.unbindRule({ organizationId: orgId, ruleId: r.ruleId, subjectType: 'CARD', subjectIds: [companyCard.cardId] });
      }
    });
  });

  describe('query-quota (2.11, 4.7, D46)', () => {
    let quotaEmployee: string;
    let quotaCard: string;
    let cardRule: VelocityRule;
    let employeeRule: VelocityRule;
    const quotaOf = (subjectType: 'CARD' | 'CUSTOMER', subjectId: string, currency?: 'USD' | 'HKD') =>
      client.velocity.queryQuota({ organizationId: orgId, subjectType, subjectId, currency });
    const usd = (q: Quota, group: 'purchase' | 'cashAdvance' = 'purchase') => q[group].amountLimits.find((l) => l.currency === 'USD')!;

    before(async () => {
      quotaEmployee = await approvedEmployee(orgId);
      quotaCard = await issueCard({ organizationId: orgId, subjectType: 'CUSTOMER', subjectId: quotaEmployee });
    });

    it('when nothing is bound, then every period node is an uncapped object with usage, for the card settlement currencies', async () => {
      const q = await quotaOf('CARD', quotaCard);
      assert.equal(q.subjectType, 'CARD');
      assert.equal(q.subjectId, quotaCard);
      assert.match(q.asOfTime, /^2026-05-17T12:\d{2}:\d{2}\.\d{3}Z$/);
      assert.deepEqual(q.appliedRules, []);
      assert.deepEqual(q.purchase.amountLimits.map((l) => [l.currency, l.effective, l.ineffectiveReason]), [['USD', true, null], ['HKD', true, null]]);
      for (const group of [q.purchase, q.cashAdvance]) {
        for (const period of ['daily', 'monthly', 'quarterly', 'yearly'] as const) {
          assert.deepEqual(group.countLimits[period], { limitCount: null, usedCount: 0, remainingCount: null, utilizationRate: null, periodKey: KEYS[period], sourceRuleId: null });
          for (const l of group.amountLimits) {
            const node = l[period];
            assert.deepEqual([node.limitAmount, digits(node.usedAmount), node.remainingAmount, node.utilizationRate, node.periodKey, node.sourceRuleId],
              [null, '0', null, null, KEYS[period], null]);
          }
        }
        for (const l of group.amountLimits) assert.deepEqual(l.perTransaction, { limitAmount: null, sourceRuleId: null });
      }
      assert.deepEqual([q.cashAdvance.allowed, q.cashAdvance.sourceRuleId], [true, null]);
    });

    it('when a card rule and an employee rule both apply, then each dimension takes the strictest cap with its sourceRuleId', async () => {
      cardRule = await createRule({
        ruleName: 'card rule',
        purchaseControl: { amountLimits: [{ currency: 'USD', perTransaction: dec('300'), daily: dec('500'), monthly: dec('2000') }], countLimits: { daily: 5 } },
      });
      svc.clock.advance(5);
      employeeRule = await createRule({
        ruleName: 'employee rule',
        purchaseControl: {
          amountLimits: [{ currency: 'USD', perTransaction: dec('400'), daily: dec('300'), monthly: dec('5000') }, { currency: 'HKD', daily: dec('1000.00') }],
          countLimits: { daily: 10, monthly: 20 },
        },
      });
      await bind(cardRule, 'CARD', [quotaCard]);
      await bind(employeeRule, 'CUSTOMER', [quotaEmployee]);
      await spend(quotaCard, '120.50');
      await spend(quotaCard, '120.50');

      const raw = await client.http.raw('GET', '/open-api-corp/velocity/v1/query-quota', { query: { organizationId: orgId, subjectType: 'CARD', subjectId: quotaCard, currency: 'USD' } });
      assert.match(raw.text, /"utilizationRate":80\.33[,}]/, 'utilizationRate is a JSON number');
      const q = await quotaOf('CARD', quotaCard, 'USD');
      assert.deepEqual(q.appliedRules, [
        { ruleId: cardRule.ruleId, ruleName: 'card rule', status: 'ACTIVE' },
        { ruleId: employeeRule.ruleId, ruleName: 'employee rule', status: 'ACTIVE' },
      ]);
      assert.deepEqual(q.purchase.amountLimits.map((l) => l.currency), ['USD']);
      const u = usd(q);
      assert.deepEqual([digits(u.perTransaction.limitAmount), u.perTransaction.sourceRuleId], ['300', cardRule.ruleId]);
      assert.deepEqual([digits(u.daily.limitAmount), digits(u.daily.usedAmount), digits(u.daily.remainingAmount), digits(u.daily.utilizationRate), u.daily.sourceRuleId],
        ['300', '241', '59', '80.33', employeeRule.ruleId]);
      assert.deepEqual([digits(u.monthly.limitAmount), digits(u.monthly.remainingAmount), digits(u.monthly.utilizationRate), u.monthly.sourceRuleId],
        ['2000', '1759', '12.05', cardRule.ruleId]);
      assert.deepEqual([u.quarterly.limitAmount, digits(u.quarterly.usedAmount), u.quarterly.remainingAmount, u.quarterly.utilizationRate, u.quarterly.sourceRuleId],
        [null, '241', null, null, null]);
      const c = q.purchase.countLimits;
      assert.deepEqual(c.daily, { limitCount: 5, usedCount: 2, remainingCount: 3, utilizationRate: 40, periodKey: KEYS.daily, sourceRuleId: cardRule.ruleId });
      assert.deepEqual(c.monthly, { limitCount: 20, usedCount: 2, remainingCount: 18, utilizationRate: 10, periodKey: KEYS.monthly, sourceRuleId: employeeRule.ruleId });
      assert.equal(c.yearly.limitCount, null);
      assert.equal(c.yearly.usedCount, 2);

      // The employee sees only the rule bound to the employee, measured on the employee's usage.
      const e = await quotaOf('CUSTOMER', quotaEmployee);
      assert.deepEqual(e.appliedRules.map((r) => r.ruleId), [employeeRule.ruleId]);
      assert.deepEqual(e.purchase.amountLimits.map((l) => [l.currency, l.effective]), [['USD', true], ['HKD', true]]);
      assert.deepEqual([digits(usd(e).daily.limitAmount), digits(usd(e).daily.usedAmount), usd(e).daily.sourceRuleId], ['300', '241', employeeRule.ruleId]);
      assert.equal(digits(usd(e).monthly.limitAmount), '5000');
      assert.equal(e.purchase.countLimits.daily.limitCount, 10);
      const hkd = e.purchase.amountLimits.find((l) => l.currency === 'HKD')!;
      assert.deepEqual([digits(hkd.daily.limitAmount), digits(hkd.daily.usedAmount)], ['1000', '0']);
    });

    it('when usage exceeds a cap, then remaining is negative and utilization above 100', async () => {
      // Spent while the employee rule (daily 300) was INACTIVE, so it was not refused.
      const off = await client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: employeeRule.ruleId, status: 'INACTIVE', ruleVersion: employeeRule.ruleVersion });
      await spend(quotaCard, '100');
      const on = await client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: employeeRule.ruleId, status: 'ACTIVE', ruleVersion: off.ruleVersion });
      employeeRule = { ...employeeRule, ruleVersion: on.ruleVersion };
      const u = usd(await quotaOf('CARD', quotaCard, 'USD'));
      assert.deepEqual([digits(u.daily.usedAmount), digits(u.daily.remainingAmount), digits(u.daily.utilizationRate)], ['341', '-41', '113.67']);
    });

    it('when a rule is INACTIVE, then it is not applied and not listed; ACTIVE again applies without rebinding', async () => {
      const off = await client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: employeeRule.ruleId, status: 'INACTIVE', ruleVersion: employeeRule.ruleVersion });
      let q = await quotaOf('CARD', quotaCard);
      assert.deepEqual(q.appliedRules.map((r) => r.ruleId), [cardRule.ruleId]);
      assert.deepEqual([digits(usd(q).daily.limitAmount), usd(q).daily.sourceRuleId], ['500', cardRule.ruleId]);
      assert.equal(q.purchase.countLimits.monthly.limitCount, null);
      assert.deepEqual(q.purchase.amountLimits.map((l) => l.currency), ['USD', 'HKD']);
      await client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: employeeRule.ruleId, status: 'ACTIVE', ruleVersion: off.ruleVersion });
      q = await quotaOf('CARD', quotaCard);
      assert.equal(q.appliedRules.length, 2);
      assert.equal(usd(q).daily.sourceRuleId, employeeRule.ruleId);
    });

    it('when a rule is updated, then the quota changes at once (4.7 rule 3)', async () => {
      const current = await client.velocity.queryRule({ organizationId: orgId, ruleId: cardRule.ruleId });
      await client.velocity.updateRule({
        organizationId: orgId, ruleId: cardRule.ruleId, ruleVersion: current.ruleVersion, ruleName: 'card rule v2',
        purchaseControl: { amountLimits: [{ currency: 'USD', daily: dec('250.00') }] },
      });
      const q = await quotaOf('CARD', quotaCard, 'USD');
      assert.deepEqual([digits(usd(q).daily.limitAmount), usd(q).daily.sourceRuleId], ['250', cardRule.ruleId]);
      assert.equal(q.appliedRules[0].ruleName, 'card rule v2');
      assert.equal(q.purchase.countLimits.daily.limitCount, 10, 'the card rule no longer caps counts');
    });

    it('when a company card spends, then only the card counts, not the custodian (D45)', async () => {
      const before = await quotaOf('CUSTOMER', employeeId, 'USD');
      await spend(companyCard.cardId, '75.25');
      const company = await quotaOf('CARD', companyCard.cardId, 'USD');
      assert.equal(digits(usd(company).daily.usedAmount), '75.25');
      assert.equal(company.purchase.countLimits.daily.usedCount, 1);
      const after = await quotaOf('CUSTOMER', employeeId, 'USD');
      assert.deepEqual(after.purchase, before.purchase);
    });

    it('when a currency is not a settlement currency of the card, then effective=false with NOT_CARD_SETTLEMENT_CURRENCY', async () => {
      const both = await createRule({ purchaseControl: { amountLimits: [{ currency: 'USD', daily: dec('10') }, { currency: 'HKD', daily: dec('80') }] } });
      await bind(both, 'CARD', [usdOnlyCard]);
      const q = await quotaOf('CARD', usdOnlyCard);
      assert.deepEqual(q.purchase.amountLimits.map((l) => [l.currency, l.effective, l.ineffectiveReason]),
        [['USD', true, null], ['HKD', false, 'NOT_CARD_SETTLEMENT_CURRENCY']]);
      const hkd = q.purchase.amountLimits[1];
      assert.equal(digits(hkd.daily.limitAmount), '80');
      assert.equal(hkd.daily.periodKey, KEYS.daily);
      const onlyHkd = await quotaOf('CARD', usdOnlyCard, 'HKD');
      assert.deepEqual(onlyHkd.purchase.amountLimits.map((l) => [l.currency, l.effective]), [['HKD', false]]);
      assert.deepEqual(onlyHkd.cashAdvance.amountLimits.map((l) => [l.currency, l.effective]), [['HKD', false]]);
    });

    it('when rules set cash advance, then allowed=false names the rule that turned it off, caps merge, and cash usage counts apart', async () => {
      const cashCaps = await createRule({ cashAdvanceControl: { allowed: true, amountLimits: [{ currency: 'USD', daily: dec('200'), perTransaction: dec('50') }], countLimits: { daily: 2 } } });
      svc.clock.advance(5);
      const cashOff = await createRule({ cashAdvanceControl: { allowed: false } });
      await bind(cashCaps, 'CARD', [quotaCard]);
      let q = await quotaOf('CARD', quotaCard, 'USD');
      assert.deepEqual([q.cashAdvance.allowed, q.cashAdvance.sourceRuleId], [true, null]);
      const purchaseBefore = usd(q).daily.usedAmount;
      await spend(quotaCard, '40', { channel: 'ATM' });
      await bind(cashOff, 'CUSTOMER', [quotaEmployee]);
      q = await quotaOf('CARD', quotaCard, 'USD');
      assert.deepEqual([q.cashAdvance.allowed, q.cashAdvance.sourceRuleId], [false, cashOff.ruleId]);
      const cash = usd(q, 'cashAdvance');
      assert.deepEqual([digits(cash.daily.limitAmount), digits(cash.daily.usedAmount), digits(cash.daily.remainingAmount), digits(cash.daily.utilizationRate), cash.daily.sourceRuleId],
        ['200', '40', '160', '20', cashCaps.ruleId]);
      assert.deepEqual([digits(cash.perTransaction.limitAmount), cash.perTransaction.sourceRuleId], ['50', cashCaps.ruleId]);
      assert.deepEqual([q.cashAdvance.countLimits.daily.limitCount, q.cashAdvance.countLimits.daily.usedCount], [2, 1]);
      assert.deepEqual(usd(q).daily.usedAmount, purchaseBefore, 'cash advance does not count as purchase');
      assert.ok(q.appliedRules.some((r) => r.ruleId === cashOff.ruleId));
    });

    it('when a reversal is released, then it leaves the periods of the original authorization', async () => {
      const employee = await approvedEmployee(orgId);
      const cardId = await issueCard({ organizationId: orgId, subjectType: 'CUSTOMER', subjectId: employee });
      const yesterdays = await spend(cardId, '100', { currency: 'HKD' });
      svc.clock.advance(24 * 3600_000);
      await spend(cardId, '50', { currency: 'HKD' });
      let q = await quotaOf('CARD', cardId, 'HKD');
      assert.deepEqual([digits(q.purchase.amountLimits[0].daily.usedAmount), digits(q.purchase.amountLimits[0].monthly.usedAmount)], ['50', '150']);
      await client.sandbox.reverse({ transId: yesterdays.transId, amount: dec('100') });
      q = await quotaOf('CARD', cardId, 'HKD');
      assert.deepEqual([digits(q.purchase.amountLimits[0].daily.usedAmount), digits(q.purchase.amountLimits[0].monthly.usedAmount)], ['50', '50']);
      assert.deepEqual([q.purchase.countLimits.daily.usedCount, q.purchase.countLimits.monthly.usedCount], [1, 1]);
      const e = await quotaOf('CUSTOMER', employee, 'HKD');
      assert.equal(digits(e.purchase.amountLimits[0].monthly.usedAmount), '50', 'the employee got it back too');
    });

    it('when many authorizations record usage at once, then no increment is lost', async () => {
      const employee = await approvedEmployee(orgId);
      const cardId = await issueCard({ organizationId: orgId, subjectType: 'CUSTOMER', subjectId: employee });
      await Promise.all(Array.from({ length: 40 }, (_, i) => spend(cardId, `${i + 1}.01`)));
      const q = await quotaOf('CARD', cardId, 'USD');
      // sum(1..40) + 40 * 0.01 = 820.40
      assert.equal(digits(q.purchase.amountLimits[0].yearly.usedAmount), '820.4');
      assert.equal(q.purchase.countLimits.yearly.usedCount, 40);
      const e = await quotaOf('CUSTOMER', employee, 'USD');
      assert.equal(digits(e.purchase.amountLimits[0].daily.usedAmount), '820.4');
      assert.equal(e.purchase.countLimits.daily.usedCount, 40);
    });

    it('currency: USD/HKD pass; another ISO code is UNSUPPORTED_CURRENCY; empty or malformed is DAPI_PARAM_INVALID', async () => {
      const call = (currency: string) => client.http.call('GET', '/open-api-corp/velocity/v1/query-quota', { query: { organizationId: orgId, subjectType: 'CARD', subjectId: quotaCard, currency } });
      for (const currency of ['EUR', 'JPY', 'CNY']) await expectCode(call(currency), 'UNSUPPORTED_CURRENCY');
      for (const currency of ['', 'usd', 'US', 'USDT', '12$']) await expectCode(call(currency), 'DAPI_PARAM_INVALID', 'currency');
      assert.equal((await quotaOf('CARD', quotaCard, 'HKD')).purchase.amountLimits[0].currency, 'HKD');
    });

    it('subjectType: anything but CARD / CUSTOMER is SUBJECT_TYPE_NOT_ALLOWED', async () => {
      const call = (subjectType: string) => client.http.call('GET', '/open-api-corp/velocity/v1/query-quota', { query: { organizationId: orgId, subjectType, subjectId: orgId } });
      for (const subjectType of ['ORGANIZATION', 'card', 'ACCOUNT']) await expectCode(call(subjectType), 'SUBJECT_TYPE_NOT_ALLOWED');
      await expectCode(call(''), 'DAPI_PARAM_INVALID', 'subjectType');
    });

    it('bounds: organizationId and subjectId of 36 characters are looked up, 37 is DAPI_PARAM_INVALID', async () => {
      await expectCode(client.velocity.queryQuota({ organizationId: orgId, subjectType: 'CARD', subjectId: 'c'.repeat(36) }), 'SUBJECT_INVALID');
      await expectCode(client.velocity.queryQuota({ organizationId: orgId, subjectType: 'CARD', subjectId: 'c'.repeat(37) }), 'DAPI_PARAM_INVALID', 'subjectId');
      await expectCode(client.velocity.queryQuota({ organizationId: 'o'.repeat(36), subjectType: 'CARD', subjectId: quotaCard }), 'SUBJECT_INVALID');
      await expectCode(client.velocity.queryQuota({ organizationId: 'o'.repeat(37), subjectType: 'CARD', subjectId: quotaCard }), 'DAPI_PARAM_INVALID', 'organizationId');
    });

    it('SUBJECT_INVALID: missing, another partner\'s, in another organization, TERMINATED employee, CANCELLED card; blocked and restricted can be read', async () => {
      await expectCode(quotaOf('CARD', 'card-missing'), 'SUBJECT_INVALID');
      await expectCode(quotaOf('CUSTOMER', 'cust-missing'), 'SUBJECT_INVALID');
      await expectCode(client.velocity.queryQuota({ organizationId: secondOrgId, subjectType: 'CARD', subjectId: quotaCard }), 'SUBJECT_INVALID');
      await expectCode(client.velocity.queryQuota({ organizationId: secondOrgId, subjectType: 'CUSTOMER', subjectId: quotaEmployee }), 'SUBJECT_INVALID');
      await expectCode(other.velocity.queryQuota({ organizationId: orgId, subjectType: 'CARD', subjectId: quotaCard }), 'SUBJECT_INVALID');
      await expectCode(other.velocity.queryQuota({ organizationId: otherPartnerOrgId, subjectType: 'CARD', subjectId: quotaCard }), 'SUBJECT_INVALID');

      const employee = await approvedEmployee(orgId);
      const cardId = await issueCard({ organizationId: orgId, subjectType: 'CUSTOMER', subjectId: employee });
      await client.cards.block(cardId);
      assert.equal((await quotaOf('CARD', cardId)).subjectId, cardId, 'a blocked card can be queried');
      await client.customers.updateRestrictions(employee, { addRestrictions: ['PAYMENT_FROZEN'] });
      assert.equal((await quotaOf('CUSTOMER', employee)).subjectId, employee, 'a restricted employee can be queried');
      const cancelled = await issueCard({ organizationId: orgId, subjectType: 'CUSTOMER', subjectId: employee });
      await client.cards.cancel(cancelled);
      await expectCode(quotaOf('CARD', cancelled), 'SUBJECT_INVALID');
      await client.customers.updateRestrictions(employee, { removeRestrictions: ['PAYMENT_FROZEN'] });
      await client.customers.terminate(employee);
      await expectCode(quotaOf('CUSTOMER', employee), 'SUBJECT_INVALID');
      // Ended subjects cannot gain rules either, and their existing rules can still be listed.
      const rule = await createRule({ purchaseControl: { countLimits: { daily: 1 } } });
      await expectCode(bind(rule, 'CUSTOMER', [employee]), 'SUBJECT_INVALID');
      await expectCode(bind(rule, 'CARD', [cancelled]), 'SUBJECT_INVALID');
      assert.equal((await client.velocity.listSubjectRules({ organizationId: orgId, subjectType: 'CUSTOMER', subjectId: employee })).total, 0);
    });

    it('when the employee has no card, then its quota lists the company funding currencies (D46)', async () => {
      const usdOrg = await newOrg(client, ['USD']);
      const employee = await approvedEmployee(usdOrg);
      const q = await client.velocity.queryQuota({ organizationId: usdOrg, subjectType: 'CUSTOMER', subjectId: employee });
      assert.deepEqual(q.purchase.amountLimits.map((l) => [l.currency, l.effective]), [['USD', true]]);
      const hkdRule = await client.velocity.createRule({ organizationId: usdOrg, ruleRef: uniq('ref'), ruleName: 'hkd', purchaseControl: { amountLimits: [{ currency: 'HKD', monthly: dec('9.99') }] } });
      await client.velocity.bindRule({ organizationId: usdOrg, ruleId: hkdRule.ruleId, subjectType: 'CUSTOMER', subjectIds: [employee] });
      const q2 = await client.velocity.queryQuota({ organizationId: usdOrg, subjectType: 'CUSTOMER', subjectId: employee });
      assert.deepEqual(q2.purchase.amountLimits.map((l) => l.currency), ['USD', 'HKD']);
      assert.equal(digits(q2.purchase.amountLimits[1].monthly.limitAmount), '9.99');
    });
  });
});
