import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CardServiceError, decimal, decimalText, type CardServiceClient } from '../sdk/index.ts';
import { startService, type TestService } from './helpers/service.ts';
import { balanceOf as userBalance, closeWithCleanLedger, creditUser, newTranId, newUserId } from './helpers/managed.ts';
import { expectCode } from './helpers/companies.ts';
import { plaintextOf } from './helpers/cards.ts';

/**
 * Consumer cards of the managed-balance model (issue 11; 4.2, 2.3, 2.4, 2.9; D35, D36, D43, D47):
 * apply with fees, reads, isolation, freeze and unfreeze with verification codes, and spend through
 * the authorization engine against the user's asset. All through the signed API and the SDK.
 */
describe('consumer cards (issue 11)', () => {
  let svc: TestService;
  let client: CardServiceClient;
  let partnerId: string;
  let profileId: string;
  before(async () => {
    svc = await startService();
    const p = await svc.newPartner();
    client = p.client;
    partnerId = p.partner.partnerId;
    // A physical VIP profile with all three fees of 2.4, offered to this partner only.
    const profile = await svc.admin.call<{ cardProfileId: string }>('POST', '/internal/admin/v1/card-profiles', {
      body: {
        partnerId, profileName: 'VIP metal', cardNetwork: 'VISA', cardForm: 'PHYSICAL', balanceMode: 'ASSET', settlementCurrencies: ['USD'],
        bin: '462266', fees: { issuanceFee: decimal('3.00'), postalFee: decimal('2.50'), frozenFee: decimal('1.25') },
      },
    });
    profileId = profile.cardProfileId;
  });
  after(() => closeWithCleanLedger(svc));

  const uid = newUserId;
  const tid = newTranId;
  const credit = (user: string, asset: string, amount: string, c = client) => creditUser(c, user, asset, amount);
  const balanceOf = (user: string, asset: string, c = client) => userBalance(c, user, asset);
  const virtualCard = async (user: string, fundingAsset = 'USDT') =>
    client.consumerCards.apply({ externalUserId: user, cardProfileId: 'sbx-visa-consumer', cardholderName: 'Ada Lovelace', fundingAsset });
  const purchase = (cardId: string, amount: string) => client.sandbox.authorize({
    cardId, amount: decimal(amount), currency: 'USD', merchantName: 'Coffee', mcc: '5814', merchantCountry: 'HK', channel: 'POS',
  });

  it('apply issues an ACTIVE card and charges CARD_PRINTING_FEE and CARD_POSTAL_FEE (physical) from free, as 2.4 movements', async () => {
    const user = uid();
    await credit(user, 'USDC', '10');
    const card = await client.consumerCards.apply({ externalUserId: user, cardProfileId: profileId, cardholderName: 'Grace Hopper', fundingAsset: 'USDC' });
    assert.equal(card.status, 'ACTIVE');
    assert.equal(card.cardForm, 'PHYSICAL');
    assert.equal(card.fundingAsset, 'USDC');
    assert.equal(card.currency, 'USD');
    assert.equal(card.cardholderName, 'GRACE HOPPER');
    assert.match(card.cardMantissa, /^[0-9]{4}$/);
    assert.deepEqual(card.fees.map((f) => [f.type, f.asset, decimalText(f.amount)]),
      [['CARD_PRINTING_FEE', 'USDC', '3'], ['CARD_POSTAL_FEE', 'USDC', '2.5']]);
    // 2.3 rule 4: fees reduce free and total directly, never through freeze.
    assert.deepEqual(await balanceOf(user, 'USDC'), { free: '4.5', freeze: '0', total: '4.5' });
    const moves = await client.userAssets.transactions({ externalUserId: user, asset: 'USDC' });
    const fees = moves.result.filter((m) => String(m.type).startsWith('CARD_'));
    assert.deepEqual(fees.map((m) => [m.type, m.direction, m.cardId, decimalText(m.amount)]).sort(),
      [['CARD_POSTAL_FEE', 'DEBIT', card.cardId, '2.5'], ['CARD_PRINTING_FEE', 'DEBIT', card.cardId, '3']]);
    const detail = await client.userAssets.transactionDetail({ transactionId: card.fees[0].transactionId });
    assert.equal(detail.type, 'CARD_PRINTING_FEE');
    // No PAN, no CVV in the answer (D26, D27). The card's own number is looked for, in every grouping:
    // a digit run alone is no proof (a millisecond timestamp or an id has 13 digits too).
    const secret = await plaintextOf(svc, partnerId, card.cardId, true);
    const answer = JSON.stringify(card);
    for (const form of [secret.pan, secret.pan.replace(/(\d{4})(?=\d)/g, '$1 '), secret.pan.replace(/(\d{4})(?=\d)/g, '$1-')]) {
      assert.ok(!answer.includes(form), 'no full card number in the answer');
    }
    assert.ok(!/cvv/i.test(answer) && !answer.includes(`"${secret.cvv2}"`), 'no CVV2 in the answer');
  });

  it('D53: corporate list-profiles shows SHARED and DEDICATED profiles only; /card/v2/list-profiles the ASSET ones offered to the partner, same item fields', async () => {
    const corporate = await client.cards.listProfiles({ pageSize: 100 });
    assert.ok(corporate.result.length > 0);
    assert.ok(corporate.result.every((p) => p.balanceMode === 'SHARED' || p.balanceMode === 'DEDICATED'), 'no ASSET profile in the corporate list');
    assert.ok(!corporate.result.some((p) => p.cardProfileId === profileId || p.cardProfileId === 'sbx-visa-consumer'));
    assert.equal(corporate.total, corporate.result.length, 'the total counts the same profiles');
    await expectCode(client.http.call('GET', '/open-api-corp/card/v1/list-profiles', { query: { balanceMode: 'ASSET' } }), 'DAPI_PARAM_INVALID');

    const consumer = await client.consumerCards.listProfiles({ pageSize: 100 });
    assert.ok(consumer.result.every((p) => p.balanceMode === 'ASSET'), 'only ASSET profiles');
    const ids = consumer.result.map((p) => p.cardProfileId);
    for (const id of ['sbx-visa-consumer', 'sbx-mc-consumer', profileId]) assert.ok(ids.includes(id), `${id} is listed`);
    assert.equal(consumer.total, consumer.result.length);
    assert.deepEqual(Object.keys(consumer.result[0]).sort(), Object.keys(corporate.result[0]).sort(), 'the same item fields');
    const vip = consumer.result.find((p) => p.cardProfileId === profileId)!;
    assert.deepEqual([vip.cardForm, decimalText(vip.fees.issuanceFee), decimalText(vip.fees.postalFee), decimalText(vip.fees.frozenFee)], ['PHYSICAL', '3', '2.5', '1.25']);
    const mastercard = await client.consumerCards.listProfiles({ cardNetwork: 'MASTERCARD' });
    assert.ok(mastercard.result.some((p) => p.cardProfileId === 'sbx-mc-consumer'));
    assert.ok(mastercard.result.every((p) => p.cardNetwork === 'MASTERCARD' && p.balanceMode === 'ASSET'), 'the filter applies within the family');
    // Another partner's own ASSET profile is not offered here.
    const other = await svc.newPartner();
    assert.ok(!(await other.client.consumerCards.listProfiles({ pageSize: 100 })).result.some((p) => p.cardProfileId === profileId));
  });

  it('a refused apply changes nothing: fees above free, an asset without a rate or unknown, corporate profile, frozen card capability', async () => {
    const user = uid();
    await credit(user, 'USDT', '5.49');
    await expectCode(client.consumerCards.apply({ externalUserId: user, cardProfileId: profileId, cardholderName: 'Ann', fundingAsset: 'USDT' }), 'INSUFFICIENT_BALANCE');
    assert.equal((await client.consumerCards.list({ externalUserId: user })).total, 0, 'no card was created');
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '5.49', freeze: '0', total: '5.49' });
    const moves = await client.userAssets.transactions({ externalUserId: user });
    assert.equal(moves.total, 1, 'only the credit: no fee was booked');

    await svc.admin.upsertAsset({ asset: 'PNORATE', network: 'TEST', logo: 'https://x.example/pnr.svg', scale: 8, usdPegged: false, usdRate: null, status: 'ACTIVE' });
    await expectCode(virtualCard(user, 'PNORATE'), 'ASSET_INVALID');
    await expectCode(virtualCard(user, 'NOPE'), 'ASSET_INVALID');
    await expectCode(client.consumerCards.apply({ externalUserId: user, cardProfileId: 'sbx-visa-shared', cardholderName: 'Ann' }), 'CARD_PROFILE_INVALID');
    await expectCode(client.consumerCards.apply({ externalUserId: user, cardProfileId: 'no-such-profile', cardholderName: 'Ann' }), 'CARD_PROFILE_INVALID');
    await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, addRestrictions: ['CARD_FROZEN'] });
    const frozen = await expectCode(virtualCard(user), 'CAPABILITY_FROZEN');
    assert.deepEqual(frozen.data, { errorCode: 'CARD_FROZEN', errorMsg: 'USER' });
    await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, removeRestrictions: ['CARD_FROZEN'] });
    assert.equal((await client.consumerCards.list({ externalUserId: user })).total, 0);
    // Bounds: cardholder name pattern, funding asset code, contacts.
    await expectCode(client.consumerCards.apply({ externalUserId: user, cardProfileId: 'sbx-visa-consumer', cardholderName: 'Ann 2' }), 'DAPI_PARAM_INVALID');
    await expectCode(client.consumerCards.apply({ externalUserId: user, cardProfileId: 'sbx-visa-consumer', cardholderName: 'Ann', mobile: '12345' }), 'DAPI_PARAM_INVALID');
    await expectCode(client.consumerCards.apply({ externalUserId: '', cardProfileId: 'sbx-visa-consumer', cardholderName: 'Ann' }), 'DAPI_PARAM_INVALID');
    // Without fundingAsset the card spends USD (D35).
    const usd = await client.consumerCards.apply({ externalUserId: user, cardProfileId: 'sbx-visa-consumer', cardholderName: 'Ann' });
    assert.equal(usd.fundingAsset, 'USD');
    assert.deepEqual(usd.fees, []);
  });

  it('list and detail show every state (D43); another user, another partner and the corporate routes do not see the card', async () => {
    const user = uid();
    const a = await virtualCard(user);
    const b = await virtualCard(user);
    await client.consumerCards.block({ externalUserId: user, cardId: a.cardId, block: true });
    const page = await client.consumerCards.list({ externalUserId: user });
    assert.equal(page.total, 2);
    assert.deepEqual(page.result.map((c) => c.cardId), [b.cardId, a.cardId], 'newest first');
    assert.equal((await client.consumerCards.list({ externalUserId: user, status: 'BLOCKED' })).result[0].cardId, a.cardId);
    const detail = await client.consumerCards.detail(user, a.cardId);
    assert.equal(detail.status, 'BLOCKED');
    assert.equal(detail.cardMantissa, a.cardMantissa);
    assert.equal(detail.externalUserId, user);

    await expectCode(client.consumerCards.detail(uid(), a.cardId), 'CARD_INVALID');
    const other = await svc.newPartner();
    await expectCode(other.client.consumerCards.detail(user, a.cardId), 'CARD_INVALID');
    assert.equal((await other.client.consumerCards.list({ externalUserId: user })).total, 0, 'another partner\'s user of the same id is another user');
    await expectCode(other.client.consumerCards.block({ externalUserId: user, cardId: a.cardId, block: true }), 'CARD_INVALID');
    await expectCode(client.cards.query(a.cardId), 'CARD_INVALID');
    await expectCode(other.client.sandbox.authorize({
      cardId: b.cardId, amount: decimal('1.00'), currency: 'USD', merchantName: 'X', mcc: '5814', merchantCountry: 'HK', channel: 'POS',
    }), 'CARD_INVALID');
  });

  it('block=true needs no code; block=false needs a 6-digit code: wrong, expired, 5 attempts, superseded and reused codes are VERIFICATION_CODE_INVALID', async () => {
    const user = uid();
    await credit(user, 'USDC', '3.00');
    const card = await client.consumerCards.apply({ externalUserId: user, cardProfileId: profileId, cardholderName: 'Vip', fundingAsset: 'USDC' })
      .catch((e: unknown) => e);
    assert.ok(card instanceof CardServiceError && card.code === 'INSUFFICIENT_BALANCE', 'fees of 5.50 above free 3.00');
    // D1: data names the short balance in the partner's terms, never an internal ledger account id.
    assert.deepEqual(card.data, { errorCode: 'INSUFFICIENT_BALANCE', errorMsg: 'user USDC' });
    await credit(user, 'USDC', '10.00');
    const vip = await client.consumerCards.apply({ externalUserId: user, cardProfileId: profileId, cardholderName: 'Vip', fundingAsset: 'USDC' });
    assert.equal(await client.consumerCards.block({ externalUserId: user, cardId: vip.cardId, block: true }), false);
    assert.equal(await client.consumerCards.block({ externalUserId: user, cardId: vip.cardId, block: true }), false, 'idempotent');
    assert.equal((await client.consumerCards.detail(user, vip.cardId)).status, 'BLOCKED');

    await expectCode(client.consumerCards.block({ externalUserId: user, cardId: vip.cardId, block: false }), 'DAPI_PARAM_INVALID');
    await client.consumerCards.setContact({ externalUserId: user, email: 'vip@example.com', mobile: '+85291234567' });

    const codeOf = async () => {
      const events = await client.events.listEvents({ eventType: 'VERIFICATION_CODE_SENT', businessId: vip.cardId, pageSize: 1 });
      const data = events.result[0].data as { code: string; channel: string; externalUserId: string };
      assert.equal(data.externalUserId, user);
      assert.match(data.code, /^[0-9]{6}$/);
      return data.code;
    };
    const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

    const sent = await client.consumerCards.sendVerificationCode({ externalUserId: user, cardId: vip.cardId, channel: 'EMAIL' });
    assert.equal(sent.channel, 'EMAIL');
    assert.equal(sent.destination, 'v***@example.com');
    const first = await codeOf();
    // The code went through the notification transport (the mail outbox: no SMTP in tests).
    const mail = await svc.admin.call<{ result: { recipient: string; body: string }[] }>('GET', '/internal/admin/v1/outbox-mail', { query: { recipient: 'vip@example.com' } });
    assert.ok(mail.result[0].body.includes(first), 'the email carries the code');
    // Five wrong attempts use the code up: even the right one is refused afterwards.
    for (let i = 0; i < 5; i++) {
      await expectCode(client.consumerCards.block({ externalUserId: user, cardId: vip.cardId, block: false, emailCode: wrong(first) }), 'VERIFICATION_CODE_INVALID');
    }
    await expectCode(client.consumerCards.block({ externalUserId: user, cardId: vip.cardId, block: false, emailCode: first }), 'VERIFICATION_CODE_INVALID');

    // Codes of one card are a minute apart: an immediate resend is refused and sends nothing.
    const tooSoon = await expectCode(client.consumerCards.sendVerificationCode({ externalUserId: user, cardId: vip.cardId, channel: 'SMS' }), 'VERIFICATION_CODE_TOO_FREQUENT');
    assert.match(tooSoon.message, /retry in \d+ s/);
    assert.equal(await codeOf(), first, 'no new code was sent');
    const minute = () => svc.clock.advance(61 * 1000);

    // Expiry after 5 minutes (injected clock).
    minute();
    await client.consumerCards.sendVerificationCode({ externalUserId: user, cardId: vip.cardId, channel: 'SMS' });
    const second = await codeOf();
    svc.clock.advance(5 * 60 * 1000 + 1000);
    await expectCode(client.consumerCards.block({ externalUserId: user, cardId: vip.cardId, block: false, smsCode: second }), 'VERIFICATION_CODE_INVALID');

    // A newer code supersedes an older one.
    await client.consumerCards.sendVerificationCode({ externalUserId: user, cardId: vip.cardId, channel: 'SMS' });
    const third = await codeOf();
    minute();
    await client.consumerCards.sendVerificationCode({ externalUserId: user, cardId: vip.cardId, channel: 'SMS' });
    const fourth = await codeOf();
    if (third !== fourth) {
      await expectCode(client.consumerCards.block({ externalUserId: user, cardId: vip.cardId, block: false, smsCode: third }), 'VERIFICATION_CODE_INVALID');
    }
    assert.deepEqual(await balanceOf(user, 'USDC'), { free: '7.5', freeze: '0', total: '7.5' }, 'refused unfreezes charged nothing (13.00 credited, 5.50 of issuance fees)');
    // The right code (an SMS code may come as emailCode too) unfreezes and charges CARD_VIP_FROZEN_FEE.
    assert.equal(await client.consumerCards.block({ externalUserId: user, cardId: vip.cardId, block: false, emailCode: fourth }), false);
    assert.equal((await client.consumerCards.detail(user, vip.cardId)).status, 'ACTIVE');
    assert.deepEqual(await balanceOf(user, 'USDC'), { free: '6.25', freeze: '0', total: '6.25' });
    const fee = (await client.userAssets.transactions({ externalUserId: user, type: 'CARD_VIP_FROZEN_FEE' })).result;
    assert.equal(fee.length, 1);
    assert.equal(decimalText(fee[0].amount), '1.25');
    // Single use: freezing again and replaying the used code is refused.
    await client.consumerCards.block({ externalUserId: user, cardId: vip.cardId, block: true });
    await expectCode(client.consumerCards.block({ externalUserId: user, cardId: vip.cardId, block: false, emailCode: fourth }), 'VERIFICATION_CODE_INVALID');
    // A frozen card capability refuses the unfreeze even with a good code.
    minute();
    await client.consumerCards.sendVerificationCode({ externalUserId: user, cardId: vip.cardId, channel: 'EMAIL' });
    const fifth = await codeOf();
    await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, addRestrictions: ['ACCOUNT_FROZEN'] });
    await expectCode(client.consumerCards.block({ externalUserId: user, cardId: vip.cardId, block: false, emailCode: fifth }), 'CAPABILITY_FROZEN');
    await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, removeRestrictions: ['ACCOUNT_FROZEN'] });
    assert.equal(await client.consumerCards.block({ externalUserId: user, cardId: vip.cardId, block: false, smsCode: fifth }), false);
    assert.deepEqual(await balanceOf(user, 'USDC'), { free: '5', freeze: '0', total: '5' });
  });

  it('a card funded by an asset that is not USD-pegged spends at the operator rate (D35): hold rounded up, clearing and reversal at the authorization\'s rate, refunds and fees converted', async () => {
    // 1 PRTE = 1 / 0.0000213 USD; 8 decimals: a cent is 0.000000213 PRTE, rounded up to 0.00000022 when held.
    await svc.admin.upsertAsset({ asset: 'PRTE', network: 'TEST', logo: 'https://x.example/prte.svg', scale: 8, usdPegged: false, usdRate: decimal('0.0000213'), status: 'ACTIVE' });
    const norm = (x: string) => (x.includes('.') ? x.replace(/0+$/, '').replace(/\.$/, '') : x);
    const exact = async (u: string, a: string) => {
      const b = await balanceOf(u, a);
      return { free: norm(b.free), freeze: norm(b.freeze), total: norm(b.total) };
    };
    const user = uid();
    await credit(user, 'PRTE', '0.001');
    const card = await virtualCard(user, 'PRTE');
    assert.equal(card.fundingAsset, 'PRTE');
    const a1 = await purchase(card.cardId, '10.00');
    assert.equal(a1.approved, true);
    assert.equal(norm(decimalText(a1.holdAmount)), '10', 'the record keeps the USD billing hold');
    assert.deepEqual(await exact(user, 'PRTE'), { free: '0.000787', freeze: '0.000213', total: '0.001' });
    // Clearing 9.99 at the authorization's rate: 0.000212787 rounded up to 0.00021279.
    await client.sandbox.clear({ transId: a1.transId, amount: decimal('9.99') });
    assert.deepEqual(await exact(user, 'PRTE'), { free: '0.00078721', freeze: '0', total: '0.00078721' });
    // Reversals release the same share of the asset hold, the rest with the last one.
    const a2 = await purchase(card.cardId, '5.00');
    assert.deepEqual(await exact(user, 'PRTE'), { free: '0.00068071', freeze: '0.0001065', total: '0.00078721' });
    await client.sandbox.reverse({ transId: a2.transId, amount: decimal('2.00') });
    assert.deepEqual(await exact(user, 'PRTE'), { free: '0.00072331', freeze: '0.0000639', total: '0.00078721' });
    await client.sandbox.reverse({ transId: a2.transId, amount: decimal('3.00') });
    assert.deepEqual(await exact(user, 'PRTE'), { free: '0.00078721', freeze: '0', total: '0.00078721' });
    // A refund without the purchase: the asset's current rate, rounded down.
    await client.sandbox.refund({ cardId: card.cardId, amount: decimal('1.00'), currency: 'USD', merchantName: 'Shop' });
    assert.deepEqual(await exact(user, 'PRTE'), { free: '0.00080851', freeze: '0', total: '0.00080851' });
    const a3 = await purchase(card.cardId, '0.01');
    assert.deepEqual(await exact(user, 'PRTE'), { free: '0.00080829', freeze: '0.00000022', total: '0.00080851' });
    const tooMuch = await purchase(card.cardId, '40.00');
    assert.equal(tooMuch.approved, false);
    assert.equal(tooMuch.declineReason, 'INSUFFICIENT_BALANCE');
    // Fees of the profile are USD, charged in the asset at the rate (rounded up).
    const vip = await client.consumerCards.apply({ externalUserId: user, cardProfileId: profileId, cardholderName: 'Grace Hopper', fundingAsset: 'PRTE' });
    assert.deepEqual(vip.fees.map((f) => [f.type, norm(decimalText(f.amount))]), [['CARD_PRINTING_FEE', '0.0000639'], ['CARD_POSTAL_FEE', '0.00005325']]);
    assert.deepEqual(await exact(user, 'PRTE'), { free: '0.00069114', freeze: '0.00000022', total: '0.00069136' });
    // An asset that loses its rate cannot spend or take refunds without the purchase.
    await svc.admin.upsertAsset({ asset: 'PRTE', network: 'TEST', logo: 'https://x.example/prte.svg', scale: 8, usdPegged: false, usdRate: null, status: 'ACTIVE' });
    const noRate = await purchase(card.cardId, '1.00');
    assert.equal(noRate.declineReason, 'CURRENCY_NOT_ALLOWED');
    assert.equal(noRate.declineDetail, 'NO_ASSET_RATE');
    await expectCode(client.sandbox.refund({ cardId: card.cardId, amount: decimal('1.00'), currency: 'USD', merchantName: 'Shop' }), 'CURRENCY_NOT_ALLOWED');
    // Settling what was authorized before still uses the authorization's own rate.
    await client.sandbox.clear({ transId: a3.transId, amount: decimal('0.01') });
    assert.deepEqual(await exact(user, 'PRTE'), { free: '0.00069114', freeze: '0', total: '0.00069114' });
  });

  it('D4, D35: an 18-decimal asset\'s hold is the USD amount at the rate rounded up exactly, every digit kept', async () => {
    // 123.45 x 0.333333333333333333 = 41.14999999999999995885: held 41.149999999999999959 (it was
    // 41.15, the database's division keeping 16 decimals, which declined a user holding exactly it).
    await svc.admin.upsertAsset({ asset: 'THRD', network: 'TEST', logo: 'https://x.example/thrd.svg', scale: 18, usdPegged: false, usdRate: decimal('0.333333333333333333'), status: 'ACTIVE' });
    const user = uid();
    await credit(user, 'THRD', '41.149999999999999959');
    const card = await virtualCard(user, 'THRD');
    const a = await purchase(card.cardId, '123.45');
    assert.equal(a.approved, true, `declined ${a.declineReason}`);
    assert.deepEqual(await balanceOf(user, 'THRD'), { free: '0', freeze: '41.149999999999999959', total: '41.149999999999999959' });
    // Clearing the same amount at the authorization's rate takes exactly the hold.
    await client.sandbox.clear({ transId: a.transId, amount: decimal('123.45') });
    assert.deepEqual(await balanceOf(user, 'THRD'), { free: '0', freeze: '0', total: '0' });
    // 1000000.01 x 1.000000000000000001 = 1000000.01000000000100000001: rounded up, not to the nearest.
    await svc.admin.upsertAsset({ asset: 'NEAR', network: 'TEST', logo: 'https://x.example/near.svg', scale: 18, usdPegged: false, usdRate: decimal('1.000000000000000001'), status: 'ACTIVE' });
    const rich = uid();
    await credit(rich, 'NEAR', '1000000.010000000001');
    const nearCard = await virtualCard(rich, 'NEAR');
    const short = await purchase(nearCard.cardId, '1000000.01');
    assert.equal(short.approved, false, 'one unit of the last place short');
    assert.equal(short.declineReason, 'INSUFFICIENT_BALANCE');
    await credit(rich, 'NEAR', '0.000000000000000001');
    assert.equal((await purchase(nearCard.cardId, '1000000.01')).approved, true);
    assert.deepEqual(await balanceOf(rich, 'NEAR'), { free: '0', freeze: '1000000.010000000001000001', total: '1000000.010000000001000001' });
  });

  it('D35: a refund worth less than one unit of the asset credits nothing and is still recorded (rounded down, no empty posting)', async () => {
    // 3 units per USD, no decimals: USD 0.33 is 0.99 of a unit, rounded down to 0.
    await svc.admin.upsertAsset({ asset: 'WHOLE', network: 'TEST', logo: 'https://x.example/whole.svg', scale: 0, usdPegged: false, usdRate: decimal('3'), status: 'ACTIVE' });
    const user = uid();
    await credit(user, 'WHOLE', '10');
    const card = await virtualCard(user, 'WHOLE');
    const a = await purchase(card.cardId, '1.00');
    await client.sandbox.clear({ transId: a.transId, amount: decimal('1.00') });
    assert.deepEqual(await balanceOf(user, 'WHOLE'), { free: '7', freeze: '0', total: '7' });
    const named = await client.sandbox.refund({ cardId: card.cardId, amount: decimal('0.33'), currency: 'USD', merchantName: 'Shop', transId: a.transId });
    assert.equal(named.status, 'POSTED');
    const unnamed = await client.sandbox.refund({ cardId: card.cardId, amount: decimal('0.33'), currency: 'USD', merchantName: 'Shop' });
    assert.equal(unnamed.status, 'POSTED');
    assert.deepEqual(await balanceOf(user, 'WHOLE'), { free: '7', freeze: '0', total: '7' });
    const refunds = await client.consumerCards.fiatTransactions({ externalUserId: user, authType: 'REFUND' });
    assert.deepEqual(refunds.result.map((t) => t.transId).sort(), [named.transId, unnamed.transId].sort());
    // USD 0.34 is 1.02 units: 1 is credited.
    await client.sandbox.refund({ cardId: card.cardId, amount: decimal('0.34'), currency: 'USD', merchantName: 'Shop', transId: a.transId });
    assert.deepEqual(await balanceOf(user, 'WHOLE'), { free: '8', freeze: '0', total: '8' });
  });

  it('D55: in sandbox a user without the contact still gets a code, as the VERIFICATION_CODE_SENT event only; production refuses naming the contact', async () => {
    // A partner of its own, admitted from 127.0.0.1 also by the production instance below.
    const p = await svc.newPartner({ ipWhitelist: { api: ['127.0.0.1'] } });
    const client = p.client;
    const user = uid();
    const card = await client.consumerCards.apply({ externalUserId: user, cardProfileId: 'sbx-visa-consumer', cardholderName: 'Ada Lovelace', fundingAsset: 'USDT' });
    const mailBefore = await svc.db.query<{ n: string }>('SELECT count(*)::text AS n FROM outbox_mail');
    const sent = await client.consumerCards.sendVerificationCode({ externalUserId: user, cardId: card.cardId, channel: 'SMS' });
    assert.equal(sent.destination, 'event:VERIFICATION_CODE_SENT');
    const events = await client.events.listEvents({ eventType: 'VERIFICATION_CODE_SENT', businessId: card.cardId });
    assert.equal(events.result.length, 1);
    const data = events.result[0].data as { code: string; channel: string };
    assert.equal(data.channel, 'SMS');
    assert.deepEqual(await svc.db.query<{ n: string }>('SELECT count(*)::text AS n FROM outbox_mail'), mailBefore, 'no message is sent anywhere');
    // The code is a real one: it unfreezes the card.
    await client.consumerCards.block({ externalUserId: user, cardId: card.cardId, block: true });
    assert.equal(await client.consumerCards.block({ externalUserId: user, cardId: card.cardId, block: false, smsCode: data.code }), false);
    assert.equal((await client.consumerCards.detail(user, card.cardId)).status, 'ACTIVE');

    // Production: the same request names the missing contact and issues nothing.
    const prod = await startService({ env: { CARDSVC_ENV: 'production' }, clock: svc.clock });
    try {
      const prodClient = prod.clientFor(p.partner);
      svc.clock.advance(61 * 1000);
      const codesBefore = await svc.db.query<{ n: string }>('SELECT count(*)::text AS n FROM card_verification_codes WHERE card_id = $1', [card.cardId]);
      for (const [channel, field] of [['SMS', 'mobile'], ['EMAIL', 'email']] as const) {
        const e = await expectCode(prodClient.consumerCards.sendVerificationCode({ externalUserId: user, cardId: card.cardId, channel }), 'DAPI_PARAM_INVALID');
        assert.match(e.message, new RegExp(`Invalid parameter ${field}: the user has no`), e.message);
      }
      assert.deepEqual(await svc.db.query('SELECT count(*)::text AS n FROM card_verification_codes WHERE card_id = $1', [card.cardId]), codesBefore);
      // With the contact, production sends it (through the transport, never as an event).
      await prodClient.consumerCards.setContact({ externalUserId: user, mobile: '+85291234567' });
      const ok = await prodClient.consumerCards.sendVerificationCode({ externalUserId: user, cardId: card.cardId, channel: 'SMS' });
      assert.equal(ok.destination, '+85*******67');
      assert.equal((await client.events.listEvents({ eventType: 'VERIFICATION_CODE_SENT', businessId: card.cardId })).result.length, 1, 'no event in production');
    } finally {
      await prod.close();
    }
  });

  it('verification codes of one card: at most 10 in 24 hours, a minute apart, also under concurrent sends (VERIFICATION_CODE_TOO_FREQUENT)', async () => {
    const user = uid();
    const card = await client.consumerCards.apply({ externalUserId: user, cardProfileId: 'sbx-visa-consumer', cardholderName: 'Ada Lovelace', fundingAsset: 'USDT', email: 'ada@example.com' });
    const send = () => client.consumerCards.sendVerificationCode({ externalUserId: user, cardId: card.cardId, channel: 'EMAIL' });
    const burst = await Promise.allSettled(Array.from({ length: 5 }, send));
    assert.equal(burst.filter((r) => r.status === 'fulfilled').length, 1, 'concurrent sends: one code');
    for (const r of burst) if (r.status === 'rejected') assert.equal((r.reason as CardServiceError).code, 'VERIFICATION_CODE_TOO_FREQUENT');
    for (let i = 1; i < 10; i++) {
      svc.clock.advance(61 * 1000);
      await send();
    }
    svc.clock.advance(61 * 1000);
    await expectCode(send(), 'VERIFICATION_CODE_TOO_FREQUENT');
    const events = await client.events.listEvents({ eventType: 'VERIFICATION_CODE_SENT', businessId: card.cardId, pageSize: 100 });
    assert.equal(events.total, 10, 'ten codes went out');
    svc.clock.advance(24 * 60 * 60 * 1000);
    await send();
  });

  it('50 concurrent 1.00 authorizations against free 20.00 approve exactly 20 and leave free 0.00, freeze 20.00', async () => {
    const user = uid();
    await credit(user, 'USDT', '20.00');
    const card = await virtualCard(user);
    const results = await Promise.all(Array.from({ length: 50 }, () => purchase(card.cardId, '1.00')));
    const approved = results.filter((r) => r.approved);
    assert.equal(approved.length, 20);
    assert.ok(results.filter((r) => !r.approved).every((r) => r.declineReason === 'INSUFFICIENT_BALANCE'));
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '0', freeze: '20', total: '20' });
    const listed = await client.consumerCards.fiatTransactions({ externalUserId: user, pageSize: 100 });
    assert.equal(listed.total, 50);
    assert.ok(listed.result.every((t) => t.externalUserId === user && t.cardId === card.cardId && t.subjectType === 'USER'));
  });

  it('clearing equal, smaller and larger than the hold, reversal and refund move the user asset exactly (2.3 rules 1-3)', async () => {
    const user = uid();
    await credit(user, 'USDT', '100.00');
    const card = await virtualCard(user);
    const a = await purchase(card.cardId, '10.00');
    const b = await purchase(card.cardId, '20.00');
    const c = await purchase(card.cardId, '30.00');
    const d = await purchase(card.cardId, '5.00');
    assert.ok(a.approved && b.approved && c.approved && d.approved);
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '35', freeze: '65', total: '100' }, 'rule 1: free -> freeze, total unchanged');

    await client.sandbox.clear({ transId: a.transId, amount: decimal('10.00') });
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '35', freeze: '55', total: '90' }, 'rule 2: equal clearing');
    await client.sandbox.clear({ transId: b.transId, amount: decimal('18.50') });
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '36.5', freeze: '35', total: '71.5' }, 'smaller clearing gives the rest back');
    await client.sandbox.clear({ transId: c.transId, amount: decimal('31.25') });
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '35.25', freeze: '5', total: '40.25' }, 'larger clearing takes the excess from free');
    await client.sandbox.reverse({ transId: d.transId, amount: decimal('2.00') });
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '37.25', freeze: '3', total: '40.25' }, 'partial reversal');
    await client.sandbox.reverse({ transId: d.transId, amount: decimal('3.00') });
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '40.25', freeze: '0', total: '40.25' }, 'full reversal');
    const r = await client.sandbox.refund({ cardId: card.cardId, amount: decimal('7.75'), currency: 'USD', merchantName: 'Shop', transId: a.transId });
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '48', freeze: '0', total: '48' }, 'rule 3: refund lands in free');

    // Reads of these transactions (2.9).
    const refunds = await client.consumerCards.fiatTransactions({ externalUserId: user, authType: 'REFUND' });
    assert.deepEqual(refunds.result.map((t) => [t.transId, t.debitCreditIndicator]), [[r.transId, 'C']]);
    const detail = await client.consumerCards.statementDetail(user, a.transId);
    assert.equal(detail.status, 'CLEARED');
    assert.ok(detail.postedTransactionId);
    const resolved = await client.transactions.resolveIds([detail.outstandingTransactionId!]);
    assert.equal(resolved[0].posted, true);
    assert.equal(resolved[0].relatedTransactionId, detail.postedTransactionId);
    await expectCode(client.consumerCards.statementDetail(uid(), a.transId), 'TRANSACTION_NOT_FOUND');
    // Corporate transaction reads do not show consumer cards.
    const corp = await client.transactions.list({ cardId: card.cardId });
    assert.equal(corp.total, 0);
  });

  it('PAYMENT_FROZEN, ACCOUNT_FROZEN and a blocked card decline with their reason and change no balance', async () => {
    const user = uid();
    await credit(user, 'USDT', '10.00');
    const card = await virtualCard(user);
    for (const code of ['PAYMENT_FROZEN', 'ACCOUNT_FROZEN']) {
      await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, addRestrictions: [code] });
      const t = await purchase(card.cardId, '1.00');
      assert.equal(t.approved, false);
      assert.equal(t.declineReason, 'CAPABILITY_FROZEN');
      assert.equal(t.declineDetail, `USER:${code}`);
      await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, removeRestrictions: [code] });
    }
    await client.consumerCards.block({ externalUserId: user, cardId: card.cardId, block: true });
    const blocked = await purchase(card.cardId, '1.00');
    assert.equal(blocked.declineReason, 'CARD_BLOCKED');
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '10', freeze: '0', total: '10' });
    // A card spends its own funding asset only: USDC of the same user is not touched.
    await credit(user, 'USDC', '50');
    const usdcCard = await virtualCard(user, 'USDC');
    assert.equal((await purchase(usdcCard.cardId, '12.34')).approved, true);
    assert.deepEqual(await balanceOf(user, 'USDC'), { free: '37.66', freeze: '12.34', total: '50' });
    assert.deepEqual(await balanceOf(user, 'USDT'), { free: '10', freeze: '0', total: '10' });
  });
});
