import { randomInt } from 'node:crypto';
import type { Static } from 'typebox';
import { CARDHOLDER_NAME_MAX, type ApplyCardBody, type TransferBody } from '../../../sdk/contract/cards.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { ApiError, invariant, paramInvalid } from '../../platform/errors.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import { encryptSecureCard } from '../../platform/crypto/secure-card.ts';
import { CORPORATE_SCALE, corporateWire, parseAmount, toDb, type Amount } from '../../platform/money.ts';
import { pageOf, type Paging } from '../../platform/http/schema.ts';
import type { AuthenticatedPartner } from '../../platform/caller.ts';
import { recordEvent } from '../events/index.ts';
import { getOrCreateAccount, listAccountsOfOrganization, post, type Balance, type LedgerAccount } from '../ledger/index.ts';
import type { CardLookup } from '../velocity/index.ts';
import { revealCardSecret, type CardSecret } from './card-data.ts';
import {
  assertCapabilityOf, checkRulesForCard, findCardCustomer, findOrganization,
  type CardCustomer, type Organization,
} from './deps.ts';
import { ensureCardsReady, type CardDeps } from './profiles.ts';
import { cancelUpgradeOfCancelledCard, openUpgradesOf } from './upgrades.ts';
import {
  findApplicationById, findApplicationByRef, findCard, findCardById as findCardRowById, findCardProfile, findCardSecret, findDepositAccount, lockCardStateShared,
  findTransferByExternalId, insertCardApplication, insertDepositAccount, insertTransfer, listCards, listDedicatedCardsOfOrganization,
  listDepositAccounts, lockOpenCardsOfSubject, setCardStatus, type Card, type CardApplication, type CardProfile, type CardStatus,
  type CardSubjectType,
} from './store.ts';

/** Currencies of corporate cards, pools and receiving accounts (2.8, 4.4). */
export const CARD_CURRENCIES = ['USD', 'HKD'] as const;
/** Embossing limit of a cardholder name (ISO 7813 track 1 allows 26 characters); a wire bound, the contract holds it. */
export { CARDHOLDER_NAME_MAX };
const TRANSFER_AMOUNT_RULES = { maxScale: CORPORATE_SCALE, sign: 'positive' } as const;

// ---------------------------------------------------------------------------------------------
// Views

/** The application record of D24 (plus what was applied for). */
export function applyView(a: CardApplication) {
  return {
    cardApplyId: a.cardApplyId,
    cardApplyRef: a.cardApplyRef,
    organizationId: a.organizationId,
    status: a.status,
    cardId: a.cardId,
    rejectReason: a.rejectReason,
    createTime: a.createdAt.toISOString(),
    modifyTime: a.updatedAt.toISOString(),
    cardProfileId: a.cardProfileId,
    subjectType: a.subjectType,
    subjectId: a.subjectId,
    custodianCustomerId: a.custodianCustomerId,
    ruleIds: a.ruleIds,
  };
}

/** The card of 2.5, with the profile facts and times partners need beside it. */
export function cardView(c: Card) {
  return {
    cardId: c.cardId,
    panFirst6: c.panFirst6,
    panLast4: c.panLast4,
    organizationId: c.organizationId,
    subjectType: c.subjectType,
    subjectId: c.subjectId,
    cardProfileId: c.cardProfileId,
    cardNetwork: c.cardNetwork,
    currency: c.currency,
    status: c.status,
    cardForm: c.cardForm,
    balanceMode: c.balanceMode,
    settlementCurrencies: c.settlementCurrencies,
    custodianCustomerId: c.custodianCustomerId,
    cardholderName: c.cardholderName,
    cardApplyId: c.cardApplyId,
    createTime: c.createdAt.toISOString(),
    modifyTime: c.updatedAt.toISOString(),
  };
}

/** Pool and card balances as fund/v1/balance shows them: two decimals (D4, docs/decisions.md 21). */
function balanceView(b: Balance) {
  return { available: corporateWire(b.available), pending: corporateWire(b.pending), total: corporateWire(b.total) };
}

// ---------------------------------------------------------------------------------------------
// Apply (D23, D44)

/** The apply route's body (sdk/contract/cards.ts). */
export type ApplyInput = Static<typeof ApplyCardBody>;

