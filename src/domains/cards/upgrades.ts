/**
 * Physical card upgrades (issue 30, D52; 2.7 update rules 2-3, 4.8). An ACTIVE virtual card is
 * upgraded under a PHYSICAL profile of its network and balance mode; the card keeps its row (id,
 * PAN, expiry, balance, rules, usage) and becomes PHYSICAL when the holder activates the plastic.
 *
 * States (D52), every other move refused with CARD_UPGRADE_STATUS_INVALID:
 *   PENDING   -> PRODUCING | REJECTED | CANCELLED
 *   PRODUCING -> SHIPPED   | REJECTED | CANCELLED
 *   SHIPPED   -> DELIVERED | ACTIVATED
 *   DELIVERED -> ACTIVATED
 * PRODUCING, SHIPPED, DELIVERED and REJECTED come from the card bureau (operator route; sandbox
 * simulation), CANCELLED from the partner, ACTIVATED from the activation code. REJECTED and
 * CANCELLED refund the fees in their transaction. Every change records CARD_UPGRADE_STATUS_CHANGED
 * (businessId = cardId, data = the upgrade record) in the transaction that makes it.
 *
 * Fees (D52): the target profile's issuanceFee (CARD_PRINTING_FEE) and postalFee (CARD_POSTAL_FEE),
 * charged from the card's funds at acceptance in the upgrade's transaction: the company pool
 * (SHARED) or the card's own balance (DEDICATED) in the card currency, here; the user's funding
 * asset (ASSET) through the managed-balance domain's fee book, plugged in at wiring time
 * (useConsumerUpgradeFees), which also writes the 2.4 asset movements.
 *
 * Activation code: 6 digits, drawn (or given by the bureau) at SHIPPED, stored only as an HMAC under
 * the master key, compared in constant time; ACTIVATION_MAX_FAILURES wrong codes lock it until an
 * operator unlocks it.
 */
import { createHmac, randomInt } from 'node:crypto';
import type { Queryable } from '../../platform/db/db.ts';
import { constantTimeEqual, newId } from '../../platform/crypto/secrets.ts';
import { ApiError, invariant, paramInvalid } from '../../platform/errors.ts';
import { corporateWire, fromDb, toWire, type Amount } from '../../platform/money.ts';
import { recordEvent } from '../events/index.ts';
import { getOrCreateAccount, post } from '../ledger/index.ts';
import { assertCapabilityOf, deliveryContactOf, findCardCustomer } from './deps.ts';
import { ensureCardsReady, type CardDeps } from './profiles.ts';
import { findCardProfile, type CardProfile } from './store.ts';
import {
  countActivationFailure, findOpenUpgrade, findOpenUpgrades, findUpgradeByRef, findUpgradeCard, insertUpgrade, setCardPhysical,
  setUpgradeFees, setUpgradeStatus, unlockActivationRow, upgradeRefTaken, type CardScope, type FeeLine, type ShippingAddress,
  type UpgradeCardRow, type UpgradeRow, type UpgradeStatus,
} from './upgrades-store.ts';

export type { CardScope, FeeLine, ShippingAddress, UpgradeCardRow, UpgradeStatus };

/** D52: the fifth wrong activation code locks the activation. */
export const ACTIVATION_MAX_FAILURES = 5;
/** The service's income account of card fees (per partner and currency), shared with consumer card fees. */
export const CARD_FEE_OWNER = 'CARD_FEES';

export const UPGRADE_TRANSITIONS: Readonly<Record<UpgradeStatus, readonly UpgradeStatus[]>> = {
  PENDING: ['PRODUCING', 'REJECTED', 'CANCELLED'],
  PRODUCING: ['SHIPPED', 'REJECTED', 'CANCELLED'],
  SHIPPED: ['DELIVERED', 'ACTIVATED'],
  DELIVERED: ['ACTIVATED'],
  ACTIVATED: [],
  REJECTED: [],
  CANCELLED: [],
};

const now = (deps: Pick<CardDeps, 'clock'>) => new Date(deps.clock.now());

