// test-database: none (never opens the test database: `npm test` runs it in the embedded pass only; test/run.ts)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LosslessNumber } from 'lossless-json';
import { ApiError } from '../src/platform/errors.ts';
import { amount } from '../src/platform/money.ts';
import { controlsFromWire, ruleView, type VelocityRule } from '../src/domains/velocity/testing.ts';
import { mergeQuota, relevantCurrencies, UsageBook, utilizationRate, type AppliedRule } from '../src/domains/velocity/testing.ts';
import { periodKeys } from '../src/domains/velocity/testing.ts';
import { zonedIso } from '../src/platform/time-zone.ts';

/** Pure parts of velocity: period keys, control-group validation, merging and quota math. */

const num = (text: string) => new LosslessNumber(text);
const text = (value: unknown) => (value instanceof LosslessNumber ? value.value : String(value));

function paramError(fn: () => unknown, field: string) {
  assert.throws(fn, (err: unknown) => err instanceof ApiError && err.code === 'DAPI_PARAM_INVALID' && err.message.includes(field));
}

function rule(ruleId: string, controls: Parameters<typeof controlsFromWire>[0], order = 0): VelocityRule {
  return {
    ruleId, partnerId: 'p', organizationId: 'o', ruleRef: ruleId, ruleName: `name-${ruleId}`, remark: null, status: 'ACTIVE',
    ruleVersion: 1, bindingCount: 0, createdAt: new Date(order), updatedAt: new Date(order), ...controlsFromWire(controls),
  };
}

describe('velocity period keys (2.11, D11)', () => {
  it('when the instant is the last millisecond of a quarter, then the keys are in that quarter; one ms later the next', () => {
    assert.deepEqual(periodKeys(new Date('2026-03-31T23:59:59.999Z')), { daily: '20260331', monthly: '202603', quarterly: '2026Q1', yearly: '2026' });
    assert.deepEqual(periodKeys(new Date('2026-04-01T00:00:00.000Z')), { daily: '20260401', monthly: '202604', quarterly: '2026Q2', yearly: '2026' });
    assert.deepEqual(periodKeys(new Date('2026-12-31T23:59:59.999Z')), { daily: '20261231', monthly: '202612', quarterly: '2026Q4', yearly: '2026' });
    assert.deepEqual(periodKeys(new Date('2027-01-01T00:00:00.000Z')), { daily: '20270101', monthly: '202701', quarterly: '2027Q1', yearly: '2027' });
  });

  it('when the local time zone would give another day, then UTC still decides', () => {
    // 2026-07-01T23:30 at UTC-02:00 is already July 2nd in UTC.
    assert.equal(periodKeys(new Date('2026-07-01T23:30:00-02:00')).daily, '20260702');
    assert.equal(periodKeys(new Date('2026-09-30T22:00:00-03:00')).quarterly, '2026Q4');
  });
});

describe('query-quota period bounds (D11, issue 31)', () => {
  it('when a bound is shown, then it has milliseconds as every response timestamp (D11), in UTC exactly D11\'s form, elsewhere with the offset', () => {
    const at = new Date('2026-05-17T12:00:00.123Z'); // a zone change's instant is not a whole second
    assert.equal(zonedIso(at, 'UTC'), '2026-05-17T12:00:00.123Z');
    assert.equal(zonedIso(at, 'Asia/Hong_Kong'), '2026-05-17T20:00:00.123+08:00');
    assert.equal(zonedIso(new Date('2026-11-01T04:00:00Z'), 'America/New_York'), '2026-11-01T00:00:00.000-04:00');
  });
});

