import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decimal, type CreateRuleParams } from '../sdk/index.ts';

type ControlGroupsInput = Omit<CreateRuleParams, 'organizationId' | 'ruleRef' | 'ruleName'>;
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { assertDeclined, fundedCard, fundsOf, networkClient, purchase, text, usageOf, type SpendWorld } from './helpers/authorization.ts';
import { cardWorld, outboxEvents, ref } from './helpers/cards.ts';
import { expectCode, uniqueRef } from './helpers/companies.ts';

/**
 * The authorization pipeline (D34) stage by stage: each decline carries its D47 reason and changes
 * no balance and no usage (only the declined record and its event are written).
 */
describe('authorization pipeline (D20, D31, D32, D34, D45, D47)', () => {
  let svc: TestService;
  before(async () => { svc = await startService(); });
  after(async () => {
    const report = await svc.admin.call<{ ok: boolean; findings: unknown[] }>('GET', '/internal/admin/v1/ledger/audit');
    assert.deepEqual(report.findings, [], 'the ledger audit is clean after the file');
    await svc.close();
    await closeTestDatabase();
  });

  /** Balances and usage of the card's funds and subjects: a decline must leave all of them equal. */
  async function state(w: SpendWorld) {
    // query-quota answers SUBJECT_INVALID for a CANCELLED card or a TERMINATED employee (D47): read the counters then.
    const usage = async (...args: Parameters<typeof usageOf>) => usageOf(...args).catch((err: { code?: string }) => {
      if (err.code !== 'SUBJECT_INVALID') throw err;
      return svc.db.query('SELECT subject_type, control, period, period_key, used_amount::text, used_count::text FROM velocity_usage WHERE subject_id = ANY($1::text[]) ORDER BY 1, 2, 3, 4',
        [[w.card.cardId, w.employee.customerId]]);
    });
    return {
      funds: await fundsOf(w),
      cardUsage: await usage(w),
      employeeUsage: w.card.subjectType === 'CUSTOMER' ? await usage(w, { subjectType: 'CUSTOMER', subjectId: w.employee.customerId }) : null,
      cashUsage: await usage(w, { subjectType: 'CARD', subjectId: w.card.cardId }, 'cashAdvance'),
    };
  }

  async function expectDecline(w: SpendWorld, body: Record<string, unknown>, reason: string, detail?: string | RegExp) {
    const before = await state(w);
    const t = await w.client.sandbox.authorize(body as never);
    assertDeclined(t, reason);
    if (detail instanceof RegExp) assert.match(t.declineDetail ?? '', detail);
    else if (detail !== undefined) assert.equal(t.declineDetail, detail);
    assert.deepEqual(await state(w), before, `${reason}: no balance or usage changed`);
    return t;
  }

  async function withRule(w: SpendWorld, controls: ControlGroupsInput): Promise<string> {
    const rule = await w.client.velocity.createRule({ organizationId: w.org.organizationId, ruleRef: uniqueRef('rule'), ruleName: 'test rule', ...controls });
    await w.client.velocity.bindRule({ organizationId: w.org.organizationId, ruleId: rule.ruleId, subjectType: 'CARD', subjectIds: [w.card.cardId] });
    return rule.ruleId;
  }

  it('when a funded employee card buys, then free moves to freeze exactly and usage counts for card and employee', async () => {
    const w = await fundedCard(svc, { funds: '20.00' });
    const t = await w.client.sandbox.authorize(purchase(w.card.cardId, '12.35'));
    assert.equal(t.approved, true);
    assert.equal(t.status, 'PENDING');
    assert.equal(t.declineReason, null);
    assert.equal(t.authType, 'EXPEND');
    assert.equal(t.debitCreditIndicator, 'D');
    assert.ok(t.transId.length <= 20 && t.outstandingTransactionId);
    assert.equal(text(t.amount), '12.35');
    assert.equal(text(t.billingAmount), '12.35');
    assert.equal(text(t.holdAmount), '12.35');
    assert.deepEqual(await fundsOf(w), { available: '7.65', pending: '12.35', total: '20.00' });
    assert.deepEqual(await usageOf(w), { amount: '12.35', count: 1 });
    assert.deepEqual(await usageOf(w, { subjectType: 'CUSTOMER', subjectId: w.employee.customerId }), { amount: '12.35', count: 1 });
    const events = await outboxEvents(svc, 'CARD_TRANSACTION', w.card.cardId);
    assert.equal(events.length, 1);
    assert.equal(events[0].data.transId, t.transId);
    assert.equal(events[0].data.status, 'PENDING');
    const listed = await w.client.transactions.list({ cardId: w.card.cardId });
    assert.equal(listed.total, 1);
    assert.equal(listed.result[0].transId, t.transId);
  });

  it('when the card is unknown or another partner\'s, then CARD_INVALID and no record at all', async () => {
    const w = await fundedCard(svc);
    const other = await svc.newPartner();
    const [{ n: before }] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_transactions');
    await expectCode(w.client.sandbox.authorize(purchase('cd-does-not-exist', '1.00')), 'CARD_INVALID');
    await expectCode(other.client.sandbox.authorize(purchase(w.card.cardId, '1.00')), 'CARD_INVALID');
    const [{ n: after }] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_transactions');
    assert.equal(after, before);
  });

  it('when the card is BLOCKED or CANCELLED, then CARD_BLOCKED / CARD_CANCELLED (D47)', async () => {
    const w = await fundedCard(svc);
    await w.client.cards.block(w.card.cardId);
    await expectDecline(w, purchase(w.card.cardId, '1.00'), 'CARD_BLOCKED');
    await w.client.cards.unblock(w.card.cardId);
    assert.equal((await w.client.sandbox.authorize(purchase(w.card.cardId, '1.00'))).approved, true);
    const d = await fundedCard(svc, { world: w, funds: '0' });
    await d.client.cards.cancel(d.card.cardId);
    await expectDecline(d, purchase(d.card.cardId, '1.00'), 'CARD_CANCELLED');
  });

  it('when the employee or the company is frozen for payments, then CAPABILITY_FROZEN naming subject and code (D20)', async () => {
    const w = await fundedCard(svc);
    await w.client.customers.updateRestrictions(w.employee.customerId, { addRestrictions: ['PAYMENT_FROZEN'] });
    await expectDecline(w, purchase(w.card.cardId, '1.00'), 'CAPABILITY_FROZEN', 'CUSTOMER:PAYMENT_FROZEN');
    await w.client.customers.updateRestrictions(w.employee.customerId, { removeRestrictions: ['PAYMENT_FROZEN'] });
    // Other codes do not stop spending.
    await w.client.customers.updateRestrictions(w.employee.customerId, { addRestrictions: ['CARD_FROZEN', 'CASH_IN_FROZEN'] });
    assert.equal((await w.client.sandbox.authorize(purchase(w.card.cardId, '1.00'))).approved, true);
    await w.client.organizations.updateRestrictions(w.org.organizationId, { addRestrictions: ['ACCOUNT_FROZEN'] });
    await expectDecline(w, purchase(w.card.cardId, '1.00'), 'CAPABILITY_FROZEN', 'ORGANIZATION:ACCOUNT_FROZEN');
  });

  it('when the employee is terminated, then the card is cancelled and declines (D16, D47)', async () => {
    const w = await fundedCard(svc);
    await w.client.customers.terminate(w.employee.customerId);
    await expectDecline(w, purchase(w.card.cardId, '1.00'), 'CARD_CANCELLED');
  });

  it('D45: a company card checks company and partner, not the custodian, and counts usage on the card only', async () => {
    const w = await fundedCard(svc, { company: true });
    await w.client.customers.updateRestrictions(w.employee.customerId, { addRestrictions: ['PAYMENT_FROZEN', 'ACCOUNT_FROZEN'] });
    const t = await w.client.sandbox.authorize(purchase(w.card.cardId, '3.00'));
    assert.equal(t.approved, true, 'a frozen custodian does not stop a company card');
    assert.deepEqual(await usageOf(w), { amount: '3', count: 1 });
    assert.deepEqual(await usageOf(w, { subjectType: 'CUSTOMER', subjectId: w.employee.customerId }), { amount: '0', count: 0 });
    await w.client.organizations.updateRestrictions(w.org.organizationId, { addRestrictions: ['PAYMENT_FROZEN'] });
    await expectDecline(w, purchase(w.card.cardId, '1.00'), 'CAPABILITY_FROZEN', 'ORGANIZATION:PAYMENT_FROZEN');
  });

  it('when the partner is disabled, then the network\'s authorization declines CAPABILITY_FROZEN (partner stage)', async () => {
    const w = await fundedCard(svc);
    const network = await networkClient(svc);
    await svc.admin.updatePartner(w.partner.partnerId, { status: 'DISABLED' });
    try {
      const t = await network.call<{ approved: boolean; declineReason: string; declineDetail: string }>('POST', '/internal/network/v1/authorization', {
        body: { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '1.00') },
      });
      assert.equal(t.approved, false);
      assert.equal(t.declineReason, 'CAPABILITY_FROZEN');
      assert.equal(t.declineDetail, 'PARTNER:DISABLED');
    } finally {
      await svc.admin.updatePartner(w.partner.partnerId, { status: 'ACTIVE' });
    }
  });

  it('velocity: per-transaction, daily amount and daily count caps decline VELOCITY_LIMIT_EXCEEDED (D31)', async () => {
    const w = await fundedCard(svc);
    const ruleId = await withRule(w, {
      purchaseControl: { amountLimits: [{ currency: 'USD', perTransaction: decimal('10.00'), daily: decimal('15.00') }], countLimits: { daily: 3 } },
    });
    await expectDecline(w, purchase(w.card.cardId, '10.01'), 'VELOCITY_LIMIT_EXCEEDED', `${ruleId}:PER_TRANSACTION`);
    assert.equal((await w.client.sandbox.authorize(purchase(w.card.cardId, '10.00'))).approved, true);
    await expectDecline(w, purchase(w.card.cardId, '5.01'), 'VELOCITY_LIMIT_EXCEEDED', `${ruleId}:DAILY`);
    assert.equal((await w.client.sandbox.authorize(purchase(w.card.cardId, '5.00'))).approved, true, 'exactly at the cap');
  });

  it('velocity: the count cap spans the period', async () => {
    const w = await fundedCard(svc);
    const ruleId = await withRule(w, { purchaseControl: { countLimits: { daily: 2 } } });
    assert.equal((await w.client.sandbox.authorize(purchase(w.card.cardId, '1.00'))).approved, true);
    assert.equal((await w.client.sandbox.authorize(purchase(w.card.cardId, '1.00'))).approved, true);
    await expectDecline(w, purchase(w.card.cardId, '1.00'), 'VELOCITY_LIMIT_EXCEEDED', `${ruleId}:DAILY_COUNT`);
  });

  it('velocity: an employee-bound cap measures the employee across cards (D32)', async () => {
    const w = await fundedCard(svc);
    const second = await fundedCard(svc, { world: w, funds: '0' });
    const rule = await w.client.velocity.createRule({
      organizationId: w.org.organizationId, ruleRef: uniqueRef('rule'), ruleName: 'employee cap',
      purchaseControl: { amountLimits: [{ currency: 'USD', daily: decimal('10.00') }] },
    });
    await w.client.velocity.bindRule({ organizationId: w.org.organizationId, ruleId: rule.ruleId, subjectType: 'CUSTOMER', subjectIds: [w.employee.customerId] });
    assert.equal((await w.client.sandbox.authorize(purchase(w.card.cardId, '6.00'))).approved, true);
    await expectDecline(second, purchase(second.card.cardId, '4.01'), 'VELOCITY_LIMIT_EXCEEDED', `${rule.ruleId}:DAILY`);
    assert.equal((await w.client.sandbox.authorize(purchase(second.card.cardId, '4.00'))).approved, true);
  });

  it('velocity filters: MCC, country and currency lists, and cash advance on the ATM channel (D31, D32)', async () => {
    const w = await fundedCard(svc);
    await withRule(w, {
      mccControl: { filterType: 'BLACKLIST', values: ['7995'] },
      geographicControl: { filterType: 'WHITELIST', values: ['HK', 'SG'] },
      currencyControl: { filterType: 'WHITELIST', values: ['USD', 'HKD'] },
      cashAdvanceControl: { allowed: false },
    });
    await expectDecline(w, purchase(w.card.cardId, '1.00', { mcc: '7995' }), 'MCC_NOT_ALLOWED');
    await expectDecline(w, purchase(w.card.cardId, '1.00', { merchantCountry: 'US' }), 'COUNTRY_NOT_ALLOWED');
    await expectDecline(w, purchase(w.card.cardId, '1.00', { currency: 'EUR', billingAmount: decimal('1.10'), billingCurrency: 'USD' }), 'CURRENCY_NOT_ALLOWED');
    await expectDecline(w, purchase(w.card.cardId, '1.00', { channel: 'ATM' }), 'CASH_ADVANCE_NOT_ALLOWED');
    assert.equal((await w.client.sandbox.authorize(purchase(w.card.cardId, '1.00', { merchantCountry: 'SG' }))).approved, true);
  });

  it('the ATM channel counts as cash advance, not purchase (D32)', async () => {
    const w = await fundedCard(svc);
    assert.equal((await w.client.sandbox.authorize(purchase(w.card.cardId, '20.00', { channel: 'ATM' }))).approved, true);
    assert.deepEqual(await usageOf(w, { subjectType: 'CARD', subjectId: w.card.cardId }, 'cashAdvance'), { amount: '20', count: 1 });
    assert.deepEqual(await usageOf(w), { amount: '0', count: 0 });
  });

  it('funds: INSUFFICIENT_BALANCE beyond free; a dedicated card spends only its own balance (D29)', async () => {
    const shared = await fundedCard(svc, { funds: '5.00' });
    await expectDecline(shared, purchase(shared.card.cardId, '5.01'), 'INSUFFICIENT_BALANCE');
    assert.equal((await shared.client.sandbox.authorize(purchase(shared.card.cardId, '5.00'))).approved, true);
    const dedicated = await fundedCard(svc, { dedicated: true, funds: '8.00' });
    await dedicated.client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: dedicated.org.organizationId, currency: 'USD', amount: decimal('1000.00') });
    await expectDecline(dedicated, purchase(dedicated.card.cardId, '8.01'), 'INSUFFICIENT_BALANCE');
    assert.equal((await dedicated.client.sandbox.authorize(purchase(dedicated.card.cardId, '8.00'))).approved, true);
    assert.deepEqual(await fundsOf(dedicated), { available: '0.00', pending: '8.00', total: '8.00' });
  });

  it('currency: a foreign currency needs the network\'s billing amount in a settlement currency', async () => {
    const w = await fundedCard(svc, { funds: '50.00' });
    await expectDecline(w, purchase(w.card.cardId, '1000', { currency: 'JPY' }), 'CURRENCY_NOT_ALLOWED', 'NOT_CARD_SETTLEMENT_CURRENCY');
    const t = await w.client.sandbox.authorize(purchase(w.card.cardId, '1000', { currency: 'JPY', billingAmount: decimal('6.70'), billingCurrency: 'USD' }));
    assert.equal(t.approved, true);
    assert.equal(text(t.amount), '1000');
    assert.equal(t.currency, 'JPY');
    assert.equal(text(t.billingAmount), '6.70');
    assert.deepEqual(await fundsOf(w), { available: '43.30', pending: '6.70', total: '50.00' });
  });

  it('50 concurrent 1.00 authorizations against a pool of 20.00 approve exactly 20 and leave available 0.00', async () => {
    const w = await fundedCard(svc, { funds: '20.00' });
    const cards = [w.card];
    for (let i = 0; i < 4; i++) cards.push((await fundedCard(svc, { world: w, funds: '0' })).card);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      w.client.sandbox.authorize(purchase(cards[i % cards.length].cardId, '1.00'))));
    const approved = results.filter((t) => t.approved);
    assert.equal(approved.length, 20);
    assert.ok(results.filter((t) => !t.approved).every((t) => t.declineReason === 'INSUFFICIENT_BALANCE'));
    assert.deepEqual(await fundsOf(w), { available: '0.00', pending: '20.00', total: '20.00' });
    const audit = await svc.admin.call<{ ok: boolean }>('GET', '/internal/admin/v1/ledger/audit', { query: { partnerId: w.partner.partnerId } });
    assert.equal(audit.ok, true);
  });

  it('concurrent authorizations never pass a velocity cap together', async () => {
    const w = await fundedCard(svc, { funds: '100.00' });
    await withRule(w, { purchaseControl: { amountLimits: [{ currency: 'USD', daily: decimal('7.00') }] } });
    const results = await Promise.all(Array.from({ length: 12 }, () => w.client.sandbox.authorize(purchase(w.card.cardId, '1.00'))));
    assert.equal(results.filter((t) => t.approved).length, 7);
    assert.deepEqual(await usageOf(w), { amount: '7', count: 7 });
  });

  it('bad input is DAPI_PARAM_INVALID naming the field and writes nothing', async () => {
    const w = await fundedCard(svc);
    const [{ n: before }] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_transactions');
    const cases: [Record<string, unknown>, string][] = [
      [{ amount: decimal('1.001') }, 'amount'],
      [{ currency: 'JPY', amount: decimal('1.5') }, 'amount'],
      [{ currency: 'XYZ' }, 'currency'],
      [{ currency: 'usd' }, 'currency'],
      [{ amount: decimal('-1.00') }, 'amount'],
      [{ amount: 0 }, 'amount'],
      [{ amount: '1.00' }, 'amount'],
      [{ amount: decimal('1e2') }, 'amount'],
      [{ mcc: '581' }, 'mcc'],
      [{ mcc: '58140' }, 'mcc'],
      [{ merchantCountry: 'ZZ' }, 'merchantCountry'],
      [{ merchantCountry: 'hk' }, 'merchantCountry'],
      [{ channel: 'MOTO' }, 'channel'],
      [{ merchantName: 'x'.repeat(101) }, 'merchantName'],
      [{ merchantName: 'a\u0000b' }, 'merchantName'],
      [{ merchantName: '' }, 'merchantName'],
      [{ billingAmount: decimal('1.00') }, 'billingCurrency'],
      [{ billingCurrency: 'USD' }, 'billingAmount'],
      [{ billingAmount: decimal('1.001'), billingCurrency: 'USD' }, 'billingAmount'],
      [{ billingAmount: decimal('1.00'), billingCurrency: 'EUR' }, 'billingCurrency'],
      [{ cardId: 'x'.repeat(33) }, 'cardId'],
    ];
    for (const [change, field] of cases) {
      await expectCode(w.client.sandbox.authorize({ ...purchase(w.card.cardId, '1.00'), ...change } as never), 'DAPI_PARAM_INVALID', field);
    }
    const [{ n: after }] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_transactions');
    assert.equal(after, before, 'no transaction recorded');
    assert.deepEqual(await fundsOf(w), { available: '100.00', pending: '0.00', total: '100.00' });
  });

  it('in the transaction\'s own currency the billing amount is the amount: another one is DAPI_PARAM_INVALID, for authorizations and refunds, and writes nothing', async () => {
    // docs/authorizations.md "Currencies": USD 50.00 billed USD 0.01 used to hold 0.01 and pass a USD 10.00 per-transaction cap (D31).
    const w = await fundedCard(svc, { funds: '100.00' });
    await withRule(w, { purchaseControl: { amountLimits: [{ currency: 'USD', perTransaction: decimal('10.00') }] } });
    const [{ n: before }] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_transactions WHERE card_id = $1', [w.card.cardId]);
    await expectCode(w.client.sandbox.authorize(purchase(w.card.cardId, '50.00', { billingAmount: decimal('0.01'), billingCurrency: 'USD' })), 'DAPI_PARAM_INVALID', 'billingAmount');
    await expectCode(w.client.sandbox.refund({ cardId: w.card.cardId, amount: decimal('1.00'), currency: 'USD', merchantName: 'x', billingAmount: decimal('500.00'), billingCurrency: 'USD' }),
      'DAPI_PARAM_INVALID', 'billingAmount');
    const network = await networkClient(svc);
    await expectCode(network.call('POST', '/internal/network/v1/authorization', {
      body: { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '50.00', { billingAmount: decimal('0.01'), billingCurrency: 'USD' }) },
    }), 'DAPI_PARAM_INVALID', 'billingAmount');
    const [{ n: after }] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_transactions WHERE card_id = $1', [w.card.cardId]);
    assert.equal(after, before, 'nothing recorded');
    assert.deepEqual(await fundsOf(w), { available: '100.00', pending: '0.00', total: '100.00' });
    // The same figure written either way is the amount; a conversion from another currency is the network's.
    const same = await w.client.sandbox.authorize(purchase(w.card.cardId, '5.00', { billingAmount: decimal('5.0'), billingCurrency: 'USD' }));
    assert.equal(same.approved, true);
    assert.equal(text(same.holdAmount), '5.00');
    const converted = await w.client.sandbox.authorize(purchase(w.card.cardId, '39.00', { currency: 'HKD', billingAmount: decimal('5.00'), billingCurrency: 'USD' }));
    assert.equal(converted.approved, true);
    assert.deepEqual(await fundsOf(w), { available: '90.00', pending: '10.00', total: '100.00' });
  });

  it('a declined authorization is recorded and listed with its reason, and a partner sees only its own', async () => {
    const w = await cardWorld(svc);
    const s = await fundedCard(svc, { world: w, funds: '1.00' });
    const declined = await s.client.sandbox.authorize(purchase(s.card.cardId, '2.00'));
    const page = await s.client.transactions.list({ organizationId: w.org.organizationId, status: 'DECLINED' });
    assert.equal(page.total, 1);
    assert.equal(page.result[0].transId, declined.transId);
    assert.equal(page.result[0].declineReason, 'INSUFFICIENT_BALANCE');
    const other = await svc.newPartner();
    assert.equal((await other.client.transactions.list({ cardId: s.card.cardId })).total, 0);
    await expectCode(other.client.transactions.query(declined.transId), 'TRANSACTION_NOT_FOUND');
  });
});

