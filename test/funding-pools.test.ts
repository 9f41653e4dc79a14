import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { admin, decimal, expectCode, money, newCompany } from './helpers/companies.ts';
import type { CardServiceClient } from '../sdk/index.ts';
import { cardWorld, issueCard } from './helpers/cards.ts';

const DEPOSIT = '/open-api/sandbox/v1/simulate/deposit';

describe('funding pools: deposits, balances, statement (D29, D40, D48)', () => {
  let svc: TestService;
  let client: CardServiceClient;

  before(async () => {
    svc = await startService();
    ({ client } = await svc.newPartner());
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  const deposit = (organizationId: string, currency: string, amount: string) =>
    client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: organizationId, currency, amount: decimal(amount) });

  /** A deposit that must fail with `code`, leaving balances and statement untouched. */
  async function expectDepositRefused(organizationId: string, body: Record<string, unknown>, code: string, field?: string) {
    const balance = await client.funding.balance(organizationId);
    const statement = await client.funding.statement({ organizationId, pageSize: 100 });
    const err = await expectCode(client.http.call('POST', DEPOSIT, { body: { subjectType: 'ORGANIZATION', subjectId: organizationId, ...body } }), code, field);
    assert.deepEqual(await client.funding.balance(organizationId), balance, 'balances unchanged');
    assert.deepEqual(await client.funding.statement({ organizationId, pageSize: 100 }), statement, 'statement unchanged');
    return err;
  }

  it('deposits land in the pool of their currency as available balance, exactly', async () => {
    const org = await newCompany(client);
    const first = await deposit(org.organizationId, 'USD', '100.10');
    assert.equal(money(first.amount), '100.10');
    assert.equal(money(first.available), '100.10');
    assert.equal(money(first.pending), '0.00');
    assert.equal(money(first.total), '100.10');
    await deposit(org.organizationId, 'USD', '0.20');
    await deposit(org.organizationId, 'HKD', '99999999999999.99');
    const balance = await client.funding.balance(org.organizationId);
    assert.equal(balance.organizationId, org.organizationId);
    assert.deepEqual(balance.pools.map((p) => [p.currency, money(p.available), money(p.pending), money(p.total)]), [
      ['USD', '100.30', '0.00', '100.30'],
      ['HKD', '99999999999999.99', '0.00', '99999999999999.99'],
    ]);
  });

  it('the statement lists every pool movement newest first, with balances after each; filters by currency and time', async () => {
    const org = await newCompany(client);
    const t0 = new Date(svc.clock.now()).toISOString();
    const a = await deposit(org.organizationId, 'USD', '10.00');
    svc.clock.advance(1000);
    const t1 = new Date(svc.clock.now()).toISOString();
    const b = await deposit(org.organizationId, 'HKD', '20.50');
    svc.clock.advance(1000);
    const t2 = new Date(svc.clock.now()).toISOString();
    const c = await deposit(org.organizationId, 'USD', '5.25');
    const all = await client.funding.statement({ organizationId: org.organizationId });
    assert.equal(all.total, 3);
    assert.deepEqual(all.result.map((l) => l.postingId), [c.postingId, b.postingId, a.postingId]);
    const [last] = all.result;
    assert.equal(last.type, 'DEPOSIT');
    assert.equal(last.currency, 'USD');
    assert.equal(money(last.amount), '5.25');
    assert.equal(money(last.availableChange), '5.25');
    assert.equal(money(last.pendingChange), '0.00');
    assert.equal(money(last.availableAfter), '15.25');
    assert.equal(money(last.totalAfter), '15.25');
    assert.match(last.statementId, /^st\d+$/);
    assert.equal(new Set(all.result.map((l) => l.statementId)).size, 3);

    const usd = await client.funding.statement({ organizationId: org.organizationId, currency: 'USD' });
    assert.deepEqual(usd.result.map((l) => l.postingId), [c.postingId, a.postingId]);
    const window = await client.funding.statement({ organizationId: org.organizationId, startTime: t1, endTime: t2 });
    assert.deepEqual(window.result.map((l) => l.postingId), [b.postingId], 'startTime inclusive, endTime exclusive');
    const paged = await client.funding.statement({ organizationId: org.organizationId, page: 2, pageSize: 2 });
    assert.deepEqual(paged.result.map((l) => l.postingId), [a.postingId]);
    assert.equal(paged.total, 3);
    assert.equal((await client.funding.statement({ organizationId: org.organizationId, startTime: t0, currency: 'HKD' })).total, 1);

    await expectCode(client.funding.statement({ organizationId: org.organizationId, currency: 'EUR' as 'USD' }), 'DAPI_PARAM_INVALID', 'currency');
    await expectCode(client.funding.statement({ organizationId: org.organizationId, startTime: 'yesterday' }), 'DAPI_PARAM_INVALID', 'startTime');
    await expectCode(client.funding.statement({ organizationId: org.organizationId, startTime: t1, endTime: t0 }), 'DAPI_PARAM_INVALID', 'endTime');
    await expectCode(client.funding.statement({ organizationId: org.organizationId, pageSize: 101 }), 'DAPI_PARAM_INVALID', 'pageSize');
    await expectCode(client.funding.statement({ organizationId: 'org-missing' }), 'ORGANIZATION_INVALID');
    await expectCode(client.funding.balance('org-missing'), 'ORGANIZATION_INVALID');
    await expectCode(client.funding.balance('o'.repeat(21)), 'DAPI_PARAM_INVALID', 'organizationId');
  });

  it('amount bounds: positive, at most two decimals, a JSON number', async () => {
    const org = await newCompany(client);
    await deposit(org.organizationId, 'USD', '0.01');
    for (const amount of [decimal('0'), decimal('0.00'), decimal('-1.00'), decimal('1.001'), decimal('1e3'), '10.00', null]) {
      await expectDepositRefused(org.organizationId, { currency: 'USD', amount }, 'DAPI_PARAM_INVALID', 'amount');
    }
    await expectDepositRefused(org.organizationId, { currency: 'USD' }, 'DAPI_PARAM_INVALID', 'amount');
  });

  it('currency: USD or HKD (UNSUPPORTED_CURRENCY for another ISO code), and a pool must exist (CURRENCY_NOT_ALLOWED)', async () => {
    const org = await newCompany(client, { fundingCurrencies: ['USD'] });
    await expectDepositRefused(org.organizationId, { currency: 'EUR', amount: decimal('1.00') }, 'UNSUPPORTED_CURRENCY');
    await expectDepositRefused(org.organizationId, { currency: 'usd', amount: decimal('1.00') }, 'DAPI_PARAM_INVALID', 'currency');
    await expectDepositRefused(org.organizationId, { currency: 'HKD', amount: decimal('1.00') }, 'CURRENCY_NOT_ALLOWED');
  });

  it('subject: an unknown, foreign or TERMINATED company is SUBJECT_INVALID; a non-enumerated subjectType is DAPI_PARAM_INVALID', async () => {
    const org = await newCompany(client);
    await expectCode(deposit('org-missing', 'USD', '1.00'), 'SUBJECT_INVALID');
    const { client: other } = await svc.newPartner();
    await expectCode(other.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: org.organizationId, currency: 'USD', amount: decimal('1.00') }), 'SUBJECT_INVALID');
    await expectDepositRefused(org.organizationId, { subjectType: 'CUSTOMER', currency: 'USD', amount: decimal('1.00') }, 'DAPI_PARAM_INVALID', 'subjectType');
    await admin(svc).terminateOrganization(org.organizationId);
    await expectDepositRefused(org.organizationId, { currency: 'USD', amount: decimal('1.00') }, 'SUBJECT_INVALID');
  });

  it('CASH_IN_FROZEN refuses deposits (CAPABILITY_FROZEN); other codes do not; lifting it allows them again', async () => {
    const org = await newCompany(client);
    await client.organizations.updateRestrictions(org.organizationId, { addRestrictions: ['PAYMENT_FROZEN', 'CARD_FROZEN', 'CASH_OUT_FROZEN', 'ACCOUNT_FROZEN'] });
    await deposit(org.organizationId, 'USD', '1.00');
    await client.organizations.updateRestrictions(org.organizationId, { addRestrictions: ['CASH_IN_FROZEN'] });
    const err = await expectDepositRefused(org.organizationId, { currency: 'USD', amount: decimal('5.00') }, 'CAPABILITY_FROZEN');
    assert.deepEqual(err.data, { errorCode: 'CASH_IN_FROZEN', errorMsg: `Organization ${org.organizationId}: CASH_IN_FROZEN` });
    // A RISK-held CASH_IN_FROZEN survives the partner lifting its own.
    await admin(svc).restrictions({ subjectType: 'ORGANIZATION', subjectId: org.organizationId, addRestrictions: ['CASH_IN_FROZEN'], source: 'RISK' });
    await client.organizations.updateRestrictions(org.organizationId, { removeRestrictions: ['CASH_IN_FROZEN'] });
    await expectDepositRefused(org.organizationId, { currency: 'USD', amount: decimal('5.00') }, 'CAPABILITY_FROZEN');
    await admin(svc).restrictions({ subjectType: 'ORGANIZATION', subjectId: org.organizationId, removeRestrictions: ['CASH_IN_FROZEN'], source: 'RISK' });
    const ok = await deposit(org.organizationId, 'USD', '5.00');
    assert.equal(money(ok.available), '6.00');
    // A suspended company receives nothing either.
    await admin(svc).suspend('ORGANIZATION', org.organizationId, true);
    const suspended = await expectDepositRefused(org.organizationId, { currency: 'USD', amount: decimal('5.00') }, 'CAPABILITY_FROZEN');
    assert.equal((suspended.data as { errorCode: string }).errorCode, 'SUSPENDED');
  });
  it('D57: fund/v1/balance lists every dedicated card of the company, zeros before its first movement, in every status', async () => {
    const w = await cardWorld(svc);
    const lines = async (organizationId = w.org.organizationId) => (await w.client.funding.balance(organizationId)).cards
      .map((c) => [c.cardId, c.currency, money(c.available), money(c.pending), money(c.total)]);
    assert.deepEqual(await lines(), [], 'no dedicated card yet');
    const first = await issueCard(svc, w, { profile: 'sbx-visa-dedicated' });
    const shared = await issueCard(svc, w, { profile: 'sbx-visa-shared' });
    const second = await issueCard(svc, w, { profile: 'sbx-mc-dedicated' });
    assert.deepEqual(await lines(), [
      [first.cardId, first.currency, '0.00', '0.00', '0.00'],
      [second.cardId, second.currency, '0.00', '0.00', '0.00'],
    ], 'both dedicated cards, oldest first, before any movement; the shared card has no balance of its own');
    assert.ok(!(await lines()).some(([cardId]) => cardId === shared.cardId));
    // Receiving accounts in two currencies: one line per currency; a deposit moves its line.
    await w.client.cards.openVa(first.cardId, ['USD', 'HKD']);
    await w.client.sandbox.deposit({ subjectType: 'CARD', subjectId: first.cardId, currency: 'HKD', amount: decimal('12.30') });
    assert.deepEqual(await lines(), [
      [first.cardId, 'HKD', '12.30', '0.00', '12.30'],
      [first.cardId, 'USD', '0.00', '0.00', '0.00'],
      [second.cardId, second.currency, '0.00', '0.00', '0.00'],
    ]);
    // A cancelled dedicated card stays on the list (its history is the company's).
    await w.client.cards.cancel(second.cardId);
    assert.ok((await lines()).some(([cardId]) => cardId === second.cardId));
    // Another company of the partner, and another partner, do not see these cards.
    const otherCompany = await newCompany(w.client);
    assert.deepEqual(await lines(otherCompany.organizationId), []);
    await expectCode(client.funding.balance(w.org.organizationId), 'ORGANIZATION_INVALID');
  });
});