describe('velocity control groups (2.10, D31)', () => {
  it('when no group is configured, then DAPI_PARAM_INVALID', () => {
    paramError(() => controlsFromWire({}), 'controlGroups');
    paramError(() => controlsFromWire({ purchaseControl: null, mccControl: null }), 'controlGroups');
  });

  it('when a limit group is empty, then DAPI_PARAM_INVALID rather than an empty object', () => {
    paramError(() => controlsFromWire({ purchaseControl: {} }), 'purchaseControl');
    paramError(() => controlsFromWire({ purchaseControl: { amountLimits: [], countLimits: {} } }), 'purchaseControl');
    paramError(() => controlsFromWire({ cashAdvanceControl: {} }), 'cashAdvanceControl');
  });

  it('when a currency repeats or an entry sets no cap, then DAPI_PARAM_INVALID naming the entry', () => {
    paramError(() => controlsFromWire({ purchaseControl: { amountLimits: [{ currency: 'USD', daily: 1 }, { currency: 'USD', monthly: 2 }] } }),
      'purchaseControl.amountLimits[1].currency');
    paramError(() => controlsFromWire({ purchaseControl: { amountLimits: [{ currency: 'HKD' }] } }), 'purchaseControl.amountLimits[0]');
    paramError(() => controlsFromWire({ purchaseControl: { amountLimits: [{ currency: 'EUR', daily: 1 }] } }), 'currency');
  });

  it('when an amount has 3 decimals or is zero, then DAPI_PARAM_INVALID; 2 decimals are kept exactly', () => {
    paramError(() => controlsFromWire({ purchaseControl: { amountLimits: [{ currency: 'USD', daily: num('1.001') }] } }), 'daily');
    paramError(() => controlsFromWire({ purchaseControl: { amountLimits: [{ currency: 'USD', daily: 0 }] } }), 'daily');
    const c = controlsFromWire({ purchaseControl: { amountLimits: [{ currency: 'USD', daily: num('12345678901234567.99') }] } });
    assert.equal(c.purchaseControl!.amountLimits[0].daily!.toFixed(), '12345678901234567.99');
  });

  it('when filter values are malformed or repeated, then DAPI_PARAM_INVALID naming the value', () => {
    paramError(() => controlsFromWire({ mccControl: { filterType: 'WHITELIST', values: ['599'] } }), 'mccControl.values[0]');
    paramError(() => controlsFromWire({ geographicControl: { filterType: 'BLACKLIST', values: ['US', 'US'] } }), 'geographicControl.values[1]');
    paramError(() => controlsFromWire({ currencyControl: { filterType: 'WHITELIST', values: ['usd'] } }), 'currencyControl.values[0]');
  });

  it('when only some groups are set, then the others read back as null and an empty countLimits as null', () => {
    const view = ruleView(rule('r1', { purchaseControl: { amountLimits: [{ currency: 'USD', daily: num('10.5') }], countLimits: {} } }));
    assert.equal(view.cashAdvanceControl, null);
    assert.equal(view.currencyControl, null);
    assert.equal(view.mccControl, null);
    assert.equal(view.geographicControl, null);
    assert.equal(view.purchaseControl!.countLimits, null);
    assert.equal(text(view.purchaseControl!.amountLimits[0].daily), '10.5');
    assert.equal(view.purchaseControl!.amountLimits[0].monthly, null);
    assert.equal(view.bindingCount, '0');
  });

  it('when cashAdvanceControl gives only allowed=false, then it is configured with no limits', () => {
    const view = ruleView(rule('r1', { cashAdvanceControl: { allowed: false } }));
    assert.deepEqual(view.cashAdvanceControl, { allowed: false, amountLimits: [], countLimits: null });
  });
});

