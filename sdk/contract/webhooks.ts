import { Type, type TSchema } from 'typebox';
import { ApplyView, CardView } from './cards.ts';
import { TransactionOut } from './authorization.ts';
import { UpgradeView } from './card-upgrades.ts';
import { ConsumerApplyView, ConsumerCardView } from './consumer-cards.ts';
import { IsoTime, Literals, Nullable, WireNumber } from './wire.ts';

/**
 * The `data` of every webhook event type (D38, D49, section 6), for the OpenAPI `webhooks` section
 * and the SDK's types. The body around it is `{eventId, eventType, businessId, sequence, createTime, data}`.
 */

const RestrictionCode = Literals(['ACCOUNT_FROZEN', 'CASH_IN_FROZEN', 'CASH_OUT_FROZEN', 'PAYMENT_FROZEN', 'CARD_FROZEN']);
const RestrictionItem = Type.Object({ code: RestrictionCode, source: Literals(['PARTNER', 'RISK', 'REGULATORY', 'JUDICIAL']) });
const statusChange = {
  addRestrictions: Type.Array(RestrictionCode),
  removeRestrictions: Type.Array(RestrictionCode),
  remark: Nullable(Type.String()),
  source: Type.String({ description: 'PARTNER, RISK, REGULATORY, JUDICIAL or OPERATOR (suspension, termination)' }),
  status: Literals(['ACTIVE', 'TERMINATED', 'SUSPENDED', 'FROZEN', 'RESTRICTED']),
  restrictions: Type.Array(RestrictionItem),
  retainedRestrictions: Type.Optional(Type.Array(RestrictionCode)),
};

/** A corporate card from its application (D49), or a consumer card of /card/v2/apply with the fees charged. */
export const CardCreatedData = Type.Union([
  Type.Object({ ...CardView.properties, ...ApplyView.properties, cardStatus: CardView.properties.status }),
  ConsumerApplyView,
]);
export const CardRejectedData = ApplyView;
export const CardStatusChangedData = Type.Union([
  Type.Object({ ...CardView.properties, previousStatus: CardView.properties.status }),
  Type.Object({ ...ConsumerCardView.properties, previousStatus: CardView.properties.status }),
]);
export const VerificationCodeSentData = Type.Object({
  externalUserId: Type.String(), cardId: Type.String(), channel: Literals(['SMS', 'EMAIL']),
  code: Type.String({ description: 'The 6-digit code (sandbox only: production never sends it in an event)' }), expireTime: IsoTime,
});
export const CustomerStatusChangedData = Type.Object({ customerId: Type.String(), organizationId: Type.String(), ...statusChange });
export const OrganizationStatusChangedData = Type.Object({ organizationId: Type.String(), ...statusChange });
export const CustomerKycChangedData = Type.Object({
  customerId: Type.String(), kycStatus: Literals(['PENDING', 'APPROVED', 'REJECTED']), reason: Nullable(Type.String()),
});
export const LowBalanceData = Type.Object({
  organizationId: Type.String(), currency: Type.String(), available: WireNumber(), threshold: WireNumber(),
});
export const CardTransactionData = TransactionOut;
/** The upgrade record after the change (issue 30, D52); in sandbox the SHIPPED event also carries the activation code. */
export const CardUpgradeStatusChangedData = Type.Intersect([UpgradeView, Type.Object({
  activationCode: Type.Optional(Type.String({ description: 'Sandbox only, SHIPPED only: the 6-digit code printed on the card carrier' })),
})]);
export const WebhookTestData = Type.Object({
  test: Type.Literal(true), message: Type.String(), partnerId: Type.String(), sentTime: IsoTime,
});

export interface WebhookEventDoc {
  eventType: string;
  summary: string;
  businessId: string;
  /** The field of the example whose value is the event's businessId (a sample's businessId). */
  businessIdField: string;
  /** Sent in sandbox only (never in production). */
  sandboxOnly?: boolean;
  data: TSchema;
  example: Record<string, unknown>;
}

