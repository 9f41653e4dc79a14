/**
 * QR payments of the managed-balance model (issue 11; 2.3, 2.9; D33, D35, D47): a user pays a
 * merchant's QR code from an asset balance. A message enters through the network ingress
 * (POST /internal/network/v1/qr-payment, network key) or the sandbox simulation (D40) and is
 * booked at once, in one transaction, once per message id:
 *
 * - PAY: capability (PAYMENT_FROZEN, ACCOUNT_FROZEN: declined CAPABILITY_FROZEN), funds (free >=
 *   amount, else declined INSUFFICIENT_BALANCE), then free -> the partner's QR settlement account in
 *   the asset. A decline is a record that changed nothing.
 * - REFUND (the whole payment, nothing returned before), REFUND_PART (at most what is not yet
 *   returned), REVERSAL (the whole payment, nothing returned before): the QR settlement account ->
 *   free (2.3 rule 3), against the PAY they name, which is locked so returns of one payment
 *   serialize and never return more than it paid.
 *
 * See docs/qr-payments.md.
 */
import { createHash } from 'node:crypto';
import type { AppContext } from '../../platform/context.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { ApiError, invariant, paramInvalid } from '../../platform/errors.ts';
import { parseJson } from '../../platform/http/json.ts';
import { pageOf, type Paging, type WireAmount } from '../../platform/http/schema.ts';
import { ASSET_MAX_SCALE, fromDb, parseAmount, toDb, type Amount } from '../../platform/money.ts';
import { findAccount, getOrCreateAccount, lockAccounts, post } from '../ledger/index.ts';
import { CAPABILITY_BLOCKERS, isIsoCountry } from '../organizations/index.ts';
import { partnersByIds } from '../partners/index.ts';
import {
  addReturned, findQrBody, insertQrPayment, listQrBodies, lockPayment, lockQrMessage, qrBodyByMessageId, type QrPaymentRow,
} from './qr-payments-store.ts';
import { activeAsset, ensureUser, findAsset, findUser, restrictionsOf } from './users.ts';

export type QrDeps = Pick<AppContext, 'db' | 'clock'>;
export type QrTransType = QrPaymentRow['transType'];
export type QrView = Record<string, unknown> & { orderId: string };

/**
 * The partner's clearing accounts of QR payments in each asset (what it owes merchants' acquirers),
 * striped by user like the credit contra accounts: payments of different users do not queue on one
 * row, and a user's returns go back through the stripe its payment used.
 */
const QR_SETTLEMENT_OWNER = 'QR_SETTLEMENT';
const QR_SETTLEMENT_STRIPES = 16;
const AMOUNT_RULES = { maxScale: ASSET_MAX_SCALE, sign: 'positive' } as const;

const now = (deps: QrDeps) => new Date(deps.clock.now());
const view = (body: string) => parseJson(body) as QrView;

export interface QrMessage {
  source: 'NETWORK' | 'SANDBOX';
  /** The network's message id; a simulation gets one minted. */
  networkTransactionId?: string;
  transType: QrTransType;
  /** PAY: the partner whose user pays (the caller in the sandbox). Returns: the sandbox caller (its payments only), null from the network. */
  partnerId: string | null;
  externalUserId?: string;
  asset?: string;
  amount: WireAmount;
  merchantName?: string;
  merchantCountry?: string;
  mcc?: string;
  /** Returns: the PAY, by its message id (network) or its orderId (sandbox). */
  original?: { networkTransactionId?: string; orderId?: string };
}

/** Fields a message must or must not carry, checked before anything is read or written. */
function checkShape(m: QrMessage): void {
  const present = (v: unknown) => v !== undefined;
  if (m.merchantCountry !== undefined && !isIsoCountry(m.merchantCountry)) {
    throw paramInvalid('merchantCountry', 'must be an ISO 3166-1 alpha-2 code');
  }
  const originalField = m.source === 'NETWORK' ? 'originalNetworkTransactionId' : 'orderId';
  if (m.transType === 'PAY') {
    if (m.source === 'NETWORK' && m.partnerId === null) throw paramInvalid('partnerId', 'is required for PAY');
    for (const [field, value] of [['externalUserId', m.externalUserId], ['asset', m.asset], ['merchantName', m.merchantName]] as const) {
      if (!present(value)) throw paramInvalid(field, 'is required for PAY');
    }
    if (m.original) throw paramInvalid(originalField, 'is only for REFUND, REFUND_PART and REVERSAL');
    return;
  }
  if (!m.original) throw paramInvalid(originalField, `is required for ${m.transType}: the PAY it returns`);
  // A return is the PAY's user, asset and merchant: naming them again could only disagree.
  for (const [field, value] of [['externalUserId', m.externalUserId], ['asset', m.asset], ['merchantName', m.merchantName],
    ['merchantCountry', m.merchantCountry], ['mcc', m.mcc]] as const) {
    if (present(value)) throw paramInvalid(field, `is the PAY's: omit it on ${m.transType}`);
  }
  if (m.source === 'NETWORK' && m.partnerId !== null) throw paramInvalid('partnerId', `is the PAY's: omit it on ${m.transType}`);
}

