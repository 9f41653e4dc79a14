/**
 * The authorization engine (D34): one pipeline for the sandbox simulation (D40) and the card
 * network ingress. Use cases read as the story of a card payment:
 *
 *   authorize()   card -> card status -> capabilities -> velocity -> funds free -> freeze
 *                 -> partner decision; one database call books it (card_authorize, sql/card_authorize.sql);
 *                 the partner decision after the hold is decision.ts (issue 26)
 *   clear()       releases the hold and posts the final amount (smaller, equal or larger: D33)
 *   reverse()     releases (part of) the hold and gives the usage back in the original periods (D32)
 *   refund()      credits free; usage stays (D32)
 *   expireHolds() holds older than HOLD_EXPIRY_MS are released (D34), through the leased job runner
 *
 * Every network message is idempotent on its networkTransactionId: copies serialize on an advisory
 * lock and the later ones are answered from the first one's record.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import { minorUnits } from '../../platform/currencies.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { ApiError, invariant, paramInvalid } from '../../platform/errors.ts';
import { parseJson } from '../../platform/http/json.ts';
import { pageOf, type Paging, type WireAmount } from '../../platform/http/schema.ts';
import { Decimal } from 'decimal.js';
import { atRate, CORPORATE_SCALE, fromDb, parseAmount, toDb, type Amount } from '../../platform/money.ts';
import { findSpendCard, isCancelledDedicatedCard, sweepToPool, type SpendCard } from '../cards/index.ts';
import { mailLowBalanceAlert } from '../funding/index.ts';
import type { AppContext } from '../../platform/context.ts';
import { findAccount, findAccountById, getOrCreateAccount, post, type EntryInput } from '../ledger/index.ts';
import { CAPABILITY_BLOCKERS, isIsoCountry } from '../organizations/index.ts';
import { releaseUsage } from '../velocity/index.ts';
import {
  dueHoldsBacklog, findAuthorization, leaseDueHolds, lockLeasedHold, releaseHoldLease, findTransactionJson, insertSettlement, listTransactions as listTransactionRows,
  lockAuthorization, lockNetworkMessage, resolveTransactionIds, transactionJsonByNetworkId, updateAuthorization,
  type ExpiringHold, type Source, type TransactionRow,
} from './store.ts';
import { runJobOnce, type JobDefinition, type JobLog } from '../../platform/jobs.ts';
import { inSpan, traceHere } from '../../platform/tracing.ts';
import type { TransactionView } from './schemas.ts';
import { approveEverything, awaitDecision, DECISION_GRACE_MS, decideAfterHold, type PartnerDecisionStage } from './decision.ts';
import { authorizeInLane } from './lane.ts';

/** D34: holds not cleared in 30 days expire. */
export const HOLD_EXPIRY_MS = 30 * 24 * 60 * 60 * 1000;
/** D37: a partner's auth_url answers within 2 s unless configured otherwise. */
const DEFAULT_FORWARD_DEADLINE_MS = 2_000;
/** The decline reasons of D47 this engine answers with. */
export const DECLINE_REASONS = [
  'CARD_BLOCKED', 'CARD_CANCELLED', 'CAPABILITY_FROZEN', 'VELOCITY_LIMIT_EXCEEDED', 'MCC_NOT_ALLOWED', 'COUNTRY_NOT_ALLOWED',
  'CURRENCY_NOT_ALLOWED', 'CASH_ADVANCE_NOT_ALLOWED', 'INSUFFICIENT_BALANCE', 'PARTNER_DECLINED', 'PARTNER_TIMEOUT',
] as const;
export type DeclineReason = (typeof DECLINE_REASONS)[number];
/** Settlement accounts mirror the card network: one per partner and currency. */
const NETWORK_SETTLEMENT_OWNER = 'CARD_NETWORK';
const SETTLEMENT_RULES = { maxScale: CORPORATE_SCALE, sign: 'positive' } as const;

/** D35: an asset's rate to USD (units per USD) as the managed-balance model keeps it; null when it has none. */
export interface AssetRate {
  usdPegged: boolean;
  usdRate: string | null;
  scale: number;
}

export interface AuthorizationDeps extends Pick<AppContext, 'db' | 'clock' | 'mailer'> {
  /** The partner decision after the funds stage (D34, D37): the auth_url forwarder; tests inject others. */
  partnerDecision?: PartnerDecisionStage;
  /** AUTH_FORWARD_DEADLINE_MS: the answer deadline of partners without their own (D37, default 2000 ms). */
  config?: Pick<Config, 'authForwardDeadlineMs'>;
  /** The funds seam of consumer cards: the current rate of a funding asset (refunds without the purchase they return). */
  assetRate?: (q: Queryable, asset: string) => Promise<AssetRate | null>;
}