/** The upgrade record of D52 (also the data of CARD_UPGRADE_STATUS_CHANGED). */
export function upgradeView(u: UpgradeRow) {
  return {
    upgradeRef: u.upgradeRef,
    cardId: u.cardId,
    cardProfileId: u.cardProfileId,
    status: u.status,
    shippingAddress: u.shippingAddress,
    phoneCountryCode: u.phoneCountryCode,
    phoneNumber: u.phoneNumber,
    carrier: u.carrier,
    trackingNumber: u.trackingNumber,
    rejectReason: u.rejectReason,
    fees: u.fees.map((f) => ({ type: f.type, currency: f.currency, amount: toWire(f.amount) })),
    feesRefunded: u.refundedAt !== null,
    activationLocked: u.activationLocked,
    createTime: u.createdAt.toISOString(),
    modifyTime: u.updatedAt.toISOString(),
  };
}
export type UpgradeView = ReturnType<typeof upgradeView>;

// ---------------------------------------------------------------------------------------------
// Fees

export interface FeeToCharge {
  type: FeeLine['type'];
  /** In the profile's terms: the card currency (corporate) or USD (consumer, converted by the book). */
  amount: Amount;
}

/** Charges and refunds the fees of one card family in the caller's transaction. */
export interface UpgradeFeeBook {
  /** Throws INSUFFICIENT_BALANCE before writing anything it cannot pay. */
  charge(q: Queryable, card: UpgradeCardRow, upgrade: { upgradeId: string; upgradeRef: string }, fees: FeeToCharge[], at: Date): Promise<FeeLine[]>;
  refund(q: Queryable, card: UpgradeCardRow, upgrade: { upgradeId: string; upgradeRef: string }, lines: FeeLine[], at: Date): Promise<void>;
}

let consumerFeeBook: UpgradeFeeBook | null = null;

/** Wiring (src/app.ts): the managed-balance domain books consumer (ASSET) card fees as asset movements. */
export function useConsumerUpgradeFees(book: UpgradeFeeBook): void {
  consumerFeeBook = book;
}

/** Corporate fees: the company pool (SHARED) or the card's own balance (DEDICATED), in the card currency. */
const corporateFeeBook: UpgradeFeeBook = {
  async charge(q, card, upgrade, fees, at) {
    invariant(card.organizationId !== null && card.balanceMode !== 'ASSET', `card ${card.cardId} is a corporate card`);
    const funds = await getOrCreateAccount(q, card.balanceMode === 'SHARED'
      ? { partnerId: card.partnerId, ownerType: 'ORGANIZATION_POOL', ownerId: card.organizationId, currency: card.currency, organizationId: card.organizationId }
      : { partnerId: card.partnerId, ownerType: 'CARD', ownerId: card.cardId, currency: card.currency, organizationId: card.organizationId }, at);
    const income = await getOrCreateAccount(q, { partnerId: card.partnerId, ownerType: 'FEE_INCOME', ownerId: CARD_FEE_OWNER, currency: card.currency }, at);
    const lines: FeeLine[] = [];
    for (const fee of fees) {
      // post() refuses with INSUFFICIENT_BALANCE before writing when the funds cannot pay.
      const posting = await post(q, {
        partnerId: card.partnerId,
        kind: fee.type,
        entries: [
          { accountId: funds.accountId, amount: fee.amount.neg(), bucket: 'AVAILABLE' },
          { accountId: income.accountId, amount: fee.amount, bucket: 'AVAILABLE' },
        ],
        reference: upgrade.upgradeRef,
        description: `${fee.type} of the physical card upgrade of card ${card.cardId}`,
        createTime: at,
      });
      // Written as the pool's statement writes this movement: two decimals (D4, docs/decisions.md 21).
      lines.push({ type: fee.type, currency: card.currency, amount: String(corporateWire(fee.amount)), accountId: funds.accountId, transactionId: posting.postingId });
    }
    return lines;
  },
  async refund(q, card, upgrade, lines, at) {
    for (const line of lines) {
      const income = await getOrCreateAccount(q, { partnerId: card.partnerId, ownerType: 'FEE_INCOME', ownerId: CARD_FEE_OWNER, currency: line.currency }, at);
      const amount = fromDb(line.amount);
      await post(q, {
        partnerId: card.partnerId,
        kind: `${line.type}_REFUND`,
        entries: [
          { accountId: income.accountId, amount: amount.neg(), bucket: 'AVAILABLE' },
          { accountId: line.accountId, amount, bucket: 'AVAILABLE' },
        ],
        reference: upgrade.upgradeRef,
        description: `${line.type} refunded: the physical card upgrade of card ${card.cardId} ended`,
        createTime: at,
      });
    }
  },
};

