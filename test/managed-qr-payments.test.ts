import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { decimal, decimalText, type CardServiceClient, type QrPayment } from '../sdk/index.ts';
import { startService, type TestService } from './helpers/service.ts';
import { balanceOf as userBalance, closeWithCleanLedger, creditUser, newTranId, newUserId } from './helpers/managed.ts';
import { expectCode } from './helpers/companies.ts';
import { networkClient } from './helpers/authorization.ts';

/**
 * QR payments of the managed-balance model (issue 11; 2.3, 2.9; D33, D40, D47): PAY from free,
 * declines that change nothing, REFUND, REFUND_PART and REVERSAL bounded by the payment, the
 * network ingress booking a message once under concurrent copies, reads and partner isolation.
 */
describe('QR payments (issue 11)', () => {
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
  const credit = (user: string, asset: string, amount: string, c = client) => creditUser(c, user, asset, amount);
  const balanceOf = (user: string, asset: string) => userBalance(client, user, asset);
  const pay = (user: string, amount: string, asset = 'USDT', c = client) =>
    c.sandbox.simulateQrPayment({ transType: 'PAY', externalUserId: user, asset, amount: decimal(amount), merchantName: 'Noodle bar', merchantCountry: 'SG', mcc: '5812' });
  const giveBack = (transType: 'REFUND' | 'REFUND_PART' | 'REVERSAL', orderId: string, amount: string, c = client) =>
    c.sandbox.simulateQrPayment({ transType, orderId, amount: decimal(amount) });

  it('PAY debits free at once and is recorded; list and detail read it', async () => {
    const user = uid();
    await credit(user, 'USDT', '10.00');
    const p = await pay(user, '3.25');
    assert.equal(p.transType, 'PAY');
    assert.equal(p.debitCreditIndicator, 'D');
    assert.equal(p.status, 'SUCCESS');
    assert.equal(p.declineReason, null);
    assert.equal(decimalText(p.amount), '3.25');
    assert.equal(decimalText(p.freeAfter!), '6.75');
    assert.equal(decimalText(p.returnedAmount!), '0');
    assert.equal(p.externalUserId, user);
    assert.equal(p.merchantName, 'Noodle bar');
    assert.equal(p.source, 'SANDBOX');
    assert.ok(p.orderId.length <= 20);
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '6.75', freeze: '0', total: '6.75' });
    const detail = await client.qrPayments.detail(p.orderId);
    assert.deepEqual(detail, p);
    const page = await client.qrPayments.list({ externalUserId: user });
    assert.equal(page.total, 1);
    assert.deepEqual(page.result[0], p);
  });

  it('18 decimals are kept exactly through a PAY and its partial refund', async () => {
    const user = uid();
    await credit(user, 'USDC', '1.000000000000000003');
    const p = await pay(user, '0.000000000000000002', 'USDC');
    assert.equal(decimalText(p.freeAfter!), '1.000000000000000001');
    const r = await giveBack('REFUND_PART', p.orderId, '0.000000000000000001');
    assert.equal(decimalText(r.freeAfter!), '1.000000000000000002');
    assert.equal((await balanceOf(user, 'USDC')).free, '1.000000000000000002');
  });

  it('declines (D47) are records that change nothing: INSUFFICIENT_BALANCE, CAPABILITY_FROZEN by PAYMENT_FROZEN and ACCOUNT_FROZEN', async () => {
    const user = uid();
    await credit(user, 'USDT', '5.00');
    const poor = await pay(user, '5.01');
    assert.equal(poor.status, 'DECLINED');
    assert.equal(poor.declineReason, 'INSUFFICIENT_BALANCE');
    assert.equal(poor.freeAfter, null);
    const stranger = await pay(uid(), '0.01');
    assert.equal(stranger.declineReason, 'INSUFFICIENT_BALANCE', 'a user without the asset has nothing to pay with');
    for (const code of ['PAYMENT_FROZEN', 'ACCOUNT_FROZEN'] as const) {
      await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, addRestrictions: [code] });
      const frozen = await pay(user, '1.00');
      assert.equal(frozen.status, 'DECLINED');
      assert.equal(frozen.declineReason, 'CAPABILITY_FROZEN');
      assert.equal(frozen.declineDetail, `USER:${code}`);
      await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, removeRestrictions: [code] });
    }
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '5', freeze: '0', total: '5' });
    const declined = await client.qrPayments.list({ externalUserId: user, status: 'DECLINED' });
    assert.equal(declined.total, 3);
    await expectCode(giveBack('REFUND', poor.orderId, '5.01'), 'TRANSACTION_STATUS_INVALID');
    // Freezes do not stop a payment's return: it is the user's money coming back (2.3 rule 3).
    const ok = await pay(user, '2.00');
    await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, addRestrictions: ['ACCOUNT_FROZEN'] });
    const back = await giveBack('REVERSAL', ok.orderId, '2.00');
    assert.equal(back.status, 'SUCCESS');
    await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, removeRestrictions: ['ACCOUNT_FROZEN'] });
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '5', freeze: '0', total: '5' });
  });

  it('REFUND_PART up to the payment, then nothing more; REFUND and REVERSAL return exactly the whole payment once', async () => {
    const user = uid();
    await credit(user, 'USDT', '20.00');
    const p = await pay(user, '10.00');
    const r1 = await giveBack('REFUND_PART', p.orderId, '4.00');
    assert.equal(r1.transType, 'REFUND_PART');
    assert.equal(r1.debitCreditIndicator, 'C');
    assert.equal(r1.originalOrderId, p.orderId);
    assert.equal(r1.returnedAmount, null);
    assert.equal(r1.merchantName, 'Noodle bar', 'a return carries its payment\'s merchant');
    assert.equal(decimalText(r1.freeAfter!), '14');
    await expectCode(giveBack('REFUND_PART', p.orderId, '6.01'), 'TRANSACTION_AMOUNT_INVALID');
    await expectCode(giveBack('REFUND', p.orderId, '10.00'), 'TRANSACTION_STATUS_INVALID');
    await expectCode(giveBack('REVERSAL', p.orderId, '10.00'), 'TRANSACTION_STATUS_INVALID');
    await giveBack('REFUND_PART', p.orderId, '6.00');
    await expectCode(giveBack('REFUND_PART', p.orderId, '0.01'), 'TRANSACTION_STATUS_INVALID');
    assert.equal(decimalText((await client.qrPayments.detail(p.orderId)).returnedAmount!), '10');
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '20', freeze: '0', total: '20' });

    const q = await pay(user, '7.50');
    await expectCode(giveBack('REFUND', q.orderId, '7.49'), 'TRANSACTION_AMOUNT_INVALID');
    await expectCode(giveBack('REVERSAL', q.orderId, '7.51'), 'TRANSACTION_AMOUNT_INVALID');
    const full = await giveBack('REFUND', q.orderId, '7.50');
    assert.equal(decimalText(full.freeAfter!), '20');
    await expectCode(giveBack('REFUND', q.orderId, '7.50'), 'TRANSACTION_STATUS_INVALID');
    await expectCode(giveBack('REFUND_PART', q.orderId, '1.00'), 'TRANSACTION_STATUS_INVALID');
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '20', freeze: '0', total: '20' });
    const returns = await client.qrPayments.list({ externalUserId: user, transType: 'REFUND_PART' });
    assert.equal(returns.total, 2);
  });

  it('the settlement side is striped by user: payments of different users land on different rows, and each return goes back through its payment\'s row', async () => {
    const { partner: own, client: ownClient } = await svc.newPartner();
    const users = Array.from({ length: 12 }, () => uid());
    const paid = [];
    for (const user of users) {
      await credit(user, 'USDT', '4.00', ownClient);
      paid.push(await pay(user, '3.00', 'USDT', ownClient));
    }
    for (const p of paid.slice(0, 6)) await giveBack('REFUND', p.orderId, '3.00', ownClient);
    const rows = await svc.db.query<{ ownerId: string; available: string; negative: boolean }>(
      `SELECT owner_id AS "ownerId", available::text AS available, available < 0 AS negative FROM ledger_accounts
        WHERE partner_id = $1 AND owner_type = 'CLEARING' AND currency = 'USDT' ORDER BY owner_id`,
      [own.partnerId],
    );
    assert.ok(rows.length > 1, `12 users spread over more than one settlement row (got ${rows.length})`);
    assert.ok(rows.every((r) => /^QR_SETTLEMENT_\d{2}$/.test(r.ownerId)), 'only QR settlement stripes');
    // A return through another row than its payment's would leave some row negative.
    assert.ok(rows.every((r) => !r.negative), `no stripe below zero: ${JSON.stringify(rows)}`);
    const [owed] = await svc.db.query<{ total: string; exact: boolean }>(
      `SELECT sum(available)::text AS total, sum(available) = 18 AS exact FROM ledger_accounts
        WHERE partner_id = $1 AND owner_type = 'CLEARING' AND currency = 'USDT'`,
      [own.partnerId],
    );
    assert.ok(owed.exact, `the stripes add up to the six payments not returned (18), got ${owed.total}`);
  });

  it('bad input is refused with a clear code and books nothing', async () => {
    const user = uid();
    await credit(user, 'USDT', '5.00');
    await expectCode(client.sandbox.simulateQrPayment({ transType: 'PAY', externalUserId: user, amount: decimal('1.00'), merchantName: 'x' }), 'DAPI_PARAM_INVALID');
    await expectCode(client.sandbox.simulateQrPayment({ transType: 'PAY', externalUserId: user, asset: 'USDT', amount: decimal('1.00') }), 'DAPI_PARAM_INVALID');
    await expectCode(client.sandbox.simulateQrPayment({ transType: 'PAY', externalUserId: user, asset: 'NOPE', amount: decimal('1.00'), merchantName: 'x' }), 'ASSET_INVALID');
    await expectCode(client.sandbox.simulateQrPayment({ transType: 'PAY', externalUserId: user, asset: 'USDT', amount: decimal('0'), merchantName: 'x' }), 'DAPI_PARAM_INVALID');
    await expectCode(client.sandbox.simulateQrPayment({ transType: 'PAY', externalUserId: user, asset: 'USDT', amount: decimal('1.00'), merchantName: 'x', merchantCountry: 'ZZ' }), 'DAPI_PARAM_INVALID');
    await expectCode(client.sandbox.simulateQrPayment({ transType: 'REFUND', amount: decimal('1.00') }), 'DAPI_PARAM_INVALID');
    const p = await pay(user, '1.00');
    await expectCode(client.sandbox.simulateQrPayment({ transType: 'REFUND', orderId: p.orderId, asset: 'USDC', amount: decimal('1.00') }), 'DAPI_PARAM_INVALID');
    await expectCode(client.sandbox.simulateQrPayment({ transType: 'PAY', orderId: p.orderId, externalUserId: user, asset: 'USDT', amount: decimal('1.00'), merchantName: 'x' }), 'DAPI_PARAM_INVALID');
    await expectCode(giveBack('REFUND', 'qr-unknown', '1.00'), 'TRANSACTION_NOT_FOUND');
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '4', freeze: '0', total: '4' });
    assert.equal((await client.qrPayments.list({ externalUserId: user })).total, 1);
  });

  it('D4: a return carries at most its asset\'s decimals like the PAY: a 0.001 REFUND_PART of a 2-decimal asset is refused and books nothing', async () => {
    const code = `Q${randomBytes(2).toString('hex').toUpperCase()}`;
    await svc.admin.upsertAsset({ asset: code, network: 'FIAT', logo: 'https://example.test/q.svg', scale: 2, usdPegged: false, usdRate: decimal('7.8'), status: 'ACTIVE' });
    const user = uid();
    await credit(user, code, '10.00');
    await expectCode(pay(user, '0.001', code), 'DAPI_PARAM_INVALID');
    const p = await pay(user, '1.10', code);
    assert.equal(p.status, 'SUCCESS');
    await expectCode(giveBack('REFUND_PART', p.orderId, '0.001'), 'DAPI_PARAM_INVALID');
    await expectCode(giveBack('REFUND_PART', p.orderId, '0.105'), 'DAPI_PARAM_INVALID');
    assert.deepEqual(await balanceOf(user, code), { free: '8.9', freeze: '0', total: '8.9' });
    assert.equal(decimalText((await client.qrPayments.detail(p.orderId)).returnedAmount), '0');
    // Within the scale a return still books exactly; trailing zeros are not extra decimals.
    await giveBack('REFUND_PART', p.orderId, '0.100');
    assert.deepEqual(await balanceOf(user, code), { free: '9', freeze: '0', total: '9' });
  });

  it('20 concurrent PAYs of 1.00 against free 5.00 approve exactly 5', async () => {
    const user = uid();
    await credit(user, 'USDT', '5.00');
    const answers = await Promise.all(Array.from({ length: 20 }, () => pay(user, '1.00')));
    assert.equal(answers.filter((a) => a.status === 'SUCCESS').length, 5);
    assert.ok(answers.filter((a) => a.status === 'DECLINED').every((a) => a.declineReason === 'INSUFFICIENT_BALANCE'));
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '0', freeze: '0', total: '0' });
  });

  it('the network ingress books a message once under 10 concurrent copies (PAY and REFUND_PART), answering each copy identically', async () => {
    const user = uid();
    await credit(user, 'USDT', '50.00');
    const network = await networkClient(svc);
    const payBody = {
      networkTransactionId: `qrn-${randomBytes(6).toString('hex')}`, transType: 'PAY', partnerId, externalUserId: user, asset: 'USDT',
      amount: decimal('12.00'), merchantName: 'Tea house', merchantCountry: 'HK', mcc: '5814',
    };
    const pays = await Promise.all(Array.from({ length: 10 }, () => network.call<QrPayment>('POST', '/internal/network/v1/qr-payment', { body: payBody })));
    for (const a of pays) assert.deepEqual(a, pays[0]);
    assert.equal(pays[0].source, 'NETWORK');
    assert.equal(pays[0].networkTransactionId, payBody.networkTransactionId);
    const refundBody = {
      networkTransactionId: `qrn-${randomBytes(6).toString('hex')}`, transType: 'REFUND_PART', originalNetworkTransactionId: payBody.networkTransactionId,
      amount: decimal('2.00'),
    };
    const refunds = await Promise.all(Array.from({ length: 10 }, () => network.call<QrPayment>('POST', '/internal/network/v1/qr-payment', { body: refundBody })));
    for (const a of refunds) assert.deepEqual(a, refunds[0]);
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '40', freeze: '0', total: '40' });
    assert.equal((await client.qrPayments.list({ externalUserId: user })).total, 2);
    assert.equal(decimalText((await client.qrPayments.detail(pays[0].orderId)).returnedAmount!), '2');

    await expectCode(network.call('POST', '/internal/network/v1/qr-payment', { body: { ...payBody, networkTransactionId: 'qrn-other', partnerId: 'pt-nobody' } }), 'PARTNER_INVALID');
    await expectCode(network.call('POST', '/internal/network/v1/qr-payment', { body: { ...payBody, networkTransactionId: 'qrn-nopartner', partnerId: undefined } }), 'DAPI_PARAM_INVALID');
    await expectCode(network.call('POST', '/internal/network/v1/qr-payment', { body: { ...refundBody, networkTransactionId: 'qrn-r2', originalNetworkTransactionId: 'qrn-none' } }), 'TRANSACTION_NOT_FOUND');
    // A partner's own credentials do not open the network ingress.
    await expectCode(client.http.call('POST', '/internal/network/v1/qr-payment', { body: payBody }), 'DAPI_API_KEY_INVALID');
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '40', freeze: '0', total: '40' });
  });

  it('a DISABLED partner\'s users cannot pay: the network PAY is declined CAPABILITY_FROZEN PARTNER:DISABLED and changes nothing', async () => {
    const other = await svc.newPartner();
    const user = uid();
    await credit(user, 'USDT', '5.00', other.client);
    await svc.admin.updatePartner(other.partner.partnerId, { status: 'DISABLED' });
    const network = await networkClient(svc);
    const declined = await network.call<QrPayment>('POST', '/internal/network/v1/qr-payment', {
      body: { networkTransactionId: `qrn-${randomBytes(6).toString('hex')}`, transType: 'PAY', partnerId: other.partner.partnerId, externalUserId: user, asset: 'USDT', amount: decimal('1.00'), merchantName: 'Kiosk' },
    });
    assert.equal(declined.status, 'DECLINED');
    assert.equal(declined.declineReason, 'CAPABILITY_FROZEN');
    assert.equal(declined.declineDetail, 'PARTNER:DISABLED');
    await svc.admin.updatePartner(other.partner.partnerId, { status: 'ACTIVE' });
    assert.equal((await userBalance(other.client, user, 'USDT')).free, '5');
  });

  it('another partner\'s QR records do not exist for a partner: detail, list and returns', async () => {
    const user = uid();
    await credit(user, 'USDT', '3.00');
    const p = await pay(user, '1.00');
    const other = await svc.newPartner();
    await expectCode(other.client.qrPayments.detail(p.orderId), 'TRANSACTION_NOT_FOUND');
    assert.equal((await other.client.qrPayments.list({ externalUserId: user })).total, 0);
    assert.equal((await other.client.qrPayments.list()).total, 0);
    await expectCode(giveBack('REFUND', p.orderId, '1.00', other.client), 'TRANSACTION_NOT_FOUND');
    assert.equal((await client.qrPayments.detail(p.orderId)).returnedAmount !== null, true);
    assert.equal(decimalText((await client.qrPayments.detail(p.orderId)).returnedAmount!), '0');
  });
});