/** One QR message, booked once per message id: a retry (also concurrent, on any instance) is answered as the first time. */
export async function bookQrPayment(deps: QrDeps, m: QrMessage): Promise<QrView> {
  const amount = parseAmount('amount', m.amount, AMOUNT_RULES);
  checkShape(m);
  const messageId = m.networkTransactionId ?? newId('qrsim');
  return view(await deps.db.tx(async (q) => {
    await lockQrMessage(q, messageId);
    const answered = await qrBodyByMessageId(q, messageId);
    if (answered !== null) return answered;
    const at = now(deps);
    return m.transType === 'PAY' ? pay(q, m, messageId, amount, at) : giveBack(q, m, messageId, amount, at);
  }));
}

/** An amount carries at most its asset's decimals (D4; docs/qr-payments.md): PAY and every return alike. */
function checkAssetScale(amount: Amount, asset: { asset: string; scale: number }): void {
  if (amount.decimalPlaces() > asset.scale) throw paramInvalid('amount', `${asset.asset} amounts have at most ${asset.scale} decimal places`);
}

async function settlementAccount(q: Queryable, partnerId: string, userId: string, asset: string, at: Date): Promise<string> {
  const stripe = createHash('sha256').update(userId).digest().readUInt32BE(0) % QR_SETTLEMENT_STRIPES;
  const ownerId = `${QR_SETTLEMENT_OWNER}_${String(stripe).padStart(2, '0')}`;
  return (await getOrCreateAccount(q, { partnerId, ownerType: 'CLEARING', ownerId, currency: asset }, at)).accountId;
}

async function pay(q: Queryable, m: QrMessage, messageId: string, amount: Amount, at: Date): Promise<string> {
  const partnerId = m.partnerId!;
  const [partner] = await partnersByIds(q, [partnerId]);
  if (!partner) throw new ApiError('PARTNER_INVALID', `Partner ${partnerId} does not exist`);
  const asset = await activeAsset(q, m.asset!);
  checkAssetScale(amount, asset);
  const user = await ensureUser(q, partnerId, m.externalUserId!, at);
  const record = {
    orderId: newId('qr'), partnerId, userId: user.userId, networkTransactionId: messageId, source: m.source, transType: 'PAY' as const,
    debitCreditIndicator: 'D' as const, asset: asset.asset, amount: toDb(amount), merchantName: m.merchantName ?? null,
    merchantCountry: m.merchantCountry ?? null, mcc: m.mcc ?? null, originalOrderId: null, now: at,
  };
  const decline = (reason: 'CAPABILITY_FROZEN' | 'INSUFFICIENT_BALANCE', detail: string | null) => insertQrPayment(q, {
    ...record, status: 'DECLINED', declineReason: reason, declineDetail: detail, postingId: null, freeAfter: null,
  }, user.externalUserId);

  // The user's account row first: payments of one user serialize here, so the funds check holds until the posting.
  const existing = await findAccount(q, { partnerId, ownerType: 'MANAGED_USER', ownerId: user.userId, currency: asset.asset });
  const account = existing ? (await lockAccounts(q, [existing.accountId])).get(existing.accountId)! : null;
  // The capability order of the card pipeline: the user, then the partner (a DISABLED partner's users cannot pay).
  const codes = new Set(await restrictionsOf(q, user.userId));
  const frozen = CAPABILITY_BLOCKERS.PAYMENT.find((c) => codes.has(c));
  if (frozen) return decline('CAPABILITY_FROZEN', `USER:${frozen}`);
  if (partner.status !== 'ACTIVE') return decline('CAPABILITY_FROZEN', `PARTNER:${partner.status}`);
  if (!account || account.available.lt(amount)) return decline('INSUFFICIENT_BALANCE', null);

  const posting = await post(q, {
    partnerId,
    kind: 'QR_PAYMENT',
    entries: [
      { accountId: account.accountId, amount: amount.neg(), bucket: 'AVAILABLE' },
      { accountId: await settlementAccount(q, partnerId, user.userId, asset.asset, at), amount, bucket: 'AVAILABLE' },
    ],
    reference: record.orderId,
    createTime: at,
  });
  const freeAfter = posting.balances.get(account.accountId)!.available;
  invariant(freeAfter.eq(account.available.minus(amount)), `QR payment ${record.orderId} took exactly its amount from free`);
  return insertQrPayment(q, {
    ...record, status: 'SUCCESS', declineReason: null, declineDetail: null, postingId: posting.postingId, freeAfter: toDb(freeAfter),
  }, user.externalUserId);
}