function feeBookOf(card: UpgradeCardRow): UpgradeFeeBook {
  if (card.balanceMode !== 'ASSET') return corporateFeeBook;
  invariant(consumerFeeBook !== null, 'the consumer upgrade fee book is wired (src/app.ts)');
  return consumerFeeBook;
}

// ---------------------------------------------------------------------------------------------
// Acceptance

/** The target profile (D52): ACTIVE, offered to the partner, PHYSICAL, of the card's network, balance mode and currency. */
async function targetProfile(q: Queryable, partnerId: string, card: UpgradeCardRow, cardProfileId: string): Promise<CardProfile> {
  const profile = await findCardProfile(q, cardProfileId);
  if (!profile || profile.status !== 'ACTIVE' || (profile.partnerId !== null && profile.partnerId !== partnerId)) {
    throw new ApiError('CARD_PROFILE_INVALID');
  }
  const refuse = (why: string) => new ApiError('CARD_PROFILE_INVALID', `Card profile ${cardProfileId} ${why}`);
  if (profile.cardForm !== 'PHYSICAL') throw refuse('is not a PHYSICAL profile');
  if (profile.cardNetwork !== card.cardNetwork) throw refuse(`is a ${profile.cardNetwork} profile; the card is ${card.cardNetwork}`);
  if (profile.balanceMode !== card.balanceMode) throw refuse(`has balance mode ${profile.balanceMode}; the card has ${card.balanceMode}`);
  if (!profile.settlementCurrencies.includes(card.currency)) throw refuse(`does not settle in the card currency ${card.currency}`);
  return profile;
}

export interface Delivery {
  shippingAddress: ShippingAddress;
  phoneCountryCode: string | null;
  phoneNumber: string;
}

export interface UpgradeRequest {
  partnerId: string;
  upgradeRef: string;
  cardId: string;
  cardProfileId: string;
  scope: CardScope;
  /** D20 capabilities and KYC of the cardholder (throws the refusal). */
  checkHolder: (q: Queryable, card: UpgradeCardRow) => Promise<void>;
  /** The address and phone to snapshot; throws DAPI_PARAM_INVALID naming a missing one. */
  delivery: (q: Queryable, card: UpgradeCardRow) => Promise<Delivery>;
}

/**
 * Accepts an upgrade in one transaction. Checks in order: upgradeRef unused, the card (the caller's,
 * ACTIVE, VIRTUAL; its row is locked, so concurrent requests for one card queue here), the target
 * profile, the holder (D20, KYC), no open upgrade of the card, address and phone; then the upgrade
 * (PENDING), its fees and its event. Any refusal leaves nothing behind.
 */
export async function requestUpgrade(deps: CardDeps, input: UpgradeRequest): Promise<UpgradeView> {
  await ensureCardsReady(deps);
  const at = now(deps);
  return deps.db.tx(async (q) => {
    if (await upgradeRefTaken(q, input.partnerId, input.upgradeRef)) throw new ApiError('CARD_UPGRADE_REF_DUPLICATE');
    const card = await findUpgradeCard(q, input.partnerId, input.cardId, input.scope, true);
    if (!card) throw new ApiError('CARD_INVALID');
    if (card.status !== 'ACTIVE') throw new ApiError('CARD_INVALID', `Card ${card.cardId} is ${card.status}: only an ACTIVE card can be upgraded`);
    if (card.cardForm !== 'VIRTUAL') throw new ApiError('CARD_INVALID', `Card ${card.cardId} is already a physical card`);
    const profile = await targetProfile(q, input.partnerId, card, input.cardProfileId);
    await input.checkHolder(q, card);
    const open = await findOpenUpgrade(q, card.cardId, false);
    if (open) {
      throw new ApiError('CARD_UPGRADE_IN_PROGRESS', `Card ${card.cardId} already has an open upgrade (${open.upgradeRef}, ${open.status})`);
    }
    const delivery = await input.delivery(q, card);
    const inserted = await insertUpgrade(q, {
      upgradeId: newId('cu'), partnerId: input.partnerId, upgradeRef: input.upgradeRef, cardId: card.cardId,
      cardProfileId: profile.cardProfileId, ...delivery,
    }, at);
    if (!inserted) throw new ApiError('CARD_UPGRADE_REF_DUPLICATE');
    const fees: FeeToCharge[] = [
      { type: 'CARD_PRINTING_FEE' as const, amount: fromDb(profile.issuanceFee) },
      { type: 'CARD_POSTAL_FEE' as const, amount: fromDb(profile.postalFee) },
    ].filter((f) => f.amount.gt(0));
    const upgrade = fees.length > 0
      ? await setUpgradeFees(q, inserted.upgradeId, await feeBookOf(card).charge(q, card, inserted, fees, at))
      : inserted;
    await recordUpgradeEvent(q, upgrade, at);
    return upgradeView(upgrade);
  });
}