const now = (deps: AuthorizationDeps) => new Date(deps.clock.now());

function view(body: string | null): TransactionView {
  invariant(body !== null, 'a transaction view exists');
  return parseJson(body) as TransactionView;
}

// ---------------------------------------------------------------------------------------------
// Input checks beyond the schema (scale per ISO 4217 currency, country list)

/** An amount in an ISO 4217 currency with at most its minor units. */
function currencyAmount(field: string, value: WireAmount, currency: string, currencyField: string): Amount {
  const scale = minorUnits(currency);
  if (scale === undefined) throw paramInvalid(currencyField, `${currency} is not an ISO 4217 card currency`);
  return parseAmount(field, value, { maxScale: scale, sign: 'positive' });
}

interface Billing {
  billingAmount: Amount | null;
  billingCurrency: string | null;
}

/**
 * The network's conversion of a message whose `amount` (in `currency`) was already checked. In the
 * transaction's own currency there is nothing to convert: the billing amount is the amount
 * (docs/authorizations.md "Currencies"), so a different one is refused. Otherwise a message could
 * hold, measure velocity caps (D31) and credit refunds with a figure unrelated to what the
 * merchant charged in that very currency (USD 50.00 billed USD 0.01 passed a USD 10.00
 * per-transaction cap and held 0.01).
 */
function billingOf(input: { billingAmount?: WireAmount; billingCurrency?: string }, amount: Amount, currency: string): Billing {
  if ((input.billingAmount === undefined) !== (input.billingCurrency === undefined)) {
    throw paramInvalid(input.billingAmount === undefined ? 'billingAmount' : 'billingCurrency', 'billingAmount and billingCurrency come together');
  }
  if (input.billingAmount === undefined) return { billingAmount: null, billingCurrency: null };
  const billingAmount = currencyAmount('billingAmount', input.billingAmount, input.billingCurrency!, 'billingCurrency');
  if (input.billingCurrency === currency && !billingAmount.eq(amount)) {
    throw paramInvalid('billingAmount', `must equal amount when billingCurrency is the transaction currency ${currency}`);
  }
  return { billingAmount, billingCurrency: input.billingCurrency! };
}

// ---------------------------------------------------------------------------------------------
// authorize

export interface AuthorizationInput {
  source: Source;
  /** The calling partner (sandbox): another partner's card is CARD_INVALID. Null for the network. */
  partnerId: string | null;
  /** The network's message id; minted for a sandbox simulation. */
  networkTransactionId?: string;
  cardId: string;
  amount: WireAmount;
  currency: string;
  billingAmount?: WireAmount;
  billingCurrency?: string;
  merchantName: string;
  mcc: string;
  merchantCountry: string;
  channel: 'ECOM' | 'POS' | 'ATM';
  transactionTime?: string;
}