describe('velocity merging (4.7 rule 1, D31, D46)', () => {
  const keys = periodKeys(new Date('2026-05-17T10:00:00Z'));

  it('utilizationRate is rounded half-up to two decimals', () => {
    assert.equal(utilizationRate(amount('37.5'), amount('100')).toFixed(), '37.5');
    assert.equal(utilizationRate(amount('1'), amount('3')).toFixed(), '33.33');
    assert.equal(utilizationRate(amount('2'), amount('3')).toFixed(), '66.67');
    assert.equal(utilizationRate(amount('0.00125'), amount('1')).toFixed(), '0.13'); // 0.125 -> 0.13 (half-up)
    assert.equal(utilizationRate(amount('150'), amount('100')).toFixed(), '150');
  });

  it('when two rules cap the same dimension, then the smaller cap wins with its rule id; uncapped periods stay null', () => {
    const a = rule('A', { purchaseControl: { amountLimits: [{ currency: 'USD', daily: 500, monthly: 1000, perTransaction: 200 }], countLimits: { daily: 5 } } }, 1);
    const b = rule('B', { purchaseControl: { amountLimits: [{ currency: 'USD', daily: 300, monthly: 3000, perTransaction: 250 }], countLimits: { daily: 9, monthly: 20 } } }, 2);
    const applied: AppliedRule[] = [{ rule: a, scope: 'CARD' }, { rule: b, scope: 'CARD' }];
    const usage = new UsageBook([
      { subjectType: 'CARD', control: 'PURCHASE', currency: 'USD', period: 'daily', usedAmount: amount('120'), usedCount: 2 },
      { subjectType: 'CARD', control: 'PURCHASE', currency: 'HKD', period: 'daily', usedAmount: amount('80'), usedCount: 1 },
    ]);
    const q = mergeQuota({ subjectType: 'CARD', applied, usage, periodKeys: keys, currencies: ['USD'], settlementCurrencies: ['USD'] });
    const usd = q.purchase.amountLimits[0];
    assert.equal(text(usd.daily.limitAmount), '300');
    assert.equal(usd.daily.sourceRuleId, 'B');
    assert.equal(text(usd.daily.usedAmount), '120');
    assert.equal(text(usd.daily.remainingAmount), '180');
    assert.equal(text(usd.daily.utilizationRate), '40');
    assert.equal(text(usd.monthly.limitAmount), '1000');
    assert.equal(usd.monthly.sourceRuleId, 'A');
    assert.equal(text(usd.perTransaction.limitAmount), '200');
    assert.equal(usd.perTransaction.sourceRuleId, 'A');
    assert.equal(usd.quarterly.limitAmount, null);
    assert.equal(usd.quarterly.remainingAmount, null);
    assert.equal(usd.quarterly.utilizationRate, null);
    assert.equal(usd.quarterly.sourceRuleId, null);
    assert.equal(usd.quarterly.periodKey, '2026Q2');
    // Counts span currencies: 2 USD + 1 HKD.
    assert.equal(q.purchase.countLimits.daily.limitCount, 5);
    assert.equal(q.purchase.countLimits.daily.usedCount, 3);
    assert.equal(q.purchase.countLimits.daily.remainingCount, 2);
    assert.equal(text(q.purchase.countLimits.daily.utilizationRate), '60');
    assert.equal(q.purchase.countLimits.monthly.sourceRuleId, 'B');
    assert.equal(q.purchase.countLimits.yearly.limitCount, null);
    assert.deepEqual(q.appliedRules.map((r) => r.ruleId), ['A', 'B']);
  });

  it('when usage exceeds the cap, then remaining is negative and the rate above 100', () => {
    const a = rule('A', { purchaseControl: { amountLimits: [{ currency: 'HKD', daily: num('100.10') }], countLimits: { daily: 1 } } });
    const usage = new UsageBook([
      { subjectType: 'CUSTOMER', control: 'PURCHASE', currency: 'HKD', period: 'daily', usedAmount: amount('150.15'), usedCount: 2 },
    ]);
    const q = mergeQuota({ subjectType: 'CUSTOMER', applied: [{ rule: a, scope: 'CUSTOMER' }], usage, periodKeys: keys, currencies: ['HKD'], settlementCurrencies: null });
    assert.equal(text(q.purchase.amountLimits[0].daily.remainingAmount), '-50.05');
    assert.equal(text(q.purchase.amountLimits[0].daily.utilizationRate), '150');
    assert.equal(q.purchase.countLimits.daily.remainingCount, -1);
    assert.equal(q.purchase.amountLimits[0].effective, true);
    assert.equal(q.purchase.amountLimits[0].ineffectiveReason, null);
  });

  it('when an employee rule measures more usage than the card rule, then the least headroom decides', () => {
    const cardRule = rule('C', { purchaseControl: { amountLimits: [{ currency: 'USD', daily: 500 }] } }, 1);
    const employeeRule = rule('E', { purchaseControl: { amountLimits: [{ currency: 'USD', daily: 1000 }] } }, 2);
    const usage = new UsageBook([
      { subjectType: 'CARD', control: 'PURCHASE', currency: 'USD', period: 'daily', usedAmount: amount('100'), usedCount: 1 },
      { subjectType: 'CUSTOMER', control: 'PURCHASE', currency: 'USD', period: 'daily', usedAmount: amount('900'), usedCount: 4 },
    ]);
    const q = mergeQuota({
      subjectType: 'CARD', applied: [{ rule: cardRule, scope: 'CARD' }, { rule: employeeRule, scope: 'CUSTOMER' }], usage,
      periodKeys: keys, currencies: ['USD'], settlementCurrencies: ['USD'],
    });
    const daily = q.purchase.amountLimits[0].daily;
    assert.equal(daily.sourceRuleId, 'E');
    assert.equal(text(daily.remainingAmount), '100');
    assert.equal(text(daily.usedAmount), '900');
  });

  it('when a currency is not a settlement currency of the card, then effective=false with NOT_CARD_SETTLEMENT_CURRENCY', () => {
    const a = rule('A', { purchaseControl: { amountLimits: [{ currency: 'HKD', daily: 100 }, { currency: 'USD', daily: 50 }] } });
    const applied: AppliedRule[] = [{ rule: a, scope: 'CARD' }];
    const currencies = relevantCurrencies(applied, ['USD']);
    assert.deepEqual(currencies, ['USD', 'HKD']);
    const q = mergeQuota({ subjectType: 'CARD', applied, usage: new UsageBook([]), periodKeys: keys, currencies, settlementCurrencies: ['USD'] });
    const hkd = q.purchase.amountLimits.find((l) => l.currency === 'HKD')!;
    assert.equal(hkd.effective, false);
    assert.equal(hkd.ineffectiveReason, 'NOT_CARD_SETTLEMENT_CURRENCY');
    assert.equal(text(hkd.daily.limitAmount), '100');
    assert.equal(q.purchase.amountLimits.find((l) => l.currency === 'USD')!.effective, true);
  });

  it('when any rule turns cash advance off, then allowed=false naming that rule; caps still merge', () => {
    const a = rule('A', { cashAdvanceControl: { allowed: true, amountLimits: [{ currency: 'USD', daily: 300 }] } }, 1);
    const b = rule('B', { cashAdvanceControl: { allowed: false } }, 2);
    const q = mergeQuota({
      subjectType: 'CARD', applied: [{ rule: a, scope: 'CARD' }, { rule: b, scope: 'CARD' }], usage: new UsageBook([]),
      periodKeys: keys, currencies: ['USD'], settlementCurrencies: ['USD'],
    });
    assert.equal(q.cashAdvance.allowed, false);
    assert.equal(q.cashAdvance.sourceRuleId, 'B');
    assert.equal(text(q.cashAdvance.amountLimits[0].daily.limitAmount), '300');
    const none = mergeQuota({ subjectType: 'CARD', applied: [{ rule: a, scope: 'CARD' }], usage: new UsageBook([]), periodKeys: keys, currencies: [], settlementCurrencies: ['USD'] });
    assert.equal(none.cashAdvance.allowed, true);
    assert.equal(none.cashAdvance.sourceRuleId, null);
  });
});