export interface CheckedApplication {
  organization: Organization;
  profile: CardProfile;
  custodian: CardCustomer;
  /** The card currency: the first settlement currency of the profile the company funds. */
  currency: string;
}

/**
 * The checks of D44 from the organization on, in their order. Used synchronously by apply and
 * again by the job, which rejects the application with the code of the first check that no longer
 * holds. Throws ApiError.
 */
export async function checkApplication(
  q: Queryable,
  partnerId: string,
  a: { organizationId: string; cardProfileId: string; subjectType: CardSubjectType; subjectId: string; custodianCustomerId: string; ruleIds: string[] },
  options: { lockRules?: boolean } = {},
): Promise<CheckedApplication> {
  const organization = await findOrganization(q, partnerId, a.organizationId);
  if (!organization || organization.lifecycle !== 'ACTIVE') throw new ApiError('ORGANIZATION_INVALID');

  const profile = await findCardProfile(q, a.cardProfileId);
  if (!profile || profile.status !== 'ACTIVE' || (profile.partnerId !== null && profile.partnerId !== partnerId)) {
    throw new ApiError('CARD_PROFILE_INVALID');
  }
  if (profile.balanceMode === 'ASSET') {
    throw new ApiError('CARD_PROFILE_INVALID', 'A consumer card profile: consumer cards are applied for with /card/v2/apply');
  }
  if (profile.cardForm !== 'VIRTUAL') {
    throw new ApiError('CARD_PROFILE_INVALID', 'Only virtual profiles can be applied for; physical cards are an upgrade');
  }
  const currency = profile.settlementCurrencies.find((c) => (organization.fundingCurrencies as string[]).includes(c));
  if (!currency) throw new ApiError('CARD_PROFILE_INVALID', 'The profile settles in no currency the company has a funding pool for');

  // Subject and custodian: a current (lifecycle ACTIVE) employee of this company (D23, D45).
  const custodian = await findCardCustomer(q, partnerId, a.custodianCustomerId);
  if (!custodian || custodian.organizationId !== organization.organizationId || custodian.lifecycle !== 'ACTIVE') {
    throw new ApiError('CUSTOMER_INVALID', a.subjectType === 'CUSTOMER'
      ? 'The employee does not exist, is not in this company or is not active'
      : 'The custodian is not a current employee of this company');
  }
  if (custodian.kycStatus !== 'APPROVED') throw new ApiError('KYC_NOT_APPROVED');

  // D20, D45: card management on the company, and on the employee for an employee card.
  await assertCapabilityOf(q, { subjectType: 'ORGANIZATION', subjectId: organization.organizationId }, 'CARD_MANAGEMENT');
  if (a.subjectType === 'CUSTOMER') await assertCapabilityOf(q, { subjectType: 'CUSTOMER', subjectId: a.subjectId }, 'CARD_MANAGEMENT');

  // Rules (2.10, D44): duplicates DAPI_PARAM_INVALID (never deduplicated), unknown or foreign
  // VELOCITY_RULE_NOT_FOUND, INACTIVE VELOCITY_RULE_STATUS_INVALID, no shared settlement currency
  // VELOCITY_RULE_CURRENCY_MISMATCH. The job holds the rules FOR SHARE until the card is bound.
  await checkRulesForCard(q, {
    partnerId, organizationId: organization.organizationId, ruleIds: a.ruleIds, settlementCurrencies: profile.settlementCurrencies,
    lock: options.lockRules,
  });
  return { organization, profile, custodian, currency };
}

