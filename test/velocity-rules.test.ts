import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, testDatabase, type TestService } from './helpers/service.ts';
import { dec, digits, expectCode, newOrganization, uniq } from './helpers/velocity-fixtures.ts';
import type { CardServiceClient, CreatedPartner, CreateRuleParams, VelocityRule } from '../sdk/index.ts';
import { stringifyJsonLossless } from '../sdk/index.ts';

/** Velocity rules end to end (2.10, 4.7, D9, D30, D31, D47): create, read, list, update, status, versions. */

describe('velocity rules (2.10, 4.7, D30, D31)', () => {
  let svc: TestService;
  /** A second instance of the service on the same database (its own connection pool on PostgreSQL). */
  let svc2: TestService;
  let partner: CreatedPartner;
  let client: CardServiceClient;
  let other: CardServiceClient;
  let orgId: string;
  let otherOrgId: string;

  const purchaseOnly = (overrides: Partial<CreateRuleParams> = {}): CreateRuleParams => ({
    organizationId: orgId,
    ruleRef: uniq('ref'),
    ruleName: 'Daily purchases',
    purchaseControl: { amountLimits: [{ currency: 'USD', daily: dec('500.00') }] },
    ...overrides,
  });

  const fullRule = (organizationId: string): CreateRuleParams => ({
    organizationId,
    ruleRef: uniq('ref'),
    ruleName: 'Everything',
    remark: 'all five groups',
    purchaseControl: {
      amountLimits: [
        { currency: 'USD', perTransaction: dec('100.50'), daily: dec('1000'), monthly: dec('20000.99'), quarterly: dec('50000'), yearly: dec('123456789012345678.12') },
        { currency: 'HKD', daily: dec('0.01') },
      ],
      countLimits: { daily: 10, monthly: 100 },
    },
    cashAdvanceControl: { allowed: true, amountLimits: [{ currency: 'USD', daily: dec('200') }], countLimits: { daily: 2 } },
    currencyControl: { filterType: 'WHITELIST', values: ['USD', 'HKD', 'EUR'] },
    mccControl: { filterType: 'BLACKLIST', values: ['7995', '6051'] },
    geographicControl: { filterType: 'WHITELIST', values: ['HK', 'SG'] },
  });

  async function ruleCount(organizationId = orgId): Promise<number> {
    return (await client.velocity.listRules({ organizationId })).total;
  }

  before(async () => {
    svc = await startService();
    ({ partner, client } = await svc.newPartner());
    ({ client: other } = await svc.newPartner());
    svc2 = await startService({ db: await (await testDatabase()).openAnother(), clock: svc.clock });
    orgId = await newOrganization(client);
    otherOrgId = await newOrganization(client);
  });
  after(async () => {
    await svc2.close();
    await svc.close();
    await closeTestDatabase();
  });

  describe('create-rule', () => {
    it('when a rule sets all five groups, then it comes back complete, ACTIVE, version 1, bindingCount "0", amounts exact', async () => {
      const rule = await client.velocity.createRule(fullRule(orgId));
      assert.match(rule.ruleId, /^.{1,32}$/);
      assert.equal(rule.status, 'ACTIVE');
      assert.equal(rule.ruleVersion, 1);
      assert.equal(rule.bindingCount, '0');
      assert.equal(typeof rule.bindingCount, 'string');
      assert.equal(rule.organizationId, orgId);
      assert.equal(rule.remark, 'all five groups');
      assert.match(rule.createTime, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.equal(rule.modifyTime, rule.createTime);
      const usd = rule.purchaseControl!.amountLimits[0];
      assert.deepEqual([usd.currency, digits(usd.perTransaction), digits(usd.daily), digits(usd.monthly), digits(usd.quarterly), digits(usd.yearly)],
        ['USD', '100.5', '1000', '20000.99', '50000', '123456789012345678.12']);
      const hkd = rule.purchaseControl!.amountLimits[1];
      assert.deepEqual([hkd.currency, digits(hkd.daily), hkd.perTransaction, hkd.monthly], ['HKD', '0.01', null, null]);
      assert.deepEqual(rule.purchaseControl!.countLimits, { daily: 10, monthly: 100, quarterly: null, yearly: null });
      assert.equal(rule.cashAdvanceControl!.allowed, true);
      assert.equal(digits(rule.cashAdvanceControl!.amountLimits[0].daily), '200');
      assert.deepEqual(rule.currencyControl, { filterType: 'WHITELIST', values: ['USD', 'HKD', 'EUR'] });
      assert.deepEqual(rule.mccControl, { filterType: 'BLACKLIST', values: ['7995', '6051'] });
      assert.deepEqual(rule.geographicControl, { filterType: 'WHITELIST', values: ['HK', 'SG'] });
      assert.deepEqual(await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId }), rule);
    });

    it('when only one group is configured, then the other four are null (never {}) and an absent remark is null', async () => {
      const rule = await client.velocity.createRule({ organizationId: orgId, ruleRef: uniq('ref'), ruleName: 'MCC only', mccControl: { filterType: 'WHITELIST', values: ['5411'] } });
      assert.equal(rule.remark, null);
      assert.equal(rule.purchaseControl, null);
      assert.equal(rule.cashAdvanceControl, null);
      assert.equal(rule.currencyControl, null);
      assert.equal(rule.geographicControl, null);
      const raw = await client.http.raw('GET', '/open-api-corp/velocity/v1/query-rule', { query: { organizationId: orgId, ruleId: rule.ruleId } });
      assert.match(raw.text, /"purchaseControl":null/);
      assert.match(raw.text, /"bindingCount":"0"/);
      assert.doesNotMatch(raw.text, /\{\}/);
    });

    it('when no control group is configured, or a group is empty, then DAPI_PARAM_INVALID and no rule is created', async () => {
      const before = await ruleCount();
      await expectCode(client.velocity.createRule({ organizationId: orgId, ruleRef: uniq('ref'), ruleName: 'none' }), 'DAPI_PARAM_INVALID');
      await expectCode(client.velocity.createRule({ organizationId: orgId, ruleRef: uniq('ref'), ruleName: 'nulls', purchaseControl: null, mccControl: null }), 'DAPI_PARAM_INVALID');
      await expectCode(client.velocity.createRule({ organizationId: orgId, ruleRef: uniq('ref'), ruleName: 'empty', purchaseControl: {} }), 'DAPI_PARAM_INVALID', 'purchaseControl');
      assert.equal(await ruleCount(), before);
    });

    it('when an amount breaks D4 / 2 decimals, a currency is not USD/HKD or repeats, then DAPI_PARAM_INVALID naming the field', async () => {
      const before = await ruleCount();
      const bad: [CreateRuleParams['purchaseControl'], string][] = [
        [{ amountLimits: [{ currency: 'USD', daily: dec('10.001') }] }, 'purchaseControl.amountLimits.0.daily'],
        [{ amountLimits: [{ currency: 'USD', daily: dec('0') }] }, 'daily'],
        [{ amountLimits: [{ currency: 'USD', daily: dec('-5') }] }, 'daily'],
        [{ amountLimits: [{ currency: 'USD', daily: dec('1e3') }] }, 'daily'],
        [{ amountLimits: [{ currency: 'EUR' as 'USD', daily: dec('10') }] }, 'currency'],
        [{ amountLimits: [{ currency: 'USD', daily: dec('10') }, { currency: 'USD', monthly: dec('10') }] }, 'purchaseControl.amountLimits[1].currency'],
        [{ amountLimits: [{ currency: 'USD' }] }, 'purchaseControl.amountLimits[0]'],
        [{ countLimits: { daily: 0 } }, 'countLimits.daily'],
      ];
      for (const [purchaseControl, field] of bad) {
        await expectCode(client.velocity.createRule(purchaseOnly({ purchaseControl })), 'DAPI_PARAM_INVALID', field);
      }
      // A fractional count: the SDK refuses the JS float before sending (issue 32); sent as text, the service refuses it.
      const fractional = purchaseOnly({ purchaseControl: { countLimits: { daily: 1.5 } } });
      const refused = await client.velocity.createRule(fractional).then(() => null, (err: Error & { code?: string }) => err);
      assert.equal(refused?.code, 'INVALID_ARGUMENT');
      assert.match(refused!.message, /body\.purchaseControl\.countLimits\.daily/);
      await expectCode(client.http.call('POST', '/open-api-corp/velocity/v1/create-rule', { body: stringifyJsonLossless(fractional) }), 'DAPI_PARAM_INVALID', 'countLimits.daily');
      await expectCode(client.velocity.createRule({ organizationId: orgId, ruleRef: uniq('ref'), ruleName: 'x', mccControl: { filterType: 'WHITELIST', values: ['12345'] } }), 'DAPI_PARAM_INVALID', 'mccControl.values');
      await expectCode(client.velocity.createRule({ organizationId: orgId, ruleRef: uniq('ref'), ruleName: 'x', mccControl: { filterType: 'GREYLIST' as 'WHITELIST', values: ['1234'] } }), 'DAPI_PARAM_INVALID', 'filterType');
      await expectCode(client.velocity.createRule({ organizationId: orgId, ruleRef: uniq('ref'), ruleName: 'x', geographicControl: { filterType: 'WHITELIST', values: [] } }), 'DAPI_PARAM_INVALID', 'geographicControl.values');
      assert.equal(await ruleCount(), before);
    });

    it('bounds: ruleName 64 / remark 256 / organizationId 36 pass, one more fails with DAPI_PARAM_INVALID', async () => {
      const before = await ruleCount();
      const ok = await client.velocity.createRule(purchaseOnly({ ruleName: 'n'.repeat(64), remark: 'r'.repeat(256) }));
      assert.equal(ok.ruleName.length, 64);
      assert.equal(ok.remark!.length, 256);
      await expectCode(client.velocity.createRule(purchaseOnly({ ruleName: 'n'.repeat(65) })), 'DAPI_PARAM_INVALID', 'ruleName');
      await expectCode(client.velocity.createRule(purchaseOnly({ ruleName: '' })), 'DAPI_PARAM_INVALID', 'ruleName');
      await expectCode(client.velocity.createRule(purchaseOnly({ remark: 'r'.repeat(257) })), 'DAPI_PARAM_INVALID', 'remark');
      // 36 characters is within the velocity bound: the id is checked, and it is no organization.
      await expectCode(client.velocity.createRule(purchaseOnly({ organizationId: 'o'.repeat(36) })), 'ORGANIZATION_INVALID');
      await expectCode(client.velocity.createRule(purchaseOnly({ organizationId: 'o'.repeat(37) })), 'DAPI_PARAM_INVALID', 'organizationId');
      await expectCode(client.velocity.createRule(purchaseOnly({ ruleRef: 'f'.repeat(65) })), 'DAPI_PARAM_INVALID', 'ruleRef');
      assert.equal(await ruleCount(), before + 1);
    });

    it('when the organization is unknown or another partner\'s, then ORGANIZATION_INVALID and nothing is created', async () => {
      await expectCode(client.velocity.createRule(purchaseOnly({ organizationId: 'org-does-not-exist' })), 'ORGANIZATION_INVALID');
      const before = await ruleCount();
      await expectCode(other.velocity.createRule(purchaseOnly()), 'ORGANIZATION_INVALID');
      assert.equal(await ruleCount(), before);
    });

    it('when the ruleRef is reused in the organization, then VELOCITY_RULE_REF_DUPLICATE; another organization may reuse it', async () => {
      const ruleRef = uniq('ref');
      const first = await client.velocity.createRule(purchaseOnly({ ruleRef }));
      const before = await ruleCount();
      await expectCode(client.velocity.createRule(purchaseOnly({ ruleRef, ruleName: 'second' })), 'VELOCITY_RULE_REF_DUPLICATE');
      assert.equal(await ruleCount(), before);
      assert.equal((await client.velocity.queryRule({ organizationId: orgId, ruleId: first.ruleId })).ruleName, 'Daily purchases');
      const elsewhere = await client.velocity.createRule(purchaseOnly({ ruleRef, organizationId: otherOrgId }));
      assert.equal(elsewhere.ruleRef, ruleRef);
    });
  });

  describe('query-rule and tenant isolation', () => {
    it('when the rule is unknown, under another organization, or another partner\'s, then VELOCITY_RULE_NOT_FOUND', async () => {
      const rule = await client.velocity.createRule(purchaseOnly());
      await expectCode(client.velocity.queryRule({ organizationId: orgId, ruleId: 'vr-unknown' }), 'VELOCITY_RULE_NOT_FOUND');
      await expectCode(client.velocity.queryRule({ organizationId: otherOrgId, ruleId: rule.ruleId }), 'VELOCITY_RULE_NOT_FOUND');
      await expectCode(other.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId }), 'VELOCITY_RULE_NOT_FOUND');
      await expectCode(other.velocity.updateRule({ organizationId: orgId, ruleId: rule.ruleId, ruleVersion: 1, ruleName: 'stolen', mccControl: { filterType: 'WHITELIST', values: ['1111'] } }), 'VELOCITY_RULE_NOT_FOUND');
      await expectCode(other.velocity.changeRuleStatus({ organizationId: orgId, ruleId: rule.ruleId, status: 'INACTIVE', ruleVersion: 1 }), 'VELOCITY_RULE_NOT_FOUND');
      await expectCode(other.velocity.listRules({ organizationId: orgId }), 'ORGANIZATION_INVALID');
      assert.deepEqual(await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId }), rule);
    });

    it('bounds: ruleId of 32 characters is looked up, 33 is DAPI_PARAM_INVALID; both parameters are required', async () => {
      await expectCode(client.velocity.queryRule({ organizationId: orgId, ruleId: 'r'.repeat(32) }), 'VELOCITY_RULE_NOT_FOUND');
      await expectCode(client.velocity.queryRule({ organizationId: orgId, ruleId: 'r'.repeat(33) }), 'DAPI_PARAM_INVALID', 'ruleId');
      await expectCode(client.http.call('GET', '/open-api-corp/velocity/v1/query-rule', { query: { organizationId: orgId } }), 'DAPI_PARAM_INVALID', 'ruleId');
    });
  });

  describe('list-rules (D9)', () => {
    let listOrg: string;
    const created: VelocityRule[] = [];

    before(async () => {
      listOrg = await newOrganization(client);
      for (let i = 0; i < 23; i++) {
        created.push(await client.velocity.createRule({ organizationId: listOrg, ruleRef: `list-${i}`, ruleName: `rule ${i}`, purchaseControl: { countLimits: { daily: i + 1 } } }));
        svc.clock.advance(1);
      }
      await client.velocity.changeRuleStatus({ organizationId: listOrg, ruleId: created[0].ruleId, status: 'INACTIVE', ruleVersion: 1 });
    });

    it('when no paging is given, then page 1 of 20, newest first, total a JSON number, items with the 4.7 fields', async () => {
      const raw = await client.http.raw('GET', '/open-api-corp/velocity/v1/list-rules', { query: { organizationId: listOrg } });
      assert.match(raw.text, /"total":23[,}]/);
      const page = await client.velocity.listRules({ organizationId: listOrg });
      assert.equal(page.page, 1);
      assert.equal(page.pageSize, 20);
      assert.equal(page.total, 23);
      assert.equal(page.result.length, 20);
      assert.equal(page.result[0].ruleId, created[22].ruleId);
      assert.deepEqual(Object.keys(page.result[0]).sort(), ['bindingCount', 'modifyTime', 'ruleId', 'ruleName', 'status']);
      assert.equal(page.result[0].bindingCount, '0');
      const second = await client.velocity.listRules({ organizationId: listOrg, page: 2 });
      assert.deepEqual(second.result.map((r) => r.ruleId), [created[2], created[1], created[0]].map((r) => r.ruleId));
      const beyond = await client.velocity.listRules({ organizationId: listOrg, page: 3 });
      assert.deepEqual(beyond.result, []);
      assert.equal(beyond.total, 23);
    });

    it('when status is given, then only that status; a non-enumerated status is DAPI_PARAM_INVALID', async () => {
      const inactive = await client.velocity.listRules({ organizationId: listOrg, status: 'INACTIVE' });
      assert.deepEqual(inactive.result.map((r) => [r.ruleId, r.status]), [[created[0].ruleId, 'INACTIVE']]);
      assert.equal((await client.velocity.listRules({ organizationId: listOrg, status: 'ACTIVE', pageSize: 100 })).total, 22);
      await expectCode(client.velocity.listRules({ organizationId: listOrg, status: 'DELETED' as 'ACTIVE' }), 'DAPI_PARAM_INVALID', 'status');
    });

    it('bounds: pageSize 1 and 100 pass, 0 and 101 fail; page 1 passes, 0 fails; non-integers fail', async () => {
      assert.equal((await client.velocity.listRules({ organizationId: listOrg, pageSize: 100 })).result.length, 23);
      assert.equal((await client.velocity.listRules({ organizationId: listOrg, pageSize: 1 })).result.length, 1);
      await expectCode(client.velocity.listRules({ organizationId: listOrg, pageSize: 101 }), 'DAPI_PARAM_INVALID', 'pageSize');
      await expectCode(client.velocity.listRules({ organizationId: listOrg, pageSize: 0 }), 'DAPI_PARAM_INVALID', 'pageSize');
      await expectCode(client.velocity.listRules({ organizationId: listOrg, page: 0 }), 'DAPI_PARAM_INVALID', 'page');
      await expectCode(client.http.call('GET', '/open-api-corp/velocity/v1/list-rules', { query: { organizationId: listOrg, page: 'x' } }), 'DAPI_PARAM_INVALID', 'page');
      await expectCode(client.http.call('GET', '/open-api-corp/velocity/v1/list-rules', { query: { organizationId: listOrg, pageSize: '2.5' } }), 'DAPI_PARAM_INVALID', 'pageSize');
      await expectCode(client.velocity.listRules({ organizationId: 'o'.repeat(37) }), 'DAPI_PARAM_INVALID', 'organizationId');
      await expectCode(client.velocity.listRules({ organizationId: 'o'.repeat(36) }), 'ORGANIZATION_INVALID');
    });
  });

  describe('update-rule (4.7 rules 2-4)', () => {
    it('when a group, the remark and a currency are absent, then they are deleted; version +1, modifyTime moves, createTime stays', async () => {
      const rule = await client.velocity.createRule(fullRule(orgId));
      svc.clock.advance(1500);
      const updated = await client.velocity.updateRule({
        organizationId: orgId, ruleId: rule.ruleId, ruleVersion: 1, ruleName: 'Renamed',
        purchaseControl: { amountLimits: [{ currency: 'USD', daily: dec('750.25') }] },
      });
      assert.equal(updated.ruleVersion, 2);
      assert.equal(updated.ruleName, 'Renamed');
      assert.equal(updated.remark, null);
      assert.equal(updated.ruleRef, rule.ruleRef);
      assert.equal(updated.status, 'ACTIVE');
      assert.equal(updated.createTime, rule.createTime);
      assert.ok(Date.parse(updated.modifyTime) >= Date.parse(rule.modifyTime) + 1500);
      assert.deepEqual(updated.purchaseControl!.amountLimits.map((l) => l.currency), ['USD']);
      assert.equal(digits(updated.purchaseControl!.amountLimits[0].daily), '750.25');
      assert.equal(updated.purchaseControl!.amountLimits[0].perTransaction, null);
      assert.equal(updated.purchaseControl!.countLimits, null);
      assert.equal(updated.cashAdvanceControl, null);
      assert.equal(updated.currencyControl, null);
      assert.equal(updated.mccControl, null);
      assert.equal(updated.geographicControl, null);
      assert.deepEqual(await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId }), updated);
    });

    it('when every group is absent or null, then DAPI_PARAM_INVALID and the rule is unchanged', async () => {
      const rule = await client.velocity.createRule(fullRule(orgId));
      await expectCode(client.velocity.updateRule({ organizationId: orgId, ruleId: rule.ruleId, ruleVersion: 1, ruleName: 'none' }), 'DAPI_PARAM_INVALID');
      await expectCode(client.velocity.updateRule({
        organizationId: orgId, ruleId: rule.ruleId, ruleVersion: 1, ruleName: 'nulls', remark: 'x',
        purchaseControl: null, cashAdvanceControl: null, currencyControl: null, mccControl: null, geographicControl: null,
      }), 'DAPI_PARAM_INVALID');
      assert.deepEqual(await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId }), rule);
    });

    it('when ruleVersion is stale or ahead, then VELOCITY_RULE_VERSION_CONFLICT and the rule is unchanged', async () => {
      const rule = await client.velocity.createRule(purchaseOnly());
      const v2 = await client.velocity.updateRule({ organizationId: orgId, ruleId: rule.ruleId, ruleVersion: 1, ruleName: 'v2', purchaseControl: { countLimits: { daily: 3 } } });
      for (const ruleVersion of [1, 3]) {
        await expectCode(client.velocity.updateRule({ organizationId: orgId, ruleId: rule.ruleId, ruleVersion, ruleName: 'late', mccControl: { filterType: 'WHITELIST', values: ['1234'] } }), 'VELOCITY_RULE_VERSION_CONFLICT');
      }
      await expectCode(client.velocity.updateRule({ organizationId: orgId, ruleId: rule.ruleId, ruleVersion: 0, ruleName: 'zero', mccControl: { filterType: 'WHITELIST', values: ['1234'] } }), 'DAPI_PARAM_INVALID', 'ruleVersion');
      assert.deepEqual(await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId }), v2);
    });

    it('when the rule is unknown or under another organization, then VELOCITY_RULE_NOT_FOUND', async () => {
      const rule = await client.velocity.createRule(purchaseOnly());
      const body = { ruleVersion: 1, ruleName: 'x', mccControl: { filterType: 'WHITELIST' as const, values: ['1234'] } };
      await expectCode(client.velocity.updateRule({ organizationId: orgId, ruleId: 'vr-missing', ...body }), 'VELOCITY_RULE_NOT_FOUND');
      await expectCode(client.velocity.updateRule({ organizationId: otherOrgId, ruleId: rule.ruleId, ...body }), 'VELOCITY_RULE_NOT_FOUND');
      assert.deepEqual(await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId }), rule);
    });

    it('when an INACTIVE rule is updated, then it stays INACTIVE with a new version', async () => {
      const rule = await client.velocity.createRule(purchaseOnly());
      await client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: rule.ruleId, status: 'INACTIVE', ruleVersion: 1 });
      const updated = await client.velocity.updateRule({ organizationId: orgId, ruleId: rule.ruleId, ruleVersion: 2, ruleName: 'still off', remark: 'kept', purchaseControl: { countLimits: { yearly: 9 } } });
      assert.equal(updated.status, 'INACTIVE');
      assert.equal(updated.ruleVersion, 3);
      assert.equal(updated.remark, 'kept');
    });

    it('when concurrent updates carry the same version, on two instances, then exactly one wins and the rest get VELOCITY_RULE_VERSION_CONFLICT', async () => {
      const clients = [client, svc2.clientFor(partner)];
      for (let round = 0; round < 3; round++) {
        const rule = await client.velocity.createRule(purchaseOnly());
        const names = Array.from({ length: 6 }, (_, i) => `racer-${round}-${i}`);
        const results = await Promise.allSettled(names.map((ruleName, i) => clients[i % 2].velocity.updateRule({
          organizationId: orgId, ruleId: rule.ruleId, ruleVersion: 1, ruleName,
          purchaseControl: { amountLimits: [{ currency: 'USD', daily: dec(`${100 + i}.00`) }] },
        })));
        const winners = results.filter((r) => r.status === 'fulfilled');
        const losers = results.filter((r) => r.status === 'rejected');
        assert.equal(winners.length, 1, `round ${round}: exactly one update wins`);
        for (const loser of losers) assert.equal((loser as PromiseRejectedResult).reason.code, 'VELOCITY_RULE_VERSION_CONFLICT');
        const won = (winners[0] as PromiseFulfilledResult<VelocityRule>).value;
        const stored = await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId });
        assert.equal(stored.ruleVersion, 2);
        assert.deepEqual(stored, won);
        const index = names.indexOf(stored.ruleName);
        assert.equal(digits(stored.purchaseControl!.amountLimits[0].daily), String(100 + index));
        assert.equal(stored.purchaseControl!.amountLimits.length, 1, 'no half-applied replacement');
      }
    });

    it('when an update races a status change on the same version, then exactly one of them wins', async () => {
      const rule = await client.velocity.createRule(purchaseOnly());
      const results = await Promise.allSettled([
        client.velocity.updateRule({ organizationId: orgId, ruleId: rule.ruleId, ruleVersion: 1, ruleName: 'upd', purchaseControl: { countLimits: { daily: 1 } } }),
        client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: rule.ruleId, status: 'INACTIVE', ruleVersion: 1 }),
      ]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      const loser = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      assert.equal(loser.reason.code, 'VELOCITY_RULE_VERSION_CONFLICT');
      assert.equal((await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId })).ruleVersion, 2);
    });
  });

  describe('change-rule-status (section 3, D47)', () => {
    it('when ACTIVE goes INACTIVE and back, then each change returns the 4.7 fields with the new version', async () => {
      const rule = await client.velocity.createRule(purchaseOnly());
      svc.clock.advance(1000);
      const off = await client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: rule.ruleId, status: 'INACTIVE', ruleVersion: 1 });
      assert.deepEqual(Object.keys(off).sort(), ['bindingCount', 'modifyTime', 'ruleId', 'ruleName', 'ruleVersion', 'status']);
      assert.equal(off.status, 'INACTIVE');
      assert.equal(off.ruleVersion, 2);
      assert.equal(off.bindingCount, '0');
      assert.ok(Date.parse(off.modifyTime) > Date.parse(rule.modifyTime));
      const on = await client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: rule.ruleId, status: 'ACTIVE', ruleVersion: 2 });
      assert.equal(on.status, 'ACTIVE');
      assert.equal(on.ruleVersion, 3);
      const stored = await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId });
      assert.equal(stored.ruleVersion, 3);
      assert.deepEqual(stored.purchaseControl, rule.purchaseControl, 'a status change keeps the limits');
    });

    it('when the target equals the current status, then VELOCITY_RULE_STATUS_INVALID and the version stays', async () => {
      const rule = await client.velocity.createRule(purchaseOnly());
      await expectCode(client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: rule.ruleId, status: 'ACTIVE', ruleVersion: 1 }), 'VELOCITY_RULE_STATUS_INVALID');
      await client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: rule.ruleId, status: 'INACTIVE', ruleVersion: 1 });
      await expectCode(client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: rule.ruleId, status: 'INACTIVE', ruleVersion: 2 }), 'VELOCITY_RULE_STATUS_INVALID');
      const stored = await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId });
      assert.equal(stored.ruleVersion, 2);
      assert.equal(stored.status, 'INACTIVE');
    });

    it('when the status is not enumerated or missing, then DAPI_PARAM_INVALID and nothing changes', async () => {
      const rule = await client.velocity.createRule(purchaseOnly());
      for (const status of ['DELETED', 'active', '']) {
        await expectCode(client.http.call('POST', '/open-api-corp/velocity/v1/change-rule-status', { body: { organizationId: orgId, ruleId: rule.ruleId, status, ruleVersion: 1 } }), 'DAPI_PARAM_INVALID', 'status');
      }
      await expectCode(client.http.call('POST', '/open-api-corp/velocity/v1/change-rule-status', { body: { organizationId: orgId, ruleId: rule.ruleId, ruleVersion: 1 } }), 'DAPI_PARAM_INVALID', 'status');
      await expectCode(client.http.call('POST', '/open-api-corp/velocity/v1/change-rule-status', { body: { organizationId: orgId, ruleId: rule.ruleId, status: 'INACTIVE' } }), 'DAPI_PARAM_INVALID', 'ruleVersion');
      assert.deepEqual(await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId }), rule);
    });

    it('when the version does not match, then VELOCITY_RULE_VERSION_CONFLICT; an unknown rule is VELOCITY_RULE_NOT_FOUND', async () => {
      const rule = await client.velocity.createRule(purchaseOnly());
      await expectCode(client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: rule.ruleId, status: 'INACTIVE', ruleVersion: 7 }), 'VELOCITY_RULE_VERSION_CONFLICT');
      await expectCode(client.velocity.changeRuleStatus({ organizationId: orgId, ruleId: 'vr-nope', status: 'INACTIVE', ruleVersion: 1 }), 'VELOCITY_RULE_NOT_FOUND');
      assert.deepEqual(await client.velocity.queryRule({ organizationId: orgId, ruleId: rule.ruleId }), rule);
    });
  });
});
