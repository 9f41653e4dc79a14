/**
 * Consumer cards (issue 11; 4.2, 2.3, 2.4, 2.9; D35, D36, D43, D47): apply with fees, list,
 * detail, freeze and unfreeze with verification codes, and the cards' transactions. The card row and
 * its data at rest belong to the cards domain; spend goes through the authorization engine (its
 * funds source for these cards is the user's funding asset). See docs/consumer-cards.md.
 *
 * Fees (2.4, from the card profile, in the funding asset 1:1 with the profile's USD amounts):
 *   CARD_PRINTING_FEE   profile issuanceFee, at issuance
 *   CARD_POSTAL_FEE     profile postalFee, at issuance of a PHYSICAL card
 *   CARD_VIP_FROZEN_FEE profile frozenFee, when a frozen card is unfrozen
 * Each is one posting from the user's free to the service's fee income; a fee above free refuses
 * the operation with INSUFFICIENT_BALANCE and nothing changes.
 */
import { createHmac, randomInt } from 'node:crypto';
import type { AppContext } from '../../platform/context.ts';
import { constantTimeEqual, newId } from '../../platform/crypto/secrets.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { ApiError, invariant, paramInvalid } from '../../platform/errors.ts';
import { pageOf, type Paging } from '../../platform/http/schema.ts';
import { atRate, fromDb, toDb, toWire, type Amount } from '../../platform/money.ts';
import { listTransactions, queryTransaction, type TransactionView } from '../authorization/index.ts';
import {
  cardProfileOf, changeConsumerCardStatus, consumerCardView, consumerProfile, ensureCardsReady, findConsumerCard, issueConsumerCard, listConsumerCards, openUpgradesOf, CARD_FEE_OWNER,
  type CardStatus, type ConsumerCard,
} from '../cards/index.ts';
import { recordEvent } from '../events/index.ts';
import { getOrCreateAccount, post } from '../ledger/index.ts';
import { CAPABILITY_BLOCKERS } from '../organizations/index.ts';
import {
  codeTimesSince, countFailedAttempt, findContact, insertCode, lockOpenCode, markCodeUsed, upsertContact,
} from './consumer-cards-store.ts';
import { insertMovement } from './movements-store.ts';
import { activeAsset, ensureUser, findAsset, findUser, findUsersByIds, restrictionsOf, type AssetRow, type ManagedUserRow } from './users.ts';

export type ConsumerCardDeps = Pick<AppContext, 'db' | 'clock' | 'config' | 'mailer'>;

/** D36: a code is 6 digits, valid 5 minutes, for at most 5 attempts, once. */
export const CODE_TTL_MS = 5 * 60 * 1000;
export const CODE_MAX_ATTEMPTS = 5;
/** Not in the spec: codes of one card are sent at least a minute apart and at most 10 a day (each message costs, and floods annoy the user). */
export const CODE_RESEND_INTERVAL_MS = 60 * 1000;
export const CODE_MAX_PER_DAY = 10;
const DAY_MS = 24 * 60 * 60 * 1000;
/** The consumer family bills in USD; a funding asset is spent 1:1 when USD-pegged, else at its operator rate (D35). */
const DEFAULT_FUNDING_ASSET = 'USD';

type FeeType = 'CARD_PRINTING_FEE' | 'CARD_POSTAL_FEE' | 'CARD_VIP_FROZEN_FEE';

const now = (deps: Pick<AppContext, 'clock'>) => new Date(deps.clock.now());

function frozenRefusal(code: string): ApiError {
  return new ApiError('CAPABILITY_FROZEN', `The user's capability is frozen (${code})`, { data: { errorCode: code, errorMsg: 'USER' } });
}

export async function assertUserCapability(q: Queryable, user: ManagedUserRow, blockers: readonly string[]): Promise<void> {
  const codes = new Set(await restrictionsOf(q, user.userId));
  const frozen = blockers.find((c) => codes.has(c));
  if (frozen) throw frozenRefusal(frozen);
}

/** A USD fee in the funding asset: 1:1 when pegged, else at the asset's rate rounded up to its scale (D35). */
function feeInAsset(usd: Amount, asset: AssetRow): Amount {
  if (asset.usdPegged) return usd;
  invariant(asset.usdRate !== null, `funding asset ${asset.asset} has a rate`);
  return atRate(usd, asset.usdRate, asset.scale, 'UP');
}

