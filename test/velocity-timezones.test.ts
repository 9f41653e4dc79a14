import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { dec, expectCode, uniq } from './helpers/velocity-fixtures.ts';
import { processCardApplications } from '../src/domains/cards/testing.ts';
import { periodKeys } from '../src/domains/velocity/testing.ts';
import type { CardServiceClient, Quota } from '../sdk/index.ts';

/**
 * Issue 31 section 2: velocity periods in the partner's IANA time zone, through the real server
 * (sandbox authorizations count usage in card_authorize under velocity_periods' keys). Daily caps
 * reset at local midnight, a 23- or 25-hour day is one day (America/New_York 2026-03-08 and
 * 2026-11-01, Europe/Berlin 2026-03-29 and 2026-10-25), months and quarters follow the zone, and a
 * zone change takes effect at each period's next boundary without splitting or resetting usage
 * (docs/velocity.md "Periods and time zones", docs/decisions.md).
 */

const at = (iso: string) => Date.parse(iso);

describe('velocity periods in the partner time zone (issue 31)', () => {
  let svc: TestService;

  /** Moves the service clock to an instant. */
  const setClock = (instant: number) => { svc.clock.offsetMs = instant - Date.now(); };

  interface Partner { client: CardServiceClient; partnerId: string; orgId: string; cardId: string }

  /**
   * A partner with one employee card and ample funds. With `zone`, the zone is set at 2025-06-01, so
   * by 2026 every period follows it (the yearly one from 2026-01-01, its first boundary after).
   */
  async function newPartner(zone?: string): Promise<Partner> {
    setClock(at('2025-06-01T12:00:00Z'));
    const { client, partner } = await svc.newPartner();
    if (zone) assert.equal((await client.partner.setTimeZone(zone)).timeZone, zone);
    const orgId = (await client.organizations.create({
      organizationRef: uniq('org'), organizationName: 'Zone Ltd', companyRegistrationNumber: uniq('crn'), countryCode: 'HK',
      fundingCurrencies: ['USD'],
    })).organizationId;
    const employee = await client.customers.create({
      organizationId: orgId, customerRef: uniq('emp'), firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com',
      phoneCountryCode: 'HK', phoneNumber: '91234567',
    });
    await client.sandbox.kycDecision({ customerId: employee.customerId, decision: 'APPROVED' });
    const application = await client.cards.apply({
      cardApplyRef: uniq('apply'), cardProfileId: 'sbx-visa-shared', cardholderName: 'ADA LOVELACE', organizationId: orgId,
      subjectType: 'CUSTOMER', subjectId: employee.customerId,
    });
    await processCardApplications(svc.ctx);
    const done = await client.cards.queryApply(application.cardApplyId);
    assert.equal(done.status, 'SUCCESS');
    await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: orgId, currency: 'USD', amount: dec('100000.00') });
    return { client, partnerId: partner.partnerId, orgId, cardId: done.cardId! };
  }

  async function countRule(p: Partner, countLimits: { daily?: number; monthly?: number; quarterly?: number; yearly?: number }) {
    const rule = await p.client.velocity.createRule({
      organizationId: p.orgId, ruleRef: uniq('ref'), ruleName: 'count', purchaseControl: { countLimits },
    });
    await p.client.velocity.bindRule({ organizationId: p.orgId, ruleId: rule.ruleId, subjectType: 'CARD', subjectIds: [p.cardId] });
    return rule;
  }

  /** A 1.00 USD purchase at an instant: approved or the decline detail. */
  async function spendAt(p: Partner, iso: string): Promise<{ approved: boolean; detail: string | null; transId: string }> {
    setClock(at(iso));
    const t = await p.client.sandbox.authorize({
      cardId: p.cardId, amount: dec('1.00'), currency: 'USD', merchantName: 'Zone Shop', mcc: '5814', merchantCountry: 'HK', channel: 'POS',
    });
    return { approved: t.approved, detail: t.approved ? null : `${t.declineReason}:${t.declineDetail}`, transId: t.transId };
  }

  async function quotaAt(p: Partner, iso: string): Promise<Quota> {
    setClock(at(iso));
    return p.client.velocity.queryQuota({ organizationId: p.orgId, subjectType: 'CARD', subjectId: p.cardId, currency: 'USD' });
  }

  before(async () => { svc = await startService(); });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('by default periods are UTC, with the keys of the UTC period labels and Z offsets', async () => {
    const p = await newPartner();
    assert.equal((await p.client.partner.settings()).timeZone, 'UTC');
    const q = await quotaAt(p, '2026-05-17T10:00:00Z');
    const keys = periodKeys(new Date('2026-05-17T10:00:00Z'));
    assert.deepEqual(q.periods.daily, { periodKey: keys.daily, timeZone: 'UTC', startTime: '2026-05-17T00:00:00.000Z', endTime: '2026-05-18T00:00:00.000Z' });
    assert.deepEqual(q.periods.quarterly, { periodKey: keys.quarterly, timeZone: 'UTC', startTime: '2026-04-01T00:00:00.000Z', endTime: '2026-07-01T00:00:00.000Z' });
    assert.equal(q.purchase.countLimits.daily.periodKey, keys.daily);
  });

  it('a daily cap resets at local midnight, not UTC; the 23-hour spring-forward day and the 25-hour fall-back day are one day each (America/New_York)', async () => {
    const p = await newPartner('America/New_York');
    await countRule(p, { daily: 1 });
    // 2026-03-07 23:30 EST is already 2026-03-08 in UTC: a UTC day would have room again at 04:45Z.
    assert.equal((await spendAt(p, '2026-03-08T04:30:00Z')).approved, true);
    assert.equal((await spendAt(p, '2026-03-08T04:45:00Z')).detail?.endsWith(':DAILY_COUNT'), true, 'still 2026-03-07 in New York');
    // 2026-03-08 has 23 hours: 00:00 EST (05:00Z) to 00:00 EDT on the 9th (04:00Z).
    assert.equal((await spendAt(p, '2026-03-08T05:00:00Z')).approved, true, 'local midnight opens a new day');
    const spring = await quotaAt(p, '2026-03-08T12:00:00Z');
    assert.deepEqual(spring.periods.daily, {
      periodKey: '20260308@America/New_York', timeZone: 'America/New_York',
      startTime: '2026-03-08T00:00:00.000-05:00', endTime: '2026-03-09T00:00:00.000-04:00',
    });
    assert.equal(spring.purchase.countLimits.daily.usedCount, 1);
    assert.equal((await spendAt(p, '2026-03-09T03:59:00Z')).approved, false, '23:59 EDT is the same 23-hour day');
    assert.equal((await spendAt(p, '2026-03-09T04:00:00Z')).approved, true);

    // 2026-11-01 has 25 hours: 00:00 EDT (04:00Z) to 00:00 EST on the 2nd (05:00Z).
    assert.equal((await spendAt(p, '2026-11-01T04:00:00Z')).approved, true);
    assert.equal((await spendAt(p, '2026-11-02T04:30:00Z')).approved, false, '23:30 EST, hour 25 of the same day');
    const fall = await quotaAt(p, '2026-11-02T04:59:59Z');
    assert.deepEqual(fall.periods.daily, {
      periodKey: '20261101@America/New_York', timeZone: 'America/New_York',
      startTime: '2026-11-01T00:00:00.000-04:00', endTime: '2026-11-02T00:00:00.000-05:00',
    });
    assert.equal((await spendAt(p, '2026-11-02T05:00:00Z')).approved, true);
  });

  it('Europe/Berlin: 23- and 25-hour days, and the month follows local time', async () => {
    const p = await newPartner('Europe/Berlin');
    await countRule(p, { daily: 1, monthly: 2 });
    const spring = await quotaAt(p, '2026-03-29T12:00:00Z');
    assert.deepEqual([spring.periods.daily.startTime, spring.periods.daily.endTime], ['2026-03-29T00:00:00.000+01:00', '2026-03-30T00:00:00.000+02:00']);
    const fall = await quotaAt(p, '2026-10-25T12:00:00Z');
    assert.deepEqual([fall.periods.daily.startTime, fall.periods.daily.endTime], ['2026-10-25T00:00:00.000+02:00', '2026-10-26T00:00:00.000+01:00']);
    assert.deepEqual([fall.periods.monthly.periodKey, fall.periods.monthly.startTime, fall.periods.monthly.endTime],
      ['202610@Europe/Berlin', '2026-10-01T00:00:00.000+02:00', '2026-11-01T00:00:00.000+01:00']);
    // The zone was set in 2025: the UTC year 2025 ran to its end, so Berlin's 2026 began at 2026-01-01T00:00Z (01:00 local).
    assert.deepEqual([fall.periods.yearly.periodKey, fall.periods.yearly.startTime, fall.periods.yearly.endTime],
      ['2026@Europe/Berlin', '2026-01-01T01:00:00.000+01:00', '2027-01-01T00:00:00.000+01:00']);

    assert.equal((await spendAt(p, '2026-10-30T10:00:00Z')).approved, true);
    assert.equal((await spendAt(p, '2026-10-31T22:30:00Z')).approved, true, '23:30 CET on 31 October');
    // 2026-10-31T23:00Z is 1 November in Berlin: a new month (UTC would still be October, at its cap of 2).
    assert.equal((await spendAt(p, '2026-10-31T23:00:00Z')).detail, null, 'a new local month and day');
    const november = await quotaAt(p, '2026-10-31T23:30:00Z');
    assert.equal(november.periods.monthly.periodKey, '202611@Europe/Berlin');
    assert.equal(november.purchase.countLimits.monthly.usedCount, 1);
  });

  it('quarters follow the zone: Asia/Hong_Kong starts Q3 at 2026-06-30T16:00Z', async () => {
    const p = await newPartner('Asia/Hong_Kong');
    await countRule(p, { quarterly: 1 });
    assert.equal((await spendAt(p, '2026-06-30T15:30:00Z')).approved, true);
    assert.equal((await spendAt(p, '2026-06-30T16:00:00Z')).approved, true, 'local 1 July: a new quarter');
    const third = await spendAt(p, '2026-06-30T23:00:00Z');
    assert.equal(third.detail?.endsWith(':QUARTERLY_COUNT'), true, 'UTC is still Q2, but the local Q3 has its one');
    const q = await quotaAt(p, '2026-06-30T23:00:00Z');
    assert.deepEqual(q.periods.quarterly, {
      periodKey: '2026Q3@Asia/Hong_Kong', timeZone: 'Asia/Hong_Kong', startTime: '2026-07-01T00:00:00.000+08:00', endTime: '2026-10-01T00:00:00.000+08:00',
    });
  });

  it('a zone change mid-period keeps the usage counted, takes effect at each period\'s next boundary, and reversals give back in the original periods', async () => {
    const p = await newPartner();
    await countRule(p, { daily: 5, monthly: 10 });
    const first = await spendAt(p, '2026-05-17T09:00:00Z');
    assert.equal(first.approved, true);
    assert.equal((await spendAt(p, '2026-05-17T10:00:00Z')).approved, true);

    setClock(at('2026-05-17T12:00:00Z'));
    const settings = await p.client.partner.setTimeZone('asia/hong_kong');
    assert.equal(settings.timeZone, 'Asia/Hong_Kong', 'the canonical name is stored');
    // Nothing switches mid-period: the running UTC day and month keep their usage and their end.
    const same = await quotaAt(p, '2026-05-17T20:00:00Z');
    assert.deepEqual(same.periods.daily, { periodKey: '20260517', timeZone: 'UTC', startTime: '2026-05-17T00:00:00.000Z', endTime: '2026-05-18T00:00:00.000Z' });
    assert.equal(same.purchase.countLimits.daily.usedCount, 2);
    assert.equal(same.purchase.countLimits.monthly.usedCount, 2);

    // At the UTC midnight the day switches: a short first Hong Kong day from 08:00 local.
    const next = await quotaAt(p, '2026-05-18T00:00:00Z');
    assert.deepEqual(next.periods.daily, {
      periodKey: '20260518@Asia/Hong_Kong', timeZone: 'Asia/Hong_Kong', startTime: '2026-05-18T08:00:00.000+08:00', endTime: '2026-05-19T00:00:00.000+08:00',
    });
    assert.equal(next.purchase.countLimits.daily.usedCount, 0);
    assert.deepEqual([next.periods.monthly.periodKey, next.periods.monthly.endTime], ['202605', '2026-06-01T00:00:00.000Z'], 'the month is still UTC');
    assert.equal(next.purchase.countLimits.monthly.usedCount, 2, 'not reset');
    assert.equal((await spendAt(p, '2026-05-18T01:00:00Z')).approved, true);

    // A reversal after the change gives back in the original authorization's (UTC) periods.
    setClock(at('2026-05-18T02:00:00Z'));
    await p.client.sandbox.reverse({ transId: first.transId, amount: dec('1.00') });
    const afterReversal = await quotaAt(p, '2026-05-18T02:00:00Z');
    assert.equal(afterReversal.purchase.countLimits.monthly.usedCount, 2, '3 counted, 1 given back in 202605');
    assert.equal(afterReversal.purchase.countLimits.daily.usedCount, 1, 'the Hong Kong day keeps its own');

    // The Hong Kong day after ends at local midnight; the UTC month, at its own end; then the Hong Kong June.
    const lateMay = await quotaAt(p, '2026-05-31T20:00:00Z');
    assert.equal(lateMay.periods.daily.periodKey, '20260601@Asia/Hong_Kong');
    assert.equal(lateMay.periods.monthly.periodKey, '202605');
    assert.equal(lateMay.purchase.countLimits.monthly.usedCount, 2);
    const june = await quotaAt(p, '2026-06-01T00:00:00Z');
    assert.deepEqual(june.periods.monthly, {
      periodKey: '202606@Asia/Hong_Kong', timeZone: 'Asia/Hong_Kong', startTime: '2026-06-01T08:00:00.000+08:00', endTime: '2026-07-01T00:00:00.000+08:00',
    });
    assert.equal(june.purchase.countLimits.monthly.usedCount, 0);
    assert.equal(june.periods.yearly.timeZone, 'UTC', 'the year switches at its own boundary, 2027-01-01T00:00Z');
  });

  it('moving west never merges a finished local day into the new zone\'s day of the same date; a change undone before it takes effect is dropped', async () => {
    const p = await newPartner('Asia/Hong_Kong');
    await countRule(p, { daily: 1 });
    assert.equal((await spendAt(p, '2026-05-20T02:00:00Z')).approved, true, '10:00 on 20 May in Hong Kong');
    setClock(at('2026-05-20T10:00:00Z'));
    await p.client.partner.setTimeZone('UTC');
    assert.equal((await spendAt(p, '2026-05-20T12:00:00Z')).approved, false, 'the Hong Kong day runs to its end');
    // From 16:00Z (Hong Kong midnight) the UTC day of 20 May: its own key, no usage carried over.
    const q = await quotaAt(p, '2026-05-20T17:00:00Z');
    assert.deepEqual(q.periods.daily, { periodKey: '20260520', timeZone: 'UTC', startTime: '2026-05-20T16:00:00.000Z', endTime: '2026-05-21T00:00:00.000Z' });
    assert.equal(q.purchase.countLimits.daily.usedCount, 0);
    assert.equal((await spendAt(p, '2026-05-20T17:00:00Z')).approved, true);

    // Undone before it takes effect: UTC -> Europe/Berlin -> UTC the same day leaves the UTC periods as they are.
    setClock(at('2026-05-20T18:00:00Z'));
    await p.client.partner.setTimeZone('Europe/Berlin');
    await p.client.partner.setTimeZone('UTC');
    const tomorrow = await quotaAt(p, '2026-05-21T00:00:00Z');
    assert.deepEqual([tomorrow.periods.daily.periodKey, tomorrow.periods.daily.timeZone], ['20260521', 'UTC']);
  });

  it('an invalid zone is refused with DAPI_PARAM_INVALID, by the partner settings route and the operator API', async () => {
    const p = await newPartner();
    for (const bad of ['Mars/Olympus_Mons', '+08:00', 'GMT+8', 'HKT', 'Etc/GMT-8']) {
      await expectCode(p.client.partner.setTimeZone(bad), 'DAPI_PARAM_INVALID', 'timeZone');
    }
    await expectCode(svc.admin.updatePartner(p.partnerId, { timeZone: 'Not/A_Zone' }), 'DAPI_PARAM_INVALID', 'timeZone');
    assert.equal((await p.client.partner.settings()).timeZone, 'UTC', 'nothing changed');
    setClock(at('2026-02-10T12:00:00Z'));
    const updated = await svc.admin.updatePartner(p.partnerId, { timeZone: 'Europe/Berlin' });
    assert.equal(updated.timeZone, 'Europe/Berlin');
    const q = await quotaAt(p, '2026-02-11T00:00:00Z');
    assert.deepEqual([q.periods.daily.timeZone, q.periods.daily.startTime], ['Europe/Berlin', '2026-02-11T01:00:00.000+01:00']);
    assert.equal(q.periods.monthly.timeZone, 'UTC');
  });
});