const T = '2026-11-22T06:30:21.000Z';
const card = {
  cardId: 'cdmwxdk8zr3fa53eaf45', panFirst6: '462263', panLast4: '0366', organizationId: 'orgmwxdk8zq49621f23a', subjectType: 'CUSTOMER',
  subjectId: 'cusmwxdk8zr9bf0f6582', cardProfileId: 'sbx-visa-shared', cardNetwork: 'VISA', currency: 'USD', status: 'ACTIVE',
  cardForm: 'VIRTUAL', balanceMode: 'SHARED', settlementCurrencies: ['USD'], custodianCustomerId: 'cusmwxdk8zr9bf0f6582',
  cardholderName: 'ALICE TAN', cardApplyId: 'camwxdk8zr720bb28e85', createTime: T, modifyTime: T,
};
const apply = {
  cardApplyId: 'camwxdk8zr720bb28e85', cardApplyRef: 'apply-0001', organizationId: 'orgmwxdk8zq49621f23a', status: 'SUCCESS', cardId: card.cardId,
  rejectReason: null, createTime: T, modifyTime: T, cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER', subjectId: card.subjectId,
  custodianCustomerId: card.subjectId, ruleIds: [],
};
const { status: _cardStatus, createTime: _c, modifyTime: _m, ...cardFields } = card;

/** Every event type the service sends, in the order the OpenAPI document lists them. */
export const WEBHOOK_EVENTS: WebhookEventDoc[] = [
  { eventType: 'CARD_CREATED', businessIdField: 'cardId', summary: 'A card application ended in a card', businessId: 'the cardId', data: CardCreatedData,
    example: { ...cardFields, ...apply, cardStatus: 'ACTIVE' } },
  { eventType: 'CARD_REJECTED', businessIdField: 'cardApplyId', summary: 'A card application was rejected', businessId: 'the cardApplyId', data: CardRejectedData,
    example: { ...apply, status: 'REJECTED', cardId: null, rejectReason: 'SCREENING_REJECTED' } },
  { eventType: 'CARD_STATUS_CHANGED', businessIdField: 'cardId', summary: 'A card was blocked, unblocked or cancelled', businessId: 'the cardId', data: CardStatusChangedData,
    example: { ...card, status: 'BLOCKED', previousStatus: 'ACTIVE' } },
  { eventType: 'CARD_UPGRADE_STATUS_CHANGED', businessIdField: 'cardId', summary: 'A physical card upgrade changed state (PENDING, PRODUCING, SHIPPED, DELIVERED, ACTIVATED, REJECTED, CANCELLED)',
    businessId: 'the cardId', data: CardUpgradeStatusChangedData, example: {
      upgradeRef: 'upgrade-0001', cardId: card.cardId, cardProfileId: 'sbx-visa-shared-physical', status: 'SHIPPED',
      shippingAddress: { postalCode: null, addressLine1: '1 Queen\'s Road Central', addressLine2: null, addressLine3: null, city: 'Central', state: 'Hong Kong Island', addressCountryCode: 'HK' },
      phoneCountryCode: 'HK', phoneNumber: '91234567', carrier: 'DHL', trackingNumber: 'JD014600006281230', rejectReason: null,
      fees: [{ type: 'CARD_PRINTING_FEE', currency: 'USD', amount: 5 }, { type: 'CARD_POSTAL_FEE', currency: 'USD', amount: 2.5 }],
      feesRefunded: false, activationLocked: false, createTime: T, modifyTime: T, activationCode: '204817',
    } },
  { eventType: 'CARD_TRANSACTION', businessIdField: 'cardId', summary: 'A card transaction was recorded or changed (authorization, clearing, reversal, refund)', businessId: 'the cardId',
    data: CardTransactionData, example: {
      transId: 'txmwxdk8zrbfad304ec4', cardId: card.cardId, organizationId: card.organizationId, subjectType: 'CUSTOMER', subjectId: card.subjectId,
      messageType: 'AUTHORIZATION', authType: 'EXPEND', debitCreditIndicator: 'D', approved: true, status: 'PENDING', declineReason: null,
      declineDetail: null, amount: 12.5, currency: 'USD', billingAmount: 12.5, billingCurrency: 'USD', holdAmount: 12.5,
      merchantName: 'Blue Bottle Coffee', mcc: '5814', merchantCountry: 'HK', channel: 'POS', outstandingTransactionId: 'otmwxdk8zrcbb26ba2d2',
      postedTransactionId: null, originalTransId: null, networkTransactionId: 'sandbox-1', source: 'SANDBOX', partnerDecision: null,
      transactionTime: T, createTime: T, modifyTime: T,
    } },
  { eventType: 'CUSTOMER_STATUS_CHANGED', businessIdField: 'customerId', summary: "An employee's restrictions or status changed", businessId: 'the customerId',
    data: CustomerStatusChangedData, example: {
      customerId: card.subjectId, organizationId: card.organizationId, addRestrictions: ['PAYMENT_FROZEN'], removeRestrictions: [], remark: null,
      source: 'PARTNER', status: 'RESTRICTED', restrictions: [{ code: 'PAYMENT_FROZEN', source: 'PARTNER' }], retainedRestrictions: [],
    } },
  { eventType: 'ORGANIZATION_STATUS_CHANGED', businessIdField: 'organizationId', summary: "A company's restrictions or status changed", businessId: 'the organizationId',
    data: OrganizationStatusChangedData, example: {
      organizationId: card.organizationId, addRestrictions: ['CASH_OUT_FROZEN'], removeRestrictions: [], remark: 'audit', source: 'PARTNER',
      status: 'RESTRICTED', restrictions: [{ code: 'CASH_OUT_FROZEN', source: 'PARTNER' }], retainedRestrictions: [],
    } },
  { eventType: 'CUSTOMER_KYC_CHANGED', businessIdField: 'customerId', summary: "An employee's KYC review changed state", businessId: 'the customerId',
    data: CustomerKycChangedData, example: { customerId: card.subjectId, kycStatus: 'APPROVED', reason: null } },
  { eventType: 'LOW_BALANCE', businessIdField: 'organizationId', summary: "A funding pool's available balance fell below its alert threshold", businessId: 'the organizationId',
    data: LowBalanceData, example: { organizationId: card.organizationId, currency: 'USD', available: 950.25, threshold: 1000 } },
  { eventType: 'VERIFICATION_CODE_SENT', businessIdField: 'cardId', sandboxOnly: true, summary: 'Sandbox only: a card verification code was sent to a user, with the code', businessId: 'the cardId',
    data: VerificationCodeSentData, example: {
      externalUserId: 'user-42', cardId: card.cardId, channel: 'EMAIL', code: '042917', expireTime: T,
    } },
  { eventType: 'WEBHOOK_TEST', businessIdField: 'partnerId', summary: 'A test event you asked for with POST /open-api/webhook/v1/test (attempted once, never retried)',
    businessId: 'your partnerId', data: WebhookTestData, example: {
      test: true, message: 'Test event from the card-issuing service', partnerId: 'ptmwxdk8zr3eac7b1705', sentTime: T,
    } },
];