/** One fee (profile fees are USD): free -> the service's fee income, recorded as the 2.4 movement of its type. */
export async function chargeFee(q: Queryable, card: ConsumerCard, user: ManagedUserRow, asset: AssetRow, type: FeeType, usd: Amount, at: Date) {
  invariant(usd.gt(0) && asset.asset === card.fundingAsset, `${type} of ${card.cardId} is positive, in its funding asset`);
  const amount = feeInAsset(usd, asset);
  const account = await getOrCreateAccount(q, { partnerId: card.partnerId, ownerType: 'MANAGED_USER', ownerId: user.userId, currency: card.fundingAsset }, at);
  const income = await getOrCreateAccount(q, { partnerId: card.partnerId, ownerType: 'FEE_INCOME', ownerId: CARD_FEE_OWNER, currency: card.fundingAsset }, at);
  const movementId = newId('am');
  // post() refuses with INSUFFICIENT_BALANCE before writing anything when free < amount.
  const posting = await post(q, {
    partnerId: card.partnerId,
    kind: type,
    entries: [
      { accountId: account.accountId, amount: amount.neg(), bucket: 'AVAILABLE' },
      { accountId: income.accountId, amount, bucket: 'AVAILABLE' },
    ],
    reference: movementId,
    description: `${type} of card ${card.cardId}`,
    createTime: at,
  });
  const freeAfter = posting.balances.get(account.accountId)!.available;
  const body = await insertMovement(q, {
    movementId, partnerId: card.partnerId, userId: user.userId, externalTranId: null, type, direction: 'DEBIT', asset: card.fundingAsset,
    amount: toDb(amount), counterAsset: null, counterAmount: null, rate: null, cardId: card.cardId, remark: null,
    postingId: posting.postingId, freeAfter: toDb(freeAfter), createdAt: at,
  }, user.externalUserId);
  invariant(body !== null, `fee movement ${movementId} is recorded`);
  return { type, asset: card.fundingAsset, amount: toWire(amount), transactionId: movementId };
}

export interface ConsumerApplyInput {
  externalUserId: string;
  cardProfileId: string;
  cardholderName: string;
  fundingAsset?: string;
  mobile?: string;
  email?: string;
}

/**
 * POST /card/v2/apply: synchronous. Checks in order: funding asset (ACTIVE, USD-pegged), profile
 * (a consumer profile offered to the partner), the user (created on first use) and its card
 * capability (CARD_FROZEN, ACCOUNT_FROZEN), then issues the card ACTIVE and charges its fees, all
 * in one transaction: a refusal (INSUFFICIENT_BALANCE for the fees included) leaves nothing behind.
 * Retries: the platform's Idempotency-Key header answers a repeated apply with the first answer.
 */
export async function applyConsumerCard(deps: ConsumerCardDeps, partnerId: string, input: ConsumerApplyInput) {
  await ensureCardsReady(deps);
  const at = now(deps);
  return deps.db.tx(async (q) => {
    const asset = await activeAsset(q, input.fundingAsset ?? DEFAULT_FUNDING_ASSET, 'fundingAsset');
    if (asset.usdRate === null) {
      throw new ApiError('ASSET_INVALID', `fundingAsset: ${asset.asset} has no rate to USD; a card spends USD at the asset's operator rate (D35)`, {
        data: { errorCode: 'ASSET_INVALID', errorMsg: 'fundingAsset' },
      });
    }
    const profile = await consumerProfile(q, partnerId, input.cardProfileId);
    const user = await ensureUser(q, partnerId, input.externalUserId, at);
    await assertUserCapability(q, user, CAPABILITY_BLOCKERS.CARD);
    if (input.mobile !== undefined || input.email !== undefined) {
      await upsertContact(q, { userId: user.userId, mobile: input.mobile ?? null, email: input.email ?? null }, at);
    }
    const card = await issueConsumerCard(deps, q, {
      partnerId, userId: user.userId, profile, cardholderName: input.cardholderName.toUpperCase(), fundingAsset: asset.asset, now: at,
    });
    const fees = [];
    const printing = fromDb(profile.issuanceFee);
    if (printing.gt(0)) fees.push(await chargeFee(q, card, user, asset, 'CARD_PRINTING_FEE', printing, at));
    const postal = fromDb(profile.postalFee);
    if (card.cardForm === 'PHYSICAL' && postal.gt(0)) fees.push(await chargeFee(q, card, user, asset, 'CARD_POSTAL_FEE', postal, at));
    const view = consumerCardView(card, user.externalUserId);
    await recordEvent(q, { partnerId, eventType: 'CARD_CREATED', businessId: card.cardId, data: { ...view, fees }, createTime: at });
    return { ...view, fees };
  });
}

