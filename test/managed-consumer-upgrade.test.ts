import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decimal, decimalText, type CardServiceClient, type ConsumerCard } from '../sdk/index.ts';
import { startService, type TestService } from './helpers/service.ts';
import { balanceOf, closeWithCleanLedger, creditUser, newUserId } from './helpers/managed.ts';
import { expectCode } from './helpers/companies.ts';
import { cardWorld, issueCard, outboxEvents, ref } from './helpers/cards.ts';

/**
 * Physical upgrades of consumer cards (issue 30, D52) through /card/v2: the request's address and
 * phone (else the user's contact mobile), each refusal with nothing created, fees and refunds as
 * 2.4 asset movements, the bureau's progress in sandbox, activation, and the card spending
 * before, during and after.
 */
const ADDRESS = { addressLine1: '1 Queen\'s Road Central', city: 'Central', state: 'Hong Kong Island', addressCountryCode: 'HK' };

describe('physical card upgrades, consumer (issue 30, D52)', () => {
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

  async function userWithCard(funds = '20') {
    const user = newUserId();
    if (funds !== '0') await creditUser(client, user, 'USDT', funds);
    const card = await client.consumerCards.apply({ externalUserId: user, cardProfileId: 'sbx-visa-consumer', cardholderName: 'Ada Lovelace', fundingAsset: 'USDT' });
    return { user, card };
  }
  const upgrade = (user: string, card: { cardId: string }, extra: Record<string, unknown> = {}) => client.consumerCards.upgradePhysical({
    externalUserId: user, cardId: card.cardId, upgradeRef: ref('up'), cardProfileId: 'sbx-visa-consumer-physical', shippingAddress: ADDRESS,
    phoneCountryCode: 'HK', phoneNumber: '91234567', ...extra,
  });
  const feeMoves = async (user: string) => (await client.userAssets.transactions({ externalUserId: user, asset: 'USDT' })).result
    .filter((m) => String(m.type).startsWith('CARD_'))
    .map((m) => [m.type, m.direction, decimalText(m.amount), m.cardId]);
  const footprint = async () => {
    const out: Record<string, number> = {};
    for (const table of ['card_upgrades', 'asset_movements', 'ledger_postings', 'ledger_entries', 'events', 'cards']) {
      const [{ n }] = await svc.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
      out[table] = n;
    }
    return out;
  };
  async function unchanged(call: () => Promise<unknown>, code: string, messageIncludes?: string) {
    const before = await footprint();
    const err = await expectCode(call(), code, messageIncludes);
    assert.deepEqual(await footprint(), before, `nothing changed after ${code}`);
    return err;
  }

  it('accepts an upgrade with the request\'s address and phone, charges the fees as asset movements, shows it on the card', async () => {
    const { user, card } = await userWithCard();
    const u = await upgrade(user, card, { shippingAddress: { ...ADDRESS, addressLine2: '', postalCode: '' } });
    assert.equal(u.status, 'PENDING');
    assert.deepEqual(u.shippingAddress, { postalCode: null, addressLine1: ADDRESS.addressLine1, addressLine2: null, addressLine3: null, city: 'Central', state: 'Hong Kong Island', addressCountryCode: 'HK' });
    assert.deepEqual([u.phoneCountryCode, u.phoneNumber], ['HK', '91234567']);
    assert.deepEqual(u.fees.map((f) => [f.type, f.currency, decimalText(f.amount)]), [['CARD_PRINTING_FEE', 'USDT', '5'], ['CARD_POSTAL_FEE', 'USDT', '2.5']]);
    assert.deepEqual(await balanceOf(client, user, 'USDT'), { free: '12.5', freeze: '0', total: '12.5' });
    assert.deepEqual((await feeMoves(user)).sort(), [['CARD_POSTAL_FEE', 'DEBIT', '2.5', card.cardId], ['CARD_PRINTING_FEE', 'DEBIT', '5', card.cardId]]);

    const detail = await client.consumerCards.detail(user, card.cardId);
    assert.deepEqual([detail.cardForm, detail.openUpgrade?.upgradeRef], ['VIRTUAL', u.upgradeRef]);
    const listed = await client.consumerCards.list({ externalUserId: user });
    assert.equal(listed.result[0].openUpgrade?.status, 'PENDING');
    assert.deepEqual(await client.consumerCards.upgradeDetail(user, u.upgradeRef), u);
    await expectCode(client.consumerCards.upgradeDetail(newUserId(), u.upgradeRef), 'CARD_UPGRADE_NOT_FOUND');
    await expectCode(client.consumerCards.upgradeDetail(user, 'up-unknown'), 'CARD_UPGRADE_NOT_FOUND');
    const events = await outboxEvents(svc, 'CARD_UPGRADE_STATUS_CHANGED', card.cardId);
    assert.deepEqual(events.map((e) => e.data.status), ['PENDING']);
  });

  it('without a phone in the request the user\'s contact mobile is snapshotted; a later contact change leaves it alone', async () => {
    const { user, card } = await userWithCard();
    await client.consumerCards.setContact({ externalUserId: user, mobile: '+85291234567' });
    const u = await upgrade(user, card, { phoneCountryCode: undefined, phoneNumber: undefined });
    assert.deepEqual([u.phoneCountryCode, u.phoneNumber], [null, '+85291234567']);
    await client.consumerCards.setContact({ externalUserId: user, mobile: '+6581234567' });
    assert.equal((await client.consumerCards.upgradeDetail(user, u.upgradeRef)).phoneNumber, '+85291234567');
  });

  it('answers each check at once and creates nothing', async () => {
    const { user, card } = await userWithCard('40');
    const { user: stranger, card: strangersCard } = await userWithCard();
    const taken = await upgrade(stranger, strangersCard);
    const corporate = await cardWorld(svc);
    const corporateCard = await issueCard(svc, corporate);

    await unchanged(() => upgrade(user, card, { upgradeRef: taken.upgradeRef }), 'CARD_UPGRADE_REF_DUPLICATE');
    await unchanged(() => upgrade(newUserId(), card), 'CARD_INVALID');
    await unchanged(() => upgrade(user, strangersCard), 'CARD_INVALID');
    await unchanged(() => corporate.client.consumerCards.upgradePhysical({
      externalUserId: user, cardId: corporateCard.cardId, upgradeRef: ref(), cardProfileId: 'sbx-visa-consumer-physical', shippingAddress: ADDRESS,
    }), 'CARD_INVALID');
    for (const profile of ['sbx-visa-consumer', 'sbx-visa-shared-physical', 'sbx-mc-consumer-physical', 'cp-unknown']) {
      await unchanged(() => upgrade(user, card, { cardProfileId: profile }), 'CARD_PROFILE_INVALID');
    }
    await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, addRestrictions: ['CARD_FROZEN'] });
    const frozen = await unchanged(() => upgrade(user, card), 'CAPABILITY_FROZEN');
    assert.equal((frozen.data as { errorCode: string }).errorCode, 'CARD_FROZEN');
    await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, removeRestrictions: ['CARD_FROZEN'] });
    await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, addRestrictions: ['ACCOUNT_FROZEN'] });
    const accountFrozen = await unchanged(() => upgrade(user, card), 'CAPABILITY_FROZEN');
    assert.equal((accountFrozen.data as { errorCode: string }).errorCode, 'ACCOUNT_FROZEN');
    await svc.admin.setUserRestrictions({ partnerId, externalUserId: user, removeRestrictions: ['ACCOUNT_FROZEN'] });
    await client.consumerCards.block({ externalUserId: user, cardId: card.cardId, block: true });
    await unchanged(() => upgrade(user, card), 'CARD_INVALID', 'BLOCKED');
    const { user: other, card: otherCard } = await userWithCard();
    await unchanged(() => upgrade(other, otherCard, { shippingAddress: undefined }), 'DAPI_PARAM_INVALID', 'shippingAddress');
    await unchanged(() => upgrade(other, otherCard, { phoneCountryCode: undefined, phoneNumber: undefined }), 'DAPI_PARAM_INVALID', 'phoneNumber');
    await unchanged(() => upgrade(other, otherCard, { phoneCountryCode: undefined }), 'DAPI_PARAM_INVALID', 'phoneCountryCode');
    await unchanged(() => upgrade(other, otherCard, { shippingAddress: { ...ADDRESS, city: '' } }), 'DAPI_PARAM_INVALID', 'city');
    const { user: poor, card: poorCard } = await userWithCard('7.49');
    await unchanged(() => upgrade(poor, poorCard), 'INSUFFICIENT_BALANCE');
    await unchanged(() => upgrade(stranger, strangersCard), 'CARD_UPGRADE_IN_PROGRESS');
    assert.deepEqual(await balanceOf(client, poor, 'USDT'), { free: '7.49', freeze: '0', total: '7.49' });
  });

  it('the bureau rejects in sandbox: fees refunded as CREDIT movements of their types; cancel refunds too', async () => {
    const { user, card } = await userWithCard();
    const u = await upgrade(user, card);
    const rejected = await client.sandbox.cardShipment({ upgradeRef: u.upgradeRef, status: 'REJECTED', rejectReason: 'Address not deliverable' });
    assert.deepEqual([rejected.status, rejected.rejectReason, rejected.feesRefunded], ['REJECTED', 'Address not deliverable', true]);
    assert.deepEqual(await balanceOf(client, user, 'USDT'), { free: '20', freeze: '0', total: '20' });
    assert.deepEqual((await feeMoves(user)).sort(), [
      ['CARD_POSTAL_FEE', 'CREDIT', '2.5', card.cardId], ['CARD_POSTAL_FEE', 'DEBIT', '2.5', card.cardId],
      ['CARD_PRINTING_FEE', 'CREDIT', '5', card.cardId], ['CARD_PRINTING_FEE', 'DEBIT', '5', card.cardId],
    ]);
    const again = await upgrade(user, card);
    await client.sandbox.cardShipment({ upgradeRef: again.upgradeRef, status: 'PRODUCING' });
    assert.equal((await client.consumerCards.cancelUpgrade(user, again.upgradeRef)).status, 'CANCELLED');
    assert.deepEqual(await balanceOf(client, user, 'USDT'), { free: '20', freeze: '0', total: '20' });
    await unchanged(() => client.consumerCards.cancelUpgrade(user, again.upgradeRef), 'CARD_UPGRADE_STATUS_INVALID', 'CANCELLED');
    await unchanged(() => client.consumerCards.cancelUpgrade(newUserId(), again.upgradeRef), 'CARD_UPGRADE_NOT_FOUND');
    const events = await outboxEvents(svc, 'CARD_UPGRADE_STATUS_CHANGED', card.cardId);
    assert.deepEqual(events.map((e) => [e.data.upgradeRef, e.data.status, e.data.feesRefunded]), [
      [u.upgradeRef, 'PENDING', false], [u.upgradeRef, 'REJECTED', true],
      [again.upgradeRef, 'PENDING', false], [again.upgradeRef, 'PRODUCING', false], [again.upgradeRef, 'CANCELLED', true],
    ]);
  });

  it('ships, locks after 5 wrong codes, unlocks by operator, activates; the card spends throughout and keeps its id, PAN and balance', async () => {
    const { user, card } = await userWithCard('100');
    // The PAN's keyed fingerprint and its sealed data with the expiry: the same PAN and expiry afterwards.
    const panOf = async () => (await svc.db.query<{ f: string; e: string }>('SELECT pan_fingerprint AS f, pan_enc AS e FROM cards WHERE card_id = $1', [card.cardId]))[0];
    const panBefore = await panOf();
    const spend = async () => assert.equal((await client.sandbox.authorize({
      cardId: card.cardId, amount: decimal('10.00'), currency: 'USD', merchantName: 'Coffee', mcc: '5814', merchantCountry: 'HK', channel: 'POS',
    })).approved, true);
    await spend();
    const u = await upgrade(user, card);
    await spend();
    await expectCode(client.consumerCards.activatePhysical({ externalUserId: user, cardId: card.cardId, activationCode: '123456' }), 'CARD_UPGRADE_STATUS_INVALID', 'PENDING');
    await svc.admin.cardUpgradeStatus({ partnerId, upgradeRef: u.upgradeRef, status: 'PRODUCING' });
    const shipped = await client.sandbox.cardShipment({ upgradeRef: u.upgradeRef, status: 'SHIPPED', carrier: 'SF Express', trackingNumber: 'SF100200300' });
    const code = shipped.activationCode!;
    assert.match(code, /^[0-9]{6}$/);
    await spend();
    await unchanged(() => client.consumerCards.cancelUpgrade(user, u.upgradeRef), 'CARD_UPGRADE_STATUS_INVALID', 'SHIPPED');
    const wrong = code === '000000' ? '000001' : '000000';
    for (let i = 0; i < 5; i++) {
      await expectCode(client.consumerCards.activatePhysical({ externalUserId: user, cardId: card.cardId, activationCode: wrong }), 'CARD_ACTIVATION_CODE_INVALID');
    }
    await expectCode(client.consumerCards.activatePhysical({ externalUserId: user, cardId: card.cardId, activationCode: code }), 'CARD_ACTIVATION_LOCKED');
    await expectCode(client.consumerCards.activatePhysical({ externalUserId: newUserId(), cardId: card.cardId, activationCode: code }), 'CARD_INVALID');
    assert.equal((await svc.admin.unlockCardActivation({ partnerId, upgradeRef: u.upgradeRef })).activationLocked, false);
    const activated = await client.consumerCards.activatePhysical({ externalUserId: user, cardId: card.cardId, activationCode: code });
    assert.equal(activated.status, 'ACTIVATED');
    await spend();
    const after: ConsumerCard = await client.consumerCards.detail(user, card.cardId);
    assert.deepEqual([after.cardId, after.cardMantissa, after.panFirst6, after.cardForm, after.cardProfileId, after.openUpgrade],
      [card.cardId, card.cardMantissa, card.panFirst6, 'PHYSICAL', 'sbx-visa-consumer-physical', null]);
    assert.deepEqual(await panOf(), panBefore);
    const listed = (await client.consumerCards.list({ externalUserId: user })).result.find((c) => c.cardId === card.cardId)!;
    assert.deepEqual([listed.cardForm, listed.openUpgrade], ['PHYSICAL', null], 'the card list shows the new form too');
    assert.deepEqual(await balanceOf(client, user, 'USDT'), { free: '52.5', freeze: '40', total: '92.5' }, '100 - 7.50 fees, 4 x 10 held');
    const statuses = (await outboxEvents(svc, 'CARD_UPGRADE_STATUS_CHANGED', card.cardId)).map((e) => e.data.status);
    assert.deepEqual(statuses, ['PENDING', 'PRODUCING', 'SHIPPED', 'ACTIVATED']);
  });

  it('concurrent upgrade requests for one card create one upgrade and take the fees once', async () => {
    const { user, card } = await userWithCard();
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => upgrade(user, card)));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as { code: string }).code, 'CARD_UPGRADE_IN_PROGRESS');
    const [{ n }] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_upgrades WHERE card_id = $1', [card.cardId]);
    assert.equal(n, 1);
    assert.deepEqual(await balanceOf(client, user, 'USDT'), { free: '12.5', freeze: '0', total: '12.5' });
    assert.equal((await feeMoves(user)).length, 2);
  });
});
