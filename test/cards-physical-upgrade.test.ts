import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decimal, decimalText, type Card, type CardUpgrade } from '../sdk/index.ts';
import { closeTestDatabase, startService, testDatabase, type TestService } from './helpers/service.ts';
import { admin, approvedEmployee, expectCode, newCompany } from './helpers/companies.ts';
import { cardWorld, footprint, issueCard, outboxEvents, plaintextOf, ref, type CardWorld } from './helpers/cards.ts';
import { purchase } from './helpers/authorization.ts';

/**
 * Physical card upgrades of corporate cards (issue 30, D52): acceptance and each of its refusals,
 * the state machine with every illegal move, fees and refunds in the pool and dedicated statements,
 * the address snapshot, activation with lockout and operator unlock, one upgrade under concurrent
 * requests, a model-based property test, and the card spending before, during and after.
 */

const HOME = { addressType: 'SHIPPING_ADDRESS' as const, addressLine1: '1 Queen\'s Road Central', city: 'Central', state: 'Hong Kong Island', addressCountryCode: 'HK' };
const MOVED = { addressType: 'SHIPPING_ADDRESS' as const, addressLine1: '88 Nathan Road', addressLine2: 'Flat 12B', city: 'Tsim Sha Tsui', state: 'Kowloon', addressCountryCode: 'HK', postalCode: '999077' };
const STATUSES = ['PENDING', 'PRODUCING', 'SHIPPED', 'DELIVERED', 'ACTIVATED', 'REJECTED', 'CANCELLED'] as const;
type Status = typeof STATUSES[number];
/** D52 as the test reads it, written independently of the service's table. */
const LEGAL: Record<Status, Status[]> = {
  PENDING: ['PRODUCING', 'REJECTED', 'CANCELLED'],
  PRODUCING: ['SHIPPED', 'REJECTED', 'CANCELLED'],
  SHIPPED: ['DELIVERED', 'ACTIVATED'],
  DELIVERED: ['ACTIVATED'],
  ACTIVATED: [],
  REJECTED: [],
  CANCELLED: [],
};

/** The moves that bring a new (PENDING) upgrade to each status. */
const PATH: Record<Status, Exclude<Status, 'PENDING'>[]> = {
  PENDING: [], PRODUCING: ['PRODUCING'], SHIPPED: ['PRODUCING', 'SHIPPED'], DELIVERED: ['PRODUCING', 'SHIPPED', 'DELIVERED'],
  ACTIVATED: ['PRODUCING', 'SHIPPED', 'ACTIVATED'], REJECTED: ['REJECTED'], CANCELLED: ['CANCELLED'],
};

/** An exact amount as its shortest decimal text ('92.50' -> '92.5', '100.00' -> '100'). */
const plain = (value: unknown): string => decimalText(value).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');

/** An exact decimal text minus the sandbox physical profile's fees (5.00 + 2.50), in cents (no JS number). */
function minusFees(amount: string): string {
  const [whole, frac = ''] = amount.split('.');
  const cents = BigInt(whole) * 100n + BigInt((frac + '00').slice(0, 2)) - 750n;
  return plain(decimal(`${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`));
}