/** The user's card or CARD_INVALID: another user's, another partner's or a corporate card is not found alike. */
async function userCard(q: Queryable, partnerId: string, externalUserId: string, cardId: string, forUpdate = false) {
  const user = await findUser(q, partnerId, externalUserId);
  const card = user ? await findConsumerCard(q, partnerId, user.userId, cardId, forUpdate) : null;
  if (!user || !card) throw new ApiError('CARD_INVALID', `Card ${cardId} does not exist`);
  return { user, card };
}

export async function consumerCardDetail(deps: ConsumerCardDeps, partnerId: string, input: { externalUserId: string; cardId: string }) {
  const { user, card } = await userCard(deps.db, partnerId, input.externalUserId, input.cardId);
  const upgrades = await openUpgradesOf(deps.db, [card.cardId]);
  return { ...consumerCardView(card, user.externalUserId), openUpgrade: upgrades.get(card.cardId) ?? null };
}

/** GET /card/v2/list: every state (D43), newest first; a user the partner never used has no cards. */
export async function listUserCards(deps: ConsumerCardDeps, partnerId: string, input: { externalUserId: string; status?: CardStatus }, paging: Paging) {
  const user = await findUser(deps.db, partnerId, input.externalUserId);
  if (!user) return pageOf(paging, 0, []);
  const { total, rows } = await listConsumerCards(deps.db, { partnerId, userId: user.userId, status: input.status }, paging.pageSize,
    (paging.page - 1) * paging.pageSize);
  const upgrades = await openUpgradesOf(deps.db, rows.map((c) => c.cardId));
  return pageOf(paging, total, rows.map((c) => ({ ...consumerCardView(c, user.externalUserId), openUpgrade: upgrades.get(c.cardId) ?? null })));
}

// ---------------------------------------------------------------------------------------------
// Verification codes (D36)

function codeHmac(deps: ConsumerCardDeps, codeId: string, code: string): string {
  return createHmac('sha256', deps.config.masterKey).update(`card-verification-code:${codeId}:${code}`).digest('hex');
}

function masked(channel: 'SMS' | 'EMAIL', destination: string): string {
  if (channel === 'SMS') return `${destination.slice(0, 3)}${'*'.repeat(Math.max(destination.length - 5, 0))}${destination.slice(-2)}`;
  const [local, domain] = destination.split('@');
  return `${local.slice(0, 1)}***@${domain}`;
}

/**
 * POST /card/v2/send-verification-code: a new 6-digit code for unfreezing the card, sent through
 * the notification transport (email: SMTP or the mail outbox; SMS: the outbox addressed
 * `sms:<number>` for the SMS gateway) and, in sandbox only, as the event VERIFICATION_CODE_SENT.
 * Only an HMAC of the code is stored; a new code supersedes the card's earlier ones. A card's codes
 * are at least CODE_RESEND_INTERVAL_MS apart and at most CODE_MAX_PER_DAY in 24 hours
 * (VERIFICATION_CODE_TOO_FREQUENT with a Retry-After header); the card row is locked, so concurrent
 * sends count each other.
 */
