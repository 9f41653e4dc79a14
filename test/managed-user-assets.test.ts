import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { decimal, decimalText, type CardServiceClient } from '../sdk/index.ts';
import { startService, type TestService } from './helpers/service.ts';
import { balanceOf, closeWithCleanLedger, newTranId, newUserId } from './helpers/managed.ts';
import { expectCode } from './helpers/companies.ts';
import { changedTables, snapshotTables } from './helpers/table-snapshot.ts';

/** Managed-balance user assets (4.3, 2.3, 2.4; D4, D20, D33, D35, D48), all through the signed API. */
describe('managed-balance user assets (issue 11)', () => {
  let svc: TestService;
  let client: CardServiceClient;
  let partnerId: string;
  before(async () => {
    svc = await startService();
    const p = await svc.newPartner();
    client = p.client;
    partnerId = p.partner.partnerId;
  });
  after(() => closeWithCleanLedger(svc));

  const uid = newUserId;
  const tid = newTranId;
  const credit = (c: CardServiceClient, user: string, asset: string, amount: string, externalTranId = tid()) =>
    c.userAssets.credit({ externalTranId, asset, amount: decimal(amount), externalUserId: user });

  it('balance: one 2.3 object per active asset from the assets table, zeros for a user never seen', async () => {
    const list = await client.userAssets.balance(uid());
    const assets = list.map((b) => b.asset);
    for (const a of ['USDT', 'USDC', 'USD']) assert.ok(assets.includes(a), `${a} is listed`);
    for (const b of list) {
      assert.equal(typeof b.network, 'string');
      assert.equal(typeof b.logo, 'string');
      assert.equal(decimalText(b.free), '0');
      assert.equal(decimalText(b.freeze), '0');
      assert.equal(decimalText(b.total), '0');
    }
    const catalog = await client.userAssets.assets();
    assert.deepEqual(catalog.map((a) => a.asset).filter((a) => assets.includes(a)), assets);
  });

  it('credit then debit: free and total move, 18 decimals kept exactly end to end', async () => {
    const user = uid();
    const c = await credit(client, user, 'USDT', '0.123456789012345678');
    assert.equal(c.type, 'DEPOSIT');
    assert.equal(c.direction, 'CREDIT');
    assert.equal(decimalText(c.amount), '0.123456789012345678');
    assert.equal(decimalText(c.freeAfter), '0.123456789012345678');
    await credit(client, user, 'USDT', '12345678901234567890.000000000000000001');
    assert.deepEqual(await balanceOf(client, user, 'USDT'),
      { free: '12345678901234567890.123456789012345679', freeze: '0', total: '12345678901234567890.123456789012345679' });
    const d = await client.userAssets.debit({ externalTranId: tid(), asset: 'USDT', amount: decimal('12345678901234567890.000000000000000002'), externalUserId: user });
    assert.equal(d.type, 'WITHDRAW');
    assert.equal(decimalText(d.freeAfter), '0.123456789012345677');
    assert.deepEqual(await balanceOf(client, user, 'USDT'), { free: '0.123456789012345677', freeze: '0', total: '0.123456789012345677' });
    // Per asset (2.3 rule 5): USDC is untouched.
    assert.deepEqual(await balanceOf(client, user, 'USDC'), { free: '0', freeze: '0', total: '0' });
    // The movement reads back with the same digits, by id and by externalTranId.
    const detail = await client.userAssets.transactionDetail({ transactionId: c.transactionId });
    assert.equal(decimalText(detail.amount), '0.123456789012345678');
    const byExt = await client.userAssets.transferQuery(d.externalTranId!);
    assert.equal(byExt.transactionId, d.transactionId);
    assert.equal(decimalText(byExt.amount), '12345678901234567890.000000000000000002');
  });

  it('a debit above free is INSUFFICIENT_BALANCE and books nothing; a debit of exactly free empties it', async () => {
    const user = uid();
    await credit(client, user, 'USDC', '10.00');
    const ext = tid();
    await expectCode(client.userAssets.debit({ externalTranId: ext, asset: 'USDC', amount: decimal('10.000000000000000001'), externalUserId: user }), 'INSUFFICIENT_BALANCE');
    assert.deepEqual(await balanceOf(client, user, 'USDC'), { free: '10', freeze: '0', total: '10' });
    // The refused externalTranId was not consumed.
    await expectCode(client.userAssets.transferQuery(ext), 'TRANSACTION_NOT_FOUND');
    await client.userAssets.debit({ externalTranId: ext, asset: 'USDC', amount: decimal('10'), externalUserId: user });
    assert.deepEqual(await balanceOf(client, user, 'USDC'), { free: '0', freeze: '0', total: '0' });
  });

  it('a repeated externalTranId is EXTERNAL_TRAN_ID_DUPLICATE and books nothing, whatever the rest of the body', async () => {
    const user = uid();
    const ext = tid();
    await credit(client, user, 'USDT', '5', ext);
    await expectCode(credit(client, user, 'USDT', '5', ext), 'EXTERNAL_TRAN_ID_DUPLICATE');
    await expectCode(credit(client, uid(), 'USDC', '7', ext), 'EXTERNAL_TRAN_ID_DUPLICATE');
    await expectCode(client.userAssets.debit({ externalTranId: ext, asset: 'USDT', amount: decimal('1'), externalUserId: user }), 'EXTERNAL_TRAN_ID_DUPLICATE');
    assert.deepEqual(await balanceOf(client, user, 'USDT'), { free: '5', freeze: '0', total: '5' });
  });

  it('issue 26: refusals for a new externalUserId create no user, no account, no row in any table', async () => {
    const owner = uid();
    const ext = tid();
    await credit(client, owner, 'USDT', '5', ext);
    const refusals: Array<[string, () => Promise<unknown>, string]> = [
      ['credit with a used externalTranId', () => credit(client, uid(), 'USDT', '1', ext), 'EXTERNAL_TRAN_ID_DUPLICATE'],
      ['credit with a used externalTranId in another asset', () => credit(client, uid(), 'USDC', '1', ext), 'EXTERNAL_TRAN_ID_DUPLICATE'],
      ['debit with a used externalTranId', () => client.userAssets.debit({ externalTranId: ext, asset: 'USDT', amount: decimal('1'), externalUserId: uid() }), 'EXTERNAL_TRAN_ID_DUPLICATE'],
      ['debit of a user never seen', () => client.userAssets.debit({ externalTranId: tid(), asset: 'USDT', amount: decimal('0.000000000000000001'), externalUserId: uid() }), 'INSUFFICIENT_BALANCE'],
      ['debit of a known user in an asset never held', () => client.userAssets.debit({ externalTranId: tid(), asset: 'USDC', amount: decimal('1'), externalUserId: owner }), 'INSUFFICIENT_BALANCE'],
      ['conversion with a used externalTranId', () => client.userAssets.convert({ externalTranId: ext, externalUserId: uid(), fromAsset: 'USDT', toAsset: 'USDC', amount: decimal('1') }), 'EXTERNAL_TRAN_ID_DUPLICATE'],
      ['conversion of a user never seen', () => client.userAssets.convert({ externalTranId: tid(), externalUserId: uid(), fromAsset: 'USDT', toAsset: 'USDC', amount: decimal('1') }), 'INSUFFICIENT_BALANCE'],
    ];
    for (const [what, call, code] of refusals) {
      const before = await snapshotTables(svc.db);
      await expectCode(call(), code);
      assert.deepEqual(changedTables(before, await snapshotTables(svc.db)), [], `${what}: refused as ${code} and changed nothing`);
    }
    // The refused debit's user is still unknown: a first credit creates it as usual.
    assert.deepEqual(await balanceOf(client, owner, 'USDC'), { free: '0', freeze: '0', total: '0' });
  });

  it('issue 26: concurrent credits of one externalTranId for new users book once and leave exactly one new user', async () => {
    const ext = tid();
    const users = Array.from({ length: 12 }, uid);
    const before = await svc.db.query<{ n: string }>('SELECT count(*)::text AS n FROM managed_users WHERE partner_id = $1', [partnerId]);
    const accountsBefore = await svc.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ledger_accounts WHERE partner_id = $1 AND owner_type = 'MANAGED_USER'`, [partnerId]);
    const results = await Promise.allSettled(users.map((u, i) => credit(client, u, i % 2 === 0 ? 'USDT' : 'USDC', '2', ext)));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, 'one credit is booked');
    for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as { code?: string }).code, 'EXTERNAL_TRAN_ID_DUPLICATE');
    const after = await svc.db.query<{ n: string }>('SELECT count(*)::text AS n FROM managed_users WHERE partner_id = $1', [partnerId]);
    const accountsAfter = await svc.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ledger_accounts WHERE partner_id = $1 AND owner_type = 'MANAGED_USER'`, [partnerId]);
    assert.equal(Number(after[0].n) - Number(before[0].n), 1, 'only the booked credit\'s user exists');
    assert.equal(Number(accountsAfter[0].n) - Number(accountsBefore[0].n), 1, 'only the booked credit\'s account exists');
  });

  it('issue 26: a copy of the externalTranId that takes the index entry after the checks undoes the new user and account (PostgreSQL)', async (t) => {
    // Two connections are needed: one holds the other copy's uncommitted movement while the request waits on it.
    if (!process.env.TEST_DATABASE_URL) return t.skip('needs two connections (TEST_DATABASE_URL); the embedded database serializes every call');
    const owner = uid();
    const stranger = uid();
    await credit(client, owner, 'USDT', '1');
    const ext = tid();
    let answer: Promise<unknown> = Promise.resolve();
    await svc.db.tx(async (q) => {
      // The other copy (the owner's credit) is booked but not committed: its index entry blocks the request's insert.
      await q.query(`SELECT outcome FROM user_asset_move($1, $2, 'mu-race-unused', $3, 'DEPOSIT', 'CREDIT', 'USDT', 1::numeric, NULL, ARRAY[]::text[], now(),
        $4, $5, 'la-race-unused-1', 'la-race-unused-2')`, [partnerId, owner, ext, `am-race-${ext.slice(3)}`, `lp-race-${ext.slice(3)}`]);
      answer = credit(client, stranger, 'USDC', '2', ext).then(() => null, (e: unknown) => e);
      for (let i = 0; i < 400; i++) {
        const [waiting] = await svc.db.query<{ n: string }>(
          `SELECT count(*)::text AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%user_asset_move%' AND pid <> pg_backend_pid()`);
        if (waiting.n !== '0') return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.fail('the request never waited on the uncommitted copy');
    });
    const err = await answer;
    assert.equal((err as { code?: string } | null)?.code, 'EXTERNAL_TRAN_ID_DUPLICATE');
    const users = await svc.db.query('SELECT 1 FROM managed_users WHERE partner_id = $1 AND external_user_id = $2', [partnerId, stranger]);
    assert.equal(users.length, 0, 'the user created by the refused call was undone');
    assert.deepEqual(await balanceOf(client, owner, 'USDT'), { free: '2', freeze: '0', total: '2' }, 'the other copy was booked');
  });

  it('the movement list time filters answer exactly the movements of the unfiltered list in their bounds', async () => {
    const user = uid();
    for (const amount of ['1', '2', '3']) {
      await credit(client, user, 'USDT', amount);
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    const all = (await client.userAssets.transactions({ externalUserId: user })).result;
    assert.equal(all.length, 3);
    const middle = all[1].createTime;
    const since = await client.userAssets.transactions({ externalUserId: user, startTime: middle });
    assert.deepEqual(since.result.map((m) => m.transactionId), all.filter((m) => m.createTime >= middle).map((m) => m.transactionId));
    assert.equal(since.total, 2);
    const before = await client.userAssets.transactions({ externalUserId: user, endTime: middle });
    assert.deepEqual(before.result.map((m) => m.transactionId), all.filter((m) => m.createTime < middle).map((m) => m.transactionId));
    assert.equal(before.total, 1);
    const both = await client.userAssets.transactions({ externalUserId: user, asset: 'USDT', type: 'DEPOSIT', startTime: middle, endTime: all[0].createTime });
    assert.deepEqual(both.result.map((m) => m.transactionId), [all[1].transactionId]);
  });

  it('50 concurrent identical credits book once', async () => {
    const user = uid();
    const ext = tid();
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => credit(client, user, 'USDT', '1.5', ext)));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const dup = results.filter((r) => r.status === 'rejected' && (r.reason as { code?: string }).code === 'EXTERNAL_TRAN_ID_DUPLICATE');
    assert.equal(ok.length, 1, 'exactly one credit is booked');
    assert.equal(dup.length, 49, 'every other copy is a duplicate');
    assert.deepEqual(await balanceOf(client, user, 'USDT'), { free: '1.5', freeze: '0', total: '1.5' });
    const page = await client.userAssets.transactions({ externalUserId: user });
    assert.equal(page.total, 1);
  });

  it('concurrent identical credits for different users still book once (the unique index decides)', async () => {
    const ext = tid();
    const users = Array.from({ length: 10 }, uid);
    const results = await Promise.allSettled(users.map((u) => credit(client, u, 'USDT', '2', ext)));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    let total = 0;
    for (const u of users) total += Number((await balanceOf(client, u, 'USDT')).free);
    assert.equal(total, 2);
  });

  it('users are per partner, assets per user: another partner\'s externalUserId is another user', async () => {
    const other = await svc.newPartner();
    const user = uid();
    await credit(client, user, 'USDT', '3');
    assert.deepEqual(await balanceOf(other.client, user, 'USDT'), { free: '0', freeze: '0', total: '0' });
    const page = await other.client.userAssets.transactions({ externalUserId: user });
    assert.equal(page.total, 0);
    // The same externalTranId is free for another partner.
    const ext = tid();
    await credit(client, user, 'USDT', '1', ext);
    await credit(other.client, user, 'USDT', '1', ext);
    await expectCode(other.client.userAssets.transferQuery('no-such-' + ext), 'TRANSACTION_NOT_FOUND');
    const mine = await client.userAssets.transferQuery(ext);
    const theirs = await other.client.userAssets.transferQuery(ext);
    assert.notEqual(mine.transactionId, theirs.transactionId);
    await expectCode(other.client.userAssets.transactionDetail({ transactionId: mine.transactionId }), 'TRANSACTION_NOT_FOUND');
  });

  it('bounds: amount positive with at most 18 decimals, known asset, field lengths; refusals change nothing', async () => {
    const user = uid();
    await expectCode(credit(client, user, 'USDT', '0.1234567890123456789'), 'DAPI_PARAM_INVALID');
    await expectCode(credit(client, user, 'USDT', '0'), 'DAPI_PARAM_INVALID');
    await expectCode(credit(client, user, 'USDT', '-1'), 'DAPI_PARAM_INVALID');
    await expectCode(credit(client, user, 'DOGE', '1'), 'ASSET_INVALID');
    await expectCode(credit(client, 'x'.repeat(65), 'USDT', '1'), 'DAPI_PARAM_INVALID');
    await expectCode(credit(client, user, 'USDT', '1', 'e'.repeat(65)), 'DAPI_PARAM_INVALID');
    await expectCode(client.userAssets.credit({ externalTranId: tid(), asset: 'USDT', amount: decimal('1'), externalUserId: user, remark: 'r'.repeat(257) }), 'DAPI_PARAM_INVALID');
    await expectCode(client.userAssets.credit({ externalTranId: tid(), asset: 'USDT', amount: decimal('1'), externalUserId: user, type: 'WITHDRAW' as never }), 'DAPI_PARAM_INVALID');
    assert.equal((await client.userAssets.transactions({ externalUserId: user })).total, 0);
  });

  it('movement types: credits and debits carry the 2.4 type asked for; the list filters by type and asset', async () => {
    const user = uid();
    await client.userAssets.credit({ externalTranId: tid(), asset: 'USDT', amount: decimal('10'), externalUserId: user, type: 'REWARD_DISTRIBUTION' });
    await client.userAssets.debit({ externalTranId: tid(), asset: 'USDT', amount: decimal('4'), externalUserId: user, type: 'REWARD_PAY' });
    await client.userAssets.credit({ externalTranId: tid(), asset: 'USDT', amount: decimal('1'), externalUserId: user, type: 'REWARD_REFUND' });
    await client.userAssets.credit({ externalTranId: tid(), asset: 'USDC', amount: decimal('2'), externalUserId: user, type: 'MIGRATION' });
    await client.userAssets.debit({ externalTranId: tid(), asset: 'USDC', amount: decimal('1'), externalUserId: user, type: 'MIGRATION' });
    assert.deepEqual(await balanceOf(client, user, 'USDT'), { free: '7', freeze: '0', total: '7' });
    const all = await client.userAssets.transactions({ externalUserId: user });
    assert.equal(all.total, 5);
    assert.deepEqual(all.result.map((m) => m.type), ['MIGRATION', 'MIGRATION', 'REWARD_REFUND', 'REWARD_PAY', 'REWARD_DISTRIBUTION']);
    const usdt = await client.userAssets.transactions({ externalUserId: user, asset: 'USDT' }, 'POST');
    assert.equal(usdt.total, 3);
    const migrations = await client.userAssets.transactions({ externalUserId: user, type: 'MIGRATION', pageSize: 1, page: 2 });
    assert.equal(migrations.total, 2);
    assert.equal(migrations.result.length, 1);
    assert.equal(migrations.page, 2);
    await expectCode(client.userAssets.transactions({ externalUserId: user, pageSize: 101 }), 'DAPI_PARAM_INVALID');
  });

  it('CONVERSION between pegged assets is 1:1; to a rated asset at the operator rate, rounded down to its scale', async () => {
    const user = uid();
    await credit(client, user, 'USDT', '100');
    const m = await client.userAssets.convert({ externalTranId: tid(), externalUserId: user, fromAsset: 'USDT', toAsset: 'USDC', amount: decimal('40.5') });
    assert.equal(m.type, 'CONVERSION');
    assert.equal(decimalText(m.counterAmount), '40.5');
    assert.equal(decimalText(m.rate), '1');
    assert.deepEqual(await balanceOf(client, user, 'USDT'), { free: '59.5', freeze: '0', total: '59.5' });
    assert.deepEqual(await balanceOf(client, user, 'USDC'), { free: '40.5', freeze: '0', total: '40.5' });
    // An operator adds a non-pegged asset with a rate: 1 USD buys 7.8 units, 2 decimals.
    const code = `H${randomBytes(3).toString('hex').toUpperCase()}`;
    await svc.admin.upsertAsset({ asset: code, network: 'FIAT', logo: 'https://example.test/h.svg', scale: 2, usdPegged: false, usdRate: decimal('7.8'), status: 'ACTIVE' });
    const h = await client.userAssets.convert({ externalTranId: tid(), externalUserId: user, fromAsset: 'USDT', toAsset: code, amount: decimal('1.111') });
    assert.equal(decimalText(h.counterAmount), '8.66', '1.111 x 7.8 = 8.6658, rounded down to 2 decimals');
    assert.deepEqual(await balanceOf(client, user, code), { free: '8.66', freeze: '0', total: '8.66' });
    const back = await client.userAssets.convert({ externalTranId: tid(), externalUserId: user, fromAsset: code, toAsset: 'USDT', amount: decimal('7.8') });
    assert.equal(decimalText(back.counterAmount), '1');
    await expectCode(client.userAssets.convert({ externalTranId: tid(), externalUserId: user, fromAsset: code, toAsset: 'USDT', amount: decimal('0.001') }), 'DAPI_PARAM_INVALID');
    await expectCode(client.userAssets.convert({ externalTranId: tid(), externalUserId: user, fromAsset: 'USDT', toAsset: 'USDC', amount: decimal('1000') }), 'INSUFFICIENT_BALANCE');
    // A USD-pegged asset converts 1:1, so it carries at least USD's two decimals (D4, D35): with
    // scale 0 a USD 1.01 card hold left the user a balance of 8.99 they could never debit.
    const peg0 = `P${randomBytes(3).toString('hex').toUpperCase()}`;
    for (const scale of [0, 1]) {
      await expectCode(svc.admin.upsertAsset({ asset: peg0, network: 'X', logo: 'https://example.test/p.svg', scale, usdPegged: true, status: 'ACTIVE' }), 'DAPI_PARAM_INVALID', 'scale');
    }
    assert.ok(!(await svc.admin.call<Array<{ asset: string }>>('GET', '/internal/admin/v1/assets')).some((a) => a.asset === peg0), 'nothing was created');
    await svc.admin.upsertAsset({ asset: peg0, network: 'X', logo: 'https://example.test/p.svg', scale: 2, usdPegged: true, status: 'ACTIVE' });
    // An asset without a rate cannot be converted.
    const norate = `N${randomBytes(3).toString('hex').toUpperCase()}`;
    await svc.admin.upsertAsset({ asset: norate, network: 'X', logo: 'https://example.test/n.svg', scale: 8, usdPegged: false, status: 'ACTIVE' });
    // An asset's decimals can be raised, never lowered (review of 2026-11-27): a balance of 1.2345 in a
    // 6-decimal asset lowered to 3 could never be debited of its last 0.0005.
    await expectCode(svc.admin.upsertAsset({ asset: norate, network: 'X', logo: 'https://example.test/other.svg', scale: 7, usdPegged: false, status: 'ACTIVE' }), 'DAPI_PARAM_INVALID', 'scale');
    const kept = (await svc.admin.call<Array<{ asset: string; scale: number; logo: string }>>('GET', '/internal/admin/v1/assets')).find((a) => a.asset === norate);
    assert.deepEqual([kept?.scale, kept?.logo], [8, 'https://example.test/n.svg'], 'the refused update changed nothing');
    await svc.admin.upsertAsset({ asset: norate, network: 'X', logo: 'https://example.test/n.svg', scale: 9, usdPegged: false, status: 'ACTIVE' });
    await svc.admin.upsertAsset({ asset: norate, network: 'X', logo: 'https://example.test/n.svg', scale: 9, usdPegged: false, status: 'ACTIVE' });
    await expectCode(client.userAssets.convert({ externalTranId: tid(), externalUserId: user, fromAsset: 'USDT', toAsset: norate, amount: decimal('1') }), 'CONVERSION_NOT_AVAILABLE');
    // A new asset shows in every balance list at once (the list is not hard-coded).
    assert.ok((await client.userAssets.balance(uid())).some((b) => b.asset === norate));
    // Scale of a smaller asset is enforced on credits too.
    await expectCode(credit(client, user, code, '1.001'), 'DAPI_PARAM_INVALID');
    // Retiring an asset: credits refused, the holder still sees the balance.
    await svc.admin.upsertAsset({ asset: code, network: 'FIAT', logo: 'https://example.test/h.svg', scale: 2, usdPegged: false, usdRate: decimal('7.8'), status: 'INACTIVE' });
    await expectCode(credit(client, user, code, '1'), 'ASSET_INVALID');
    assert.ok((await client.userAssets.balance(user)).some((b) => b.asset === code));
    assert.ok(!(await client.userAssets.balance(uid())).some((b) => b.asset === code));
  });

  it('CASH_IN_FROZEN refuses credits, CASH_OUT_FROZEN and ACCOUNT_FROZEN refuse debits and conversions (D20); lifting them restores', async () => {
    const user = uid();
    await credit(client, user, 'USDT', '10');
    await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, addRestrictions: ['CASH_IN_FROZEN'] });
    const e = await expectCode(credit(client, user, 'USDT', '1'), 'CAPABILITY_FROZEN');
    assert.deepEqual(e.data, { errorCode: 'CASH_IN_FROZEN', errorMsg: 'USER' });
    await client.userAssets.debit({ externalTranId: tid(), asset: 'USDT', amount: decimal('1'), externalUserId: user });
    await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, addRestrictions: ['CASH_OUT_FROZEN'], removeRestrictions: ['CASH_IN_FROZEN'] });
    await expectCode(client.userAssets.debit({ externalTranId: tid(), asset: 'USDT', amount: decimal('1'), externalUserId: user }), 'CAPABILITY_FROZEN');
    await expectCode(client.userAssets.convert({ externalTranId: tid(), externalUserId: user, fromAsset: 'USDT', toAsset: 'USDC', amount: decimal('1') }), 'CAPABILITY_FROZEN');
    await credit(client, user, 'USDT', '1');
    const r = await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, addRestrictions: ['ACCOUNT_FROZEN'], removeRestrictions: ['CASH_OUT_FROZEN'] });
    assert.deepEqual(r.restrictions, ['ACCOUNT_FROZEN']);
    await expectCode(client.userAssets.debit({ externalTranId: tid(), asset: 'USDT', amount: decimal('1'), externalUserId: user }), 'CAPABILITY_FROZEN');
    await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, removeRestrictions: ['ACCOUNT_FROZEN'] });
    await client.userAssets.debit({ externalTranId: tid(), asset: 'USDT', amount: decimal('1'), externalUserId: user });
    assert.deepEqual(await balanceOf(client, user, 'USDT'), { free: '9', freeze: '0', total: '9' });
    await assert.rejects(svc.admin.setUserRestrictions({ partnerId, externalUserId: user }), /DAPI_PARAM_INVALID|Invalid parameter/);
  });

  it('every credit and debit is one balanced posting; the stream records each balance change', async () => {
    const user = uid();
    const c = await credit(client, user, 'USDT', '3.25');
    const rows = await svc.db.query<{ n: string; s: string }>(
      `SELECT count(*)::text AS n, sum(e.amount)::text AS s FROM asset_movements m JOIN ledger_entries e ON e.posting_id = m.posting_id
        WHERE m.movement_id = $1`, [c.transactionId]);
    assert.equal(rows[0].n, '2', 'two entries');
    assert.match(rows[0].s, /^0(\.0+)?$/, 'they sum to zero');
    const stream = await svc.db.query<{ payload: string }>(
      `SELECT payload FROM user_stream WHERE partner_id = $1 AND external_user_id = $2 AND kind = 'BALANCE' ORDER BY stream_seq`, [partnerId, user]);
    assert.equal(stream.length, 1);
    const msg = JSON.parse(stream[0].payload) as { balance: { asset: string; free: number }; postingKind: string; reference: string };
    assert.equal(msg.balance.asset, 'USDT');
    assert.equal(msg.postingKind, 'DEPOSIT');
    assert.equal(msg.reference, c.transactionId);
  });
});