async function giveBack(q: Queryable, m: QrMessage, messageId: string, amount: Amount, at: Date): Promise<string> {
  const payment = await lockPayment(q, { ...m.original, partnerId: m.source === 'SANDBOX' ? m.partnerId ?? undefined : undefined });
  if (!payment) throw new ApiError('TRANSACTION_NOT_FOUND', 'No such QR payment');
  if (payment.status !== 'SUCCESS') throw new ApiError('TRANSACTION_STATUS_INVALID', `QR payment ${payment.orderId} was declined`);
  // A return is in the payment's asset and bound by its scale like the PAY (D4): a 0.001 return of a
  // 2-decimal asset would leave the user's balance with digits the asset cannot carry.
  const asset = await findAsset(q, payment.asset);
  invariant(asset !== null, `the asset of QR payment ${payment.orderId} exists`);
  checkAssetScale(amount, asset);
  const paid = fromDb(payment.amount);
  const returned = fromDb(payment.returnedAmount);
  const open = paid.minus(returned);
  if (m.transType === 'REFUND_PART') {
    if (open.isZero()) throw new ApiError('TRANSACTION_STATUS_INVALID', `QR payment ${payment.orderId} is fully returned`);
    if (amount.gt(open)) throw new ApiError('TRANSACTION_AMOUNT_INVALID', `REFUND_PART of ${toDb(amount)} exceeds the ${toDb(open)} not yet returned`);
  } else {
    if (!returned.isZero()) throw new ApiError('TRANSACTION_STATUS_INVALID', `QR payment ${payment.orderId} was already (partly) returned: ${m.transType} returns a whole payment`);
    if (!amount.eq(paid)) throw new ApiError('TRANSACTION_AMOUNT_INVALID', `${m.transType} returns the whole payment: amount must be ${toDb(paid)}`);
  }
  const account = await findAccount(q, { partnerId: payment.partnerId, ownerType: 'MANAGED_USER', ownerId: payment.userId, currency: payment.asset });
  invariant(account !== null, `the paying account of QR payment ${payment.orderId} exists`);
  const orderId = newId('qr');
  const posting = await post(q, {
    partnerId: payment.partnerId,
    kind: m.transType === 'REVERSAL' ? 'QR_REVERSAL' : 'QR_REFUND',
    entries: [
      { accountId: await settlementAccount(q, payment.partnerId, payment.userId, payment.asset, at), amount: amount.neg(), bucket: 'AVAILABLE' },
      { accountId: account.accountId, amount, bucket: 'AVAILABLE' },
    ],
    reference: orderId,
    createTime: at,
  });
  await addReturned(q, payment.orderId, toDb(amount), at);
  return insertQrPayment(q, {
    orderId, partnerId: payment.partnerId, userId: payment.userId, networkTransactionId: messageId, source: m.source, transType: m.transType,
    debitCreditIndicator: 'C', asset: payment.asset, amount: toDb(amount), merchantName: payment.merchantName,
    merchantCountry: payment.merchantCountry, mcc: payment.mcc, status: 'SUCCESS', declineReason: null, declineDetail: null,
    originalOrderId: payment.orderId, postingId: posting.postingId, freeAfter: toDb(posting.balances.get(account.accountId)!.available), now: at,
  }, payment.externalUserId);
}

export interface QrListInput {
  externalUserId?: string;
  transType?: QrTransType;
  status?: 'SUCCESS' | 'DECLINED';
  asset?: string;
  startTime?: string;
  endTime?: string;
}

/** GET /card/v1/qr/transactions: the partner's QR records, newest first; an unknown user is an empty page. */
export async function listQrPayments(deps: QrDeps, partnerId: string, input: QrListInput, paging: Paging) {
  let userId: string | null = null;
  if (input.externalUserId !== undefined) {
    const user = await findUser(deps.db, partnerId, input.externalUserId);
    if (!user) return pageOf(paging, 0, []);
    userId = user.userId;
  }
  const { total, bodies } = await listQrBodies(deps.db, {
    partnerId, userId, transType: input.transType ?? null, status: input.status ?? null, asset: input.asset ?? null,
    startTime: input.startTime ? new Date(input.startTime) : null, endTime: input.endTime ? new Date(input.endTime) : null,
  }, paging.pageSize, (paging.page - 1) * paging.pageSize);
  return pageOf(paging, total, bodies.map(view));
}

/** GET /card/v1/qr/transaction-detail: one record of the partner; another partner's is not found alike. */
export async function qrPaymentDetail(deps: QrDeps, partnerId: string, orderId: string): Promise<QrView> {
  const body = await findQrBody(deps.db, partnerId, orderId);
  if (body === null) throw new ApiError('TRANSACTION_NOT_FOUND', `QR record ${orderId} not found`);
  return view(body);
}