// ---- test send and webhook signing secret (issue 14) ----

/** A signed example of an event type, on demand (issue 31). */
export const SampleEventBody = Type.Object({
  eventType: Type.String({
    minLength: 1, maxLength: 64, pattern: '^[A-Z][A-Z0-9_]*$',
    description: 'An event type of the webhooks section (CARD_CREATED, CARD_TRANSACTION, LOW_BALANCE, ...); sandbox-only types only in sandbox',
  }),
});

export const TestWebhookBody = Type.Object({
  message: Type.Optional(Type.String({ maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*$', description: 'Echoed in the test event (default: a fixed sentence)' })),
});

export const RotateWebhookSecretBody = Type.Object({
  overlapSeconds: Type.Optional(Type.Integer({
    minimum: 0, maximum: 604_800, default: 86_400,
    description: 'How long the previous secret keeps signing beside the new one (default 1 day, at most 7 days; 0 ends it now)',
  })),
});

export const RotatedWebhookSecret = Type.Object({
  webhookSecret: Type.String({ description: 'The new signing secret (whsec_...): shown only in this answer' }),
  createTime: IsoTime,
  previousSecretExpireTime: Nullable(IsoTime),
});

export const WebhookSecretStatus = Type.Object({
  configured: Type.Boolean(),
  secrets: Type.Array(Type.Object({ createTime: IsoTime, expireTime: Nullable(IsoTime) }), { description: 'Valid secrets, newest first (no material)' }),
});
