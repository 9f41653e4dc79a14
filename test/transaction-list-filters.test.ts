import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decimal, type CardTransaction, type ListTransactionsParams } from '../sdk/index.ts';
import { closeWithCleanLedger } from './helpers/managed.ts';
import { startService, type TestService } from './helpers/service.ts';
import { fundedCard, purchase, type SpendWorld } from './helpers/authorization.ts';
import { cardWorld } from './helpers/cards.ts';
import { approvedEmployee, newCompany } from './helpers/companies.ts';

/**
 * GET /open-api-corp/transaction/v1/list (D9): every filter, alone and combined, answers exactly the
 * transactions of the unfiltered list that match it, newest first, with the matching total. The list's
 * statement holds only the filters given (issue 34 step 10), so each combination is checked here.
 */
describe('transaction list filters (D9)', () => {
  let svc: TestService;
  let a: SpendWorld;
  let b: SpendWorld;
  let all: CardTransaction[];
  let middle: string;

  before(async () => {
    svc = await startService();
    const world = await cardWorld(svc);
    // Card A: an employee card of the first company; card B: an employee card of a second company of the same partner.
    a = await fundedCard(svc, { world, funds: '50.00' });
    const org2 = await newCompany(world.client);
    const employee2 = await approvedEmployee(world.client, org2.organizationId);
    b = await fundedCard(svc, { world: { ...world, org: org2, employee: employee2 }, funds: '50.00' });

    const first = await a.client.sandbox.authorize(purchase(a.card.cardId, '1.00'));
    await a.client.sandbox.authorize(purchase(a.card.cardId, '1000.00')); // declined: above the pool
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await b.client.sandbox.authorize(purchase(b.card.cardId, '2.00'));
    middle = second.createTime;
    await a.client.sandbox.clear({ transId: first.transId, amount: decimal('1.00') });
    await b.client.sandbox.reverse({ transId: second.transId, amount: decimal('2.00') });
    await a.client.sandbox.refund({ cardId: a.card.cardId, amount: decimal('0.50'), currency: 'USD', merchantName: 'Blue Bottle Coffee', transId: first.transId });
    const page = await a.client.transactions.list({ pageSize: 100 });
    all = page.result;
    assert.equal(page.total, all.length);
  });
  after(() => closeWithCleanLedger(svc));

  async function expectFiltered(filter: ListTransactionsParams, match: (t: CardTransaction) => boolean) {
    const expected = all.filter(match).map((t) => t.transId);
    const page = await a.client.transactions.list({ ...filter, pageSize: 100 });
    assert.deepEqual(page.result.map((t) => t.transId), expected, JSON.stringify(filter));
    assert.equal(page.total, expected.length, `total of ${JSON.stringify(filter)}`);
    return expected.length;
  }

  it('the unfiltered list holds every kind of record, newest first', () => {
    const kinds = new Set(all.map((t) => `${t.messageType}/${t.status}/${t.authType}`));
    assert.ok(all.length >= 6 && kinds.size >= 4, `records of several kinds: ${[...kinds].join(', ')}`);
    const times = all.map((t) => t.createTime);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
  });

  it('each filter alone answers exactly the matching records and their total', async () => {
    assert.ok(await expectFiltered({ cardId: a.card.cardId }, (t) => t.cardId === a.card.cardId) >= 4);
    assert.ok(await expectFiltered({ cardId: b.card.cardId }, (t) => t.cardId === b.card.cardId) >= 1);
    assert.ok(await expectFiltered({ organizationId: b.org.organizationId }, (t) => t.organizationId === b.org.organizationId) >= 1);
    assert.ok(await expectFiltered({ customerId: a.employee.customerId },
      (t) => t.subjectType === 'CUSTOMER' && t.subjectId === a.employee.customerId) >= 4);
    for (const status of new Set(all.map((t) => t.status))) {
      assert.ok(await expectFiltered({ status }, (t) => t.status === status) >= 1);
    }
    for (const messageType of new Set(all.map((t) => t.messageType))) {
      assert.ok(await expectFiltered({ messageType }, (t) => t.messageType === messageType) >= 1);
    }
    const before = await expectFiltered({ endTime: middle }, (t) => t.createTime < middle);
    const since = await expectFiltered({ startTime: middle }, (t) => t.createTime >= middle);
    assert.ok(before >= 2 && since >= 1 && before + since === all.length);
  });

  it('filters combine, and one that matches nothing answers an empty page', async () => {
    assert.equal(await expectFiltered({ cardId: a.card.cardId, status: 'DECLINED' },
      (t) => t.cardId === a.card.cardId && t.status === 'DECLINED'), 1);
    await expectFiltered({ organizationId: a.org.organizationId, startTime: middle, messageType: 'AUTHORIZATION' },
      (t) => t.organizationId === a.org.organizationId && t.createTime >= middle && t.messageType === 'AUTHORIZATION');
    assert.equal(await expectFiltered({ cardId: b.card.cardId, customerId: a.employee.customerId }, () => false), 0);
    assert.equal(await expectFiltered({ startTime: middle, endTime: middle }, () => false), 0);
  });

  it('pages are slices of the same order', async () => {
    const page = await a.client.transactions.list({ pageSize: 2, page: 2 });
    assert.deepEqual(page.result.map((t) => t.transId), all.slice(2, 4).map((t) => t.transId));
    assert.equal(page.total, all.length);
  });
});