export async function authorize(deps: AuthorizationDeps, input: AuthorizationInput): Promise<TransactionView> {
  const amount = currencyAmount('amount', input.amount, input.currency, 'currency');
  const billing = billingOf(input, amount, input.currency);
  if (!isIsoCountry(input.merchantCountry)) throw paramInvalid('merchantCountry', 'must be an ISO 3166-1 alpha-2 code');
  const at = now(deps);
  // Issue 27: the partner decision, after the checks' await, is a step of this authorization's trace too.
  const here = traceHere();
  // This request's claim on the partner decision, should the approval be forwarded (issue 26).
  const decisionToken = randomUUID();
  // One span for the checks card_authorize runs in one call: card, status, capabilities, velocity, funds (issue 27).
  const result = await inSpan('authorization.checks', () => authorizeInLane(deps.db, {
    partnerId: input.partnerId,
    cardId: input.cardId,
    source: input.source,
    networkTransactionId: input.networkTransactionId ?? newId('sim'),
    replayGuard: input.networkTransactionId !== undefined,
    amount: amount.toFixed(minorUnits(input.currency)!),
    currency: input.currency,
    billingAmount: billing.billingAmount ? billing.billingAmount.toFixed(CORPORATE_SCALE) : null,
    billingCurrency: billing.billingCurrency,
    merchantName: input.merchantName,
    mcc: input.mcc,
    merchantCountry: input.merchantCountry,
    channel: input.channel,
    now: at,
    transactionTime: input.transactionTime ? new Date(input.transactionTime) : at,
    blockers: CAPABILITY_BLOCKERS.PAYMENT,
    transId: newId('tx'),
    outstandingTransactionId: newId('ot'),
    postingId: newId('lp'),
    eventId: newId('ev'),
    alertEventId: newId('ev'),
    expiryDueAt: new Date(at.getTime() + HOLD_EXPIRY_MS),
    decisionToken,
    defaultDeadlineMs: deps.config?.authForwardDeadlineMs ?? DEFAULT_FORWARD_DEADLINE_MS,
    decisionGraceMs: DECISION_GRACE_MS,
  }));
  if (result.outcome === 'CARD_INVALID') throw new ApiError('CARD_INVALID', `Card ${input.cardId} does not exist`);
  const transaction = view(result.body);
  const partnerId = result.partnerId;
  invariant(partnerId !== null, `authorization ${transaction.transId} has a partner`);
  // A copy shows the record as it is now (perhaps cleared or reversed since); only a new one is checked.
  if (result.outcome !== 'REPLAY') assertAuthorizationShape(transaction);
  let answer = transaction;
  // Issue 26: a forwarded approval awaits its partner decision. The request that booked the hold
  // asks the partner once; copies of the message answer from the decision it records. Neither throws.
  if (result.standIn !== null) {
    invariant(result.deadlineMs !== null, `awaited decision of ${transaction.transId} has a deadline`);
    const awaiting = { transaction, partnerId, standIn: result.standIn, deadlineMs: result.deadlineMs };
    const stage = deps.partnerDecision ?? approveEverything;
    answer = await here.run(() => (result.outcome === 'REPLAY' ? awaitDecision(deps, stage, awaiting) : decideAfterHold(deps, stage, awaiting, decisionToken)));
  }
  // The LOW_BALANCE event committed with the hold; its emails go out now (2.12). A failure here
  // changes nothing of the authorization (the event stands; the answer is the decision).
  if (result.outcome === 'NEW_LOW_BALANCE') {
    invariant(transaction.organizationId !== null, `LOW_BALANCE of ${transaction.transId} is a company pool's`);
    await mailLowBalanceAlert(deps, { organizationId: transaction.organizationId, currency: transaction.billingCurrency }).catch(() => 0);
  }
  return answer;
}

/** Pair assertions on what the database booked: an approval holds exactly its billing amount. */
function assertAuthorizationShape(t: TransactionView): void {
  invariant(t.messageType === 'AUTHORIZATION', 'authorize answers an authorization');
  if (t.approved) {
    invariant(t.status === 'PENDING' && t.declineReason === null, `approved ${t.transId} is PENDING without reason`);
    invariant(fromDb(String(t.holdAmount)).eq(fromDb(String(t.billingAmount))), `approved ${t.transId} holds its billing amount`);
    invariant(t.outstandingTransactionId !== null, `approved ${t.transId} has an outstanding id`);
  } else {
    invariant((DECLINE_REASONS as readonly string[]).includes(t.declineReason ?? ''), `declined ${t.transId} has a D47 reason`);
    invariant(fromDb(String(t.holdAmount)).isZero() && t.outstandingTransactionId === null, `declined ${t.transId} holds nothing`);
  }
}

// ---------------------------------------------------------------------------------------------
// Settlement: clearing, reversal, refund, expiry

type AuthorizationRef = { transId: string; partnerId: string } | { networkTransactionId: string };


export interface SettleInput {
  source: Source;
  /** The sandbox names the authorization by transId (its partner's only); the network by its message id. */
  authorization: AuthorizationRef;
  networkTransactionId?: string;
  amount: WireAmount;
}

/**
 * Runs a settlement message once per network id: copies wait for the first and get its answer.
 * `book` returns the transaction view of the new record.
 */
async function oncePerMessage(deps: AuthorizationDeps, networkTransactionId: string | undefined, book: (q: Queryable, messageId: string) => Promise<string>): Promise<TransactionView> {
  return view(await deps.db.tx(async (q) => {
    if (networkTransactionId !== undefined) {
      await lockNetworkMessage(q, networkTransactionId);
      const answered = await transactionJsonByNetworkId(q, networkTransactionId);
      if (answered !== null) return answered;
    }
    return book(q, networkTransactionId ?? newId('sim'));
  }));
}

async function lockForSettlement(q: Queryable, ref: AuthorizationRef): Promise<TransactionRow> {
  const auth = await lockAuthorization(q, ref);
  if (!auth) throw new ApiError('TRANSACTION_NOT_FOUND', 'No such authorization');
  return auth;
}

/** What an authorization still holds in its funds account's currency (D35: a rated asset; otherwise the billing amount). */
function fundsHoldOf(auth: TransactionRow): Amount {
  if (auth.fundsRate === null) return fromDb(auth.holdAmount);
  invariant(auth.fundsHold !== null && auth.fundsScale !== null, `rated authorization ${auth.transId} keeps its hold in the asset`);
  return fromDb(auth.fundsHold);
}