/** An employee card without a cardholderName is embossed with the employee's name. */
function defaultCardholderName(c: CardCustomer): string | null {
  const name = `${c.firstName} ${c.lastName}`.toUpperCase().replace(/[^A-Z .'-]/g, '').replace(/\s+/g, ' ').trim();
  return name ? name.slice(0, CARDHOLDER_NAME_MAX).trim() : null;
}

/** D23, D44: synchronous checks, then a PENDING application the job turns into a card or a rejection. */
export async function applyForCard(deps: CardDeps, partnerId: string, input: ApplyInput) {
  if (input.subjectType === 'ORGANIZATION') {
    if (input.subjectId !== input.organizationId) throw paramInvalid('subjectId', 'must equal organizationId for a company card');
    if (input.custodianCustomerId === undefined) throw paramInvalid('custodianCustomerId', 'is required for a company card');
  } else if (input.custodianCustomerId !== undefined && input.custodianCustomerId !== input.subjectId) {
    throw paramInvalid('custodianCustomerId', 'must be absent or equal subjectId for an employee card');
  }
  const custodianCustomerId = input.subjectType === 'CUSTOMER' ? input.subjectId : input.custodianCustomerId!;
  const ruleIds = input.ruleIds ?? [];
  await ensureCardsReady(deps);
  const now = new Date(deps.clock.now());
  return deps.db.tx(async (q) => {
    if (await findApplicationByRef(q, partnerId, input.cardApplyRef)) throw new ApiError('CARD_APPLY_REF_DUPLICATE');
    const checked = await checkApplication(q, partnerId, { ...input, custodianCustomerId, ruleIds });
    const application = await insertCardApplication(q, {
      cardApplyId: newId('ca'),
      partnerId,
      cardApplyRef: input.cardApplyRef,
      organizationId: checked.organization.organizationId,
      cardProfileId: checked.profile.cardProfileId,
      subjectType: input.subjectType,
      subjectId: input.subjectId,
      custodianCustomerId,
      cardholderName: input.cardholderName ?? (input.subjectType === 'CUSTOMER' ? defaultCardholderName(checked.custodian) : null),
      ruleIds,
    }, now);
    if (!application) throw new ApiError('CARD_APPLY_REF_DUPLICATE');
    return applyView(application);
  });
}

export async function queryApply(deps: CardDeps, partnerId: string, cardApplyId: string) {
  const application = await findApplicationById(deps.db, partnerId, cardApplyId);
  if (!application) throw new ApiError('APPLY_NOT_FOUND');
  return applyView(application);
}

/** 4.2: the card order of a cardOrderRef, which is the cardApplyRef (D23). */
export async function cardOrderDetail(deps: CardDeps, partnerId: string, cardOrderRef: string) {
  const application = await findApplicationByRef(deps.db, partnerId, cardOrderRef);
  if (!application) throw new ApiError('APPLY_NOT_FOUND');
  return applyView(application);
}

// ---------------------------------------------------------------------------------------------
// Reads (2.5, D25, D43: every state is readable)

/** A card by id alone, any partner, any state: for internal callers that resolved the partner already (authorization). */
export async function findCardById(q: Queryable, cardId: string): Promise<Card | null> {
  return findCardRowById(q, cardId);
}

/**
 * D29: the positive available of a dedicated card's account goes back to its company pool as one
 * CARD_CANCEL_SWEEP posting: at the card's cancellation, and after a settlement released money to the
 * card once cancelled (no transfer can reach a cancelled card). A debt (negative available, D33)
 * stays on the card for its next credits.
 */
export async function sweepToPool(
  q: Queryable, card: { partnerId: string; organizationId: string; cardId: string },
  account: Pick<LedgerAccount, 'accountId' | 'currency' | 'available'>, now: Date, description: string,
): Promise<void> {
  if (!account.available.gt(0)) return;
  const pool = await getOrCreateAccount(q, {
    partnerId: card.partnerId, ownerType: 'ORGANIZATION_POOL', ownerId: card.organizationId, currency: account.currency,
    organizationId: card.organizationId,
  }, now);
  await post(q, {
    partnerId: card.partnerId,
    kind: 'CARD_CANCEL_SWEEP',
    entries: [
      { accountId: account.accountId, amount: account.available.negated(), bucket: 'AVAILABLE' },
      { accountId: pool.accountId, amount: account.available, bucket: 'AVAILABLE' },
    ],
    reference: card.cardId,
    description,
    createTime: now,
  });
}

/**
 * A settlement about to move money of `cardId` (D29, docs/cards.md "cancel"): true when it is a
 * CANCELLED dedicated card, whose balance belongs back in the company pool. Share-locks the card row
 * (a cancellation locks it first, so the two serialize: the sweep at cancellation sees what the
 * settlement released, or the settlement sees the card cancelled).
 */
export async function isCancelledDedicatedCard(q: Queryable, cardId: string): Promise<boolean> {
  const card = await lockCardStateShared(q, cardId);
  return card !== null && card.balanceMode === 'DEDICATED' && card.status === 'CANCELLED';
}

/** What velocity needs of a card (its port, wired in src/app.ts). */
export const cardLookup: CardLookup = {
  async cardFacts(q, partnerId, cardId) {
    const card = await findCard(q, partnerId, cardId);
    return card
      ? {
        cardId: card.cardId,
        organizationId: card.organizationId,
        subjectType: card.subjectType,
        subjectId: card.subjectId,
        status: card.status,
        settlementCurrencies: [...card.settlementCurrencies],
      }
      : null;
  },
};

export async function queryCard(deps: CardDeps, partnerId: string, cardId: string) {
  const card = await findCard(deps.db, partnerId, cardId);
  if (!card) throw new ApiError('CARD_INVALID');
  const upgrades = await openUpgradesOf(deps.db, [card.cardId]);
  return { ...cardView(card), openUpgrade: upgrades.get(card.cardId) ?? null };
}

export async function listCardsOf(
  deps: CardDeps,
  partnerId: string,
  filter: { organizationId: string; subjectType?: CardSubjectType; subjectId?: string; status?: CardStatus },
  paging: Paging,
) {
  const organization = await findOrganization(deps.db, partnerId, filter.organizationId);
  if (!organization) throw new ApiError('ORGANIZATION_INVALID');
  const { total, rows } = await listCards(deps.db, { partnerId, ...filter }, paging.pageSize, (paging.page - 1) * paging.pageSize);
  const upgrades = await openUpgradesOf(deps.db, rows.map((c) => c.cardId));
  return pageOf(paging, total, rows.map((c) => ({ ...cardView(c), openUpgrade: upgrades.get(c.cardId) ?? null })));
}

// ---------------------------------------------------------------------------------------------
// Block, unblock, cancel (D25)

async function recordStatusChange(q: Queryable, card: Card, previousStatus: CardStatus, now: Date): Promise<void> {
  await recordEvent(q, {
    partnerId: card.partnerId,
    eventType: 'CARD_STATUS_CHANGED',
    businessId: card.cardId,
    data: { ...cardView(card), previousStatus },
    createTime: now,
  });
}

/** Blocks an ACTIVE card (new authorizations decline); a BLOCKED card stays blocked (idempotent). */
export async function blockCard(deps: CardDeps, partnerId: string, cardId: string) {
  const now = new Date(deps.clock.now());
  return deps.db.tx(async (q) => {
    const card = await findCard(q, partnerId, cardId, true);
    if (!card || card.status === 'CANCELLED') throw new ApiError('CARD_INVALID');
    if (card.status === 'BLOCKED') return cardView(card);
    const updated = await setCardStatus(q, card.cardId, 'BLOCKED', now);
    await recordStatusChange(q, updated, card.status, now);
    return cardView(updated);
  });
}

/** Unblocks a BLOCKED card; card management must not be frozen (D20: CARD_FROZEN, ACCOUNT_FROZEN). */
export async function unblockCard(deps: CardDeps, partnerId: string, cardId: string) {
  const now = new Date(deps.clock.now());
  return deps.db.tx(async (q) => {
    const card = await findCard(q, partnerId, cardId, true);
    if (!card || card.status === 'CANCELLED') throw new ApiError('CARD_INVALID');
    await assertCapabilityOf(q, { subjectType: 'ORGANIZATION', subjectId: card.organizationId }, 'CARD_MANAGEMENT');
    if (card.subjectType === 'CUSTOMER') await assertCapabilityOf(q, { subjectType: 'CUSTOMER', subjectId: card.subjectId }, 'CARD_MANAGEMENT');
    if (card.status === 'ACTIVE') return cardView(card);
    const updated = await setCardStatus(q, card.cardId, 'ACTIVE', now);
    await recordStatusChange(q, updated, card.status, now);
    return cardView(updated);
  });
}

/**
 * Cancels a card for good in the caller's transaction. An open physical upgrade not yet shipped is
 * cancelled with its fees refunded; then a dedicated card's available balance goes back to the
 * company pool in each currency (holds stay until they clear or expire).
 */
export async function cancelCardInTx(q: Queryable, card: Card, now: Date): Promise<Card> {
  invariant(card.status !== 'CANCELLED', 'card to cancel is not cancelled yet');
  // Issue 30: an upgrade not yet shipped ends with the card (its fees come back before the sweep below).
  await cancelUpgradeOfCancelledCard(q, card.cardId, now);
  if (card.balanceMode === 'DEDICATED') {
    const accounts = (await listAccountsOfOrganization(q, card.organizationId, 'CARD')).filter((a) => a.ownerId === card.cardId);
    for (const account of accounts) await sweepToPool(q, card, account, now, 'Dedicated balance returned to the pool on card cancellation');
  }
  const updated = await setCardStatus(q, card.cardId, 'CANCELLED', now);
  await recordStatusChange(q, updated, card.status, now);
  return updated;
}

/** Cancels a card (terminal); cancelling a CANCELLED card answers it unchanged (idempotent). */
export async function cancelCard(deps: CardDeps, partnerId: string, cardId: string) {
  const now = new Date(deps.clock.now());
  return deps.db.tx(async (q) => {
    const card = await findCard(q, partnerId, cardId, true);
    if (!card) throw new ApiError('CARD_INVALID');
    if (card.status === 'CANCELLED') return cardView(card);
    return cardView(await cancelCardInTx(q, card, now));
  });
}

/** D16: terminating an employee cancels the employee's cards (inside the terminate transaction). */
export async function cancelCardsOfCustomer(q: Queryable, partnerId: string, customerId: string, now: Date): Promise<string[]> {
  const cards = await lockOpenCardsOfSubject(q, partnerId, 'CUSTOMER', customerId);
  for (const card of cards) await cancelCardInTx(q, card, now);
  return cards.map((c) => c.cardId);
}

/** Termination hook (wired in src/app.ts): an employee's cards are cancelled in the terminate transaction. */
export async function cancelCardsOnCustomerTermination(q: Queryable, e: { partnerId: string; customerId: string; at: Date }): Promise<void> {
  await cancelCardsOfCustomer(q, e.partnerId, e.customerId, e.at);
}

/** Termination hook (wired in src/app.ts): a closed company's company cards are cancelled. */
export async function cancelCardsOnOrganizationTermination(q: Queryable, e: { partnerId: string; organizationId: string; at: Date }): Promise<void> {
  await cancelCardsOfOrganization(q, e.partnerId, e.organizationId, e.at);
}

/** Closing a company cancels its company cards (its employees' cards go with their termination). */
export async function cancelCardsOfOrganization(q: Queryable, partnerId: string, organizationId: string, now: Date): Promise<string[]> {
  const cards = await lockOpenCardsOfSubject(q, partnerId, 'ORGANIZATION', organizationId);
  for (const card of cards) await cancelCardInTx(q, card, now);
  return cards.map((c) => c.cardId);
}

// ---------------------------------------------------------------------------------------------
// Secure card data (2.6, 4.4, D27)

/**
 * PCI allowlist first (the check does not depend on the card), then the card: the partner's and
 * ACTIVE. The plaintext lives only in this call; the answer is encrypted under the partner's key.
 */
export async function retrieveSecureCard(deps: CardDeps, partner: AuthenticatedPartner, cardId: string) {
  if (!partner.pciCertified) throw new ApiError('PCI_NOT_CERTIFIED');
  const card = await findCard(deps.db, partner.partnerId, cardId);
  if (!card || card.status !== 'ACTIVE') throw new ApiError('CARD_INVALID');
  const secret = await revealCardSecretOf(deps.db, deps.config.masterKey, partner.partnerId, cardId);
  invariant(secret, 'an existing card has card data');
  return encryptSecureCard(partner.secretKey, { cardId: card.cardId, ...secret }, partner.secureCardIvMode);
}

/**
 * The plaintext PAN, expiry and CVV2 of the partner's card, or null for an unknown card (D26). Only
 * for a caller that encrypts the answer at once (secure card) or a process-local check (the tests'
 * leak scan); never logged, stored or returned as is.
 */
export async function revealCardSecretOf(q: Queryable, masterKey: Buffer, partnerId: string, cardId: string, consumer = false): Promise<CardSecret | null> {
  const row = await findCardSecret(q, partnerId, cardId, consumer);
  return row ? revealCardSecret(q, masterKey, row) : null;
}

// ---------------------------------------------------------------------------------------------
// Receiving accounts (4.4 open-va, D28, D42)

/** Receiving accounts are held at this (sandbox) bank; production names come from the banking partner. */
export const DEPOSIT_BANK = { bankName: 'Sandbox Settlement Bank', bankCode: 'SBXBHKHH' } as const;
const ACCOUNT_NUMBER_DIGITS = 12;
const MAX_NUMBER_DRAWS = 10;

function drawAccountNumber(): string {
  let digits = '8';
  for (let i = 1; i < ACCOUNT_NUMBER_DIGITS; i++) digits += String(randomInt(10));
  return digits;
}

/** Opens the account of a subject in a currency unless it exists (idempotent). */
async function ensureDepositAccount(
  q: Queryable,
  a: { partnerId: string; organizationId: string; subjectType: 'CARD' | 'ORGANIZATION'; subjectId: string; currency: string; accountName: string },
  now: Date,
): Promise<void> {
  for (let draw = 0; draw < MAX_NUMBER_DRAWS; draw++) {
    const outcome = await insertDepositAccount(q, { accountId: newId('va'), ...a, accountNumber: drawAccountNumber(), ...DEPOSIT_BANK }, now);
    if (outcome !== 'number-taken') return;
  }
  invariant(false, 'a free account number within the draws');
}

/** DAPI_PARAM_INVALID for empty, malformed or duplicated; UNSUPPORTED_CURRENCY for a well-formed other code (D42). */
export function checkCurrencyList(field: string, values: string[]): string[] {
  if (values.length === 0) throw paramInvalid(field, 'must have at least one element');
  if (new Set(values).size !== values.length) throw paramInvalid(field, 'must not contain duplicates');
  for (const value of values) {
    if (!/^[A-Z]{3}$/.test(value)) throw paramInvalid(field, `"${value}" is not an ISO currency code`);
  }
  const unsupported = values.find((v) => !(CARD_CURRENCIES as readonly string[]).includes(v));
  if (unsupported) throw new ApiError('UNSUPPORTED_CURRENCY', `Unsupported currency ${unsupported}: only USD and HKD`);
  return values;
}

/**
 * 4.4 open-va: one receiving account per currency for a DEDICATED card; all or nothing
 * (CURRENCY_NOT_ALLOWED names the first currency the company does not fund); re-opening is idempotent.
 */
export async function openVirtualAccounts(deps: CardDeps, partnerId: string, input: { cardId: string; fundingCurrencies: string[] }) {
  const currencies = checkCurrencyList('fundingCurrencies', input.fundingCurrencies);
  const now = new Date(deps.clock.now());
  await deps.db.tx(async (q) => {
    const card = await findCard(q, partnerId, input.cardId, true);
    if (!card || card.status !== 'ACTIVE') throw new ApiError('CARD_INVALID');
    if (card.balanceMode !== 'DEDICATED') throw new ApiError('CARD_NOT_DEDICATED');
    const organization = await findOrganization(q, partnerId, card.organizationId);
    if (!organization || organization.lifecycle !== 'ACTIVE') {
      throw new ApiError('SUBJECT_INVALID', 'The ledger holder (the card\'s company) is not active');
    }
    if (card.subjectType === 'CUSTOMER') {
      const holder = await findCardCustomer(q, partnerId, card.subjectId);
      if (!holder || holder.lifecycle !== 'ACTIVE') throw new ApiError('SUBJECT_INVALID', 'The ledger holder (the card\'s employee) is not active');
    }
    if (!card.cardholderName) throw new ApiError('SUBJECT_INVALID', 'The card has no cardholder name to name the account with');
    const notAllowed = currencies.find((c) => !(organization.fundingCurrencies as string[]).includes(c));
    if (notAllowed) throw new ApiError('CURRENCY_NOT_ALLOWED', `Currency ${notAllowed} is not among the company's funding currencies`);
    for (const currency of currencies) {
      await ensureDepositAccount(q, {
        partnerId, organizationId: card.organizationId, subjectType: 'CARD', subjectId: card.cardId, currency,
        accountName: card.cardholderName,
      }, now);
      // The dedicated balance exists (at zero) from the moment it can receive money.
      await getOrCreateAccount(q, {
        partnerId, ownerType: 'CARD', ownerId: card.cardId, currency, organizationId: card.organizationId,
      }, now);
    }
  });
  return null;
}

/**
 * D28: the receiving accounts of a card (opened with open-va) or of a company (one per funding
 * pool, opened on first read). A subject that is missing or another partner's is SUBJECT_INVALID.
 */
export async function depositAccountsOf(deps: CardDeps, partnerId: string, input: { subjectType: 'CARD' | 'ORGANIZATION'; subjectId: string }) {
  const now = new Date(deps.clock.now());
  return deps.db.tx(async (q) => {
    if (input.subjectType === 'CARD') {
      const card = await findCard(q, partnerId, input.subjectId);
      if (!card) throw new ApiError('SUBJECT_INVALID', 'Card does not exist');
    } else {
      const organization = await findOrganization(q, partnerId, input.subjectId);
      if (!organization) throw new ApiError('SUBJECT_INVALID', 'Organization does not exist');
      if (organization.lifecycle === 'ACTIVE') {
        for (const currency of organization.fundingCurrencies) {
          await ensureDepositAccount(q, {
            partnerId, organizationId: organization.organizationId, subjectType: 'ORGANIZATION',
            subjectId: organization.organizationId, currency, accountName: organization.organizationName,
          }, now);
        }
      }
    }
    const accounts = await listDepositAccounts(q, partnerId, input.subjectType, input.subjectId);
    return accounts.map((a) => ({
      currency: a.currency,
      accountNumber: a.accountNumber,
      accountName: a.accountName,
      bankName: a.bankName,
      bankCode: a.bankCode,
      status: a.status,
      subjectType: a.subjectType,
      subjectId: a.subjectId,
      createTime: a.createdAt.toISOString(),
    }));
  });
}

/**
 * D40 CARD branch of simulate/deposit: money arrives on the card's receiving account in `currency`
 * and credits the card's dedicated balance (a DEPOSIT posting from the outside world). Call inside
 * the simulation's transaction.
 */
export async function depositToCard(
  q: Queryable,
  input: { partnerId: string; cardId: string; currency: string; amount: Amount; now: Date; reference?: string },
): Promise<{ cardId: string; organizationId: string; currency: string; balance: Balance; postingId: string }> {
  const card = await findCard(q, input.partnerId, input.cardId);
  if (!card || card.status === 'CANCELLED') throw new ApiError('CARD_INVALID');
  if (card.balanceMode !== 'DEDICATED') throw new ApiError('CARD_NOT_DEDICATED');
  const account = await findDepositAccount(q, 'CARD', card.cardId, input.currency);
  if (!account) throw new ApiError('CURRENCY_NOT_ALLOWED', `The card has no receiving account in ${input.currency}: open it with open-va`);
  await assertCapabilityOf(q, { subjectType: 'ORGANIZATION', subjectId: card.organizationId }, 'DEPOSIT');
  if (card.subjectType === 'CUSTOMER') await assertCapabilityOf(q, { subjectType: 'CUSTOMER', subjectId: card.subjectId }, 'DEPOSIT');
  const cardAccount = await getOrCreateAccount(q, {
    partnerId: card.partnerId, ownerType: 'CARD', ownerId: card.cardId, currency: input.currency, organizationId: card.organizationId,
  }, input.now);
  const external = await getOrCreateAccount(q, {
    partnerId: card.partnerId, ownerType: 'EXTERNAL', ownerId: 'BANK', currency: input.currency,
  }, input.now);
  const posting = await post(q, {
    partnerId: card.partnerId,
    kind: 'DEPOSIT',
    entries: [
      { accountId: cardAccount.accountId, amount: input.amount, bucket: 'AVAILABLE' },
      { accountId: external.accountId, amount: input.amount.negated(), bucket: 'AVAILABLE' },
    ],
    reference: input.reference ?? account.accountNumber,
    description: `Deposit to card receiving account ${account.accountNumber}`,
    createTime: input.now,
  });
  return {
    cardId: card.cardId, organizationId: card.organizationId, currency: input.currency,
    balance: posting.balances.get(cardAccount.accountId)!, postingId: posting.postingId,
  };
}

// ---------------------------------------------------------------------------------------------
// Dedicated balances and pool transfers (D29, D48)

/**
 * What funding needs of cards for fund/v1/balance (D57): its DedicatedCards port, wired in src/app.ts
 * (cards may not import funding, so the shape is matched there).
 */
export const dedicatedCards = {
  async dedicatedCardsOf(q: Queryable, partnerId: string, organizationId: string): Promise<Array<{ cardId: string; currency: string }>> {
    return (await listDedicatedCardsOfOrganization(q, partnerId, organizationId)).map((c) => ({ cardId: c.cardId, currency: c.currency }));
  },
};

/** The transfer route's body (sdk/contract/cards.ts). */
export type TransferInput = Static<typeof TransferBody>;

/**
 * D29: moves money between the company pool and a dedicated card of the same company, as one
 * ledger posting. Checks in order: fields, currency, company, externalTranId, card, balance mode,
 * pool currency, funds.
 */
export async function transferFunds(deps: CardDeps, partnerId: string, input: TransferInput) {
  const amount = parseAmount('amount', input.amount, TRANSFER_AMOUNT_RULES);
  checkCurrencyList('currency', [input.currency]);
  const now = new Date(deps.clock.now());
  return deps.db.tx(async (q) => {
    const organization = await findOrganization(q, partnerId, input.organizationId);
    if (!organization) throw new ApiError('ORGANIZATION_INVALID');
    if (await findTransferByExternalId(q, partnerId, input.externalTranId)) throw new ApiError('EXTERNAL_TRAN_ID_DUPLICATE');
    const card = await findCard(q, partnerId, input.cardId, true);
    if (!card || card.organizationId !== organization.organizationId || card.status === 'CANCELLED') throw new ApiError('CARD_INVALID');
    if (card.balanceMode !== 'DEDICATED') throw new ApiError('CARD_NOT_DEDICATED');
    if (!(organization.fundingCurrencies as string[]).includes(input.currency)) {
      throw new ApiError('CURRENCY_NOT_ALLOWED', `Currency ${input.currency} is not among the company's funding currencies`);
    }
    const pool = await getOrCreateAccount(q, {
      partnerId, ownerType: 'ORGANIZATION_POOL', ownerId: organization.organizationId, currency: input.currency,
      organizationId: organization.organizationId,
    }, now);
    const cardAccount = await getOrCreateAccount(q, {
      partnerId, ownerType: 'CARD', ownerId: card.cardId, currency: input.currency, organizationId: organization.organizationId,
    }, now);
    const [from, to] = input.direction === 'POOL_TO_CARD' ? [pool, cardAccount] : [cardAccount, pool];
    const posting = await post(q, {
      partnerId,
      kind: 'TRANSFER',
      entries: [
        { accountId: from.accountId, amount: amount.negated(), bucket: 'AVAILABLE' },
        { accountId: to.accountId, amount, bucket: 'AVAILABLE' },
      ],
      reference: input.externalTranId,
      description: input.direction === 'POOL_TO_CARD' ? `Pool to card ${card.cardId}` : `Card ${card.cardId} to pool`,
      createTime: now,
    });
    const transfer = await insertTransfer(q, {
      transferId: newId('tf'), partnerId, externalTranId: input.externalTranId, organizationId: organization.organizationId,
      cardId: card.cardId, direction: input.direction, currency: input.currency, amount: toDb(amount), postingId: posting.postingId,
    }, now);
    if (!transfer) throw new ApiError('EXTERNAL_TRAN_ID_DUPLICATE');
    return {
      transferId: transfer.transferId,
      externalTranId: transfer.externalTranId,
      organizationId: transfer.organizationId,
      cardId: transfer.cardId,
      direction: transfer.direction,
      currency: transfer.currency,
      amount: corporateWire(transfer.amount),
      createTime: transfer.createdAt.toISOString(),
      poolBalance: balanceView(posting.balances.get(pool.accountId)!),
      cardBalance: balanceView(posting.balances.get(cardAccount.accountId)!),
    };
  });
}