export async function sendVerificationCode(deps: ConsumerCardDeps, partnerId: string, input: { externalUserId: string; cardId: string; channel: 'SMS' | 'EMAIL' }) {
  const at = now(deps);
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const codeId = newId('vc');
  const expiresAt = new Date(at.getTime() + CODE_TTL_MS);
  const { mailId, destination } = await deps.db.tx(async (q) => {
    const { user, card } = await userCard(q, partnerId, input.externalUserId, input.cardId, true);
    if (card.status === 'CANCELLED') throw new ApiError('CARD_INVALID', `Card ${card.cardId} is cancelled`);
    const sent = await codeTimesSince(q, card.cardId, new Date(at.getTime() - DAY_MS));
    const nextAllowed = Math.max(
      sent.length > 0 ? sent[0].getTime() + CODE_RESEND_INTERVAL_MS : 0,
      sent.length >= CODE_MAX_PER_DAY ? sent[CODE_MAX_PER_DAY - 1].getTime() + DAY_MS : 0,
    );
    if (nextAllowed > at.getTime()) {
      const retryAfterSeconds = Math.ceil((nextAllowed - at.getTime()) / 1000);
      throw new ApiError('VERIFICATION_CODE_TOO_FREQUENT', `A code for card ${card.cardId} was sent too recently: retry in ${retryAfterSeconds} s`, { headers: { 'retry-after': String(retryAfterSeconds) } });
    }
    const contact = await findContact(q, user.userId);
    const to = input.channel === 'SMS' ? contact?.mobile : contact?.email;
    if (!to) {
      throw paramInvalid('channel', `the user has no ${input.channel === 'SMS' ? 'mobile number' : 'email address'}: give it at apply or with /card/v2/contact`);
    }
    await insertCode(q, { codeId, partnerId, userId: user.userId, cardId: card.cardId, channel: input.channel, codeHmac: codeHmac(deps, codeId, code), expiresAt, now: at });
    const id = await deps.mailer.enqueue(q, {
      to: input.channel === 'SMS' ? `sms:${to}` : to,
      subject: 'Card verification code',
      body: `Your code to unfreeze the card ending ${card.panLast4} is ${code}. It is valid for 5 minutes.`,
    });
    if (deps.config.env === 'sandbox') {
      await recordEvent(q, {
        partnerId, eventType: 'VERIFICATION_CODE_SENT', businessId: card.cardId,
        data: { externalUserId: user.externalUserId, cardId: card.cardId, channel: input.channel, code, expireTime: expiresAt.toISOString() },
        createTime: at,
      });
    }
    return { mailId: id, destination: to };
  });
  await deps.mailer.deliver(mailId);
  return { channel: input.channel, destination: masked(input.channel, destination), expireTime: expiresAt.toISOString() };
}

/** Checks a given code against the card's open code; a wrong one counts an attempt (committed even though the request fails). */
async function useCode(deps: ConsumerCardDeps, q: Queryable, cardId: string, given: string[], at: Date): Promise<boolean> {
  const open = await lockOpenCode(q, cardId);
  if (!open || open.expiresAt.getTime() <= at.getTime() || open.attempts >= CODE_MAX_ATTEMPTS) return false;
  const expected = open.codeHmac;
  if (!given.some((g) => constantTimeEqual(codeHmac(deps, open.codeId, g), expected))) {
    await countFailedAttempt(q, open.codeId);
    return false;
  }
  await markCodeUsed(q, open.codeId, at);
  return true;
}

/**
 * POST /card/v2/block (D36): block=true freezes without a code; block=false needs smsCode or
 * emailCode (either is accepted) and the user's card capability, and charges the profile's
 * CARD_VIP_FROZEN_FEE. `data` is false on success both ways; a card already in the asked state
 * answers false and changes nothing.
 */