/**
 * A dedicated card cancelled while it still held authorizations: its balance went back to the
 * company pool at cancellation and its holds stayed (docs/cards.md "cancel"). What a later release
 * (reversal, expiry, decline), a clearing below the hold or a refund leaves on its available goes
 * back to the pool too, in the same transaction and as the same CARD_CANCEL_SWEEP posting; otherwise
 * it stayed on a card no transfer may touch (D29). A debt (negative available, D33) stays on the card
 * for its next credits. `cancelled` comes from isCancelledDedicatedCard, asked before the card's
 * money moved (it share-locks the card row: card row, then accounts, the cancellation's order).
 */
async function sweepCancelledCard(
  q: Queryable, cancelled: boolean, card: { partnerId: string; organizationId: string | null; cardId: string }, fundsAccountId: string, at: Date,
): Promise<void> {
  if (!cancelled) return;
  invariant(card.organizationId !== null, `dedicated card ${card.cardId} has a company`);
  const account = await findAccountById(q, fundsAccountId);
  invariant(account !== null && account.ownerType === 'CARD' && account.ownerId === card.cardId, `funds account ${fundsAccountId} is card ${card.cardId}'s`);
  await sweepToPool(q, { ...card, organizationId: card.organizationId }, account, at, 'Released to a cancelled card: returned to the pool');
}

/**
 * Moves `amount` (billing currency) of the hold back to free (reversal, expiry, partner decline)
 * and gives the usage back (D32). With a rated asset the funds released are the same share of the
 * asset hold, rounded down, and all of it when the billing hold reaches zero. Returns the posting
 * (null when the share is below one unit of the asset) and the asset hold after, for the record.
 */
export async function releaseHold(
  q: Queryable, auth: TransactionRow, amount: Amount, kind: string, at: Date, releasesCount: boolean,
): Promise<{ postingId: string | null; fundsHold: string }> {
  invariant(auth.fundsAccountId !== null, `authorization ${auth.transId} has a funds account`);
  const hold = fromDb(auth.holdAmount);
  invariant(amount.gt(0) && amount.lte(hold), `release of ${auth.transId} within its hold`);
  const fundsHold = fundsHoldOf(auth);
  const funds = auth.fundsRate === null ? amount
    : amount.eq(hold) ? fundsHold
    : fundsHold.times(amount).dividedBy(hold).toDecimalPlaces(auth.fundsScale!, Decimal.ROUND_DOWN);
  invariant(funds.gte(0) && funds.lte(fundsHold), `release of ${auth.transId} within its asset hold`);
  const cancelled = await isCancelledDedicatedCard(q, auth.cardId);
  // Account row before usage rows: the lock order of card_authorize, so the two never deadlock.
  const posting = funds.isZero() ? null : await post(q, {
    partnerId: auth.partnerId,
    kind,
    entries: [
      { accountId: auth.fundsAccountId, amount: funds.neg(), bucket: 'PENDING' },
      { accountId: auth.fundsAccountId, amount: funds, bucket: 'AVAILABLE' },
    ],
    reference: auth.transId,
    createTime: at,
  });
  await sweepCancelledCard(q, cancelled, auth, auth.fundsAccountId, at);
  await releaseUsage(q, {
    partnerId: auth.partnerId,
    card: { cardId: auth.cardId, subjectType: auth.subjectType, subjectId: auth.subjectId },
    control: auth.channel === 'ATM' ? 'CASH_ADVANCE' : 'PURCHASE',
    currency: auth.billingCurrency,
    amount,
    count: releasesCount ? 1 : 0,
    at: auth.createdAt,
  });
  // The asset hold after (updateAuthorization ignores it for an authorization without a rate).
  return { postingId: posting?.postingId ?? null, fundsHold: toDb(fundsHold.minus(funds)) };
}

/** The network settlement account in the currency of the funds account the money moves from or to. */
async function settlementAccountFor(q: Queryable, partnerId: string, fundsAccountId: string, at: Date): Promise<string> {
  const funds = await findAccountById(q, fundsAccountId);
  invariant(funds !== null, `funds account ${fundsAccountId} exists`);
  return settlementAccount(q, partnerId, funds.currency, at);
}

async function settlementAccount(q: Queryable, partnerId: string, currency: string, at: Date): Promise<string> {
  const account = await getOrCreateAccount(q, { partnerId, ownerType: 'CLEARING', ownerId: NETWORK_SETTLEMENT_OWNER, currency }, at);
  return account.accountId;
}

