import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decimal } from '../sdk/index.ts';
import { migrate } from '../src/migrate.ts';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { cardWorld, ref } from './helpers/cards.ts';
import { assertDeclined, fundedCard, purchase, usageOf, type SpendWorld } from './helpers/authorization.ts';

/**
 * Issue 34, migration 151: velocity usage moves from one row per subject, control, currency and
 * period (velocity_usage, the previous layout) to one row per subject, control and currency holding
 * the four periods (velocity_counters). The test builds a populated database through the API, puts
 * its usage back into the previous layout (with rows of past periods, which that layout kept), runs
 * the migration, and checks that usage is exact (query-quota, the caps, give-back), and that the
 * ledger audit is clean.
 */
describe('velocity usage migration to one counter row per subject (issue 34, D31, D32)', () => {
  let svc: TestService;
  before(async () => { svc = await startService(); });
  after(async () => {
    const report = await svc.admin.call<{ ok: boolean; findings: unknown[] }>('GET', '/internal/admin/v1/ledger/audit');
    assert.deepEqual(report.findings, [], 'the ledger audit is clean after the file');
    await svc.close();
    await closeTestDatabase();
  });

  /** The previous layout, as migration 040 made it, filled from the counters and with past periods added. */
  async function backToPreviousLayout(): Promise<number> {
    await svc.db.tx(async (q) => {
      await q.exec(`
        DROP VIEW velocity_usage;
        CREATE TABLE velocity_usage (
          partner_id   text        NOT NULL REFERENCES partners (partner_id),
          subject_type text        NOT NULL CHECK (subject_type IN ('CARD', 'CUSTOMER')),
          subject_id   text        NOT NULL,
          control      text        NOT NULL CHECK (control IN ('PURCHASE', 'CASH_ADVANCE')),
          currency     text        NOT NULL,
          period       text        NOT NULL CHECK (period IN ('DAILY', 'MONTHLY', 'QUARTERLY', 'YEARLY')),
          period_key   text        NOT NULL,
          used_amount  numeric     NOT NULL DEFAULT 0 CHECK (used_amount >= 0),
          used_count   bigint      NOT NULL DEFAULT 0 CHECK (used_count >= 0),
          updated_at   timestamptz NOT NULL,
          PRIMARY KEY (partner_id, subject_type, subject_id, control, currency, period, period_key)
        );
        INSERT INTO velocity_usage
          SELECT c.partner_id, c.subject_type, c.subject_id, c.control, c.currency, p.period, p.period_key, p.used_amount, p.used_count, c.as_of
            FROM velocity_counters c
           CROSS JOIN LATERAL (VALUES ('DAILY', c.daily_key, c.daily_amount, c.daily_count),
                                      ('MONTHLY', c.monthly_key, c.monthly_amount, c.monthly_count),
                                      ('QUARTERLY', c.quarterly_key, c.quarterly_amount, c.quarterly_count),
                                      ('YEARLY', c.yearly_key, c.yearly_amount, c.yearly_count)) AS p(period, period_key, used_amount, used_count);
        -- Past periods the previous layout kept (earlier, larger, last written earlier): not the current usage.
        INSERT INTO velocity_usage
          SELECT c.partner_id, c.subject_type, c.subject_id, c.control, c.currency, p.period, p.period_key, 999.99, 77, c.as_of - interval '400 days'
            FROM velocity_counters c
           CROSS JOIN (VALUES ('DAILY', '20000101'), ('MONTHLY', '200001'), ('QUARTERLY', '2000Q1'), ('YEARLY', '2000')) AS p(period, period_key);
        DROP TABLE velocity_counters;
        DELETE FROM schema_migrations WHERE version = '151-velocity-counters';
      `);
    });
    const [{ n }] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM velocity_usage');
    return n;
  }

  it('a populated database of the previous layout migrates with its usage exact; caps and give-back work on', async () => {
    const base = await cardWorld(svc);
    const rule = await base.client.velocity.createRule({
      organizationId: base.org.organizationId, ruleRef: ref('rule'), ruleName: 'Daily cap',
      purchaseControl: { amountLimits: [{ currency: 'USD', daily: decimal('30.00') }], countLimits: { daily: 4 } },
    });
    const w: SpendWorld = await fundedCard(svc, { world: base, funds: '100.00', ruleIds: [rule.ruleId] });
    await base.client.velocity.bindRule({ organizationId: base.org.organizationId, ruleId: rule.ruleId, subjectType: 'CUSTOMER', subjectIds: [base.employee.customerId] });
    const other = await fundedCard(svc, { world: base, funds: '0', ruleIds: [rule.ruleId] }); // the employee's second card
    const a = await w.client.sandbox.authorize(purchase(w.card.cardId, '10.00'));
    await w.client.sandbox.authorize(purchase(w.card.cardId, '5.00'));
    await w.client.sandbox.reverse({ transId: a.transId, amount: decimal('2.00') });
    const cash = await w.client.sandbox.authorize(purchase(w.card.cardId, '1.00', { channel: 'ATM' }));
    assert.equal(cash.status, 'PENDING');
    const employee = { subjectType: 'CUSTOMER' as const, subjectId: w.employee.customerId };
    const before = {
      card: await usageOf(w), employee: await usageOf(w, employee), cash: await usageOf(w, { subjectType: 'CARD', subjectId: w.card.cardId }, 'cashAdvance'),
    };
    assert.deepEqual(before.card, { amount: '13', count: 2 });
    assert.deepEqual(before.employee, { amount: '13', count: 2 });
    assert.deepEqual(before.cash, { amount: '1', count: 1 });

    const oldRows = await backToPreviousLayout();
    assert.equal(oldRows, 4 * 4 * 2, 'card and employee, each purchase and cash: 4 counters x 4 periods, and as many past rows');

    const applied = await migrate(svc.db);
    assert.deepEqual(applied.versions, ['151-velocity-counters']);
    assert.ok(applied.repeatable.includes('authorization/sql/card_authorize.sql'));
    assert.ok(applied.repeatable.includes('velocity/sql/velocity_usage_give_back.sql'));
    const [{ n }] = await svc.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM velocity_counters`);
    assert.equal(n, 4, 'one row per subject, control and currency');

    assert.deepEqual({
      card: await usageOf(w), employee: await usageOf(w, employee), cash: await usageOf(w, { subjectType: 'CARD', subjectId: w.card.cardId }, 'cashAdvance'),
    }, before, 'query-quota answers the same usage after the migration; the past periods are not counted');

    // The cap after the migration: 13.00 used of 30.00; 17.00 fits, then 0.01 does not (the employee's cap, on another card too).
    await w.client.sandbox.authorize(purchase(w.card.cardId, '17.00'));
    assertDeclined(await w.client.sandbox.authorize(purchase(w.card.cardId, '0.01')), 'VELOCITY_LIMIT_EXCEEDED');
    assert.deepEqual(await usageOf(w, employee), { amount: '30', count: 3 });
    // Give-back after the migration: the reversal of the rest of the first authorization.
    await w.client.sandbox.reverse({ transId: a.transId, amount: decimal('8.00') });
    assert.deepEqual(await usageOf(w), { amount: '22', count: 2 });
    assert.deepEqual(await usageOf(w, employee), { amount: '22', count: 2 });
    // The count cap (4 a day) spans the employee's cards.
    await other.client.sandbox.authorize(purchase(other.card.cardId, '1.00'));
    await other.client.sandbox.authorize(purchase(other.card.cardId, '1.00'));
    assertDeclined(await other.client.sandbox.authorize(purchase(other.card.cardId, '1.00')), 'VELOCITY_LIMIT_EXCEEDED');
    assert.deepEqual(await usageOf(w, employee), { amount: '24', count: 4 });
  });
});
