import { Type } from 'typebox';
import { MerchantCountry, MerchantName, Mcc, NetworkTransactionId } from './authorization.ts';
import { AssetAmount, AssetCode, ExternalUserId } from './managed-balance.ts';
import { IsoTime, Literals, Nullable, Page, PagingQuery, WireNumber } from './wire.ts';

/**
 * QR payments of the managed-balance model (issue 11; 2.9): a user pays a merchant's QR
 * code from an asset balance, booked at once (no hold). See docs/qr-payments.md.
 */

export const QR_TRANS_TYPES = ['PAY', 'REFUND', 'REFUND_PART', 'REVERSAL'] as const;
export const QrTransType = Literals(QR_TRANS_TYPES, {
  description: 'PAY debits free; REFUND returns the whole payment, REFUND_PART a part of it, REVERSAL cancels it (whole, nothing returned before); all three credit free',
});
const OrderId = Type.String({ minLength: 1, maxLength: 20, pattern: '^[A-Za-z0-9_-]+$', description: 'A QR record id minted by the service (at most 20 characters)' });

/** A QR payment record (2.9) as every QR route, the list and the push stream answer it. */
export const QrPayment = Type.Object({
  orderId: Type.String({ description: 'The record id' }),
  transType: QrTransType,
  debitCreditIndicator: Literals(['D', 'C'] as const, { description: 'D for PAY, C for the returns' }),
  externalUserId: Type.String(),
  asset: Type.String(),
  amount: WireNumber(),
  merchantName: Nullable(Type.String()),
  merchantCountry: Nullable(Type.String()),
  mcc: Nullable(Type.String()),
  status: Literals(['SUCCESS', 'DECLINED'] as const, { description: 'A declined PAY is recorded and changed nothing' }),
  declineReason: Nullable(Literals(['CAPABILITY_FROZEN', 'INSUFFICIENT_BALANCE'] as const, { description: 'Why a PAY was declined' })),
  declineDetail: Nullable(Type.String({ description: 'CAPABILITY_FROZEN: USER:<restriction code>' })),
  originalOrderId: Nullable(Type.String({ description: 'The PAY a REFUND, REFUND_PART or REVERSAL returns' })),
  returnedAmount: Nullable(WireNumber({ description: 'PAY: how much refunds and reversals returned so far; null on the returns' })),
  freeAfter: Nullable(WireNumber({ description: 'The user\'s free balance of the asset right after this record was booked; null when declined' })),
  source: Literals(['NETWORK', 'SANDBOX'] as const),
  networkTransactionId: Type.String({ description: 'The message id (minted by the service for a simulation)' }),
  createTime: IsoTime,
  updateTime: IsoTime,
});
export const QrPaymentPage = Page(QrPayment);

const payFields = {
  asset: Type.Optional(AssetCode),
  amount: AssetAmount,
  merchantName: Type.Optional(MerchantName),
  merchantCountry: Type.Optional(MerchantCountry),
  mcc: Type.Optional(Mcc),
};

/**
 * A QR message from the network (network key). PAY names the partner, the user, the asset,
 * the amount and the merchant; REFUND, REFUND_PART and REVERSAL name the PAY with
 * originalNetworkTransactionId and the amount (REFUND and REVERSAL: the whole payment).
 */
export const NetworkQrPaymentBody = Type.Object({
  networkTransactionId: NetworkTransactionId,
  transType: QrTransType,
  partnerId: Type.Optional(Type.String({ minLength: 1, maxLength: 20, description: 'PAY: the partner whose user pays' })),
  externalUserId: Type.Optional(ExternalUserId),
  originalNetworkTransactionId: Type.Optional(NetworkTransactionId),
  ...payFields,
});

/** The sandbox simulation (D40): the partner is the caller; the returns name the PAY by its orderId. */
export const SimulateQrPaymentBody = Type.Object({
  transType: QrTransType,
  externalUserId: Type.Optional(ExternalUserId),
  orderId: Type.Optional(OrderId),
  ...payFields,
});

export const QrTransactionsQuery = Type.Object({
  externalUserId: Type.Optional(ExternalUserId),
  transType: Type.Optional(QrTransType),
  status: Type.Optional(Literals(['SUCCESS', 'DECLINED'] as const)),
  asset: Type.Optional(AssetCode),
  startTime: Type.Optional(IsoTime),
  endTime: Type.Optional(IsoTime),
  ...PagingQuery,
});
export const QrDetailQuery = Type.Object({ orderId: OrderId });