/**
 * Clearing (D33, D34): releases what is still held and posts the final amount in the billing
 * currency. A final amount above the hold (or after the hold expired or was reversed) is posted
 * even if free goes negative: the network's settlement cannot be refused.
 */
export async function clear(deps: AuthorizationDeps, input: SettleInput): Promise<TransactionView> {
  const final = parseAmount('amount', input.amount, SETTLEMENT_RULES);
  return oncePerMessage(deps, input.networkTransactionId, async (q, messageId) => {
    const auth = await lockForSettlement(q, input.authorization);
    if (auth.status === 'DECLINED' || auth.status === 'CLEARED') {
      throw new ApiError('TRANSACTION_STATUS_INVALID', `Authorization ${auth.transId} is ${auth.status}`);
    }
    invariant(auth.fundsAccountId !== null, `approved authorization ${auth.transId} has a funds account`);
    const cancelled = await isCancelledDedicatedCard(q, auth.cardId);
    const at = now(deps);
    // In the funds account's currency: the billing amounts, or a consumer card's rated asset at the
    // authorization's rate (D35; the final amount rounded up like the hold).
    const hold = fundsHoldOf(auth);
    const finalFunds = auth.fundsRate === null ? final : atRate(final, auth.fundsRate, auth.fundsScale!, 'UP');
    const entries: EntryInput[] = [];
    if (hold.gt(0)) entries.push({ accountId: auth.fundsAccountId, amount: hold.neg(), bucket: 'PENDING' });
    if (!hold.eq(finalFunds)) entries.push({ accountId: auth.fundsAccountId, amount: hold.minus(finalFunds), bucket: 'AVAILABLE' });
    // A consumer card's funds are its user's asset: the settlement side is booked in the same asset
    // so the posting balances per currency.
    entries.push({ accountId: await settlementAccountFor(q, auth.partnerId, auth.fundsAccountId, at), amount: finalFunds, bucket: 'AVAILABLE' });
    const posting = await post(q, {
      partnerId: auth.partnerId, kind: 'CLEARING', entries, forced: finalFunds.gt(hold), reference: auth.transId, createTime: at,
    });
    await sweepCancelledCard(q, cancelled, auth, auth.fundsAccountId, at);
    const postedTransactionId = newId('pt');
    const body = await insertSettlement(q, {
      ...settlementBase(auth, input.source, messageId, at),
      messageType: 'CLEARING', authType: 'EXPEND', debitCreditIndicator: 'D',
      amount: final.toFixed(CORPORATE_SCALE), currency: auth.billingCurrency, billingAmount: final.toFixed(CORPORATE_SCALE), billingCurrency: auth.billingCurrency,
      fundsAccountId: auth.fundsAccountId, outstandingTransactionId: auth.outstandingTransactionId, postedTransactionId,
      postingId: posting.postingId,
    }, newId('ev'));
    await updateAuthorization(q, {
      transId: auth.transId, status: 'CLEARED', holdAmount: '0.00', postedTransactionId, now: at, eventId: newId('ev'), fundsHold: '0',
    });
    return body;
  });
}

function settlementBase(auth: TransactionRow, source: Source, messageId: string, at: Date) {
  return {
    transId: newId('tx'),
    partnerId: auth.partnerId,
    cardId: auth.cardId,
    organizationId: auth.organizationId,
    subjectType: auth.subjectType,
    subjectId: auth.subjectId,
    source,
    networkTransactionId: messageId,
    originalTransId: auth.transId,
    merchantName: null,
    mcc: null,
    merchantCountry: null,
    channel: auth.channel,
    transactionTime: at,
    now: at,
  };
}

/** Reversal (D32, D34): full or partial, of what is still held; usage back in the original periods. */
export async function reverse(deps: AuthorizationDeps, input: SettleInput): Promise<TransactionView> {
  const amount = parseAmount('amount', input.amount, SETTLEMENT_RULES);
  return oncePerMessage(deps, input.networkTransactionId, async (q, messageId) => {
    const auth = await lockForSettlement(q, input.authorization);
    if (auth.status !== 'PENDING') throw new ApiError('TRANSACTION_STATUS_INVALID', `Authorization ${auth.transId} is ${auth.status}`);
    const hold = fromDb(auth.holdAmount);
    if (amount.gt(hold)) {
      throw new ApiError('TRANSACTION_AMOUNT_INVALID', `Reversal of ${toDb(amount)} exceeds the ${toDb(hold)} still held`);
    }
    const at = now(deps);
    const remaining = hold.minus(amount);
    const released = await releaseHold(q, auth, amount, 'REVERSAL', at, remaining.isZero());
    const body = await insertSettlement(q, {
      ...settlementBase(auth, input.source, messageId, at),
      messageType: 'REVERSAL', authType: 'REVERSAL', debitCreditIndicator: 'C',
      amount: amount.toFixed(CORPORATE_SCALE), currency: auth.billingCurrency, billingAmount: amount.toFixed(CORPORATE_SCALE), billingCurrency: auth.billingCurrency,
      fundsAccountId: auth.fundsAccountId!, outstandingTransactionId: auth.outstandingTransactionId, postedTransactionId: null,
      postingId: released.postingId,
    }, newId('ev'));
    await updateAuthorization(q, {
      transId: auth.transId, status: remaining.isZero() ? 'REVERSED' : 'PENDING', holdAmount: remaining.toFixed(CORPORATE_SCALE), now: at, eventId: newId('ev'),
      fundsHold: released.fundsHold,
    });
    return body;
  });
}

