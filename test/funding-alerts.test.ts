import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { admin, decimal, eventsOf, expectCode, money, newCompany, uniqueRef } from './helpers/companies.ts';
import type { CardServiceClient } from '../sdk/index.ts';
import { scanLowBalances } from '../src/domains/funding/testing.ts';
import { getOrCreateAccount, post } from '../src/domains/ledger/index.ts';
import { amount } from '../src/platform/money.ts';

const ALERT_SET = '/open-api-corp/fund/v1/balance-alert-set';
const DAY_MS = 24 * 3600_000;

describe('low-balance alerts: balance-alert-set and the LOW_BALANCE worker (2.12, 4.6, section 6, D41, D49)', () => {
  let svc: TestService;
  let client: CardServiceClient;
  let partnerId: string;

  before(async () => {
    svc = await startService();
    let partner;
    ({ client, partner } = await svc.newPartner());
    partnerId = partner.partnerId;
    // A fixed UTC time of day (01:00), so "the same UTC day" holds for the whole file.
    const now = Date.now();
    const tomorrow1am = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate() + 1, 1);
    svc.clock.advance(tomorrow1am - now);
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  const deposit = (organizationId: string, currency: string, value: string) =>
    client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: organizationId, currency, amount: decimal(value) });

  /** Takes money out of a pool as the cards domain will (pool -> external), through the ledger API. */
  async function withdraw(organizationId: string, currency: string, value: string) {
    const at = new Date(svc.clock.now());
    await svc.db.tx(async (q) => {
      const pool = await getOrCreateAccount(q, { partnerId, ownerType: 'ORGANIZATION_POOL', ownerId: organizationId, currency, organizationId }, at);
      const bank = await getOrCreateAccount(q, { partnerId, ownerType: 'EXTERNAL', ownerId: 'BANK', currency }, at);
      await post(q, {
        partnerId, kind: 'WITHDRAW', createTime: at,
        entries: [{ accountId: pool.accountId, amount: amount(value).negated(), bucket: 'AVAILABLE' }, { accountId: bank.accountId, amount: amount(value), bucket: 'AVAILABLE' }],
      });
    });
  }

  const lowBalanceEvents = async (organizationId: string) =>
    (await eventsOf(client, { eventType: 'LOW_BALANCE', businessId: organizationId })).map((e) => e.data as Record<string, unknown>);

  async function expectSetRefused(organizationId: string, body: Record<string, unknown>, code: string, field?: string) {
    const before = await client.funding.queryBalanceAlert(organizationId);
    await expectCode(client.http.call('POST', ALERT_SET, { body: { organizationId, ...body } }), code, field);
    assert.deepEqual(await client.funding.queryBalanceAlert(organizationId), before, 'configuration unchanged');
  }

  describe('balance-alert-set', () => {
    it('stores the configuration; each call replaces it entirely', async () => {
      const org = await newCompany(client);
      assert.equal(await client.funding.setBalanceAlert({
        organizationId: org.organizationId,
        balanceSettings: [{ currency: 'USD', threshold: decimal('100.50') }, { currency: 'HKD', threshold: decimal('0') }],
        emailSettings: ['ops@example.com', 'cfo@example.com'],
      }), null);
      let config = await client.funding.queryBalanceAlert(org.organizationId);
      assert.deepEqual(config.balanceSettings.map((s) => [s.currency, money(s.threshold)]), [['USD', '100.50'], ['HKD', '0.00']]);
      assert.deepEqual(config.emailSettings, ['ops@example.com', 'cfo@example.com']);

      await client.funding.setBalanceAlert({ organizationId: org.organizationId, balanceSettings: [{ currency: 'HKD', threshold: decimal('7.5') }] });
      config = await client.funding.queryBalanceAlert(org.organizationId);
      assert.deepEqual(config.balanceSettings.map((s) => [s.currency, money(s.threshold)]), [['HKD', '7.50']], 'USD removed');
      assert.deepEqual(config.emailSettings, [], 'omitted emailSettings clears the mailboxes');
    });

    it('accepts thresholdAmount as an alias of threshold (D41); both must agree', async () => {
      const org = await newCompany(client);
      await client.funding.setBalanceAlert({ organizationId: org.organizationId, balanceSettings: [{ currency: 'USD', thresholdAmount: decimal('12.34') }] });
      assert.equal(money((await client.funding.queryBalanceAlert(org.organizationId)).balanceSettings[0].threshold), '12.34');
      await client.funding.setBalanceAlert({ organizationId: org.organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('5.1'), thresholdAmount: decimal('5.10') }] });
      assert.equal(money((await client.funding.queryBalanceAlert(org.organizationId)).balanceSettings[0].threshold), '5.10');
      await expectSetRefused(org.organizationId, { balanceSettings: [{ currency: 'USD', threshold: decimal('1.00'), thresholdAmount: decimal('2.00') }] }, 'DAPI_PARAM_INVALID', 'threshold');
      await expectSetRefused(org.organizationId, { balanceSettings: [{ currency: 'USD' }] }, 'DAPI_PARAM_INVALID', 'threshold');
    });

    it('bounds: at least one setting, unique USD/HKD currencies, non-negative thresholds with two decimals, emails up to 128', async () => {
      const org = await newCompany(client);
      await client.funding.setBalanceAlert({ organizationId: org.organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('1.00') }] });
      const refuse = (body: Record<string, unknown>, code: string, field?: string) => expectSetRefused(org.organizationId, body, code, field);
      await refuse({ balanceSettings: [] }, 'DAPI_PARAM_INVALID', 'balanceSettings');
      await refuse({}, 'DAPI_PARAM_INVALID', 'balanceSettings');
      await refuse({ balanceSettings: [{ currency: 'USD', threshold: 1 }, { currency: 'USD', threshold: 2 }] }, 'DAPI_PARAM_INVALID', 'currency');
      await refuse({ balanceSettings: [{ currency: 'EUR', threshold: 1 }] }, 'DAPI_PARAM_INVALID', 'currency');
      await refuse({ balanceSettings: [{ currency: '', threshold: 1 }] }, 'DAPI_PARAM_INVALID', 'currency');
      await refuse({ balanceSettings: [{ currency: 'USD', threshold: decimal('1.001') }] }, 'DAPI_PARAM_INVALID', 'threshold');
      await refuse({ balanceSettings: [{ currency: 'USD', threshold: decimal('-0.01') }] }, 'DAPI_PARAM_INVALID', 'threshold');
      await refuse({ balanceSettings: [{ currency: 'USD', threshold: '10.00' }] }, 'DAPI_PARAM_INVALID', 'threshold');
      await refuse({ balanceSettings: [{ currency: 'USD', thresholdAmount: decimal('0.001') }] }, 'DAPI_PARAM_INVALID', 'thresholdAmount');
      const longest = 'm'.repeat(116) + '@example.com';
      await client.funding.setBalanceAlert({ organizationId: org.organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('0') }], emailSettings: [longest] });
      assert.deepEqual((await client.funding.queryBalanceAlert(org.organizationId)).emailSettings, [longest]);
      await refuse({ balanceSettings: [{ currency: 'USD', threshold: 0 }], emailSettings: ['m' + longest] }, 'DAPI_PARAM_INVALID', 'emailSettings');
      await refuse({ balanceSettings: [{ currency: 'USD', threshold: 0 }], emailSettings: ['not-an-email'] }, 'DAPI_PARAM_INVALID', 'emailSettings');
      await refuse({ balanceSettings: [{ currency: 'USD', threshold: 0 }], emailSettings: ['a@example.com', 'A@example.com'] }, 'DAPI_PARAM_INVALID', 'emailSettings');
      await refuse({ balanceSettings: [{ currency: 'USD', threshold: 0 }], emailSettings: 'a@example.com' }, 'DAPI_PARAM_INVALID', 'emailSettings');
      await expectCode(client.http.call('POST', ALERT_SET, { body: { organizationId: 'o'.repeat(21), balanceSettings: [{ currency: 'USD', threshold: 0 }] } }), 'DAPI_PARAM_INVALID', 'organizationId');
    });

    it('the company must exist, be the partner\'s and be ACTIVE (SUBJECT_INVALID, D41) and have a pool (BALANCE_ALERT_CURRENCY_NO_POOL)', async () => {
      const usdOnly = await newCompany(client, { fundingCurrencies: ['USD'] });
      await expectSetRefused(usdOnly.organizationId, { balanceSettings: [{ currency: 'HKD', threshold: 1 }] }, 'BALANCE_ALERT_CURRENCY_NO_POOL');
      await expectSetRefused(usdOnly.organizationId, { balanceSettings: [{ currency: 'USD', threshold: 1 }, { currency: 'HKD', threshold: 1 }] }, 'BALANCE_ALERT_CURRENCY_NO_POOL');
      await expectCode(client.funding.setBalanceAlert({ organizationId: 'org-missing', balanceSettings: [{ currency: 'USD', threshold: decimal('1') }] }), 'SUBJECT_INVALID');
      const { client: other } = await svc.newPartner();
      await expectCode(other.funding.setBalanceAlert({ organizationId: usdOnly.organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('1') }] }), 'SUBJECT_INVALID');
      await expectCode(other.funding.queryBalanceAlert(usdOnly.organizationId), 'SUBJECT_INVALID');
      await admin(svc).terminateOrganization(usdOnly.organizationId);
      await expectSetRefused(usdOnly.organizationId, { balanceSettings: [{ currency: 'USD', threshold: 1 }] }, 'SUBJECT_INVALID');
    });
  });

  describe('the LOW_BALANCE worker', () => {
    it('fires once when the available balance falls below the threshold, not again the same UTC day, again the next day', async () => {
      const org = await newCompany(client, { organizationName: 'Low Balance Ltd' });
      const mailbox = `${uniqueRef('treasury')}@example.com`;
      await deposit(org.organizationId, 'USD', '150.00');
      await client.funding.setBalanceAlert({
        organizationId: org.organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('100.00') }], emailSettings: [mailbox],
      });
      await scanLowBalances(svc.ctx);
      assert.deepEqual(await lowBalanceEvents(org.organizationId), [], 'above the threshold: nothing');

      await withdraw(org.organizationId, 'USD', '50.00');
      await scanLowBalances(svc.ctx);
      assert.deepEqual(await lowBalanceEvents(org.organizationId), [], 'exactly at the threshold is not below it');

      await withdraw(org.organizationId, 'USD', '0.01');
      await scanLowBalances(svc.ctx);
      let events = await lowBalanceEvents(org.organizationId);
      assert.equal(events.length, 1);
      assert.equal(money(events[0].available), '99.99');
      assert.equal(money(events[0].threshold), '100.00');
      assert.equal(events[0].organizationId, org.organizationId);
      assert.equal(events[0].currency, 'USD');
      const mail = await admin(svc).outboxMail(mailbox);
      assert.equal(mail.total, 1);
      assert.match(mail.result[0].subject, /Low balance: Low Balance Ltd USD/);
      assert.match(mail.result[0].body, /Available: 99\.99 USD/);

      // Still low, same UTC day (22 hours later): no second alert, even after more spending.
      svc.clock.advance(22 * 3600_000);
      await withdraw(org.organizationId, 'USD', '10.00');
      await scanLowBalances(svc.ctx);
      await scanLowBalances(svc.ctx);
      assert.equal((await lowBalanceEvents(org.organizationId)).length, 1);

      // The next UTC day, still low: one more alert, once.
      svc.clock.advance(2 * 3600_000);
      await scanLowBalances(svc.ctx);
      await scanLowBalances(svc.ctx);
      events = await lowBalanceEvents(org.organizationId);
      assert.equal(events.length, 2);
      assert.equal(money(events[1].available), '89.99');
      assert.equal((await admin(svc).outboxMail(mailbox)).total, 2);
    });

    it('fires again the same day after a top-up above the threshold and a new fall (seen by a scan or only by the ledger)', async () => {
      const org = await newCompany(client);
      await client.funding.setBalanceAlert({ organizationId: org.organizationId, balanceSettings: [{ currency: 'HKD', threshold: decimal('50.00') }] });
      await deposit(org.organizationId, 'HKD', '10.00');
      await scanLowBalances(svc.ctx);
      assert.equal((await lowBalanceEvents(org.organizationId)).length, 1);

      // Top-up seen by a scan, then a new fall: alert again at once.
      await deposit(org.organizationId, 'HKD', '100.00');
      await scanLowBalances(svc.ctx);
      assert.equal((await lowBalanceEvents(org.organizationId)).length, 1);
      await withdraw(org.organizationId, 'HKD', '80.00');
      await scanLowBalances(svc.ctx);
      assert.equal((await lowBalanceEvents(org.organizationId)).length, 2);

      // Top-up and fall between two scans: the ledger entries show the recovery.
      await deposit(org.organizationId, 'HKD', '60.00');
      await withdraw(org.organizationId, 'HKD', '60.00');
      await scanLowBalances(svc.ctx);
      assert.equal((await lowBalanceEvents(org.organizationId)).length, 3);

      // A top-up that stays below the threshold does not re-arm.
      await deposit(org.organizationId, 'HKD', '5.00');
      await scanLowBalances(svc.ctx);
      const events = await lowBalanceEvents(org.organizationId);
      assert.equal(events.length, 3);
      assert.deepEqual(events.map((e) => money(e.available)), ['10.00', '30.00', '30.00']);
    });

    it('only configured currencies alert; a partner re-sending the same threshold does not re-fire; a changed threshold re-arms', async () => {
      const org = await newCompany(client);
      await client.funding.setBalanceAlert({ organizationId: org.organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('20.00') }] });
      await scanLowBalances(svc.ctx);
      let events = await lowBalanceEvents(org.organizationId);
      assert.deepEqual(events.map((e) => [e.currency, money(e.available)]), [['USD', '0.00']], 'HKD has no setting');

      await client.funding.setBalanceAlert({ organizationId: org.organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('20') }] });
      await scanLowBalances(svc.ctx);
      assert.equal((await lowBalanceEvents(org.organizationId)).length, 1);

      await client.funding.setBalanceAlert({ organizationId: org.organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('30.00') }, { currency: 'HKD', threshold: decimal('0') }] });
      await scanLowBalances(svc.ctx);
      events = await lowBalanceEvents(org.organizationId);
      assert.deepEqual(events.map((e) => [e.currency, money(e.threshold)]), [['USD', '20.00'], ['USD', '30.00']], 'threshold 0 never fires on an empty pool');
    });

    it('a terminated company is not scanned', async () => {
      const org = await newCompany(client);
      await client.funding.setBalanceAlert({ organizationId: org.organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('1.00') }] });
      await admin(svc).terminateOrganization(org.organizationId);
      await scanLowBalances(svc.ctx);
      assert.deepEqual(await lowBalanceEvents(org.organizationId), []);
    });
  });
});
