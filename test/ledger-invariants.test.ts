import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { admin, decimal, money, newCompany } from './helpers/companies.ts';
import type { CardServiceClient } from '../sdk/index.ts';
import type { Queryable } from '../src/platform/db/db.ts';
import { ApiError } from '../src/platform/errors.ts';
import { amount, ZERO, type Amount } from '../src/platform/money.ts';
import { getBalance, getOrCreateAccount, post, type Bucket, type LedgerAccount } from '../src/domains/ledger/index.ts';
import { auditLedger } from '../src/domains/ledger/index.ts';

describe('ledger: double entry, derived balances, database-enforced invariants (D29, D33)', () => {
  let svc: TestService;
  let client: CardServiceClient;
  let partnerId: string;

  before(async () => {
    svc = await startService();
    let partner;
    ({ client, partner } = await svc.newPartner());
    partnerId = partner.partnerId;
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  const now = () => new Date(svc.clock.now());
  const entry = (account: LedgerAccount, value: string, bucket: Bucket = 'AVAILABLE') => ({ accountId: account.accountId, amount: amount(value), bucket });

  async function accounts(q: Queryable, currency = 'USD') {
    const org = `org-ledger-${Math.random().toString(36).slice(2, 8)}`;
    const card = await getOrCreateAccount(q, { partnerId, ownerType: 'CARD', ownerId: `card-${org}`, currency, organizationId: org }, now());
    const pool = await getOrCreateAccount(q, { partnerId, ownerType: 'ORGANIZATION_POOL', ownerId: org, currency, organizationId: org }, now());
    const bank = await getOrCreateAccount(q, { partnerId, ownerType: 'EXTERNAL', ownerId: 'BANK', currency }, now());
    const network = await getOrCreateAccount(q, { partnerId, ownerType: 'CLEARING', ownerId: 'VISA', currency }, now());
    const fees = await getOrCreateAccount(q, { partnerId, ownerType: 'FEE_INCOME', ownerId: 'SERVICE', currency }, now());
    return { card, pool, bank, network, fees };
  }

  /** Expects the transaction to fail in the database (at the statement or at commit). */
  async function expectDbRefusal(work: (q: Queryable) => Promise<unknown>, pattern: RegExp) {
    await assert.rejects(svc.db.tx(work), (err: Error) => {
      assert.match(err.message, pattern);
      return true;
    });
  }

  it('after a series of deposits over HTTP, balances equal the sum of postings and the audit re-derivation agrees', async () => {
    const orgs = [await newCompany(client), await newCompany(client)];
    const expected = new Map<string, Amount>();
    const amounts = ['0.01', '1.00', '250.75', '99999.99', '12.34', '0.99', '5000.00', '7.07'];
    for (const [i, value] of amounts.entries()) {
      const org = orgs[i % 2];
      const currency = i % 3 === 0 ? 'HKD' : 'USD';
      await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: org.organizationId, currency, amount: decimal(value) });
      const key = `${org.organizationId}/${currency}`;
      expected.set(key, (expected.get(key) ?? ZERO).plus(value));
    }
    for (const org of orgs) {
      const balance = await client.funding.balance(org.organizationId);
      for (const pool of balance.pools) {
        const want = (expected.get(`${org.organizationId}/${pool.currency}`) ?? ZERO).toFixed(2);
        assert.equal(money(pool.available), want);
        assert.equal(money(pool.total), want);
      }
      const lines = await client.funding.statement({ organizationId: org.organizationId, pageSize: 100 });
      const sum = lines.result.reduce((s, l) => s.plus(money(l.amount)), ZERO);
      const pools = balance.pools.reduce((s, p) => s.plus(money(p.total)), ZERO);
      assert.ok(sum.eq(pools), 'the statement sums to the pool totals');
    }
    const report = await admin(svc).audit(partnerId);
    assert.equal(report.ok, true, JSON.stringify(report.findings));
    assert.ok(report.postings >= amounts.length);
    assert.equal(report.entries, report.postings * 2, 'every deposit is exactly two entries');
    assert.equal((await admin(svc).audit()).ok, true, 'whole-ledger audit');
  });

  it('concurrent deposits to one pool lose no update', async () => {
    const org = await newCompany(client);
    const n = 20;
    await Promise.all(Array.from({ length: n }, () =>
      client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: org.organizationId, currency: 'USD', amount: decimal('1.25') })));
    const usd = (await client.funding.balance(org.organizationId)).pools.find((p) => p.currency === 'USD')!;
    assert.equal(money(usd.available), (1.25 * n).toFixed(2));
    assert.equal((await client.funding.statement({ organizationId: org.organizationId })).total, n);
    assert.equal((await admin(svc).audit(partnerId)).ok, true);
  });

  it('post(): holds move available to pending with total unchanged; clearing and release keep total = available + pending', async () => {
    await svc.db.tx(async (q) => {
      const a = await accounts(q);
      await post(q, { partnerId, kind: 'DEPOSIT', createTime: now(), entries: [entry(a.card, '100.00'), entry(a.bank, '-100.00')] });
      const hold = await post(q, { partnerId, kind: 'AUTHORIZATION', reference: 'tx1', createTime: now(), entries: [entry(a.card, '-30.00'), entry(a.card, '30.00', 'PENDING')] });
      const held = hold.balances.get(a.card.accountId)!;
      assert.deepEqual([held.available.toFixed(2), held.pending.toFixed(2), held.total.toFixed(2)], ['70.00', '30.00', '100.00']);
      // Clearing for less than the hold: clear 25, release 5.
      await post(q, { partnerId, kind: 'CLEARING', reference: 'tx1', createTime: now(), entries: [entry(a.card, '-25.00', 'PENDING'), entry(a.network, '25.00')] });
      await post(q, { partnerId, kind: 'AUTHORIZATION_RELEASE', reference: 'tx1', createTime: now(), entries: [entry(a.card, '-5.00', 'PENDING'), entry(a.card, '5.00')] });
      const b = await getBalance(q, a.card.accountId);
      assert.deepEqual([b.available.toFixed(2), b.pending.toFixed(2), b.total.toFixed(2)], ['75.00', '0.00', '75.00']);
      // Money is conserved: over all of the partner's accounts of a currency, balances sum to zero.
      const sums = await q.query<{ total: string }>(
        `SELECT sum(total)::text AS total FROM ledger_accounts WHERE partner_id = $1 AND currency = 'USD'`, [partnerId]);
      assert.ok(amount(sums[0].total).eq(0), `USD sums to ${sums[0].total}`);
    });
    const report = await auditLedger(svc.db, { partnerId });
    assert.equal(report.ok, true, JSON.stringify(report.findings));
  });

  it('post(): a movement that would take available below zero is INSUFFICIENT_BALANCE and writes nothing; a forced one may (D33)', async () => {
    let ids: Awaited<ReturnType<typeof accounts>>;
    await svc.db.tx(async (q) => {
      ids = await accounts(q);
      await post(q, { partnerId, kind: 'DEPOSIT', createTime: now(), entries: [entry(ids.pool, '10.00'), entry(ids.bank, '-10.00')] });
    });
    await svc.db.tx(async (q) => {
      await assert.rejects(
        post(q, { partnerId, kind: 'TRANSFER', createTime: now(), entries: [entry(ids.pool, '-10.01'), entry(ids.card, '10.01')] }),
        (err: unknown) => err instanceof ApiError && err.code === 'INSUFFICIENT_BALANCE',
      );
      // The transaction is still usable after the refusal: the exact balance moves.
      await post(q, { partnerId, kind: 'TRANSFER', createTime: now(), entries: [entry(ids.pool, '-10.00'), entry(ids.card, '10.00')] });
    });
    assert.equal((await getBalance(svc.db, ids!.pool.accountId)).available.toFixed(2), '0.00');
    // A fee the service cannot refuse may overdraw; the next credit repays it.
    await svc.db.tx((q) => post(q, { partnerId, kind: 'CARD_PRINTING_FEE', forced: true, createTime: now(), entries: [entry(ids.card, '-12.00'), entry(ids.fees, '12.00')] }));
    const card = await getBalance(svc.db, ids!.card.accountId);
    assert.equal(card.available.toFixed(2), '-2.00');
    assert.equal(card.total.toFixed(2), '-2.00');
    const report = await auditLedger(svc.db, { partnerId });
    assert.equal(report.ok, true, JSON.stringify(report.findings));
  });

  it('post(): unbalanced postings, single entries, zero amounts and over-releases are programmer errors (invariants)', async () => {
    await svc.db.tx(async (q) => {
      const a = await accounts(q);
      const hkd = await getOrCreateAccount(q, { partnerId, ownerType: 'EXTERNAL', ownerId: 'BANK', currency: 'HKD' }, now());
      await assert.rejects(post(q, { partnerId, kind: 'DEPOSIT', createTime: now(), entries: [entry(a.pool, '1.00'), entry(a.bank, '-0.99')] }), /balanced in USD/);
      await assert.rejects(post(q, { partnerId, kind: 'DEPOSIT', createTime: now(), entries: [entry(a.pool, '1.00'), entry(hkd, '-1.00')] }), /balanced/);
      await assert.rejects(post(q, { partnerId, kind: 'DEPOSIT', createTime: now(), entries: [entry(a.pool, '1.00')] }), /2\.\.16 entries/);
      await assert.rejects(post(q, { partnerId, kind: 'DEPOSIT', createTime: now(), entries: [entry(a.pool, '0'), entry(a.bank, '0')] }), /non-zero/);
      await assert.rejects(post(q, { partnerId, kind: 'RELEASE', createTime: now(), entries: [entry(a.card, '-1.00', 'PENDING'), entry(a.card, '1.00')] }), /pending of .* stays >= 0/);
      await assert.rejects(post(q, { partnerId, kind: 'bad kind', createTime: now(), entries: [entry(a.pool, '1.00'), entry(a.bank, '-1.00')] }), /upper-case/);
    });
  });

  it('the database itself refuses unbalanced postings, writes outside ledger_post, direct balance edits, negative balances and rewrites of history', async () => {
    let ids: Awaited<ReturnType<typeof accounts>>;
    await svc.db.tx(async (q) => {
      ids = await accounts(q);
      await post(q, { partnerId, kind: 'DEPOSIT', createTime: now(), entries: [entry(ids.pool, '5.00'), entry(ids.bank, '-5.00')] });
    });
    // ledger_post (src/domains/ledger/sql/ledger_post.sql) is the ledger's one writer; it checks every posting it is given.
    const ledgerPost = (q: Queryable, postingId: string, entries: [accountId: string, value: string, bucket?: string, currency?: string][], forced = false) => q.query(
      `SELECT * FROM ledger_post($1, $2, 'TEST', $3, NULL, NULL, now(), $4::text[], $5::text[], $6::text[], $7::text[]::numeric[])`,
      [postingId, partnerId, forced, entries.map((e) => e[0]), entries.map((e) => e[3] ?? 'USD'), entries.map((e) => e[2] ?? 'AVAILABLE'), entries.map((e) => e[1])]);

    await expectDbRefusal((q) => ledgerPost(q, 'lp-test-unbalanced', [[ids.pool.accountId, '1.00'], [ids.bank.accountId, '-0.50']]), /not balanced/);
    await expectDbRefusal((q) => ledgerPost(q, 'lp-test-alone', [[ids.pool.accountId, '1.00']]), /fewer than two entries/);
    await expectDbRefusal((q) => ledgerPost(q, 'lp-test-empty', []), /fewer than two entries/);
    // A pool cannot go below zero without a forced posting; pending never below zero.
    await expectDbRefusal((q) => ledgerPost(q, 'lp-test-overdraw', [[ids.pool.accountId, '-6.00'], [ids.bank.accountId, '6.00']]), /below zero/);
    await expectDbRefusal((q) => ledgerPost(q, 'lp-test-pending', [[ids.pool.accountId, '-1.00', 'PENDING'], [ids.pool.accountId, '1.00']]), /pending|check/);
    // An entry's currency must be its account's; accounts must exist.
    await expectDbRefusal((q) => ledgerPost(q, 'lp-test-currency', [[ids.pool.accountId, '1.00', 'AVAILABLE', 'HKD'], [ids.bank.accountId, '-1.00', 'AVAILABLE', 'HKD']]), /currency/);
    await expectDbRefusal((q) => ledgerPost(q, 'lp-test-missing', [['la-does-not-exist', '1.00'], [ids.bank.accountId, '-1.00']]), /does not exist/);

    // Writes that bypass ledger_post are refused, also a balanced pair written directly.
    await expectDbRefusal((q) => q.query(
      `INSERT INTO ledger_postings (posting_id, partner_id, kind, forced, created_at) VALUES ('lp-test-direct', $1, 'TEST', false, now())`, [partnerId]),
    /written only by ledger_post/);
    await expectDbRefusal(async (q) => {
      await ledgerPost(q, 'lp-test-extra', [[ids.pool.accountId, '1.00'], [ids.bank.accountId, '-1.00']]);
      await q.query(
        `INSERT INTO ledger_entries (posting_id, account_id, currency, bucket, amount, available_after, pending_after, account_version, created_at)
         VALUES ('lp-test-extra', $1, 'USD', 'AVAILABLE', 1, 0, 0, 0, now()), ('lp-test-extra', $2, 'USD', 'AVAILABLE', -1, 0, 0, 0, now())`,
        [ids.pool.accountId, ids.bank.accountId]);
    }, /written only by ledger_post/);
    // Balances change only through entries; accounts stay.
    await expectDbRefusal((q) => q.query('UPDATE ledger_accounts SET available = available + 1 WHERE account_id = $1', [ids.pool.accountId]), /only through ledger entries/);
    await expectDbRefusal((q) => q.query(`UPDATE ledger_accounts SET currency = 'HKD' WHERE account_id = $1`, [ids.pool.accountId]), /immutable/);
    await expectDbRefusal((q) => q.query('DELETE FROM ledger_accounts WHERE account_id = $1', [ids.pool.accountId]), /never deleted/);
    // History is append-only.
    await expectDbRefusal((q) => q.query('UPDATE ledger_entries SET amount = 1000 WHERE account_id = $1', [ids.pool.accountId]), /append-only/);
    await expectDbRefusal((q) => q.query('DELETE FROM ledger_entries WHERE account_id = $1', [ids.pool.accountId]), /append-only/);
    await expectDbRefusal((q) => q.query(`UPDATE ledger_postings SET kind = 'X' WHERE partner_id = $1`, [partnerId]), /append-only/);

    // A balanced posting through ledger_post is applied, entry by entry, with the balances after each.
    const bankBefore = (await getBalance(svc.db, ids!.bank.accountId)).available;
    const rows = await svc.db.tx((q) => ledgerPost(q, 'lp-test-direct', [[ids.pool.accountId, '2.00'], [ids.pool.accountId, '-0.50'], [ids.bank.accountId, '-1.50']]));
    assert.deepEqual(rows.map((r) => [r.account_id, String(r.available_after)]), [
      [ids!.pool.accountId, '7.00'], [ids!.pool.accountId, '6.50'], [ids!.bank.accountId, bankBefore.minus('1.50').toFixed(2)],
    ]);
    assert.equal((await getBalance(svc.db, ids!.pool.accountId)).available.toFixed(2), '6.50');
    const report = await auditLedger(svc.db, { partnerId });
    assert.equal(report.ok, true, JSON.stringify(report.findings));
  });

  it('getOrCreateAccount is idempotent per (partner, owner, currency); system accounts may go negative, pools may not', async () => {
    await svc.db.tx(async (q) => {
      const key = { partnerId, ownerType: 'ORGANIZATION_POOL' as const, ownerId: 'org-idem', currency: 'USD', organizationId: 'org-idem' };
      const first = await getOrCreateAccount(q, key, now());
      const second = await getOrCreateAccount(q, key, now());
      assert.equal(first.accountId, second.accountId);
      assert.equal(first.allowNegative, false);
      const bank = await getOrCreateAccount(q, { partnerId, ownerType: 'EXTERNAL', ownerId: 'BANK', currency: 'USD' }, now());
      assert.equal(bank.allowNegative, true);
      assert.ok(bank.available.lte(0), 'the bank mirror is negative by the deposits it funded');
    });
  });
});
