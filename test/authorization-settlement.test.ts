import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CardServiceError, decimal, SignedHttpClient, type CardTransaction } from '../sdk/index.ts';
import { expireHolds, HOLD_EXPIRY_MS } from '../src/domains/authorization/testing.ts';
import { closeTestDatabase, startService, testDatabase, type TestService } from './helpers/service.ts';
import { fundedCard, fundsOf, networkClient, purchase, text, usageOf } from './helpers/authorization.ts';
import { outboxEvents, ref } from './helpers/cards.ts';
import { expectCode } from './helpers/companies.ts';
import { changedTables, snapshotTables } from './helpers/table-snapshot.ts';

/** Clearing, reversal, refund and expiry (D32-D34), the network ingress and its idempotency. */
describe('authorization settlement and network ingress (D32, D33, D34, D40)', () => {
  let svc: TestService;
  before(async () => { svc = await startService(); });
  after(async () => {
    const report = await svc.admin.call<{ ok: boolean; findings: unknown[] }>('GET', '/internal/admin/v1/ledger/audit');
    assert.deepEqual(report.findings, [], 'the ledger audit is clean after the file');
    await svc.close();
    await closeTestDatabase();
  });

  const audit = async (partnerId: string) => {
    const report = await svc.admin.call<{ ok: boolean; findings: unknown[] }>('GET', '/internal/admin/v1/ledger/audit', { query: { partnerId } });
    assert.deepEqual(report.findings, []);
    assert.equal(report.ok, true);
  };

  /** Usage of a subject in one UTC day, read from the counter rows (query-quota shows only the current day). */
  const usageOnDay = async (subjectId: string, day: string) => {
    const rows = await svc.db.query<{ amount: string; count: string }>(
      `SELECT COALESCE(sum(used_amount), 0)::text AS amount, COALESCE(sum(used_count), 0)::text AS count FROM velocity_usage
        WHERE subject_id = $1 AND period = 'DAILY' AND period_key = $2`, [subjectId, day]);
    return { amount: rows[0].amount, count: Number(rows[0].count) };
  };
  const dayKey = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');

  it('clearing equal to the hold releases it and posts the amount; the authorization is CLEARED', async () => {
    const w = await fundedCard(svc, { funds: '50.00' });
    const t = await w.client.sandbox.authorize(purchase(w.card.cardId, '20.00'));
    const c = await w.client.sandbox.clear({ transId: t.transId, amount: decimal('20.00') });
    assert.equal(c.messageType, 'CLEARING');
    assert.equal(c.status, 'POSTED');
    assert.equal(c.originalTransId, t.transId);
    assert.equal(c.outstandingTransactionId, t.outstandingTransactionId);
    assert.ok(c.postedTransactionId);
    assert.equal(text(c.amount), '20.00');
    assert.deepEqual(await fundsOf(w), { available: '30.00', pending: '0.00', total: '30.00' });
    const auth = await w.client.transactions.query(t.transId);
    assert.equal(auth.status, 'CLEARED');
    assert.equal(text(auth.holdAmount), '0.00');
    assert.equal(auth.postedTransactionId, c.postedTransactionId);
    assert.deepEqual(await usageOf(w), { amount: '20', count: 1 }, 'clearing leaves usage alone');
    const [resolved] = await w.client.transactions.resolveIds([t.outstandingTransactionId!]);
    assert.deepEqual(resolved, {
      id: t.outstandingTransactionId, found: true, idType: 'OUTSTANDING', posted: true, postingStatus: 'CLEARED', transId: t.transId,
      relatedTransactionId: c.postedTransactionId,
    });
    await expectCode(w.client.sandbox.clear({ transId: t.transId, amount: decimal('1.00') }), 'TRANSACTION_STATUS_INVALID');
    await audit(w.partner.partnerId);
  });

  it('clearing below the hold returns the rest to free', async () => {
    const w = await fundedCard(svc, { funds: '50.00' });
    const t = await w.client.sandbox.authorize(purchase(w.card.cardId, '20.00'));
    await w.client.sandbox.clear({ transId: t.transId, amount: decimal('17.45') });
    assert.deepEqual(await fundsOf(w), { available: '32.55', pending: '0.00', total: '32.55' });
    await audit(w.partner.partnerId);
  });

  it('clearing above the hold is posted even if free goes negative; debits and authorizations are refused until credits repay it (D33)', async () => {
    const w = await fundedCard(svc, { funds: '10.00' });
    const t = await w.client.sandbox.authorize(purchase(w.card.cardId, '10.00'));
    await w.client.sandbox.clear({ transId: t.transId, amount: decimal('12.00') });
    assert.deepEqual(await fundsOf(w), { available: '-2.00', pending: '0.00', total: '-2.00' });
    const declined = await w.client.sandbox.authorize(purchase(w.card.cardId, '0.01'));
    assert.equal(declined.declineReason, 'INSUFFICIENT_BALANCE');
    const dedicated = await fundedCard(svc, { world: w, dedicated: true, funds: '0' });
    await expectCode(w.client.cards.transfer({
      organizationId: w.org.organizationId, cardId: dedicated.card.cardId, direction: 'POOL_TO_CARD', currency: 'USD', amount: decimal('0.01'),
      externalTranId: ref('tr'),
    }), 'INSUFFICIENT_BALANCE');
    await w.client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: w.org.organizationId, currency: 'USD', amount: decimal('2.50') });
    assert.deepEqual(await fundsOf(w), { available: '0.50', pending: '0.00', total: '0.50' });
    assert.equal((await w.client.sandbox.authorize(purchase(w.card.cardId, '0.50'))).approved, true);
    await audit(w.partner.partnerId);
  });

  it('on a negative free, credits and releases still book: deposits, refunds, reversals and clearings repay it (D33)', async () => {
    const w = await fundedCard(svc, { funds: '10.00' });
    const held = await w.client.sandbox.authorize(purchase(w.card.cardId, '3.00'));
    const overdrawn = await w.client.sandbox.authorize(purchase(w.card.cardId, '7.00'));
    await w.client.sandbox.clear({ transId: overdrawn.transId, amount: decimal('9.00') });
    assert.deepEqual(await fundsOf(w), { available: '-2.00', pending: '3.00', total: '1.00' });
    await w.client.sandbox.reverse({ transId: held.transId, amount: decimal('1.00') });
    await w.client.sandbox.refund({ cardId: w.card.cardId, amount: decimal('0.01'), currency: 'USD', merchantName: 'x' });
    await w.client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: w.org.organizationId, currency: 'USD', amount: decimal('0.01') });
    assert.deepEqual(await fundsOf(w), { available: '-0.98', pending: '2.00', total: '1.02' });
    await w.client.sandbox.clear({ transId: held.transId, amount: decimal('1.50') });
    assert.deepEqual(await fundsOf(w), { available: '-0.48', pending: '0.00', total: '-0.48' });
    assert.equal((await w.client.sandbox.authorize(purchase(w.card.cardId, '0.01'))).declineReason, 'INSUFFICIENT_BALANCE');
    await audit(w.partner.partnerId);
  });

  it('a partial then full reversal releases the hold and gives usage back in the original period (D32)', async () => {
    const w = await fundedCard(svc, { funds: '50.00' });
    const authDay = dayKey(svc.clock.now());
    const t = await w.client.sandbox.authorize(purchase(w.card.cardId, '20.00'));
    const partial = await w.client.sandbox.reverse({ transId: t.transId, amount: decimal('5.00') });
    assert.equal(partial.messageType, 'REVERSAL');
    assert.equal(partial.authType, 'REVERSAL');
    assert.equal(partial.debitCreditIndicator, 'C');
    assert.deepEqual(await fundsOf(w), { available: '35.00', pending: '15.00', total: '50.00' });
    assert.deepEqual(await usageOf(w), { amount: '15', count: 1 }, 'partial: amount back, the count stays');
    let auth = await w.client.transactions.query(t.transId);
    assert.equal(auth.status, 'PENDING');
    assert.equal(text(auth.holdAmount), '15.00');
    await expectCode(w.client.sandbox.reverse({ transId: t.transId, amount: decimal('15.01') }), 'TRANSACTION_AMOUNT_INVALID');

    svc.clock.advance(2 * 24 * 60 * 60 * 1000); // a later day: the usage goes back to the authorization's day
    try {
      await w.client.sandbox.reverse({ transId: t.transId, amount: decimal('15.00') });
      auth = await w.client.transactions.query(t.transId);
      assert.equal(auth.status, 'REVERSED');
      assert.deepEqual(await fundsOf(w), { available: '50.00', pending: '0.00', total: '50.00' });
      assert.deepEqual(await usageOnDay(w.card.cardId, authDay), { amount: '0.00', count: 0 });
      assert.deepEqual(await usageOnDay(w.employee.customerId, authDay), { amount: '0.00', count: 0 });
      await expectCode(w.client.sandbox.reverse({ transId: t.transId, amount: decimal('1.00') }), 'TRANSACTION_STATUS_INVALID');
    } finally {
      svc.clock.advance(-2 * 24 * 60 * 60 * 1000);
    }
    await audit(w.partner.partnerId);
  });

  it('a refund credits free and leaves usage alone (D32)', async () => {
    const w = await fundedCard(svc, { funds: '50.00' });
    const t = await w.client.sandbox.authorize(purchase(w.card.cardId, '20.00'));
    await w.client.sandbox.clear({ transId: t.transId, amount: decimal('20.00') });
    const r = await w.client.sandbox.refund({ cardId: w.card.cardId, amount: decimal('7.25'), currency: 'USD', merchantName: 'Blue Bottle Coffee', transId: t.transId });
    assert.equal(r.messageType, 'REFUND');
    assert.equal(r.authType, 'REFUND');
    assert.equal(r.debitCreditIndicator, 'C');
    assert.equal(r.originalTransId, t.transId);
    assert.ok(r.postedTransactionId);
    assert.deepEqual(await fundsOf(w), { available: '37.25', pending: '0.00', total: '37.25' });
    assert.deepEqual(await usageOf(w), { amount: '20', count: 1 });
    const [resolved] = await w.client.transactions.resolveIds([r.postedTransactionId!]);
    assert.equal(resolved.posted, true);
    assert.equal(resolved.idType, 'POSTED');
    const dedicated = await fundedCard(svc, { world: w, dedicated: true, funds: '0' });
    await w.client.sandbox.refund({ cardId: dedicated.card.cardId, amount: decimal('3.00'), currency: 'USD', merchantName: 'Shop' });
    assert.deepEqual(await fundsOf(dedicated), { available: '3.00', pending: '0.00', total: '3.00' });
    const spend = await w.client.sandbox.authorize(purchase(dedicated.card.cardId, '2.00'));
    await w.client.sandbox.clear({ transId: spend.transId, amount: decimal('1.50') });
    // D29: the dedicated card's statement shows every movement of its balance, newest first.
    const lines = await w.client.funding.statement({ organizationId: w.org.organizationId, cardId: dedicated.card.cardId });
    assert.deepEqual(lines.result.map((l) => `${l.type}:${text(l.availableChange)}:${text(l.pendingChange)}:${text(l.availableAfter)}`),
      ['CLEARING:0.50:-2.00:1.50', 'AUTHORIZATION:-2.00:2.00:1.00', 'REFUND:3.00:0.00:3.00']);
    assert.equal(lines.result[0].reference, spend.transId);
    const other = await svc.newPartner();
    await expectCode(other.client.funding.statement({ organizationId: w.org.organizationId, cardId: dedicated.card.cardId }), 'ORGANIZATION_INVALID');
    assert.equal((await w.client.funding.statement({ organizationId: w.org.organizationId, cardId: w.card.cardId })).total, 0, 'a shared card has no balance of its own');
    await audit(w.partner.partnerId);
  });

  it('settlement messages naming an unknown, declined or another partner\'s authorization are refused and change nothing', async () => {
    const w = await fundedCard(svc, { funds: '1.00' });
    const other = await svc.newPartner();
    const declined = await w.client.sandbox.authorize(purchase(w.card.cardId, '2.00'));
    const approved = await w.client.sandbox.authorize(purchase(w.card.cardId, '1.00'));
    await expectCode(w.client.sandbox.clear({ transId: 'tx-unknown', amount: decimal('1.00') }), 'TRANSACTION_NOT_FOUND');
    await expectCode(w.client.sandbox.clear({ transId: declined.transId, amount: decimal('1.00') }), 'TRANSACTION_STATUS_INVALID');
    await expectCode(w.client.sandbox.reverse({ transId: declined.transId, amount: decimal('1.00') }), 'TRANSACTION_STATUS_INVALID');
    await expectCode(other.client.sandbox.clear({ transId: approved.transId, amount: decimal('1.00') }), 'TRANSACTION_NOT_FOUND');
    await expectCode(other.client.sandbox.refund({ cardId: w.card.cardId, amount: decimal('1.00'), currency: 'USD', merchantName: 'x' }), 'CARD_INVALID');
    await expectCode(w.client.sandbox.refund({ cardId: w.card.cardId, amount: decimal('1.00'), currency: 'EUR', merchantName: 'x' }), 'CURRENCY_NOT_ALLOWED');
    assert.deepEqual(await fundsOf(w), { available: '0.00', pending: '1.00', total: '1.00' });
  });

  it('a dedicated card cancelled with holds: what reversals, expiry, a smaller clearing and refunds release goes back to the pool, a debt stays for the next credit (D29, D33)', async () => {
    const w = await fundedCard(svc, { dedicated: true, funds: '100.00' });
    const pool = async () => fundsOf({ ...w, card: { ...w.card, balanceMode: 'SHARED' } });
    const auths: CardTransaction[] = [];
    for (let i = 0; i < 4; i++) auths.push(await w.client.sandbox.authorize(purchase(w.card.cardId, '10.00')));
    await w.client.cards.cancel(w.card.cardId);
    // docs/cards.md: the cancellation sweeps the available balance to the pool; the holds stay.
    assert.deepEqual(await fundsOf(w), { available: '0.00', pending: '40.00', total: '40.00' });
    assert.deepEqual(await pool(), { available: '60.00', pending: '0.00', total: '60.00' });
    await w.client.sandbox.reverse({ transId: auths[0].transId, amount: decimal('10.00') });
    await w.client.sandbox.clear({ transId: auths[1].transId, amount: decimal('4.00') });
    await w.client.sandbox.expire({ transId: auths[2].transId });
    assert.deepEqual(await fundsOf(w), { available: '0.00', pending: '10.00', total: '10.00' }, 'nothing stays on the cancelled card');
    assert.deepEqual(await pool(), { available: '86.00', pending: '0.00', total: '86.00' });
    // A clearing above its hold leaves a debt on the card; the next credit repays it and the rest goes to the pool.
    await w.client.sandbox.clear({ transId: auths[3].transId, amount: decimal('12.00') });
    assert.deepEqual(await fundsOf(w), { available: '-2.00', pending: '0.00', total: '-2.00' });
    await w.client.sandbox.refund({ cardId: w.card.cardId, amount: decimal('5.00'), currency: 'USD', merchantName: 'Shop', transId: auths[3].transId });
    assert.deepEqual(await fundsOf(w), { available: '0.00', pending: '0.00', total: '0.00' });
    assert.deepEqual(await pool(), { available: '89.00', pending: '0.00', total: '89.00' }, '100 - 4 - 12 + 5');
    const lines = await w.client.funding.statement({ organizationId: w.org.organizationId, cardId: w.card.cardId });
    assert.equal(lines.result.filter((l) => l.type === 'CARD_CANCEL_SWEEP').length, 5, 'the cancellation and four releases swept');
    await audit(w.partner.partnerId);
  });

  it('holds not cleared in 30 days expire through the job: funds and usage come back (D34)', async () => {
    const w = await fundedCard(svc, { funds: '30.00' });
    const t = await w.client.sandbox.authorize(purchase(w.card.cardId, '12.00'));
    const authDay = dayKey(svc.clock.now());
    svc.clock.advance(HOLD_EXPIRY_MS - 60_000);
    try {
      while ((await expireHolds(svc.ctx)) > 0) { /* drain holds of other tests that are due */ }
      assert.equal((await w.client.transactions.query(t.transId)).status, 'PENDING', 'not yet 30 days');
      svc.clock.advance(120_000);
      let expired = 0;
      for (let n = await expireHolds(svc.ctx); n > 0; n = await expireHolds(svc.ctx)) expired += n;
      assert.ok(expired >= 1);
      const auth = await w.client.transactions.query(t.transId);
      assert.equal(auth.status, 'EXPIRED');
      assert.equal(text(auth.holdAmount), '0.00');
      assert.deepEqual(await fundsOf(w), { available: '30.00', pending: '0.00', total: '30.00' });
      assert.deepEqual(await usageOnDay(w.card.cardId, authDay), { amount: '0.00', count: 0 });
      // A late clearing is still posted (force-posted from free).
      await w.client.sandbox.clear({ transId: t.transId, amount: decimal('12.00') });
      assert.deepEqual(await fundsOf(w), { available: '18.00', pending: '0.00', total: '18.00' });
    } finally {
      svc.clock.advance(-HOLD_EXPIRY_MS - 60_000);
    }
    await audit(w.partner.partnerId);
  });

  it('sandbox simulate/expiry expires one hold now exactly as the job does 30 days later; partner-scoped; non-pending refused and nothing changes (issue 26)', async () => {
    const w = await fundedCard(svc, { dedicated: true, funds: '30.00' });
    const twin = await fundedCard(svc, { dedicated: true, funds: '30.00', world: w });
    const authDay = dayKey(svc.clock.now());
    const a = await w.client.sandbox.authorize(purchase(w.card.cardId, '12.00'));
    const b = await w.client.sandbox.authorize(purchase(twin.card.cardId, '12.00'));
    await w.client.sandbox.reverse({ transId: a.transId, amount: decimal('2.00') });
    await w.client.sandbox.reverse({ transId: b.transId, amount: decimal('2.00') });

    const expired = await w.client.sandbox.expire({ transId: a.transId });
    assert.equal(expired.transId, a.transId);
    assert.equal(expired.status, 'EXPIRED');
    assert.equal(text(expired.holdAmount), '0.00');
    assert.deepEqual(await fundsOf(w), { available: '30.00', pending: '0.00', total: '30.00' });
    assert.deepEqual(await usageOnDay(w.card.cardId, authDay), { amount: '0.00', count: 0 });

    // The twin expires through the job, 30 days on: the same record, postings and event.
    svc.clock.advance(HOLD_EXPIRY_MS + 60_000);
    try {
      while ((await expireHolds(svc.ctx)) > 0) { /* every due hold, the twin's among them */ }
    } finally {
      svc.clock.advance(-HOLD_EXPIRY_MS - 60_000);
    }
    const byJob = await w.client.transactions.query(b.transId);
    const shape = (t: CardTransaction) => ({ status: t.status, holdAmount: text(t.holdAmount), amount: text(t.amount), approved: t.approved, messageType: t.messageType });
    assert.deepEqual(shape(await w.client.transactions.query(a.transId)), shape(byJob));
    const postings = async (transId: string) => (await svc.db.query<{ kind: string; bucket: string; amount: string }>(
      `SELECT p.kind, e.bucket, e.amount::text AS amount FROM ledger_postings p JOIN ledger_entries e ON e.posting_id = p.posting_id
        WHERE p.reference = $1 ORDER BY p.seq, e.bucket`, [transId])).map((r) => `${r.kind}:${r.bucket}:${Number(r.amount).toFixed(2)}`);
    assert.deepEqual(await postings(a.transId), await postings(b.transId));
    assert.ok((await postings(a.transId)).includes('HOLD_EXPIRY:AVAILABLE:10.00'), 'what was still held came back as HOLD_EXPIRY');
    const lastEvent = async (cardId: string) => {
      const [row] = await svc.db.query<{ payload: string }>(
        `SELECT payload FROM events WHERE event_type = 'CARD_TRANSACTION' AND business_id = $1 ORDER BY sequence DESC LIMIT 1`, [cardId]);
      const d = JSON.parse(row.payload) as { transId: string; status: string; messageType: string };
      return [d.messageType, d.status];
    };
    assert.deepEqual(await lastEvent(w.card.cardId), ['AUTHORIZATION', 'EXPIRED']);
    assert.deepEqual(await lastEvent(w.card.cardId), await lastEvent(twin.card.cardId));

    // Refusals change nothing: again (now EXPIRED), a declined and a cleared one, another partner's, an unknown id.
    const declined = await w.client.sandbox.authorize(purchase(w.card.cardId, '500.00'));
    assert.equal(declined.approved, false);
    const cleared = await w.client.sandbox.authorize(purchase(w.card.cardId, '1.00'));
    await w.client.sandbox.clear({ transId: cleared.transId, amount: decimal('1.00') });
    const other = await fundedCard(svc, { funds: '5.00' });
    const theirs = await other.client.sandbox.authorize(purchase(other.card.cardId, '1.00'));
    const refusals: Array<[string, () => Promise<unknown>, string]> = [
      ['expired', () => w.client.sandbox.expire({ transId: a.transId }), 'TRANSACTION_STATUS_INVALID'],
      ['declined', () => w.client.sandbox.expire({ transId: declined.transId }), 'TRANSACTION_STATUS_INVALID'],
      ['cleared', () => w.client.sandbox.expire({ transId: cleared.transId }), 'TRANSACTION_STATUS_INVALID'],
      ['another partner\'s', () => w.client.sandbox.expire({ transId: theirs.transId }), 'TRANSACTION_NOT_FOUND'],
      ['unknown', () => w.client.sandbox.expire({ transId: 'tx-no-such' }), 'TRANSACTION_NOT_FOUND'],
    ];
    for (const [what, call, code] of refusals) {
      const before = await snapshotTables(svc.db);
      const err = await expectCode(call(), code);
      if (code === 'TRANSACTION_STATUS_INVALID') assert.match(err.message, /only a PENDING authorization has a hold to expire/);
      assert.deepEqual(changedTables(before, await snapshotTables(svc.db)), [], `${what}: refused and changed nothing`);
    }
    assert.equal((await other.client.transactions.query(theirs.transId)).status, 'PENDING');
    await audit(w.partner.partnerId);
  });

  it('events: a CARD_TRANSACTION for every decision, clearing, reversal and refund, sequenced per card (D38)', async () => {
    const w = await fundedCard(svc, { funds: '10.00' });
    const a = await w.client.sandbox.authorize(purchase(w.card.cardId, '4.00'));
    await w.client.sandbox.authorize(purchase(w.card.cardId, '40.00'));
    await w.client.sandbox.reverse({ transId: a.transId, amount: decimal('1.00') });
    await w.client.sandbox.clear({ transId: a.transId, amount: decimal('3.00') });
    await w.client.sandbox.refund({ cardId: w.card.cardId, amount: decimal('1.00'), currency: 'USD', merchantName: 'x' });
    const rows = await svc.db.query<{ sequence: string; payload: string }>(
      `SELECT sequence::text, payload FROM events WHERE event_type = 'CARD_TRANSACTION' AND business_id = $1 ORDER BY sequence`, [w.card.cardId]);
    // The card's sequence is shared with CARD_CREATED (businessId = cardId): consecutive from the first transaction.
    const first = Number(rows[0].sequence);
    const seen = rows.map((r) => { const d = JSON.parse(r.payload); return `${Number(r.sequence) - first}:${d.messageType}:${d.status}`; });
    assert.deepEqual(seen, [
      '0:AUTHORIZATION:PENDING', '1:AUTHORIZATION:DECLINED', '2:REVERSAL:POSTED', '3:AUTHORIZATION:PENDING', '4:CLEARING:POSTED',
      '5:AUTHORIZATION:CLEARED', '6:REFUND:POSTED',
    ]);
    assert.ok(rows[0].payload.includes('"amount" : 4.00'), 'amounts keep their digits in the event');
  });

  it('LOW_BALANCE fires in the same transaction when spend takes the pool below its threshold (2.12, D49)', async () => {
    const w = await fundedCard(svc, { funds: '100.00' });
    const mailbox = `treasury-${ref('m')}@example.com`;
    await w.client.funding.setBalanceAlert({
      organizationId: w.org.organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('50.00') }], emailSettings: [mailbox],
    });
    await w.client.sandbox.authorize(purchase(w.card.cardId, '40.00'));
    assert.equal((await outboxEvents(svc, 'LOW_BALANCE', w.org.organizationId)).length, 0);
    await w.client.sandbox.authorize(purchase(w.card.cardId, '20.00'));
    const alerts = await outboxEvents(svc, 'LOW_BALANCE', w.org.organizationId);
    assert.equal(alerts.length, 1);
    assert.deepEqual(alerts[0].data, { organizationId: w.org.organizationId, currency: 'USD', available: 40, threshold: 50 });
    const mails = await svc.db.query<{ subject: string; body: string }>('SELECT subject, body FROM outbox_mail WHERE recipient = $1', [mailbox]);
    assert.equal(mails.length, 1, 'the configured mailbox gets the alert email');
    assert.match(mails[0].body, /Available: 40\.00 USD/);
    await w.client.sandbox.authorize(purchase(w.card.cardId, '1.00'));
    assert.equal((await outboxEvents(svc, 'LOW_BALANCE', w.org.organizationId)).length, 1, 'once a day while low');
  });

  describe('network ingress (/internal/network/v1, network key)', () => {
    const authorizeBody = (cardId: string, amount: string) => ({ networkTransactionId: ref('net'), ...purchase(cardId, amount) });

    it('a retried authorization under 10 concurrent copies is booked once and answered identically', async () => {
      const w = await fundedCard(svc, { funds: '50.00' });
      const network = await networkClient(svc);
      const body = authorizeBody(w.card.cardId, '5.00');
      const answers = await Promise.all(Array.from({ length: 10 }, () => network.call<CardTransaction>('POST', '/internal/network/v1/authorization', { body })));
      const first = answers[0];
      for (const a of answers) assert.deepEqual(a, first);
      assert.equal(first.source, 'NETWORK');
      assert.equal(first.networkTransactionId, body.networkTransactionId);
      assert.deepEqual(await fundsOf(w), { available: '45.00', pending: '5.00', total: '50.00' });
      assert.deepEqual(await usageOf(w), { amount: '5', count: 1 });
      const settle = { networkTransactionId: ref('net'), originalNetworkTransactionId: body.networkTransactionId, amount: decimal('2.00') };
      const reversals = await Promise.all(Array.from({ length: 10 }, () => network.call<CardTransaction>('POST', '/internal/network/v1/reversal', { body: settle })));
      assert.equal(new Set(reversals.map((r) => r.transId)).size, 1);
      const clearing = { networkTransactionId: ref('net'), originalNetworkTransactionId: body.networkTransactionId, amount: decimal('3.00') };
      const clearings = await Promise.all(Array.from({ length: 10 }, () => network.call<CardTransaction>('POST', '/internal/network/v1/clearing', { body: clearing })));
      assert.equal(new Set(clearings.map((r) => r.transId)).size, 1);
      const refundBody = { networkTransactionId: ref('net'), cardId: w.card.cardId, amount: decimal('1.00'), currency: 'USD', merchantName: 'x' };
      const refunds = await Promise.all(Array.from({ length: 10 }, () => network.call<CardTransaction>('POST', '/internal/network/v1/refund', { body: refundBody })));
      assert.equal(new Set(refunds.map((r) => r.transId)).size, 1);
      assert.deepEqual(await fundsOf(w), { available: '48.00', pending: '0.00', total: '48.00' });
      const [{ n }] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_transactions WHERE card_id = $1', [w.card.cardId]);
      assert.equal(n, 4);
      await audit(w.partner.partnerId);
    });

    it('copies of one message arriving on two service instances at once are booked once', async () => {
      const w = await fundedCard(svc, { funds: '50.00' });
      const second = await startService({ db: await (await testDatabase()).openAnother(), clock: svc.clock });
      try {
        const key = await svc.admin.createNetworkKey({ name: 'two instances' });
        const clients = [svc, second].map((s) => new SignedHttpClient({ baseUrl: s.baseUrl, apiKey: key.apiKey, secretKey: key.secretKey, now: svc.clock.now }));
        const body = authorizeBody(w.card.cardId, '4.00');
        const answers = await Promise.all(Array.from({ length: 10 }, (_, i) =>
          clients[i % 2].call<CardTransaction>('POST', '/internal/network/v1/authorization', { body })));
        assert.equal(new Set(answers.map((a) => a.transId)).size, 1);
        assert.deepEqual(await fundsOf(w), { available: '46.00', pending: '4.00', total: '50.00' });
      } finally {
        await second.close();
      }
    });

    it('a sandbox simulation gets a fresh network id whatever its body says: another partner\'s id neither answers that partner\'s record nor takes the network\'s id (D10, D40)', async () => {
      const a = await fundedCard(svc, { funds: '50.00' });
      const b = await fundedCard(svc, { funds: '50.00' });
      const secret = await a.client.sandbox.authorize(purchase(a.card.cardId, '12.34', { merchantName: 'Partner A shop' }));
      // Unknown body fields are ignored (D10): they must not reach the engine either.
      const smuggled = { networkTransactionId: secret.networkTransactionId, transactionTime: 'not a time' };
      const own = await b.client.sandbox.authorize({ ...purchase(b.card.cardId, '1.00'), ...smuggled } as never);
      assert.equal(own.cardId, b.card.cardId, 'B gets its own authorization, not A\'s record');
      assert.notEqual(own.transId, secret.transId);
      assert.notEqual(own.networkTransactionId, secret.networkTransactionId);
      assert.equal(own.merchantName, 'Blue Bottle Coffee');
      const refunded = await b.client.sandbox.refund({ cardId: b.card.cardId, amount: decimal('1.00'), currency: 'USD', merchantName: 'x', mcc: '58x', ...smuggled } as never);
      assert.equal(refunded.messageType, 'REFUND');
      assert.equal(refunded.cardId, b.card.cardId);
      assert.equal(refunded.mcc, null, 'an unchecked mcc is not stored');
      // A partner cannot take a network id before the network sends it.
      const future = ref('net');
      const early = await b.client.sandbox.authorize({ ...purchase(b.card.cardId, '1.00'), networkTransactionId: future } as never);
      assert.notEqual(early.networkTransactionId, future);
      const network = await networkClient(svc);
      const real = await network.call<CardTransaction>('POST', '/internal/network/v1/authorization', { body: { networkTransactionId: future, ...purchase(a.card.cardId, '5.00') } });
      assert.equal(real.cardId, a.card.cardId);
      assert.equal(real.source, 'NETWORK');
      assert.deepEqual(await fundsOf(a), { available: '32.66', pending: '17.34', total: '50.00' });
      assert.deepEqual(await fundsOf(b), { available: '49.00', pending: '2.00', total: '51.00' });
      await audit(a.partner.partnerId);
      await audit(b.partner.partnerId);
    });

    it('the ingress takes only a network key: partner keys, bad signatures and addresses off its list are refused', async () => {
      const w = await fundedCard(svc);
      const body = authorizeBody(w.card.cardId, '1.00');
      const asPartner = new SignedHttpClient({ baseUrl: svc.baseUrl, apiKey: w.partner.apiKey!, secretKey: w.partner.secretKey!, now: svc.clock.now });
      await expectCode(asPartner.call('POST', '/internal/network/v1/authorization', { body }), 'DAPI_API_KEY_INVALID');
      const network = await networkClient(svc);
      const forged = new SignedHttpClient({ baseUrl: svc.baseUrl, apiKey: (network as unknown as { apiKey: string }).apiKey, secretKey: 'x'.repeat(32), now: svc.clock.now });
      await expectCode(forged.call('POST', '/internal/network/v1/authorization', { body }), 'DAPI_SIGN_INVALID');
      const fenced = await networkClient(svc, ['203.0.113.0/24']);
      await expectCode(fenced.call('POST', '/internal/network/v1/authorization', { body }), 'DAPI_IP_NOT_ALLOWED');
      const err = await expectCode(network.call('POST', '/internal/network/v1/authorization', { body: { ...body, cardId: 'cd-unknown' } }), 'CARD_INVALID');
      assert.ok(err instanceof CardServiceError);
      assert.deepEqual(await fundsOf(w), { available: '100.00', pending: '0.00', total: '100.00' });
      const t = await network.call<CardTransaction>('POST', '/internal/network/v1/authorization', { body });
      assert.equal(t.approved, true);
    });

    it('another partner cannot read or resolve a network-booked transaction', async () => {
      const w = await fundedCard(svc);
      const network = await networkClient(svc);
      const body = authorizeBody(w.card.cardId, '1.00');
      const t = await network.call<CardTransaction>('POST', '/internal/network/v1/authorization', { body });
      const other = await svc.newPartner();
      await expectCode(other.client.transactions.query(t.transId), 'TRANSACTION_NOT_FOUND');
      const [r] = await other.client.transactions.resolveIds([t.outstandingTransactionId!]);
      assert.equal(r.found, false);
      assert.equal((await w.client.transactions.query(t.transId)).transId, t.transId);
    });
  });

  it('when the partner-decision stage declines, the hold and the usage are given back and the decline is recorded (D34 seam)', async () => {
    const declining = await startService({
      partnerDecision: {
        forward: async () => ({
          answer: { approved: false, declineReason: 'TEST_STAGE' }, standInReason: null, keyId: null, authUrl: null, httpStatus: 200, latencyMs: 1, error: null,
        }),
      },
    });
    try {
      const w = await fundedCard(declining, { funds: '10.00' });
      // The stage is asked for the cards of a partner with an auth_url (D37).
      await declining.admin.updatePartner(w.partner.partnerId, { authUrl: 'http://127.0.0.1:1/auth' });
      const t = await w.client.sandbox.authorize(purchase(w.card.cardId, '4.00'));
      assert.equal(t.approved, false);
      assert.equal(t.declineReason, 'PARTNER_DECLINED');
      assert.equal(t.declineDetail, 'TEST_STAGE');
      assert.equal(t.outstandingTransactionId, null);
      assert.deepEqual(await fundsOf(w), { available: '10.00', pending: '0.00', total: '10.00' });
      assert.deepEqual(await usageOf(w), { amount: '0', count: 0 });
      await expectCode(w.client.sandbox.clear({ transId: t.transId, amount: decimal('4.00') }), 'TRANSACTION_STATUS_INVALID');
    } finally {
      await declining.close();
    }
  });
});