async function recordUpgradeEvent(q: Queryable, u: UpgradeRow, at: Date, extra: Record<string, unknown> = {}): Promise<void> {
  await recordEvent(q, {
    partnerId: u.partnerId, eventType: 'CARD_UPGRADE_STATUS_CHANGED', businessId: u.cardId, data: { ...upgradeView(u), ...extra }, createTime: at,
  });
}

/** The corporate upgrade (POST /open-api-corp/card/v1/upgrade-physical). */
export async function upgradeCorporateCard(deps: CardDeps, partnerId: string, input: { cardId: string; upgradeRef: string; cardProfileId: string }) {
  /** The employee of an employee card, the custodian of a company card (D52). */
  const holderOf = (card: UpgradeCardRow) => (card.subjectType === 'CUSTOMER' ? card.subjectId : card.custodianCustomerId!);
  return requestUpgrade(deps, {
    ...input,
    partnerId,
    scope: { family: 'CORPORATE' },
    async checkHolder(q, card) {
      invariant(card.organizationId !== null, `corporate card ${card.cardId} has a company`);
      await assertCapabilityOf(q, { subjectType: 'ORGANIZATION', subjectId: card.organizationId }, 'CARD_MANAGEMENT');
      if (card.subjectType === 'CUSTOMER') await assertCapabilityOf(q, { subjectType: 'CUSTOMER', subjectId: card.subjectId }, 'CARD_MANAGEMENT');
      const holder = await findCardCustomer(q, partnerId, holderOf(card));
      if (!holder || holder.lifecycle !== 'ACTIVE') throw new ApiError('CUSTOMER_INVALID', 'The cardholder is not a current employee');
      if (holder.kycStatus !== 'APPROVED') throw new ApiError('KYC_NOT_APPROVED');
    },
    async delivery(q, card) {
      const who = card.subjectType === 'CUSTOMER' ? 'the employee' : 'the card\'s custodian';
      const contact = await deliveryContactOf(q, partnerId, holderOf(card));
      if (!contact.shippingAddress) {
        throw paramInvalid('shippingAddress', `${who} has no SHIPPING_ADDRESS: add one with /open-api-corp/customer/v1/update-address`);
      }
      if (!contact.phoneNumber) throw paramInvalid('phoneNumber', `${who} has no phone number: the carrier needs one to deliver the card`);
      return { shippingAddress: contact.shippingAddress, phoneCountryCode: contact.phoneCountryCode, phoneNumber: contact.phoneNumber };
    },
  });
}

// ---------------------------------------------------------------------------------------------
// State changes

function activationHmac(masterKey: Buffer, upgradeId: string, code: string): string {
  return createHmac('sha256', masterKey).update(`card-activation-code:${upgradeId}:${code}`).digest('hex');
}

function refuseMove(u: UpgradeRow, to: UpgradeStatus): ApiError {
  const allowed = UPGRADE_TRANSITIONS[u.status];
  const next = allowed.length > 0 ? `it can become ${allowed.join(' or ')}` : 'that is final';
  return new ApiError('CARD_UPGRADE_STATUS_INVALID', `Upgrade ${u.upgradeRef} is ${u.status} and cannot become ${to}: ${next}`);
}

/**
 * Moves an upgrade to `to` in the caller's transaction (the row is locked by the caller): refunds
 * the fees on REJECTED and CANCELLED, sets the activation code at SHIPPED, switches the card to
 * PHYSICAL at ACTIVATED, records the event.
 */
