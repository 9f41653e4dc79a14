import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decimal } from '../sdk/index.ts';
import { migrate } from '../src/migrate.ts';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { cardWorld } from './helpers/cards.ts';
import { fundedCard, fundsOf, purchase, text } from './helpers/authorization.ts';

/**
 * Issue 34, step 4, migration 152: an approval's hold becomes a pending amount (the account row and
 * the authorization's record; no posting, no entries). Holds of the previous layout (an
 * AUTHORIZATION posting of two entries at approval) are not converted: their records keep no
 * hold_seq, so the audit counts them through their entries, and their releases post what they did.
 * The test builds a populated database through the API (holds open, partly reversed, cleared),
 * turns every hold back into the previous layout (its posting written, the row's move undone, the
 * columns and the posting reference as migration 050 left them), checks the previous layout's own
 * invariant (balances = entries), migrates, and then releases and settles the old holds and makes
 * new ones, with the ledger audit clean at each step.
 */
describe('holds as pending amounts: migration of the previous layout (issue 34, D33, D34)', () => {
  let svc: TestService;
  before(async () => { svc = await startService(); });
  after(async () => {
    try {
      const report = await svc.admin.call<{ ok: boolean; findings: unknown[] }>('GET', '/internal/admin/v1/ledger/audit');
      assert.deepEqual(report.findings, [], 'the ledger audit is clean after the file');
    } finally {
      await svc.close();
      await closeTestDatabase();
    }
  });

  const audit = async (partnerId?: string) => {
    const report = await svc.admin.call<{ ok: boolean; findings: unknown[] }>('GET', '/internal/admin/v1/ledger/audit', partnerId ? { query: { partnerId } } : {});
    assert.deepEqual(report.findings, [], 'the ledger audit is clean');
  };

  /** Every hold of the pending-amount layout becomes the previous layout's AUTHORIZATION posting. */
  async function backToPreviousLayout(): Promise<number> {
    return svc.db.tx(async (q) => {
      const holds = await q.query<{ transId: string }>(`SELECT trans_id AS "transId" FROM card_transactions WHERE hold_seq IS NOT NULL ORDER BY hold_seq`);
      for (const h of holds) {
        // The row's move undone, then the hold's posting (its entries carry the balances after it, as at approval).
        await q.exec(`
          SELECT set_config('cardsvc.ledger_posting', 'back-to-previous-layout', true);
          UPDATE ledger_accounts a SET available = a.available + t.hold_funds, pending = a.pending - t.hold_funds
            FROM card_transactions t WHERE t.trans_id = '${h.transId}' AND a.account_id = t.funds_account_id;
          SELECT set_config('cardsvc.ledger_posting', '', true);
          SELECT count(*) FROM card_transactions t, ledger_accounts a,
                 ledger_post(t.posting_id, t.partner_id, 'AUTHORIZATION', false, t.trans_id, 'Authorization hold', t.created_at,
                             ARRAY[a.account_id, a.account_id], ARRAY[a.currency, a.currency], ARRAY['AVAILABLE', 'PENDING'],
                             ARRAY[-t.hold_funds, t.hold_funds])
           WHERE t.trans_id = '${h.transId}' AND a.account_id = t.funds_account_id;`);
      }
      await q.exec(`
        ALTER TABLE card_transactions DROP CONSTRAINT card_transactions_hold_complete,
          DROP COLUMN hold_seq, DROP COLUMN hold_funds, DROP COLUMN hold_available_after, DROP COLUMN hold_pending_after;
        ALTER TABLE card_transactions ADD CONSTRAINT card_transactions_posting_id_fkey FOREIGN KEY (posting_id) REFERENCES ledger_postings (posting_id);
        DELETE FROM schema_migrations WHERE version = '152-hold-pending-amount';`);
      return holds.length;
    });
  }

  /** The previous layout's invariant: every account's balances are the sums of its entries, its pending its open holds. */
  async function previousLayoutInvariant(): Promise<void> {
    const off = await svc.db.query<{ accountId: string }>(`
      SELECT a.account_id AS "accountId" FROM ledger_accounts a
        LEFT JOIN (SELECT account_id, sum(amount) FILTER (WHERE bucket = 'AVAILABLE') AS av, sum(amount) FILTER (WHERE bucket = 'PENDING') AS pe
                     FROM ledger_entries GROUP BY account_id) e ON e.account_id = a.account_id
        LEFT JOIN (SELECT funds_account_id, sum(COALESCE(funds_hold, hold_amount)) AS held FROM card_transactions
                    WHERE message_type = 'AUTHORIZATION' AND status = 'PENDING' GROUP BY funds_account_id) h ON h.funds_account_id = a.account_id
       WHERE a.available <> COALESCE(e.av, 0) OR a.pending <> COALESCE(e.pe, 0) OR a.pending <> COALESCE(h.held, 0)`);
    assert.deepEqual(off, [], 'previous layout: balances = entries, pending = open holds');
  }

  it('a populated database of the previous layout migrates; its holds release, clear and expire exactly; new holds are pending amounts', async () => {
    const base = await cardWorld(svc);
    const shared = await fundedCard(svc, { world: base, funds: '100.00' });
    const dedicated = await fundedCard(svc, { world: base, dedicated: true, funds: '50.00' });
    const c = shared.client.sandbox;
    const a = await c.authorize(purchase(shared.card.cardId, '10.00'));
    const b = await c.authorize(purchase(shared.card.cardId, '5.00'));
    const cleared = await c.authorize(purchase(shared.card.cardId, '7.00'));
    const toExpire = await c.authorize(purchase(shared.card.cardId, '3.00'));
    const own = await c.authorize(purchase(dedicated.card.cardId, '4.00'));
    await c.reverse({ transId: a.transId, amount: decimal('2.00') });
    await c.clear({ transId: cleared.transId, amount: decimal('6.00') });
    await audit(base.partner.partnerId);
    const pool = { available: '78.00', pending: '16.00', total: '94.00' };
    assert.deepEqual(await fundsOf(shared), pool);
    assert.deepEqual(await fundsOf(dedicated), { available: '46.00', pending: '4.00', total: '50.00' });
    const [{ postings }] = await svc.db.query<{ postings: number }>(`SELECT count(*)::int AS postings FROM ledger_postings WHERE kind = 'AUTHORIZATION'`);
    assert.equal(postings, 0, 'an approval writes no posting');

    const converted = await backToPreviousLayout();
    assert.ok(converted >= 5, 'every approval of the file became a posting of the previous layout');
    await previousLayoutInvariant();
    assert.deepEqual(await fundsOf(shared), pool, 'the conversion moves no balance');

    const applied = await migrate(svc.db);
    assert.deepEqual(applied.versions, ['152-hold-pending-amount']);
    await audit();
    assert.deepEqual(await fundsOf(shared), pool, 'the migration moves no balance');

    // The previous layout's holds after the migration: reversal of the rest, clearing, expiry, clearing above the hold.
    await c.reverse({ transId: a.transId, amount: decimal('8.00') });
    await c.clear({ transId: b.transId, amount: decimal('5.00') });
    assert.equal((await c.expire({ transId: toExpire.transId })).status, 'EXPIRED');
    await c.clear({ transId: own.transId, amount: decimal('6.00') });
    assert.deepEqual(await fundsOf(shared), { available: '89.00', pending: '0.00', total: '89.00' });
    assert.deepEqual(await fundsOf(dedicated), { available: '44.00', pending: '0.00', total: '44.00' });
    await audit();

    // New holds are pending amounts beside the old layout's history: the statement shows them as before.
    const n1 = await c.authorize(purchase(dedicated.card.cardId, '1.25'));
    const n2 = await c.authorize(purchase(dedicated.card.cardId, '2.00'));
    await c.reverse({ transId: n2.transId, amount: decimal('2.00') });
    assert.deepEqual(await fundsOf(dedicated), { available: '42.75', pending: '1.25', total: '44.00' });
    const lines = await shared.client.funding.statement({ organizationId: base.org.organizationId, cardId: dedicated.card.cardId, pageSize: 4 });
    assert.deepEqual(lines.result.map((l) => `${l.type}:${text(l.availableChange)}:${text(l.pendingChange)}:${text(l.availableAfter)}:${text(l.pendingAfter)}`),
      ['REVERSAL:2.00:-2.00:42.75:1.25', 'AUTHORIZATION:-2.00:2.00:40.75:3.25', 'AUTHORIZATION:-1.25:1.25:42.75:1.25', 'CLEARING:-2.00:-4.00:44.00:0.00']);
    assert.equal(lines.result[2].reference, n1.transId);
    assert.match(lines.result[2].statementId, /^st[0-9]+$/);
    await audit();
  });
});
