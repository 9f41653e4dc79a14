import { Type, type Static } from 'typebox';
import { ASSET_MAX_SCALE, IsoTime, Literals, Money, Page, PagingQuery } from './wire.ts';

/**
 * The wire contract of the authorization engine (shared by the service and the SDK: the service
 * validates and documents its routes with these schemas, the SDK's types are Static<> of them).
 * Wire shapes of the authorization engine (D40, 2.9). Amounts are exact JSON numbers; the schema
 * bounds them at 18 decimals and the service checks the currency's own scale (ISO 4217 minor units).
 */

/** transId: minted by the service, at most 20 characters (issue 10, D43). */
export const TRANS_ID_MAX = 20;
/** A network's own message id (e.g. Visa's transaction identifier is 15 digits; room to spare). */
export const NETWORK_TRANSACTION_ID_MAX = 64;
/** Merchant name as networks send it (DE43 name part is at most 25; room for wider schemes). */
export const MERCHANT_NAME_MAX = 100;
/** At most this many ids in one resolve call. */
export const RESOLVE_IDS_MAX = 100;

const CardId = Type.String({ minLength: 1, maxLength: 32, description: 'The card (up to 32 characters)' });
const TransId = Type.String({ minLength: 1, maxLength: TRANS_ID_MAX, pattern: '^[A-Za-z0-9_-]+$', description: 'A transaction id minted by the service' });
export const NetworkTransactionId = Type.String({
  minLength: 1, maxLength: NETWORK_TRANSACTION_ID_MAX, pattern: '^[A-Za-z0-9._:-]+$',
  description: 'The network message id: the idempotency key of the message (a retry with the same id is answered as the first time)',
});
const AnyAmount = Money({ maxScale: ASSET_MAX_SCALE, sign: 'positive' }, { description: 'Exact positive amount with at most the currency\'s ISO 4217 decimals' });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 alphabetic code of the transaction' });
const BillingCurrency = Type.Union([Type.Literal('USD'), Type.Literal('HKD')], { description: 'A settlement currency of the card' });
export const MerchantName = Type.String({ minLength: 1, maxLength: MERCHANT_NAME_MAX, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description: 'Merchant name, printable characters' });
export const Mcc = Type.String({ pattern: '^[0-9]{4}$', description: 'Merchant category code, 4 digits' });
export const MerchantCountry = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 merchant country' });
export const Channel = Type.Union([Type.Literal('ECOM'), Type.Literal('POS'), Type.Literal('ATM')], { description: 'ATM counts as cash advance' });

const purchaseFields = {
  amount: AnyAmount,
  currency: Currency,
  billingAmount: Type.Optional(Money({ maxScale: 2, sign: 'positive' }, { description: 'Amount in billingCurrency as the network converted it; required when currency is not a settlement currency of the card' })),
  billingCurrency: Type.Optional(BillingCurrency),
  merchantName: MerchantName,
  mcc: Mcc,
  merchantCountry: MerchantCountry,
  channel: Channel,
};

/** Sandbox simulate/authorization (D40). */
export const SimulateAuthorizationBody = Type.Object({ cardId: CardId, ...purchaseFields });
export const NetworkAuthorizationBody = Type.Object({
  networkTransactionId: NetworkTransactionId,
  cardId: CardId,
  ...purchaseFields,
  transactionTime: Type.Optional(IsoTime),
});

/** Sandbox simulate/clearing and simulate/reversal (D40): the authorization and the amount in its billing currency. */
export const SimulateSettleBody = Type.Object({ transId: TransId, amount: Money({ maxScale: 2, sign: 'positive' }) });
/** Sandbox simulate/expiry (issue 26): the PENDING authorization whose hold expires now. */
export const SimulateExpiryBody = Type.Object({ transId: Type.String({ ...TransId, description: 'A PENDING authorization of yours (its transId)' }) });
export const NetworkSettleBody = Type.Object({
  networkTransactionId: NetworkTransactionId,
  originalNetworkTransactionId: NetworkTransactionId,
  amount: Money({ maxScale: 2, sign: 'positive' }, { description: 'In the billing currency of the authorization' }),
});

/** Sandbox simulate/refund (D40): a credit to the card, optionally naming the purchase it returns. */
const refundFields = {
  cardId: CardId,
  amount: AnyAmount,
  currency: Currency,
  billingAmount: purchaseFields.billingAmount,
  billingCurrency: purchaseFields.billingCurrency,
  merchantName: MerchantName,
};
export const SimulateRefundBody = Type.Object({ ...refundFields, transId: Type.Optional(TransId) });
export const NetworkRefundBody = Type.Object({
  networkTransactionId: NetworkTransactionId,
  ...refundFields,
  mcc: Type.Optional(Mcc),
  merchantCountry: Type.Optional(MerchantCountry),
  originalNetworkTransactionId: Type.Optional(NetworkTransactionId),
  transactionTime: Type.Optional(IsoTime),
});

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const TransactionStatus = Literals(['PENDING', 'CLEARED', 'REVERSED', 'EXPIRED', 'DECLINED', 'POSTED']);
export const MessageType = Literals(['AUTHORIZATION', 'CLEARING', 'REVERSAL', 'REFUND']);