async function moveUpgrade(
  /** Null only for moves that need no key (the cancellation of a cancelled card's upgrade). */
  deps: Pick<CardDeps, 'config'> | null,
  q: Queryable,
  u: UpgradeRow,
  to: UpgradeStatus,
  fields: { carrier?: string; trackingNumber?: string; rejectReason?: string; activationCode?: string },
  at: Date,
): Promise<{ upgrade: UpgradeRow; activationCode?: string }> {
  if (!UPGRADE_TRANSITIONS[u.status].includes(to)) throw refuseMove(u, to);
  let activationCode: string | undefined;
  let refundedAt: Date | null = null;
  if (to === 'REJECTED' || to === 'CANCELLED') {
    if (u.fees.length > 0) {
      const card = await findUpgradeCard(q, u.partnerId, u.cardId, null, false);
      invariant(card, `card ${u.cardId} of upgrade ${u.upgradeId} exists`);
      await feeBookOf(card).refund(q, card, u, u.fees, at);
    }
    refundedAt = at;
  }
  let activationCodeHmac: string | null = null;
  if (to === 'SHIPPED') {
    invariant(deps !== null, 'shipping sets the activation code under the master key');
    activationCode = fields.activationCode ?? String(randomInt(0, 1_000_000)).padStart(6, '0');
    activationCodeHmac = activationHmac(deps.config.masterKey, u.upgradeId, activationCode);
  }
  if (to === 'ACTIVATED') await setCardPhysical(q, u.cardId, u.cardProfileId, at);
  const upgrade = await setUpgradeStatus(q, u.upgradeId, {
    status: to, carrier: fields.carrier, trackingNumber: fields.trackingNumber, rejectReason: fields.rejectReason, activationCodeHmac, refundedAt,
  }, at);
  // D52: in sandbox the SHIPPED event carries the code printed on the carrier; production events never do.
  await recordUpgradeEvent(q, upgrade, at, activationCode !== undefined && deps?.config.env === 'sandbox' ? { activationCode } : {});
  return { upgrade, activationCode: fields.activationCode === undefined ? activationCode : undefined };
}

/**
 * A card cancelled before its plastic ships (cancel, or the termination of its holder) takes its
 * open upgrade with it: CANCELLED with the fees refunded, in the caller's transaction. A plastic
 * already SHIPPED or DELIVERED stays as it is (it can no longer be activated: the card is CANCELLED).
 */
export async function cancelUpgradeOfCancelledCard(q: Queryable, cardId: string, at: Date): Promise<void> {
  const u = await findOpenUpgrade(q, cardId, true);
  if (u && UPGRADE_TRANSITIONS[u.status].includes('CANCELLED')) await moveUpgrade(null, q, u, 'CANCELLED', {}, at);
}

export interface BureauUpdate {
  partnerId: string;
  upgradeRef: string;
  status: 'PRODUCING' | 'SHIPPED' | 'DELIVERED' | 'REJECTED';
  carrier?: string;
  trackingNumber?: string;
  rejectReason?: string;
  /** Operators only: the code the bureau printed (SHIPPED). */
  activationCode?: string;
}

/**
 * The card bureau's progress (operator route; sandbox simulate/card-shipment). SHIPPED needs
 * carrier and trackingNumber, REJECTED a rejectReason; those fields with another status are refused.
 * The answer of the update that shipped the card carries the activation code the service drew.
 */
export async function reportBureauStatus(deps: CardDeps, input: BureauUpdate) {
  const shipped = input.status === 'SHIPPED';
  for (const field of ['carrier', 'trackingNumber', 'activationCode'] as const) {
    if (!shipped && input[field] !== undefined) throw paramInvalid(field, 'is given with status SHIPPED only');
  }
  if (shipped && input.carrier === undefined) throw paramInvalid('carrier', 'is required with status SHIPPED');
  if (shipped && input.trackingNumber === undefined) throw paramInvalid('trackingNumber', 'is required with status SHIPPED');
  if (input.status === 'REJECTED' && input.rejectReason === undefined) throw paramInvalid('rejectReason', 'is required with status REJECTED');
  if (input.status !== 'REJECTED' && input.rejectReason !== undefined) throw paramInvalid('rejectReason', 'is given with status REJECTED only');
  const at = now(deps);
  return deps.db.tx(async (q) => {
    const u = await findUpgradeByRef(q, input.partnerId, input.upgradeRef, null, true);
    if (!u) throw new ApiError('CARD_UPGRADE_NOT_FOUND');
    const { upgrade, activationCode } = await moveUpgrade(deps, q, u, input.status, input, at);
    return { ...upgradeView(upgrade), ...(activationCode !== undefined ? { activationCode } : {}) };
  });
}