/** A refund names the card and the amount like a purchase; merchant category and country are optional. */
export interface RefundInput extends Omit<AuthorizationInput, 'mcc' | 'merchantCountry' | 'channel'> {
  mcc?: string;
  merchantCountry?: string;
  /** The purchase returned, when known. */
  original?: AuthorizationRef;
}

/** Refund (D32, 2.3 rule 3): credits free of the card's funds; usage is left alone. */
export async function refund(deps: AuthorizationDeps, input: RefundInput): Promise<TransactionView> {
  const amount = currencyAmount('amount', input.amount, input.currency, 'currency');
  const billing = billingOf(input, amount, input.currency);
  if (input.merchantCountry !== undefined && !isIsoCountry(input.merchantCountry)) {
    throw paramInvalid('merchantCountry', 'must be an ISO 3166-1 alpha-2 code');
  }
  return oncePerMessage(deps, input.networkTransactionId, async (q, messageId) => {
    const card = await findSpendCard(q, input.cardId);
    if (!card || (input.partnerId !== null && card.partnerId !== input.partnerId)) {
      throw new ApiError('CARD_INVALID', `Card ${input.cardId} does not exist`);
    }
    const original = input.original ? await findAuthorization(q, input.original) : null;
    if (input.original && (!original || original.cardId !== card.cardId)) throw new ApiError('TRANSACTION_NOT_FOUND', 'No such purchase on this card');
    const billingCurrency = billing.billingCurrency ?? input.currency;
    const billingAmount = billing.billingAmount ?? amount;
    if (!card.settlementCurrencies.includes(billingCurrency)) {
      throw new ApiError('CURRENCY_NOT_ALLOWED', `Card ${card.cardId} does not settle in ${billingCurrency}`);
    }
    const at = now(deps);
    const cancelled = card.balanceMode === 'DEDICATED' && await isCancelledDedicatedCard(q, card.cardId);
    const fundsAccountId = await fundsAccountOf(q, card, billingCurrency, at);
    const credited = await refundInFunds(deps, q, card, original, billingAmount);
    // A rated asset's refund rounded down to its scale may be nothing (USD 0.33 of an asset worth
    // USD 1/3 a unit, scale 0): the refund is recorded and credits nothing, as a reversal whose
    // share rounds to zero releases nothing (D33: no empty posting; D35, docs/consumer-cards.md).
    const posting = credited.isZero() ? null : await post(q, {
      partnerId: card.partnerId,
      kind: 'REFUND',
      entries: [
        { accountId: await settlementAccountFor(q, card.partnerId, fundsAccountId, at), amount: credited.neg(), bucket: 'AVAILABLE' },
        { accountId: fundsAccountId, amount: credited, bucket: 'AVAILABLE' },
      ],
      reference: original?.transId ?? null,
      createTime: at,
    });
    await sweepCancelledCard(q, cancelled, card, fundsAccountId, at);
    return insertSettlement(q, {
      transId: newId('tx'),
      partnerId: card.partnerId,
      cardId: card.cardId,
      organizationId: card.organizationId,
      subjectType: card.subjectType,
      subjectId: card.subjectId,
      messageType: 'REFUND', authType: 'REFUND', debitCreditIndicator: 'C',
      source: input.source,
      networkTransactionId: messageId,
      originalTransId: original?.transId ?? null,
      amount: amount.toFixed(minorUnits(input.currency)!),
      currency: input.currency,
      billingAmount: billingAmount.toFixed(CORPORATE_SCALE),
      billingCurrency,
      merchantName: input.merchantName,
      mcc: input.mcc ?? null,
      merchantCountry: input.merchantCountry ?? null,
      channel: null,
      fundsAccountId,
      outstandingTransactionId: null,
      postedTransactionId: newId('pt'),
      postingId: posting?.postingId ?? null,
      transactionTime: input.transactionTime ? new Date(input.transactionTime) : at,
      now: at,
    }, newId('ev'));
  });
}