/** The transaction record (2.9): one shape for answers and CARD_TRANSACTION events. */
export const TransactionOut = Type.Object({
  transId: Type.String(),
  cardId: Type.String(),
  /** Null for a consumer card of the managed-balance model (subjectType USER). */
  organizationId: Nullable(Type.String()),
  subjectType: Type.String(),
  subjectId: Type.String(),
  messageType: MessageType,
  authType: Literals(['EXPEND', 'REFUND', 'REVERSAL'], { description: 'EXPEND for a purchase, REFUND for a merchant refund, REVERSAL for a reversal' }),
  debitCreditIndicator: Literals(['D', 'C'], { description: 'D (debit) or C (credit)' }),
  approved: Type.Boolean(),
  status: Literals(['PENDING', 'CLEARED', 'REVERSED', 'EXPIRED', 'DECLINED', 'POSTED'], { description: 'Authorizations: PENDING, CLEARED, REVERSED, EXPIRED or DECLINED; other messages: POSTED' }),
  declineReason: Nullable(Type.String()),
  declineDetail: Nullable(Type.String({
    description: 'More on a decline: the subject and code of CAPABILITY_FROZEN, the rule and period of VELOCITY_LIMIT_EXCEEDED, your reason of '
      + 'PARTNER_DECLINED when it matches [A-Z0-9_]{1,40}, why your stand-in applied for PARTNER_TIMEOUT (as partnerDecision.standInReason)',
  })),
  amount: Money({ maxScale: 18, sign: 'positive' }),
  currency: Type.String(),
  billingAmount: Money({ maxScale: 18, sign: 'positive' }),
  billingCurrency: Type.String(),
  holdAmount: Money({ maxScale: 18, sign: 'nonNegative' }),
  merchantName: Nullable(Type.String()),
  mcc: Nullable(Type.String()),
  merchantCountry: Nullable(Type.String()),
  channel: Nullable(Type.String()),
  outstandingTransactionId: Nullable(Type.String()),
  postedTransactionId: Nullable(Type.String()),
  originalTransId: Nullable(Type.String()),
  networkTransactionId: Type.String(),
  source: Type.String({ description: 'NETWORK or SANDBOX' }),
  partnerDecision: Type.Union([Type.Object({
    outcome: Type.String({ description: 'APPROVED, DECLINED, STAND_IN_APPROVED or STAND_IN_DECLINED' }),
    standInReason: Nullable(Type.String({ description: 'Why no valid answer: TIMEOUT, TRANSPORT_ERROR, BLOCKED, HTTP_STATUS, MALFORMED_ANSWER, DECRYPTION_FAILED, SIGNATURE_INVALID, TRANS_ID_MISMATCH, NOT_CONFIGURED, or SERVICE_ERROR (the service failed between the hold and the decision)' })),
    partnerDeclineReason: Nullable(Type.String({ description: 'Your decline reason as received: at most 64 characters, control characters shown as U+FFFD' })),
    latencyMs: Type.Integer(),
    httpStatus: Nullable(Type.Integer()),
  }), Type.Null()], { description: 'The auth_url forwarding of this authorization, null when not forwarded' }),
  transactionTime: Type.String(),
  createTime: Type.String(),
  modifyTime: Type.String(),
});
export type TransactionView = Static<typeof TransactionOut>;


export const ListTransactionsQuery = Type.Object({
  organizationId: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
  cardId: Type.Optional(CardId),
  customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 36, description: 'Transactions of this employee\'s cards' })),
  status: Type.Optional(TransactionStatus),
  messageType: Type.Optional(MessageType),
  startTime: Type.Optional(IsoTime),
  endTime: Type.Optional(IsoTime),
  ...PagingQuery,
});
export const TransactionPageOut = Page(TransactionOut);

export const ResolveBody = Type.Object({
  ids: Type.Array(Type.String({ minLength: 1, maxLength: TRANS_ID_MAX }), { minItems: 1, maxItems: RESOLVE_IDS_MAX }),
});
export const ResolvedOut = Type.Array(Type.Object({
  id: Type.String(),
  found: Type.Boolean(),
  idType: Nullable(Type.String({ description: 'OUTSTANDING or POSTED' })),
  posted: Type.Boolean(),
  postingStatus: Nullable(Type.String({ description: 'The authorization status (PENDING, CLEARED, REVERSED, EXPIRED) or POSTED' })),
  transId: Nullable(Type.String()),
  relatedTransactionId: Nullable(Type.String({ description: 'The posted id of an outstanding one once cleared, or the outstanding id of a posted one' })),
}));

export const NetworkKeyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64 }),
  ipAllowlist: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100 })),
});

export const ServicePublicKey = Type.Object({
  keyId: Type.String(), publicKey: Type.String(), algorithm: Type.String(), signatureAlgorithm: Type.String(), encryption: Type.String(),
});

export const AuthUrlTestReport = Type.Object({
  configured: Type.Boolean(),
  transId: Type.Optional(Type.String()),
  delivered: Type.Boolean(),
  answerVerified: Type.Boolean(),
  approved: Nullable(Type.Boolean()),
  declineReason: Nullable(Type.String()),
  standInReason: Nullable(Type.String()),
  outcome: Type.Optional(Type.String()),
  httpStatus: Nullable(Type.Integer()),
  latencyMs: Type.Integer(),
  error: Nullable(Type.String()),
});

export const NetworkKeyOut = Type.Object({
  networkKeyId: Type.String(), name: Type.String(), apiKey: Type.String(), secretKey: Type.String(), ipAllowlist: Type.Array(Type.String()),
  status: Type.String(), createTime: Type.String(),
});