export async function blockUserCard(
  deps: ConsumerCardDeps,
  partnerId: string,
  input: { externalUserId: string; cardId: string; block: boolean; smsCode?: string; emailCode?: string },
): Promise<false> {
  const given = [input.smsCode, input.emailCode].filter((c): c is string => c !== undefined);
  if (!input.block && given.length === 0) throw paramInvalid('smsCode', 'unfreezing needs smsCode or emailCode (D36)');
  const at = now(deps);
  const outcome = await deps.db.tx(async (q) => {
    const { user, card } = await userCard(q, partnerId, input.externalUserId, input.cardId, true);
    if (card.status === 'CANCELLED') throw new ApiError('CARD_INVALID', `Card ${card.cardId} is cancelled`);
    if (input.block) {
      if (card.status === 'ACTIVE') await changeConsumerCardStatus(q, card, 'BLOCKED', user.externalUserId, at);
      return 'DONE' as const;
    }
    if (card.status === 'ACTIVE') return 'DONE' as const;
    await assertUserCapability(q, user, CAPABILITY_BLOCKERS.CARD);
    if (!(await useCode(deps, q, card.cardId, given, at))) return 'CODE_INVALID' as const;
    // The fee of the card's own profile, even if operators retired that profile since.
    const frozenFee = fromDb((await cardProfileOf(q, card)).frozenFee);
    if (frozenFee.gt(0)) {
      const asset = await findAsset(q, card.fundingAsset);
      // An asset that lost its rate cannot price the fee: refused like an inactive asset.
      if (!asset || asset.status !== 'ACTIVE' || asset.usdRate === null) {
        throw new ApiError('ASSET_INVALID', `The card's funding asset ${card.fundingAsset} cannot be charged now`, { data: { errorCode: 'ASSET_INVALID', errorMsg: 'fundingAsset' } });
      }
      await chargeFee(q, card, user, asset, 'CARD_VIP_FROZEN_FEE', frozenFee, at);
    }
    await changeConsumerCardStatus(q, card, 'ACTIVE', user.externalUserId, at);
    return 'DONE' as const;
  });
  if (outcome === 'CODE_INVALID') throw new ApiError('VERIFICATION_CODE_INVALID');
  return false;
}

/** POST /card/v2/contact: where the user's verification codes go (given fields replace, absent ones stay). */
export async function setUserContact(deps: ConsumerCardDeps, partnerId: string, input: { externalUserId: string; mobile?: string; email?: string }) {
  if (input.mobile === undefined && input.email === undefined) throw paramInvalid('mobile', 'give mobile, email or both');
  return deps.db.tx(async (q) => {
    const user = await ensureUser(q, partnerId, input.externalUserId, now(deps));
    const contact = await upsertContact(q, { userId: user.userId, mobile: input.mobile ?? null, email: input.email ?? null }, now(deps));
    return { externalUserId: user.externalUserId, mobile: contact.mobile, email: contact.email };
  });
}

// ---------------------------------------------------------------------------------------------
// Transactions of consumer cards (2.9): the authorization engine's records, with the user's id

async function withExternalUserIds(deps: ConsumerCardDeps, partnerId: string, items: TransactionView[]) {
  const users = await findUsersByIds(deps.db, partnerId, [...new Set(items.map((t) => t.subjectId))]);
  const byId = new Map(users.map((u) => [u.userId, u.externalUserId]));
  return items.map((t) => {
    const externalUserId = byId.get(t.subjectId);
    invariant(externalUserId !== undefined, `consumer transaction ${t.transId} has its user`);
    return { ...t, externalUserId };
  });
}

export interface FiatTransactionsInput {
  externalUserId?: string;
  cardId?: string;
  authType?: string;
  status?: string;
  startTime?: string;
  endTime?: string;
}

/** GET /card/v1/fiat/transactions: consumer card transactions of the partner (of one user when given), newest first. */
export async function fiatTransactions(deps: ConsumerCardDeps, partnerId: string, input: FiatTransactionsInput, paging: Paging) {
  let userId: string | undefined;
  if (input.externalUserId !== undefined) {
    const user = await findUser(deps.db, partnerId, input.externalUserId);
    if (!user) return pageOf(paging, 0, []);
    userId = user.userId;
  }
  const page = await listTransactions(deps, partnerId, {
    userId, cardId: input.cardId, authType: input.authType, status: input.status, startTime: input.startTime, endTime: input.endTime,
  }, paging, 'CONSUMER');
  return { ...page, result: await withExternalUserIds(deps, partnerId, page.result) };
}

/** GET /card/v2/statements/detail: one transaction of the user's cards by transId. */
export async function statementDetail(deps: ConsumerCardDeps, partnerId: string, input: { externalUserId: string; transId: string }) {
  const user = await findUser(deps.db, partnerId, input.externalUserId);
  if (!user) throw new ApiError('TRANSACTION_NOT_FOUND', `Transaction ${input.transId} not found`);
  const t = await queryTransaction(deps, partnerId, input.transId, user.userId);
  return { ...t, externalUserId: user.externalUserId };
}