describe('physical card upgrades, corporate (issue 30, D52)', () => {
  let svc: TestService;
  let w: CardWorld;
  let operator: ReturnType<typeof admin>;

  before(async () => {
    svc = await startService();
    w = await cardWorld(svc);
    operator = admin(svc);
    await w.client.customers.updateAddress(w.employee.customerId, [HOME]);
    await w.client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: w.org.organizationId, currency: 'USD', amount: decimal('1000.00') });
  });
  after(async () => {
    const audit = await operator.audit();
    assert.deepEqual(audit.findings, [], 'the ledger audit is clean after the file');
    await svc.close();
    await closeTestDatabase();
  });

  /** A company with USD funds and an approved employee with an address; a shared (or dedicated) card of that employee. */
  async function freshCard(options: { dedicated?: boolean; funds?: string; address?: boolean; world?: CardWorld } = {}) {
    const world = options.world ?? { ...w, org: await newCompany(w.client) };
    if (!options.world) {
      world.employee = await approvedEmployee(w.client, world.org.organizationId);
      if (options.address !== false) await w.client.customers.updateAddress(world.employee.customerId, [HOME]);
    }
    const funds = options.funds ?? '100.00';
    if (funds !== '0') {
      await w.client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: world.org.organizationId, currency: 'USD', amount: decimal(funds) });
    }
    const card = await issueCard(svc, world, { profile: options.dedicated ? 'sbx-visa-dedicated' : 'sbx-visa-shared' });
    if (options.dedicated && funds !== '0') {
      await w.client.cards.transfer({
        organizationId: world.org.organizationId, cardId: card.cardId, direction: 'POOL_TO_CARD', currency: 'USD', amount: decimal(funds), externalTranId: ref('fund'),
      });
    }
    return { world, card };
  }

  const upgrade = (card: Card, upgradeRef = ref('up'), cardProfileId = card.balanceMode === 'DEDICATED' ? 'sbx-visa-dedicated-physical' : 'sbx-visa-shared-physical') =>
    w.client.cards.upgradePhysical({ cardId: card.cardId, upgradeRef, cardProfileId });
  const bureau = (upgradeRef: string, status: 'PRODUCING' | 'SHIPPED' | 'DELIVERED' | 'REJECTED') => operator.call<CardUpgrade & { activationCode?: string }>(
    'POST', '/internal/admin/v1/card-upgrades/status', {
      partnerId: w.partner.partnerId, upgradeRef, status,
      ...(status === 'SHIPPED' ? { carrier: 'DHL', trackingNumber: 'JD0146000062' } : {}),
      ...(status === 'REJECTED' ? { rejectReason: 'Embossing failed' } : {}),
    });
  const poolAvailable = async (organizationId: string) =>
    plain((await w.client.funding.balance(organizationId)).pools.find((p) => p.currency === 'USD')!.available);
  const cardAvailable = async (organizationId: string, cardId: string) =>
    plain((await w.client.funding.balance(organizationId)).cards.find((c) => c.cardId === cardId && c.currency === 'USD')!.available);
  const upgradeFootprint = async () => {
    const base = await footprint(svc);
    const [{ n, state }] = await svc.db.query<{ n: number; state: string }>(
      `SELECT count(*)::int AS n, coalesce(string_agg(upgrade_ref || ':' || status || ':' || activation_failures, ',' ORDER BY upgrade_ref), '') AS state FROM card_upgrades`);
    return { ...base, card_upgrades: n, [`upgrades:${state}`]: 1 };
  };
  /** The call must fail with `code` and leave every table as it was. */
  async function unchanged(call: () => Promise<unknown>, code: string, messageIncludes?: string) {
    const before = await upgradeFootprint();
    const err = await expectCode(call(), code, messageIncludes);
    assert.deepEqual(await upgradeFootprint(), before, `nothing changed after ${code}`);
    return err;
  }
  /** The fields of an upgrade record that compare across JSON (event) and SDK (answer) forms: all but the fee amounts, which compare as text. */
  const recordOf = (u: Record<string, unknown>) => {
    const { fees, activationCode: _code, ...rest } = u as { fees: { type: string; currency: string; amount: unknown }[]; activationCode?: unknown };
    return { ...rest, fees: fees.map((f) => [f.type, f.currency, plain(f.amount)]) };
  };
  const upgradeEvents = async (cardId: string) => (await outboxEvents(svc, 'CARD_UPGRADE_STATUS_CHANGED', cardId)).map((e) => e.data);

  it('accepts an upgrade PENDING with the snapshot and the fees charged from the pool, shows it on the card, and records the event', async () => {
    const { world, card } = await freshCard();
    const upgradeRef = ref('up');
    const u = await upgrade(card, upgradeRef);
    assert.equal(u.status, 'PENDING');
    assert.equal(u.cardId, card.cardId);
    assert.equal(u.cardProfileId, 'sbx-visa-shared-physical');
    assert.deepEqual(u.shippingAddress, { postalCode: null, addressLine1: HOME.addressLine1, addressLine2: null, addressLine3: null, city: 'Central', state: 'Hong Kong Island', addressCountryCode: 'HK' });
    assert.deepEqual([u.phoneCountryCode, u.phoneNumber], ['HK', '91234567']);
    assert.deepEqual([u.carrier, u.trackingNumber, u.rejectReason, u.feesRefunded, u.activationLocked], [null, null, null, false, false]);
    assert.deepEqual(u.fees.map((f) => [f.type, f.currency, plain(f.amount)]), [['CARD_PRINTING_FEE', 'USD', '5'], ['CARD_POSTAL_FEE', 'USD', '2.5']]);
    assert.equal(await poolAvailable(world.org.organizationId), '92.5');
    const statement = await w.client.funding.statement({ organizationId: world.org.organizationId });
    const feeLines = statement.result.filter((l) => String(l.type).startsWith('CARD_'));
    assert.deepEqual(feeLines.map((l) => [l.type, plain(l.amount), l.reference]).sort(),
      [['CARD_POSTAL_FEE', '-2.5', upgradeRef], ['CARD_PRINTING_FEE', '-5', upgradeRef]]);
    // D4, docs/decisions.md 21: the record (and its event) writes a pool's fee with the digits of its statement line.
    assert.deepEqual(u.fees.map((f) => decimalText(f.amount)), ['5.00', '2.50']);
    assert.deepEqual(feeLines.map((l) => decimalText(l.amount)).sort(), ['-2.50', '-5.00']);

    const queried = await w.client.cards.query(card.cardId);
    assert.equal(queried.cardForm, 'VIRTUAL', 'the card is virtual until activation');
    assert.equal(queried.openUpgrade?.upgradeRef, upgradeRef);
    const listed = await w.client.cards.list({ organizationId: world.org.organizationId });
    assert.equal(listed.result.find((c) => c.cardId === card.cardId)?.openUpgrade?.status, 'PENDING');
    assert.deepEqual(await w.client.cards.upgradeDetail(upgradeRef), u);

    const events = await upgradeEvents(card.cardId);
    assert.deepEqual(events.map((e) => e.status), ['PENDING']);
    assert.equal(events[0].upgradeRef, upgradeRef);
    await expectCode(w.client.cards.upgradeDetail('up-unknown'), 'CARD_UPGRADE_NOT_FOUND');
    const other = await svc.newPartner();
    await expectCode(other.client.cards.upgradeDetail(upgradeRef), 'CARD_UPGRADE_NOT_FOUND');
  });

  it('follows the sandbox walk-through of docs/first-ten-minutes.md with the partner SDK alone', async () => {
    const { world, card } = await freshCard({ address: false });
    await w.client.customers.updateAddress(world.employee.customerId, [HOME]);
    const u = await w.client.cards.upgradePhysical({ cardId: card.cardId, upgradeRef: ref('upgrade'), cardProfileId: 'sbx-visa-shared-physical' });
    assert.equal((await w.client.cards.query(card.cardId)).openUpgrade?.status, 'PENDING');
    assert.equal((await w.client.sandbox.cardShipment({ upgradeRef: u.upgradeRef, status: 'PRODUCING' })).status, 'PRODUCING');
    const shipped = await w.client.sandbox.cardShipment({ upgradeRef: u.upgradeRef, status: 'SHIPPED', carrier: 'DHL', trackingNumber: 'JD0146' });
    assert.match(shipped.activationCode ?? '', /^[0-9]{6}$/);
    assert.equal((await w.client.sandbox.cardShipment({ upgradeRef: u.upgradeRef, status: 'DELIVERED' })).status, 'DELIVERED');
    await w.client.cards.activatePhysical({ cardId: card.cardId, activationCode: shipped.activationCode! });
    const after = await w.client.cards.query(card.cardId);
    assert.deepEqual([after.cardId, after.panLast4, after.cardForm], [card.cardId, card.panLast4, 'PHYSICAL']);
    const other = await svc.newPartner();
    await expectCode(other.client.sandbox.cardShipment({ upgradeRef: u.upgradeRef, status: 'PRODUCING' }), 'CARD_UPGRADE_NOT_FOUND');
  });

  it('operators may set postalFee on a PHYSICAL corporate profile, not on a VIRTUAL one', async () => {
    const base = { profileName: 'plastic', cardNetwork: 'VISA', balanceMode: 'DEDICATED', settlementCurrencies: ['USD'], bin: '462281', fees: { postalFee: decimal('3.10') } };
    const physical = await operator.call<{ fees: { postalFee: unknown } }>('POST', '/internal/admin/v1/card-profiles', { ...base, cardForm: 'PHYSICAL' });
    assert.equal(plain(physical.fees.postalFee), '3.1');
    await expectCode(operator.call('POST', '/internal/admin/v1/card-profiles', { ...base, cardForm: 'VIRTUAL' }), 'DAPI_PARAM_INVALID', 'postalFee');
  });

  it('snapshots address and phone at acceptance: later updates of the employee leave the upgrade alone (2.7 rule 3)', async () => {
    const { world, card } = await freshCard();
    const u = await upgrade(card);
    await w.client.customers.updateAddress(world.employee.customerId, [MOVED]);
    await w.client.customers.updatePhone(world.employee.customerId, { phoneCountryCode: 'SG', phoneNumber: '81234567' });
    const later = await w.client.cards.upgradeDetail(u.upgradeRef);
    assert.deepEqual(later.shippingAddress, u.shippingAddress);
    assert.deepEqual([later.phoneCountryCode, later.phoneNumber], ['HK', '91234567']);
    await bureau(u.upgradeRef, 'PRODUCING');
    assert.equal((await w.client.cards.upgradeDetail(u.upgradeRef)).shippingAddress.addressLine1, HOME.addressLine1);
  });

  it('a company card takes its custodian\'s address and phone', async () => {
    const { world } = await freshCard();
    const companyCard = await issueCard(svc, world, { company: true, cardholderName: 'Acme Travel' });
    const u = await upgrade(companyCard);
    assert.equal(u.shippingAddress.addressLine1, HOME.addressLine1);
    assert.equal(u.phoneNumber, '91234567');
  });

  it('answers each check at once and creates nothing: ref, card, profile, capabilities, KYC, open upgrade, address, phone, funds', async () => {
    const { world, card } = await freshCard();
    const taken = await upgrade(card);

    // upgradeRef unique per partner (another card, same ref).
    const { card: second } = await freshCard({ world: { ...world } });
    await unchanged(() => upgrade(second, taken.upgradeRef), 'CARD_UPGRADE_REF_DUPLICATE');
    // The card: unknown, another partner's, not ACTIVE, open upgrade.
    await unchanged(() => w.client.cards.upgradePhysical({ cardId: 'cd-unknown', upgradeRef: ref(), cardProfileId: 'sbx-visa-shared-physical' }), 'CARD_INVALID');
    const other = await svc.newPartner();
    await unchanged(() => other.client.cards.upgradePhysical({ cardId: second.cardId, upgradeRef: ref(), cardProfileId: 'sbx-visa-shared-physical' }), 'CARD_INVALID');
    await unchanged(() => upgrade(card), 'CARD_UPGRADE_IN_PROGRESS', taken.upgradeRef);
    // The profile: unknown, virtual, other network, other balance mode, consumer, inactive, another partner's.
    for (const profile of ['cp-unknown', 'sbx-visa-shared', 'sbx-mc-shared-physical', 'sbx-visa-dedicated-physical', 'sbx-visa-consumer-physical']) {
      await unchanged(() => upgrade(second, ref(), profile), 'CARD_PROFILE_INVALID');
    }
    const inactive = await operator.call<{ cardProfileId: string }>('POST', '/internal/admin/v1/card-profiles', {
      profileName: 'retired plastic', cardNetwork: 'VISA', cardForm: 'PHYSICAL', balanceMode: 'SHARED', settlementCurrencies: ['USD'], bin: '462277', status: 'INACTIVE',
    });
    await unchanged(() => upgrade(second, ref(), inactive.cardProfileId), 'CARD_PROFILE_INVALID');
    const foreign = await operator.call<{ cardProfileId: string }>('POST', '/internal/admin/v1/card-profiles', {
      partnerId: other.partner.partnerId, profileName: 'their plastic', cardNetwork: 'VISA', cardForm: 'PHYSICAL', balanceMode: 'SHARED', settlementCurrencies: ['USD'], bin: '462278',
    });
    await unchanged(() => upgrade(second, ref(), foreign.cardProfileId), 'CARD_PROFILE_INVALID');
    const hkdOnly = await operator.call<{ cardProfileId: string }>('POST', '/internal/admin/v1/card-profiles', {
      profileName: 'HKD plastic', cardNetwork: 'VISA', cardForm: 'PHYSICAL', balanceMode: 'SHARED', settlementCurrencies: ['HKD'], bin: '462279',
    });
    await unchanged(() => upgrade(second, ref(), hkdOnly.cardProfileId), 'CARD_PROFILE_INVALID', 'USD');

    // D20: card management frozen on the company, then on the employee.
    await w.client.organizations.updateRestrictions(world.org.organizationId, { addRestrictions: ['CARD_FROZEN'] });
    const frozen = await unchanged(() => upgrade(second), 'CAPABILITY_FROZEN');
    assert.equal((frozen.data as { errorCode: string }).errorCode, 'CARD_FROZEN');
    await w.client.organizations.updateRestrictions(world.org.organizationId, { removeRestrictions: ['CARD_FROZEN'] });
    await w.client.customers.updateRestrictions(world.employee.customerId, { addRestrictions: ['ACCOUNT_FROZEN'] });
    const frozen2 = await unchanged(() => upgrade(second), 'CAPABILITY_FROZEN');
    assert.equal((frozen2.data as { errorCode: string }).errorCode, 'ACCOUNT_FROZEN');
    await w.client.customers.updateRestrictions(world.employee.customerId, { removeRestrictions: ['ACCOUNT_FROZEN'] });

    // A blocked card.
    await w.client.cards.block(second.cardId);
    await unchanged(() => upgrade(second), 'CARD_INVALID', 'BLOCKED');
    await w.client.cards.unblock(second.cardId);

    // KYC: a name change re-opens the review (D17).
    await w.client.customers.updateName(world.employee.customerId, { firstName: 'Ada', lastName: 'King' });
    await unchanged(() => upgrade(second), 'KYC_NOT_APPROVED');
    await w.client.sandbox.kycDecision({ customerId: world.employee.customerId, decision: 'APPROVED' });

    // Missing address, missing phone.
    const noAddress = await freshCard({ address: false });
    await unchanged(() => upgrade(noAddress.card), 'DAPI_PARAM_INVALID', 'shippingAddress');
    const noPhoneEmployee = await w.client.customers.create({
      organizationId: noAddress.world.org.organizationId, customerRef: ref('emp'), firstName: 'Bob', lastName: 'Brown', email: 'bob@example.com',
    });
    await w.client.sandbox.kycDecision({ customerId: noPhoneEmployee.customerId, decision: 'APPROVED' });
    await w.client.customers.updateAddress(noPhoneEmployee.customerId, [HOME]);
    const noPhoneCard = await issueCard(svc, { ...noAddress.world, employee: noPhoneEmployee });
    await unchanged(() => upgrade(noPhoneCard), 'DAPI_PARAM_INVALID', 'phoneNumber');

    // Funds: a pool of 7.49 cannot pay 7.50; a dedicated card with nothing of its own neither.
    const poor = await freshCard({ funds: '7.49' });
    await unchanged(() => upgrade(poor.card), 'INSUFFICIENT_BALANCE');
    const poorDedicated = await freshCard({ dedicated: true, funds: '0' });
    await unchanged(() => upgrade(poorDedicated.card), 'INSUFFICIENT_BALANCE');
    // Operator suspension (D20: a suspended subject has no capability), of the company then the employee.
    for (const [subjectType, subjectId] of [['ORGANIZATION', world.org.organizationId], ['CUSTOMER', world.employee.customerId]] as const) {
      await operator.suspend(subjectType, subjectId, true);
      const suspended = await unchanged(() => upgrade(second), 'CAPABILITY_FROZEN');
      assert.equal((suspended.data as { errorCode: string }).errorCode, 'SUSPENDED');
      await operator.suspend(subjectType, subjectId, false);
    }
    // A company card whose custodian left the company: no current cardholder to send the plastic to.
    const custodianLeft = await freshCard();
    const custodian = await approvedEmployee(w.client, custodianLeft.world.org.organizationId);
    await w.client.customers.updateAddress(custodian.customerId, [HOME]);
    const companyCard = await issueCard(svc, { ...custodianLeft.world, employee: custodian }, { company: true, cardholderName: 'Acme Travel' });
    await w.client.customers.terminate(custodian.customerId);
    assert.equal((await w.client.cards.query(companyCard.cardId)).status, 'ACTIVE', 'the company card outlives its custodian');
    await unchanged(() => upgrade(companyCard), 'CUSTOMER_INVALID');
    // Bad input never reaches the rules.
    await unchanged(() => w.client.cards.upgradePhysical({ cardId: second.cardId, upgradeRef: 'has space', cardProfileId: 'sbx-visa-shared-physical' }), 'DAPI_PARAM_INVALID', 'upgradeRef');
    // After all that the card still upgrades.
    assert.equal((await upgrade(second)).status, 'PENDING');
  });

  /** Drives a fresh upgrade to `status`; answers the upgrade, its card and the activation code once shipped. */
  async function upgradeIn(status: Status) {
    const { world, card } = await freshCard();
    const u = await upgrade(card);
    let code: string | undefined;
    for (const step of PATH[status]) {
      if (step === 'CANCELLED') await w.client.cards.cancelUpgrade(u.upgradeRef);
      else if (step === 'ACTIVATED') await w.client.cards.activatePhysical({ cardId: card.cardId, activationCode: code! });
      else {
        const answer = await bureau(u.upgradeRef, step);
        if (step === 'SHIPPED') code = answer.activationCode;
      }
    }
    assert.equal((await w.client.cards.upgradeDetail(u.upgradeRef)).status, status);
    return { world, card, upgradeRef: u.upgradeRef, code };
  }

  /** The six moves of D52 on one upgrade: the bureau's four, the partner's cancel and activation. */
  const movesOn = (u: { card: Card; upgradeRef: string; code?: string }): Record<Exclude<Status, 'PENDING'>, () => Promise<unknown>> => ({
    PRODUCING: () => bureau(u.upgradeRef, 'PRODUCING'),
    SHIPPED: () => bureau(u.upgradeRef, 'SHIPPED'),
    DELIVERED: () => bureau(u.upgradeRef, 'DELIVERED'),
    REJECTED: () => bureau(u.upgradeRef, 'REJECTED'),
    CANCELLED: () => w.client.cards.cancelUpgrade(u.upgradeRef),
    ACTIVATED: () => w.client.cards.activatePhysical({ cardId: u.card.cardId, activationCode: u.code ?? '000000' }),
  });

  it('walks the whole state machine: every legal move succeeds, every illegal one is CARD_UPGRADE_STATUS_INVALID and changes nothing', async () => {
    for (const from of STATUSES) {
      const subject = await upgradeIn(from);
      for (const [to, move] of Object.entries(movesOn(subject)) as [Status, () => Promise<unknown>][]) {
        if (LEGAL[from].includes(to)) continue;
        const err = await unchanged(move, 'CARD_UPGRADE_STATUS_INVALID');
        if (to !== 'ACTIVATED') assert.ok(err.message.includes(`is ${from}`), `${from} -> ${to}: "${err.message}" names the status`);
      }
      for (const to of LEGAL[from]) {
        const fresh = await upgradeIn(from);
        await movesOn(fresh)[to as Exclude<Status, 'PENDING'>]();
        const detail = await w.client.cards.upgradeDetail(fresh.upgradeRef);
        assert.equal(detail.status, to, `${from} -> ${to}`);
        // One CARD_UPGRADE_STATUS_CHANGED per change, the last one carrying the record as it now is.
        const events = await upgradeEvents(fresh.card.cardId);
        assert.deepEqual(events.map((e) => e.status), ['PENDING', ...PATH[from], to], `${from} -> ${to}: one event per change`);
        assert.deepEqual(recordOf(events.at(-1)!), recordOf(detail), `${from} -> ${to}: the event carries the upgrade record`);
      }
    }
  });

  it('the bureau fields go with their status: SHIPPED needs carrier and tracking number, REJECTED a reason', async () => {
    const { upgradeRef } = await upgradeIn('PRODUCING');
    const call = (body: Record<string, unknown>) => operator.call('POST', '/internal/admin/v1/card-upgrades/status', { partnerId: w.partner.partnerId, upgradeRef, ...body });
    await unchanged(() => call({ status: 'SHIPPED', trackingNumber: 'T1' }), 'DAPI_PARAM_INVALID', 'carrier');
    await unchanged(() => call({ status: 'SHIPPED', carrier: 'DHL' }), 'DAPI_PARAM_INVALID', 'trackingNumber');
    await unchanged(() => call({ status: 'REJECTED' }), 'DAPI_PARAM_INVALID', 'rejectReason');
    await unchanged(() => call({ status: 'DELIVERED', carrier: 'DHL' }), 'DAPI_PARAM_INVALID', 'carrier');
    await unchanged(() => call({ status: 'ACTIVATED' }), 'DAPI_PARAM_INVALID', 'status');
    await unchanged(() => operator.call('POST', '/internal/admin/v1/card-upgrades/status', { partnerId: w.partner.partnerId, upgradeRef: 'up-none', status: 'PRODUCING' }), 'CARD_UPGRADE_NOT_FOUND');
    const shipped = await call({ status: 'SHIPPED', carrier: 'SF Express', trackingNumber: 'SF1234567890', activationCode: '135790' }) as CardUpgrade & { activationCode?: string };
    assert.deepEqual([shipped.status, shipped.carrier, shipped.trackingNumber], ['SHIPPED', 'SF Express', 'SF1234567890']);
    assert.equal(shipped.activationCode, undefined, 'the bureau\'s own code is not echoed');
    const rejected = await upgradeIn('PENDING');
    const r = await bureau(rejected.upgradeRef, 'REJECTED');
    assert.deepEqual([r.status, r.rejectReason, r.feesRefunded], ['REJECTED', 'Embossing failed', true]);
  });

  it('refunds the fees on CANCELLED (pool) and REJECTED (dedicated balance), each in its statement', async () => {
    const shared = await freshCard();
    const u1 = await upgrade(shared.card);
    assert.equal(await poolAvailable(shared.world.org.organizationId), '92.5');
    await bureau(u1.upgradeRef, 'PRODUCING');
    const cancelled = await w.client.cards.cancelUpgrade(u1.upgradeRef);
    assert.deepEqual([cancelled.status, cancelled.feesRefunded], ['CANCELLED', true]);
    assert.equal(await poolAvailable(shared.world.org.organizationId), '100');
    const poolLines = (await w.client.funding.statement({ organizationId: shared.world.org.organizationId })).result
      .filter((l) => String(l.type).startsWith('CARD_')).map((l) => [l.type, plain(l.amount)]).sort();
    assert.deepEqual(poolLines, [['CARD_POSTAL_FEE', '-2.5'], ['CARD_POSTAL_FEE_REFUND', '2.5'], ['CARD_PRINTING_FEE', '-5'], ['CARD_PRINTING_FEE_REFUND', '5']]);
    assert.equal((await w.client.cards.query(shared.card.cardId)).openUpgrade, null);
    // A closed upgrade frees the card for a new one.
    assert.equal((await upgrade(shared.card)).status, 'PENDING');

    const dedicated = await freshCard({ dedicated: true, funds: '20.00' });
    const poolBefore = await poolAvailable(dedicated.world.org.organizationId);
    const u2 = await upgrade(dedicated.card);
    assert.equal(await cardAvailable(dedicated.world.org.organizationId, dedicated.card.cardId), '12.5');
    assert.equal(await poolAvailable(dedicated.world.org.organizationId), poolBefore, 'a dedicated card pays from its own balance');
    await bureau(u2.upgradeRef, 'REJECTED');
    assert.equal(await cardAvailable(dedicated.world.org.organizationId, dedicated.card.cardId), '20');
    const cardLines = (await w.client.funding.statement({ organizationId: dedicated.world.org.organizationId, cardId: dedicated.card.cardId })).result
      .filter((l) => String(l.type).startsWith('CARD_')).map((l) => [l.type, plain(l.amount), l.reference]).sort();
    assert.deepEqual(cardLines, [['CARD_POSTAL_FEE', '-2.5', u2.upgradeRef], ['CARD_POSTAL_FEE_REFUND', '2.5', u2.upgradeRef],
      ['CARD_PRINTING_FEE', '-5', u2.upgradeRef], ['CARD_PRINTING_FEE_REFUND', '5', u2.upgradeRef]]);
    const events = await upgradeEvents(dedicated.card.cardId);
    assert.deepEqual(events.map((e) => [e.status, e.feesRefunded]), [['PENDING', false], ['REJECTED', true]]);
    const audit = await operator.audit(w.partner.partnerId);
    assert.deepEqual(audit.findings, []);
  });

  it('cancelling a card before its plastic ships cancels the upgrade and refunds before the dedicated balance goes back to the pool', async () => {
    const dedicated = await freshCard({ dedicated: true, funds: '20.00' });
    const org = dedicated.world.org.organizationId;
    const poolBefore = await poolAvailable(org);
    const u = await upgrade(dedicated.card);
    await bureau(u.upgradeRef, 'PRODUCING');
    await w.client.cards.cancel(dedicated.card.cardId);
    const after = await w.client.cards.upgradeDetail(u.upgradeRef);
    assert.deepEqual([after.status, after.feesRefunded], ['CANCELLED', true]);
    assert.equal(await cardAvailable(org, dedicated.card.cardId), '0');
    assert.equal(await poolAvailable(org), plain(decimal(String(BigInt(poolBefore) + 20n))), 'the whole 20.00 is swept back, fees included');

    const shipped = await upgradeIn('SHIPPED');
    await w.client.cards.cancel(shipped.card.cardId);
    assert.equal((await w.client.cards.upgradeDetail(shipped.upgradeRef)).status, 'SHIPPED', 'a plastic on its way stays as it is');
    await unchanged(() => w.client.cards.activatePhysical({ cardId: shipped.card.cardId, activationCode: shipped.code! }), 'CARD_INVALID');
  });

  it('activation: code only as a hash, wrong codes count, the fifth locks (even the right code), an operator unlocks, then the card is PHYSICAL', async () => {
    const { world, card, upgradeRef, code } = await upgradeIn('SHIPPED');
    assert.match(code!, /^[0-9]{6}$/);
    const shippedEvent = (await upgradeEvents(card.cardId)).find((e) => e.status === 'SHIPPED')!;
    assert.equal(shippedEvent.activationCode, code, 'sandbox: the SHIPPED event carries the code');
    assert.deepEqual([shippedEvent.carrier, shippedEvent.trackingNumber], ['DHL', 'JD0146000062']);
    const [row] = await svc.db.query<Record<string, unknown>>('SELECT * FROM card_upgrades WHERE upgrade_ref = $1', [upgradeRef]);
    assert.ok(!JSON.stringify(row).includes(`"${code}"`) && row.activation_code_hmac !== code, 'only an HMAC of the code is stored');
    assert.match(String(row.activation_code_hmac), /^[0-9a-f]{64}$/);

    const wrong = code === '000000' ? '000001' : '000000';
    for (let i = 1; i <= 4; i++) {
      await expectCode(w.client.cards.activatePhysical({ cardId: card.cardId, activationCode: wrong }), 'CARD_ACTIVATION_CODE_INVALID', `${5 - i}`);
    }
    await bureau(upgradeRef, 'DELIVERED');
    await expectCode(w.client.cards.activatePhysical({ cardId: card.cardId, activationCode: wrong }), 'CARD_ACTIVATION_CODE_INVALID', 'locked');
    assert.equal((await w.client.cards.upgradeDetail(upgradeRef)).activationLocked, true);
    await unchanged(() => w.client.cards.activatePhysical({ cardId: card.cardId, activationCode: code! }), 'CARD_ACTIVATION_LOCKED');
    await unchanged(() => w.client.cards.activatePhysical({ cardId: card.cardId, activationCode: wrong }), 'CARD_ACTIVATION_LOCKED');
    assert.equal((await w.client.cards.query(card.cardId)).cardForm, 'VIRTUAL');

    const unlocked = await operator.call<CardUpgrade>('POST', '/internal/admin/v1/card-upgrades/unlock-activation', { partnerId: w.partner.partnerId, upgradeRef });
    assert.equal(unlocked.activationLocked, false);
    await expectCode(w.client.cards.activatePhysical({ cardId: card.cardId, activationCode: wrong }), 'CARD_ACTIVATION_CODE_INVALID', '4');
    // The activation keeps no copy of its body in the Idempotency-Key store (its hash would be a guessable copy of the code).
    const key = ref('idem');
    const activated = await w.client.cards.activatePhysical({ cardId: card.cardId, activationCode: code! }, { idempotencyKey: key });
    assert.equal(activated.status, 'ACTIVATED');
    const stored = await svc.db.query('SELECT 1 FROM idempotency_keys WHERE partner_id = $1 AND idempotency_key = $2', [w.partner.partnerId, key]);
    assert.equal(stored.length, 0, 'no Idempotency-Key entry for activate-physical');
    // The same key again is judged afresh (no replayed answer): the card has no plastic left to activate.
    await expectCode(w.client.cards.activatePhysical({ cardId: card.cardId, activationCode: code! }, { idempotencyKey: key }), 'CARD_UPGRADE_STATUS_INVALID');
    const after = await w.client.cards.query(card.cardId);
    assert.deepEqual([after.cardForm, after.cardProfileId, after.openUpgrade, after.status], ['PHYSICAL', 'sbx-visa-shared-physical', null, 'ACTIVE']);
    const listed = (await w.client.cards.list({ organizationId: world.org.organizationId })).result.find((c) => c.cardId === card.cardId)!;
    assert.deepEqual([listed.cardForm, listed.openUpgrade], ['PHYSICAL', null], 'the card list shows the new form too');
    assert.deepEqual((await upgradeEvents(card.cardId)).map((e) => e.status), ['PENDING', 'PRODUCING', 'SHIPPED', 'DELIVERED', 'ACTIVATED']);
    await unchanged(() => upgrade(after), 'CARD_INVALID', 'physical');
    await unchanged(() => operator.call('POST', '/internal/admin/v1/card-upgrades/unlock-activation', { partnerId: w.partner.partnerId, upgradeRef }), 'CARD_UPGRADE_STATUS_INVALID');
  });

  it('concurrent wrong activation codes count one by one: 5 are judged, the rest are CARD_ACTIVATION_LOCKED', async () => {
    const { card, upgradeRef, code } = await upgradeIn('SHIPPED');
    // Eight different wrong guesses at once, as a brute-force attempt would send them.
    const guesses = Array.from({ length: 8 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0'));
    const results = await Promise.allSettled(guesses.map((activationCode) => w.client.cards.activatePhysical({ cardId: card.cardId, activationCode })));
    const codes = results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'ACTIVATED')).sort();
    assert.deepEqual(codes, [...Array(5).fill('CARD_ACTIVATION_CODE_INVALID'), ...Array(3).fill('CARD_ACTIVATION_LOCKED')]);
    const [row] = await svc.db.query<{ failures: number; locked: boolean }>(
      'SELECT activation_failures AS failures, activation_locked AS locked FROM card_upgrades WHERE upgrade_ref = $1', [upgradeRef]);
    assert.deepEqual([row.failures, row.locked], [5, true]);
    await unchanged(() => w.client.cards.activatePhysical({ cardId: card.cardId, activationCode: code! }), 'CARD_ACTIVATION_LOCKED');
  });

  it('wrong activation codes that meet at the lock are counted one after another: never more than 5 judged (PostgreSQL)', async (t) => {
    // The embedded database runs one transaction at a time, so requests cannot overlap there; on
    // PostgreSQL another connection holds the upgrade's row until all four requests wait on a lock,
    // so they are in flight together whatever order they arrive in.
    if (!process.env.TEST_DATABASE_URL) return t.skip('needs a second connection (TEST_DATABASE_URL); the embedded database serializes every call');
    const { card, upgradeRef, code } = await upgradeIn('SHIPPED');
    const guess = (i: number) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 3; i++) await expectCode(w.client.cards.activatePhysical({ cardId: card.cardId, activationCode: guess(i) }), 'CARD_ACTIVATION_CODE_INVALID');
    const other = await (await testDatabase()).openAnother();
    let burst: Promise<PromiseSettledResult<unknown>[]> = Promise.resolve([]);
    await other.tx(async (q) => {
      await q.query('SELECT 1 FROM card_upgrades WHERE upgrade_ref = $1 FOR UPDATE', [upgradeRef]);
      burst = Promise.allSettled([3, 4, 5, 6].map((i) => w.client.cards.activatePhysical({ cardId: card.cardId, activationCode: guess(i) })));
      for (let i = 0; i < 400; i++) {
        const [waiting] = await other.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        if (waiting.n >= 4) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.fail('the four requests never waited together');
    });
    const codes = (await burst).map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'ACTIVATED')).sort();
    assert.deepEqual(codes, ['CARD_ACTIVATION_CODE_INVALID', 'CARD_ACTIVATION_CODE_INVALID', 'CARD_ACTIVATION_LOCKED', 'CARD_ACTIVATION_LOCKED']);
    const [row] = await svc.db.query<{ failures: number }>('SELECT activation_failures AS failures FROM card_upgrades WHERE upgrade_ref = $1', [upgradeRef]);
    assert.equal(row.failures, 5);
  });

  it('production: the SHIPPED event never carries the activation code, the operator answer does once, and the sandbox simulation does not exist', async () => {
    // A partner of its own, admitted from 127.0.0.1 by the production instance below (same database).
    const { partner, client } = await svc.newPartner({ ipWhitelist: { api: ['127.0.0.1'] } });
    const org = await newCompany(client);
    const employee = await approvedEmployee(client, org.organizationId);
    await client.customers.updateAddress(employee.customerId, [HOME]);
    await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: org.organizationId, currency: 'USD', amount: decimal('50.00') });
    const card = await issueCard(svc, { partner, client, org, employee });
    const u = await client.cards.upgradePhysical({ cardId: card.cardId, upgradeRef: ref('up'), cardProfileId: 'sbx-visa-shared-physical' });

    const prod = await startService({ env: { CARDSVC_ENV: 'production', PARTNER_CACHE_TTL_MS: '0' }, clock: svc.clock });
    try {
      const prodClient = prod.clientFor(partner);
      await expectCode(prodClient.sandbox.cardShipment({ upgradeRef: u.upgradeRef, status: 'PRODUCING' }), 'SYS_NOT_FOUND');
      await prod.admin.cardUpgradeStatus({ partnerId: partner.partnerId, upgradeRef: u.upgradeRef, status: 'PRODUCING' });
      const shipped = await prod.admin.cardUpgradeStatus({ partnerId: partner.partnerId, upgradeRef: u.upgradeRef, status: 'SHIPPED', carrier: 'DHL', trackingNumber: 'JD0146000099' });
      assert.match(shipped.activationCode ?? '', /^[0-9]{6}$/, 'the operator who shipped it gets the drawn code once');
      const events = await upgradeEvents(card.cardId);
      assert.deepEqual(events.map((e) => e.status), ['PENDING', 'PRODUCING', 'SHIPPED']);
      assert.equal('activationCode' in events[2], false, 'no code in a production event');
      assert.equal((await prodClient.cards.activatePhysical({ cardId: card.cardId, activationCode: shipped.activationCode! })).status, 'ACTIVATED');
    } finally {
      await prod.close();
    }
  });

  it('the card spends before, during and after the upgrade and keeps its id, PAN, expiry, balance, rules and usage', async () => {
    const { world, card: issued } = await freshCard({ funds: '200.00' });
    const rule = await w.client.velocity.createRule({
      organizationId: world.org.organizationId, ruleRef: ref('rule'), ruleName: 'daily', purchaseControl: { countLimits: { daily: 10 } },
    });
    await w.client.velocity.bindRule({ organizationId: world.org.organizationId, ruleId: rule.ruleId, subjectType: 'CARD', subjectIds: [issued.cardId] });
    const secretBefore = await plaintextOf(svc, w.partner.partnerId, issued.cardId);
    const spend = async () => assert.equal((await w.client.sandbox.authorize(purchase(issued.cardId, '10.00'))).approved, true);
    const usedCount = async () => (await w.client.velocity.queryQuota({ organizationId: world.org.organizationId, subjectType: 'CARD', subjectId: issued.cardId, currency: 'USD' })).purchase.countLimits.daily.usedCount;

    await spend();
    const u = await upgrade(issued);
    await spend();
    await bureau(u.upgradeRef, 'PRODUCING');
    const { activationCode } = await bureau(u.upgradeRef, 'SHIPPED');
    await spend();
    await w.client.cards.activatePhysical({ cardId: issued.cardId, activationCode: activationCode! });
    await spend();

    const after = await w.client.cards.query(issued.cardId);
    assert.equal(after.cardId, issued.cardId);
    assert.deepEqual([after.panFirst6, after.panLast4, after.cardForm], [issued.panFirst6, issued.panLast4, 'PHYSICAL']);
    assert.deepEqual(await plaintextOf(svc, w.partner.partnerId, issued.cardId), secretBefore, 'same PAN, expiry (and so CVV2)');
    const rules = await w.client.velocity.listSubjectRules({ organizationId: world.org.organizationId, subjectType: 'CARD', subjectId: issued.cardId });
    assert.deepEqual(rules.result.map((r) => r.ruleId), [rule.ruleId]);
    assert.equal(await usedCount(), 4, 'usage counted across the upgrade');
    const balance = await w.client.funding.balance(world.org.organizationId);
    const pool = balance.pools.find((p) => p.currency === 'USD')!;
    assert.deepEqual([plain(pool.available), plain(pool.pending)], ['152.5', '40'], '200 - 7.50 fees - 4 x 10 held');
  });

  it('concurrent upgrade requests for one card create one upgrade and charge once; one ref on two cards is taken once', async () => {
    const { world, card } = await freshCard();
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => upgrade(card)));
    const ok = results.filter((r) => r.status === 'fulfilled');
    assert.equal(ok.length, 1);
    for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as { code: string }).code, 'CARD_UPGRADE_IN_PROGRESS');
    const [{ n }] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_upgrades WHERE card_id = $1', [card.cardId]);
    assert.equal(n, 1);
    assert.equal(await poolAvailable(world.org.organizationId), '92.5');

    const a = await freshCard();
    const b = await freshCard({ world: { ...a.world } });
    const sameRef = ref('race');
    const race = await Promise.allSettled([upgrade(a.card, sameRef), upgrade(b.card, sameRef)]);
    assert.equal(race.filter((r) => r.status === 'fulfilled').length, 1);
    const refused = race.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    assert.equal((refused.reason as { code: string }).code, 'CARD_UPGRADE_REF_DUPLICATE');
    assert.equal(await poolAvailable(a.world.org.organizationId), '192.5', 'one set of fees for the two cards of one pool');
  });

  it('property: random bureau, cancel, activation and unlock steps agree with a model of D52', async () => {
    type Step =
      | { kind: 'bureau'; status: 'PRODUCING' | 'SHIPPED' | 'DELIVERED' | 'REJECTED' }
      | { kind: 'cancel' } | { kind: 'activate'; right: boolean } | { kind: 'unlock' };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.constantFrom('PRODUCING', 'SHIPPED', 'DELIVERED', 'REJECTED').map((status) => ({ kind: 'bureau' as const, status })),
      fc.constant({ kind: 'cancel' as const }),
      fc.boolean().map((right) => ({ kind: 'activate' as const, right })),
      fc.constant({ kind: 'unlock' as const }),
    );
    const { world } = await freshCard({ funds: '1000.00' });
    let card = await issueCard(svc, world);
    let runs = 0;
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
      runs++;
      const poolBefore = await poolAvailable(world.org.organizationId);
      const u = await upgrade(card);
      const model = { status: 'PENDING' as Status, failures: 0, locked: false, code: null as string | null };
      try {
      for (const s of steps) {
        let expected: string;
        let call: () => Promise<unknown>;
        if (s.kind === 'bureau') {
          expected = LEGAL[model.status].includes(s.status) ? 'OK' : 'CARD_UPGRADE_STATUS_INVALID';
          call = () => bureau(u.upgradeRef, s.status);
        } else if (s.kind === 'cancel') {
          expected = LEGAL[model.status].includes('CANCELLED') ? 'OK' : 'CARD_UPGRADE_STATUS_INVALID';
          call = () => w.client.cards.cancelUpgrade(u.upgradeRef);
        } else if (s.kind === 'activate') {
          const open = ['PENDING', 'PRODUCING', 'SHIPPED', 'DELIVERED'].includes(model.status);
          const ready = model.status === 'SHIPPED' || model.status === 'DELIVERED';
          expected = !open || !ready ? 'CARD_UPGRADE_STATUS_INVALID' : model.locked ? 'CARD_ACTIVATION_LOCKED'
            : s.right ? 'OK' : 'CARD_ACTIVATION_CODE_INVALID';
          const wrong = model.code === '999999' ? '999998' : '999999';
          call = () => w.client.cards.activatePhysical({ cardId: card.cardId, activationCode: s.right && model.code ? model.code : wrong });
        } else {
          expected = model.status === 'SHIPPED' || model.status === 'DELIVERED' ? 'OK' : 'CARD_UPGRADE_STATUS_INVALID';
          call = () => operator.call('POST', '/internal/admin/v1/card-upgrades/unlock-activation', { partnerId: w.partner.partnerId, upgradeRef: u.upgradeRef });
        }
        let got = 'OK';
        let answer: unknown;
        try {
          answer = await call();
        } catch (err) {
          got = (err as { code?: string }).code ?? String(err);
        }
        assert.equal(got, expected, `${JSON.stringify(s)} in ${model.status} (failures ${model.failures}, locked ${model.locked})`);
        // The model moves.
        if (s.kind === 'bureau' && got === 'OK') {
          model.status = s.status;
          if (s.status === 'SHIPPED') model.code = (answer as { activationCode: string }).activationCode;
        } else if (s.kind === 'cancel' && got === 'OK') model.status = 'CANCELLED';
        else if (s.kind === 'activate' && got === 'OK') model.status = 'ACTIVATED';
        else if (s.kind === 'activate' && got === 'CARD_ACTIVATION_CODE_INVALID') {
          model.failures++;
          model.locked = model.failures >= 5;
        } else if (s.kind === 'unlock' && got === 'OK') {
          model.failures = 0;
          model.locked = false;
        }
        const detail = await w.client.cards.upgradeDetail(u.upgradeRef);
        assert.deepEqual([detail.status, detail.activationLocked], [model.status, model.locked]);
      }
      // Fees: charged while open or activated, refunded once closed otherwise.
      const refunded = model.status === 'REJECTED' || model.status === 'CANCELLED';
      assert.equal(await poolAvailable(world.org.organizationId), refunded ? poolBefore : minusFees(poolBefore));
      } finally {
        // Leave a free card for the next run (also after a failure, so shrinking replays from a clean start).
        const now = (await w.client.cards.upgradeDetail(u.upgradeRef)).status;
        if (now === 'PENDING' || now === 'PRODUCING') await w.client.cards.cancelUpgrade(u.upgradeRef);
        else if (now !== 'REJECTED' && now !== 'CANCELLED') card = await issueCard(svc, world);
      }
    }), { numRuns: 25 });
    assert.equal(runs >= 25, true);
    const audit = await operator.audit(w.partner.partnerId);
    assert.deepEqual(audit.findings, []);
  });
});
