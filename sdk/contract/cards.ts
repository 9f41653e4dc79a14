import { Type } from 'typebox';
import { OpenUpgrade } from './card-upgrades.ts';
import { RULE_IDS_PER_CARD_MAX } from './velocity.ts';
import { CORPORATE_SCALE, IsoTime, Money, Nullable, Page, PagingQuery, WireNumber } from './wire.ts';

/** Corporate cards (4.4, D22-D29): profiles, applications, cards, secure card data, receiving accounts, transfers. */

/** Embossing limit of a cardholder name (ISO 7813 track 1 allows 26 characters). */
export const CARDHOLDER_NAME_MAX = 26;

export const OrganizationId = Type.String({ minLength: 1, maxLength: 20, description: 'Company id (up to 20)' });
/** 8: cardId is up to 20 in the single-card query and up to 32 in secure-card and open-va. */
export const CardId32 = Type.String({ minLength: 1, maxLength: 32, description: 'Card id (up to 32)' });
export const CardId20 = Type.String({ minLength: 1, maxLength: 20, description: 'Card id (up to 20)' });
export const CustomerId = Type.String({ minLength: 1, maxLength: 36 });
export const CardNetwork = Type.Union([Type.Literal('VISA'), Type.Literal('MASTERCARD')]);
export const CardForm = Type.Union([Type.Literal('VIRTUAL'), Type.Literal('PHYSICAL')]);
/** ASSET: a consumer card profile of the managed-balance model (/card/v2/apply). */
export const BalanceMode = Type.Union([Type.Literal('SHARED'), Type.Literal('DEDICATED'), Type.Literal('ASSET')]);
export const CardSubjectType = Type.Union([Type.Literal('ORGANIZATION'), Type.Literal('CUSTOMER')]);
export const CardStatus = Type.Union([Type.Literal('ACTIVE'), Type.Literal('BLOCKED'), Type.Literal('CANCELLED')]);
export const ProfileStatus = Type.Union([Type.Literal('ACTIVE'), Type.Literal('INACTIVE')]);
export const Currency = Type.Union([Type.Literal('USD'), Type.Literal('HKD')]);
export const FEE_RULES = { maxScale: CORPORATE_SCALE, sign: 'nonNegative' } as const;
export const TRANSFER_AMOUNT_RULES = { maxScale: CORPORATE_SCALE, sign: 'positive' } as const;
export const BalanceAmounts = Type.Object({ available: WireNumber(), pending: WireNumber(), total: WireNumber() });

export const ProfileView = Type.Object({
  cardProfileId: Type.String(),
  profileName: Type.String(),
  cardNetwork: CardNetwork,
  cardForm: CardForm,
  balanceMode: BalanceMode,
  settlementCurrencies: Type.Array(Type.String()),
  fees: Type.Object({ issuanceFee: WireNumber(), monthlyFee: WireNumber(), postalFee: WireNumber(), frozenFee: WireNumber() }),
  status: ProfileStatus,
});
export const AdminProfileView = Type.Intersect([ProfileView, Type.Object({
  partnerId: Nullable(Type.String()), bin: Type.String(), panLength: Type.Integer(), validityMonths: Type.Integer(),
  createTime: IsoTime, modifyTime: IsoTime,
})]);

export const ApplyView = Type.Object({
  cardApplyId: Type.String({ maxLength: 20 }),
  cardApplyRef: Type.String(),
  organizationId: Type.String(),
  status: Type.Union([Type.Literal('PENDING'), Type.Literal('PROCESSING'), Type.Literal('SUCCESS'), Type.Literal('REJECTED')]),
  cardId: Nullable(Type.String()),
  rejectReason: Nullable(Type.String({ description: 'Error code of the check that failed at processing, SCREENING_REJECTED or PROCESSING_FAILED' })),
  createTime: IsoTime,
  modifyTime: IsoTime,
  cardProfileId: Type.String(),
  subjectType: CardSubjectType,
  subjectId: Type.String(),
  custodianCustomerId: Type.String(),
  ruleIds: Type.Array(Type.String()),
});

export const CardView = Type.Object({
  cardId: Type.String(),
  panFirst6: Type.String(),
  panLast4: Type.String(),
  organizationId: Type.String(),
  subjectType: CardSubjectType,
  subjectId: Type.String(),
  cardProfileId: Type.String(),
  cardNetwork: CardNetwork,
  currency: Type.String(),
  status: CardStatus,
  cardForm: CardForm,
  balanceMode: BalanceMode,
  settlementCurrencies: Type.Array(Type.String()),
  custodianCustomerId: Type.String(),
  cardholderName: Nullable(Type.String()),
  cardApplyId: Type.String(),
  createTime: IsoTime,
  modifyTime: IsoTime,
  openUpgrade: Type.Optional(OpenUpgrade),
});