/**
 * What a refund credits in the card's funds currency: the billing amount, or for a consumer card
 * funded by a rated asset (D35) the amount at the returned purchase's rate, else at the asset's
 * current rate, rounded down. A rated asset that lost its rate refuses the refund (CURRENCY_NOT_ALLOWED).
 */
async function refundInFunds(deps: AuthorizationDeps, q: Queryable, card: SpendCard, original: TransactionRow | null, billing: Amount): Promise<Amount> {
  if (card.balanceMode !== 'ASSET') return billing;
  if (original?.fundsRate) return atRate(billing, original.fundsRate, original.fundsScale!, 'DOWN');
  invariant(deps.assetRate !== undefined && card.fundingAsset !== null, 'consumer card refunds have the asset-rate seam');
  const rate = await deps.assetRate(q, card.fundingAsset);
  if (!rate || rate.usdRate === null) throw new ApiError('CURRENCY_NOT_ALLOWED', `Funding asset ${card.fundingAsset} has no rate to USD`);
  return rate.usdPegged ? billing : atRate(billing, rate.usdRate, rate.scale, 'DOWN');
}

/**
 * The funds source of a card kind (D29): the company pool (SHARED), the card's own balance
 * (DEDICATED), or the user's funding asset (ASSET, a consumer card; D35).
 */
async function fundsAccountOf(q: Queryable, card: SpendCard, currency: string, at: Date): Promise<string> {
  if (card.balanceMode === 'ASSET') {
    invariant(card.fundingAsset !== null && currency === 'USD', `consumer card ${card.cardId} settles USD from its funding asset`);
    const user = await getOrCreateAccount(q, { partnerId: card.partnerId, ownerType: 'MANAGED_USER', ownerId: card.subjectId, currency: card.fundingAsset }, at);
    return user.accountId;
  }
  invariant(card.organizationId !== null, `corporate card ${card.cardId} has a company`);
  if (card.balanceMode === 'SHARED') {
    const pool = await findAccount(q, { partnerId: card.partnerId, ownerType: 'ORGANIZATION_POOL', ownerId: card.organizationId, currency });
    if (!pool) throw new ApiError('CURRENCY_NOT_ALLOWED', `Organization ${card.organizationId} has no ${currency} funding pool`);
    return pool.accountId;
  }
  const own = await getOrCreateAccount(q, {
    partnerId: card.partnerId, ownerType: 'CARD', ownerId: card.cardId, currency, organizationId: card.organizationId,
  }, at);
  return own.accountId;
}

/** Hold expiry job (D34) on the leased job runner: how often it looks, how much per run, lease, attempts. */
export const HOLD_EXPIRY_POLL_INTERVAL_MS = 60_000;
export const HOLD_EXPIRY_BATCH = 100;
const HOLD_EXPIRY_LEASE_MS = 60_000;
const HOLD_EXPIRY_MAX_ATTEMPTS = 5;

/**
 * D34: holds not cleared in 30 days are released: funds back to free, usage back, EXPIRED. Due times
 * are set at approval (HOLD_EXPIRY_MS); the runner's clock decides what is due.
 */
export function holdExpiryJob(): JobDefinition<ExpiringHold> {
  return {
    name: 'hold-expiry',
    intervalMs: HOLD_EXPIRY_POLL_INTERVAL_MS,
    batchSize: HOLD_EXPIRY_BATCH,
    leaseMs: HOLD_EXPIRY_LEASE_MS,
    maxAttempts: HOLD_EXPIRY_MAX_ATTEMPTS,
    concurrency: 1,
    identify: (h) => ({ id: h.transId, attempt: h.attempt }),
    claim: (q, lease) => leaseDueHolds(q, { ...lease, maxAttempts: HOLD_EXPIRY_MAX_ATTEMPTS }),
    backlog: (q, now) => dueHoldsBacklog(q, now, HOLD_EXPIRY_MAX_ATTEMPTS),
    complete: async (q, hold, _none, lease) => {
      const auth = await lockLeasedHold(q, hold.transId, lease.token);
      // Cleared or reversed since the claim, or the lease ran out and another worker has it.
      if (!auth) return 'LOST_LEASE';
      await expireLockedHold(q, auth, lease.now);
      return { result: 'EXPIRED', fields: { amount: auth.holdAmount, currency: auth.billingCurrency } };
    },
    fail: async (q, hold, failure) => {
      const released = await releaseHoldLease(q, hold.transId, failure.lease.token, failure.retryAt);
      return released ? (failure.retryAt ? 'RETRY' : 'GAVE_UP') : 'LOST_LEASE';
    },
  };
}