/** The partner cancels before SHIPPED (D52): the fees are refunded. */
export async function cancelUpgrade(deps: CardDeps, partnerId: string, upgradeRef: string, scope: CardScope): Promise<UpgradeView> {
  const at = now(deps);
  return deps.db.tx(async (q) => {
    const u = await findUpgradeByRef(q, partnerId, upgradeRef, scope, true);
    if (!u) throw new ApiError('CARD_UPGRADE_NOT_FOUND');
    return upgradeView((await moveUpgrade(deps, q, u, 'CANCELLED', {}, at)).upgrade);
  });
}

export async function upgradeDetail(deps: CardDeps, partnerId: string, upgradeRef: string, scope: CardScope): Promise<UpgradeView> {
  const u = await findUpgradeByRef(deps.db, partnerId, upgradeRef, scope, false);
  if (!u) throw new ApiError('CARD_UPGRADE_NOT_FOUND');
  return upgradeView(u);
}

/**
 * Activation (D52) of the card's SHIPPED or DELIVERED upgrade with the code on the carrier. A wrong
 * code counts in its own committed transaction (the request still fails); the fifth locks it.
 */
export async function activatePhysical(deps: CardDeps, partnerId: string, input: { cardId: string; activationCode: string }, scope: CardScope): Promise<UpgradeView> {
  const at = now(deps);
  const outcome = await deps.db.tx(async (q) => {
    const card = await findUpgradeCard(q, partnerId, input.cardId, scope, true);
    if (!card || card.status === 'CANCELLED') throw new ApiError('CARD_INVALID');
    const u = await findOpenUpgrade(q, card.cardId, true);
    if (!u) throw new ApiError('CARD_UPGRADE_STATUS_INVALID', `Card ${card.cardId} has no physical card on its way to activate`);
    if (u.status !== 'SHIPPED' && u.status !== 'DELIVERED') {
      throw new ApiError('CARD_UPGRADE_STATUS_INVALID', `Upgrade ${u.upgradeRef} is ${u.status}: the card can be activated once it is SHIPPED`);
    }
    if (u.activationLocked) return { kind: 'LOCKED' as const };
    invariant(u.activationCodeHmac !== null, `shipped upgrade ${u.upgradeId} has an activation code`);
    if (!constantTimeEqual(activationHmac(deps.config.masterKey, u.upgradeId, input.activationCode), u.activationCodeHmac)) {
      const counted = await countActivationFailure(q, u.upgradeId, ACTIVATION_MAX_FAILURES, at);
      return { kind: 'WRONG' as const, left: ACTIVATION_MAX_FAILURES - counted.activationFailures };
    }
    return { kind: 'DONE' as const, view: upgradeView((await moveUpgrade(deps, q, u, 'ACTIVATED', {}, at)).upgrade) };
  });
  if (outcome.kind === 'LOCKED') throw new ApiError('CARD_ACTIVATION_LOCKED');
  if (outcome.kind === 'WRONG') {
    throw new ApiError('CARD_ACTIVATION_CODE_INVALID', outcome.left > 0
      ? `The activation code is wrong: ${outcome.left} ${outcome.left === 1 ? 'try' : 'tries'} left`
      : 'The activation code is wrong: activation is now locked; contact support to unlock it');
  }
  return outcome.view;
}

/** Operators: clears the wrong-code count of a locked (or partly tried) activation. */
export async function unlockActivation(deps: CardDeps, input: { partnerId: string; upgradeRef: string }): Promise<UpgradeView> {
  const at = now(deps);
  return deps.db.tx(async (q) => {
    const u = await findUpgradeByRef(q, input.partnerId, input.upgradeRef, null, true);
    if (!u) throw new ApiError('CARD_UPGRADE_NOT_FOUND');
    if (u.status !== 'SHIPPED' && u.status !== 'DELIVERED') {
      throw new ApiError('CARD_UPGRADE_STATUS_INVALID', `Upgrade ${u.upgradeRef} is ${u.status}: only a SHIPPED or DELIVERED card awaits activation`);
    }
    return upgradeView(await unlockActivationRow(q, u.upgradeId, at));
  });
}

/** The open upgrade of each card (card query, list and detail show it). */
export async function openUpgradesOf(q: Queryable, cardIds: string[]): Promise<Map<string, UpgradeView>> {
  const rows = await findOpenUpgrades(q, cardIds);
  return new Map(rows.map((u) => [u.cardId, upgradeView(u)]));
}