export const SecureCardView = Type.Object({
  cardId: Type.String(),
  encryptedPan: Type.String({ description: 'Base64(AES-256-GCM ciphertext || 16-byte tag) of the PAN' }),
  encryptedCvv2: Type.String({ description: 'Base64(ciphertext || tag) of the CVV2' }),
  encryptedExpireDate: Type.String({ description: 'Base64(ciphertext || tag) of the expiry, plaintext mm/yy' }),
  iv: Type.String({ description: 'Base64 of the 12-byte IV, fresh per call (shared by the three fields unless PER_FIELD)' }),
  cvv2Iv: Type.Optional(Type.String({ description: 'PER_FIELD setting only: IV of encryptedCvv2' })),
  expireDateIv: Type.Optional(Type.String({ description: 'PER_FIELD setting only: IV of encryptedExpireDate' })),
});

const DepositSubjectType = Type.Union([Type.Literal('CARD'), Type.Literal('ORGANIZATION')]);
export const DepositAccountView = Type.Object({
  currency: Type.String(), accountNumber: Type.String(), accountName: Type.String(), bankName: Type.String(), bankCode: Type.String(),
  status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('CLOSED')]), subjectType: DepositSubjectType, subjectId: Type.String(), createTime: IsoTime,
});

export const ProfilePage = Page(ProfileView);
export const CardPage = Page(CardView);

export const ListProfilesQuery = Type.Object({
  cardNetwork: Type.Optional(CardNetwork), balanceMode: Type.Optional(BalanceMode), status: Type.Optional(ProfileStatus), ...PagingQuery,
});

export const ApplyCardBody = Type.Object({
  organizationId: OrganizationId,
  cardApplyRef: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$', description: 'Unique per partner; the cardOrderRef of card-order detail' }),
  cardProfileId: Type.String({ minLength: 1, maxLength: 32 }),
  subjectType: CardSubjectType,
  subjectId: Type.String({ minLength: 1, maxLength: 36, description: 'organizationId (company card) or customerId (employee card)' }),
  custodianCustomerId: Type.Optional(Type.String({ minLength: 1, maxLength: 36, description: 'Required for a company card: a current employee' })),
  cardholderName: Type.Optional(Type.String({
    minLength: 1, maxLength: CARDHOLDER_NAME_MAX, pattern: "^[A-Za-z][A-Za-z .'-]*$",
    description: 'Embossed name, Latin letters; defaults to the employee name for an employee card',
  })),
  ruleIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 32 }), { maxItems: RULE_IDS_PER_CARD_MAX, description: 'Velocity rules to bind to the new card; duplicates are rejected' })),
});

export const QueryApplyQuery = Type.Object({ cardApplyId: Type.String({ minLength: 1, maxLength: 20 }) });
export const CardOrderQuery = Type.Object({ cardOrderRef: Type.String({ minLength: 1, maxLength: 64 }) });
export const CardQuery = Type.Object({ cardId: CardId20 });
export const ListCardsQuery = Type.Object({
  organizationId: OrganizationId,
  subjectType: Type.Optional(CardSubjectType),
  subjectId: Type.Optional(Type.String({ minLength: 1, maxLength: 36 })),
  status: Type.Optional(CardStatus),
  ...PagingQuery,
});
export const CardIdBody = Type.Object({ cardId: CardId32 });

export const OpenVaBody = Type.Object({
  cardId: CardId32,
  fundingCurrencies: Type.Array(Type.String({ maxLength: 16 }), { maxItems: 10, description: 'USD and/or HKD, at least one, no duplicates' }),
});

export const DepositAccountQuery = Type.Object({ subjectType: DepositSubjectType, subjectId: Type.String({ minLength: 1, maxLength: 36 }) });
export const DepositAccountList = Type.Array(DepositAccountView);

export const TransferDirection = Type.Union([Type.Literal('POOL_TO_CARD'), Type.Literal('CARD_TO_POOL')]);
export const TransferBody = Type.Object({
  organizationId: OrganizationId,
  cardId: CardId32,
  direction: TransferDirection,
  currency: Type.String({ maxLength: 16 }),
  amount: Money(TRANSFER_AMOUNT_RULES),
  externalTranId: Type.String({ minLength: 1, maxLength: 64, description: 'Idempotency key, unique per partner' }),
});
export const TransferView = Type.Object({
  transferId: Type.String(), externalTranId: Type.String(), organizationId: Type.String(), cardId: Type.String(),
  direction: TransferDirection, currency: Type.String(), amount: WireNumber(), createTime: IsoTime, poolBalance: BalanceAmounts, cardBalance: BalanceAmounts,
});