/** The expiry of a locked PENDING authorization (D34): what is held back to free, usage back, EXPIRED and its event. */
async function expireLockedHold(q: Queryable, auth: TransactionRow, at: Date): Promise<string> {
  const released = await releaseHold(q, auth, fromDb(auth.holdAmount), 'HOLD_EXPIRY', at, true);
  return updateAuthorization(q, { transId: auth.transId, status: 'EXPIRED', holdAmount: '0.00', now: at, eventId: newId('ev'), fundsHold: released.fundsHold });
}

/**
 * Expires one PENDING authorization of the partner now, exactly as the hold-expiry job would (the
 * sandbox's simulate/expiry, issue 26). Another partner's transId is TRANSACTION_NOT_FOUND; an
 * authorization that holds nothing any more (declined, cleared, reversed, expired) is
 * TRANSACTION_STATUS_INVALID.
 */
export async function expireHold(deps: Pick<AuthorizationDeps, 'db' | 'clock'>, ref: { transId: string; partnerId: string }): Promise<TransactionView> {
  const body = await deps.db.tx(async (q) => {
    const auth = await lockForSettlement(q, ref);
    if (auth.status !== 'PENDING') {
      throw new ApiError('TRANSACTION_STATUS_INVALID', `Authorization ${auth.transId} is ${auth.status}: only a PENDING authorization has a hold to expire`);
    }
    return expireLockedHold(q, auth, new Date(deps.clock.now()));
  });
  return view(body);
}

/** Runs the expiry job until nothing is due (tests with a moved clock, operators); returns how many expired. */
export async function expireHolds(deps: Pick<AuthorizationDeps, 'db' | 'clock'>, options: { log?: JobLog } = {}): Promise<number> {
  const job = holdExpiryJob();
  let expired = 0;
  for (;;) {
    const run = await runJobOnce(job, { db: deps.db, clock: deps.clock, log: options.log });
    expired += run.items.filter((i) => i.result === 'EXPIRED').length;
    if (run.claimed < job.batchSize) return expired;
  }
}

// ---------------------------------------------------------------------------------------------
// Reads

export interface ListTransactionsInput {
  /** Consumer cards (managed-balance model): the managed user's id; corporate lists never show them. */
  userId?: string;
  authType?: string;
  organizationId?: string;
  cardId?: string;
  customerId?: string;
  status?: string;
  messageType?: string;
  startTime?: string;
  endTime?: string;
}

export async function listTransactions(
  deps: AuthorizationDeps,
  partnerId: string,
  input: ListTransactionsInput,
  paging: Paging,
  family: 'CORPORATE' | 'CONSUMER' = 'CORPORATE',
) {
  const startTime = input.startTime ? new Date(input.startTime) : null;
  const endTime = input.endTime ? new Date(input.endTime) : null;
  if (startTime && endTime && startTime.getTime() > endTime.getTime()) throw paramInvalid('endTime', 'must not be before startTime');
  const { total, bodies } = await listTransactionRows(deps.db, {
    partnerId,
    organizationId: input.organizationId ?? null,
    cardId: input.cardId ?? null,
    customerId: input.customerId ?? null,
    status: input.status ?? null,
    messageType: input.messageType ?? null,
    startTime,
    endTime,
    family,
    userId: input.userId ?? null,
    authType: input.authType ?? null,
  }, paging.pageSize, (paging.page - 1) * paging.pageSize);
  return pageOf(paging, total, bodies.map((b) => view(b)));
}

/** A transaction of the partner's corporate cards, or (userId given) of that managed user's consumer cards. */
export async function queryTransaction(deps: AuthorizationDeps, partnerId: string, transId: string, userId: string | null = null): Promise<TransactionView> {
  const body = await findTransactionJson(deps.db, partnerId, transId, userId);
  if (body === null) throw new ApiError('TRANSACTION_NOT_FOUND', `Transaction ${transId} not found`);
  return view(body);
}

/** /card/v1/transaction/id/resolve: for each id, whether it is posted, its status and the linked id. */
export async function resolveIds(deps: AuthorizationDeps, partnerId: string, ids: string[]) {
  const rows = await resolveTransactionIds(deps.db, partnerId, [...new Set(ids)]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => {
    const r = byId.get(id);
    if (!r) return { id, found: false, idType: null, posted: false, postingStatus: null, transId: null, relatedTransactionId: null };
    const posted = r.idType === 'POSTED' || r.status === 'CLEARED';
    return { id, found: true, idType: r.idType, posted, postingStatus: r.status, transId: r.transId, relatedTransactionId: r.relatedTransactionId };
  });
}
