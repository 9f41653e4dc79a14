import { Type } from 'typebox';
import { route, type RouteDef } from '../../platform/http/router.ts';
import { IsoTime, Money, Page, PagingQuery } from '../../platform/http/schema.ts';
import { CORPORATE_SCALE } from '../../platform/money.ts';
import { RULE_IDS_PER_CARD_MAX } from '../velocity/index.ts';
import { cardKeyInventory, reencryptCardData, rotatePanDataKey } from './keys.ts';
import { createCardProfile, listProfilesForOperator, listProfilesForPartner, updateCardProfileSettings, type CardDeps } from './profiles.ts';
import {
  applyForCard, blockCard, cancelCard, cardOrderDetail, depositAccountsOf, listCardsOf, openVirtualAccounts, queryApply,
  queryCard, retrieveSecureCard, transferFunds, unblockCard, CARDHOLDER_NAME_MAX,
} from './service.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const OrganizationId = Type.String({ minLength: 1, maxLength: 20, description: 'Company id (up to 20)' });
/** 8: cardId is up to 20 in the single-card query and up to 32 in secure-card and open-va. */
const CardId32 = Type.String({ minLength: 1, maxLength: 32, description: 'Card id (up to 32)' });
const CardId20 = Type.String({ minLength: 1, maxLength: 20, description: 'Card id (up to 20)' });
const CustomerId = Type.String({ minLength: 1, maxLength: 36 });
const CardNetwork = Type.Union([Type.Literal('VISA'), Type.Literal('MASTERCARD')]);
const CardForm = Type.Union([Type.Literal('VIRTUAL'), Type.Literal('PHYSICAL')]);
const BalanceMode = Type.Union([Type.Literal('SHARED'), Type.Literal('DEDICATED')]);
const CardSubjectType = Type.Union([Type.Literal('ORGANIZATION'), Type.Literal('CUSTOMER')]);
const CardStatus = Type.Union([Type.Literal('ACTIVE'), Type.Literal('BLOCKED'), Type.Literal('CANCELLED')]);
const ProfileStatus = Type.Union([Type.Literal('ACTIVE'), Type.Literal('INACTIVE')]);
const Currency = Type.Union([Type.Literal('USD'), Type.Literal('HKD')]);
const FEE = { maxScale: CORPORATE_SCALE, sign: 'nonNegative' } as const;
const TRANSFER_AMOUNT = { maxScale: CORPORATE_SCALE, sign: 'positive' } as const;
const Balance = Type.Object({ available: Type.Number(), pending: Type.Number(), total: Type.Number() });

const ProfileView = Type.Object({
  cardProfileId: Type.String(),
  profileName: Type.String(),
  cardNetwork: CardNetwork,
  cardForm: CardForm,
  balanceMode: BalanceMode,
  settlementCurrencies: Type.Array(Type.String()),
  fees: Type.Object({ issuanceFee: Type.Number(), monthlyFee: Type.Number() }),
  status: ProfileStatus,
});
const AdminProfileView = Type.Intersect([ProfileView, Type.Object({
  partnerId: Nullable(Type.String()), bin: Type.String(), panLength: Type.Integer(), validityMonths: Type.Integer(),
  createTime: IsoTime, modifyTime: IsoTime,
})]);

const ApplyView = Type.Object({
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

const CardView = Type.Object({
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
});

const SecureCardView = Type.Object({
  cardId: Type.String(),
  encryptedPan: Type.String({ description: 'Base64(AES-256-GCM ciphertext || 16-byte tag) of the PAN' }),
  encryptedCvv2: Type.String({ description: 'Base64(ciphertext || tag) of the CVV2' }),
  encryptedExpireDate: Type.String({ description: 'Base64(ciphertext || tag) of the expiry, plaintext mm/yy' }),
  iv: Type.String({ description: 'Base64 of the 12-byte IV, fresh per call (shared by the three fields unless PER_FIELD)' }),
  cvv2Iv: Type.Optional(Type.String({ description: 'PER_FIELD setting only: IV of encryptedCvv2' })),
  expireDateIv: Type.Optional(Type.String({ description: 'PER_FIELD setting only: IV of encryptedExpireDate' })),
});

const DepositAccountView = Type.Object({
  currency: Type.String(), accountNumber: Type.String(), accountName: Type.String(), bankName: Type.String(), bankCode: Type.String(),
  status: Type.String(), subjectType: Type.String(), subjectId: Type.String(), createTime: IsoTime,
});

const paging = (q: { page?: number; pageSize?: number }) => ({ page: q.page ?? 1, pageSize: q.pageSize ?? 20 });

export function cardRoutes(deps: CardDeps): RouteDef[] {
  return [
    // ---- Operators: profiles (D22) and card keys (D26) ----
    route({
      method: 'POST',
      url: '/internal/admin/v1/card-profiles',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Create a card profile (D22)',
      description: 'A profile fixes network, form, balance mode, settlement currencies (the card currency is the first one the company funds), BIN and fees. `partnerId` offers it to one partner only.',
      body: Type.Object({
        cardProfileId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$' })),
        partnerId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 20 }))),
        profileName: Type.String({ minLength: 1, maxLength: 64 }),
        cardNetwork: CardNetwork,
        cardForm: CardForm,
        balanceMode: BalanceMode,
        settlementCurrencies: Type.Array(Currency, { minItems: 1, maxItems: 2 }),
        bin: Type.String({ pattern: '^[0-9]{6,8}$' }),
        panLength: Type.Optional(Type.Integer({ minimum: 13, maximum: 19 })),
        validityMonths: Type.Optional(Type.Integer({ minimum: 1, maximum: 120 })),
        fees: Type.Optional(Type.Object({ issuanceFee: Type.Optional(Money(FEE)), monthlyFee: Type.Optional(Money(FEE)) })),
        status: Type.Optional(ProfileStatus),
      }),
      data: AdminProfileView,
      errors: ['PARTNER_INVALID'],
      handler: ({ body }) => createCardProfile(deps, body),
    }),
    route({
      method: 'POST',
      url: '/internal/admin/v1/card-profiles/update',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Change a card profile\'s name, fees or status; absent fields are kept',
      body: Type.Object({
        cardProfileId: Type.String({ minLength: 1, maxLength: 32 }),
        profileName: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        status: Type.Optional(ProfileStatus),
        fees: Type.Optional(Type.Object({ issuanceFee: Type.Optional(Money(FEE)), monthlyFee: Type.Optional(Money(FEE)) })),
      }),
      data: AdminProfileView,
      errors: ['CARD_PROFILE_INVALID'],
      handler: ({ body }) => updateCardProfileSettings(deps, body),
    }),
    route({
      method: 'GET',
      url: '/internal/admin/v1/card-profiles',
      auth: 'admin',
      tag: 'Admin',
      summary: 'List every card profile, newest first',
      querystring: Type.Object({ ...PagingQuery }),
      data: Page(AdminProfileView),
      errors: [],
      handler: ({ query }) => listProfilesForOperator(deps, paging(query)),
    }),
    route({
      method: 'GET',
      url: '/internal/admin/v1/card-keys',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Card key inventory (D26): ids, purposes, status and check values, never key material',
      data: Type.Array(Type.Object({
        keyId: Type.String(), purpose: Type.String(), source: Type.String(), status: Type.String(), checkValue: Type.String(),
        createTime: IsoTime, retireTime: Nullable(IsoTime),
      })),
      errors: [],
      handler: () => cardKeyInventory(deps),
    }),
    route({
      method: 'POST',
      url: '/internal/admin/v1/card-keys/rotate',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Rotate the PAN data key (D26); the CVK rotates through CARD_CVK / CARD_CVK_ID',
      body: Type.Object({ purpose: Type.Literal('PAN_DATA') }),
      data: Type.Object({ keyId: Type.String() }),
      errors: [],
      handler: () => rotatePanDataKey(deps),
    }),
    route({
      method: 'POST',
      url: '/internal/admin/v1/card-keys/reencrypt',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Re-seal card data still under a retired PAN data key with the active key, in batches',
      body: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })) }),
      data: Type.Object({ reencrypted: Type.Integer(), remaining: Type.Integer(), activeKeyId: Type.String() }),
      errors: [],
      handler: ({ body }) => reencryptCardData(deps, body.limit ?? 100),
    }),

    // ---- Partners: profiles, apply, reads ----
    route({
      method: 'GET',
      url: '/open-api-corp/card/v1/list-profiles',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Card profiles offered to the partner (D22, D48), newest first',
      querystring: Type.Object({
        cardNetwork: Type.Optional(CardNetwork), balanceMode: Type.Optional(BalanceMode), status: Type.Optional(ProfileStatus), ...PagingQuery,
      }),
      data: Page(ProfileView),
      errors: [],
      handler: ({ query, partner }) => {
        const { page, pageSize, ...filter } = query;
        return listProfilesForPartner(deps, partner.partnerId, filter, paging({ page, pageSize }));
      },
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/card/v1/apply',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Apply for a virtual card (D23, D44); the outcome arrives as CARD_CREATED / CARD_REJECTED',
      description: 'Checks, in order: fields, cardApplyRef unique, organization, profile, subject and custodian, KYC, capabilities, rules. ' +
        'Accepted applications are PENDING; query-apply shows PROCESSING, then SUCCESS (cardId) or REJECTED (rejectReason).',
      body: Type.Object({
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
      }),
      data: ApplyView,
      errors: ['CARD_APPLY_REF_DUPLICATE', 'ORGANIZATION_INVALID', 'CARD_PROFILE_INVALID', 'CUSTOMER_INVALID', 'KYC_NOT_APPROVED',
        'CAPABILITY_FROZEN', 'VELOCITY_RULE_NOT_FOUND', 'VELOCITY_RULE_STATUS_INVALID', 'VELOCITY_RULE_CURRENCY_MISMATCH'],
      handler: ({ body, partner }) => applyForCard(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/card/v1/query-apply',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Progress of a card application (D24)',
      querystring: Type.Object({ cardApplyId: Type.String({ minLength: 1, maxLength: 20 }) }),
      data: ApplyView,
      errors: ['APPLY_NOT_FOUND'],
      handler: ({ query, partner }) => queryApply(deps, partner.partnerId, query.cardApplyId),
    }),
    route({
      method: 'GET',
      url: '/open-api/card-order/v1/detail',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Card order by cardOrderRef (= cardApplyRef, D23): the application record of D24',
      querystring: Type.Object({ cardOrderRef: Type.String({ minLength: 1, maxLength: 64 }) }),
      data: ApplyView,
      errors: ['APPLY_NOT_FOUND'],
      handler: ({ query, partner }) => cardOrderDetail(deps, partner.partnerId, query.cardOrderRef),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/card/v1/query',
      auth: 'partner',
      tag: 'Cards',
      summary: 'One card (2.5, D25); every status is readable (D43)',
      querystring: Type.Object({ cardId: CardId20 }),
      data: CardView,
      errors: ['CARD_INVALID'],
      handler: ({ query, partner }) => queryCard(deps, partner.partnerId, query.cardId),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/card/v1/list',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Cards of a company, filtered, newest first (D25)',
      querystring: Type.Object({
        organizationId: OrganizationId,
        subjectType: Type.Optional(CardSubjectType),
        subjectId: Type.Optional(Type.String({ minLength: 1, maxLength: 36 })),
        status: Type.Optional(CardStatus),
        ...PagingQuery,
      }),
      data: Page(CardView),
      errors: ['ORGANIZATION_INVALID'],
      handler: ({ query, partner }) => {
        const { page, pageSize, ...filter } = query;
        return listCardsOf(deps, partner.partnerId, filter, paging({ page, pageSize }));
      },
    }),

    // ---- Card status (D25) ----
    route({
      method: 'POST',
      url: '/open-api-corp/card/v1/block',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Block a card: new authorizations decline (idempotent)',
      body: Type.Object({ cardId: CardId32 }),
      data: CardView,
      errors: ['CARD_INVALID'],
      handler: ({ body, partner }) => blockCard(deps, partner.partnerId, body.cardId),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/card/v1/unblock',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Unblock a card (idempotent); refused while card management is frozen (D20)',
      body: Type.Object({ cardId: CardId32 }),
      data: CardView,
      errors: ['CARD_INVALID', 'CAPABILITY_FROZEN'],
      handler: ({ body, partner }) => unblockCard(deps, partner.partnerId, body.cardId),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/card/v1/cancel',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Cancel a card for good (idempotent); a dedicated balance returns to the company pool',
      body: Type.Object({ cardId: CardId32 }),
      data: CardView,
      errors: ['CARD_INVALID'],
      handler: ({ body, partner }) => cancelCard(deps, partner.partnerId, body.cardId),
    }),

    // ---- Secure card data (2.6, D27) ----
    route({
      method: 'POST',
      url: '/open-api-corp/card/v1/retrieve-secure-card',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Full card data as AES-256-GCM ciphertext under the partner secretKey (2.6, D27); PCI allowlist only',
      description: 'Decrypt with AES/GCM/NoPadding, 128-bit tag, key = the 32 UTF-8 bytes of secretKey, IV = Base64-decoded iv ' +
        '(cvv2Iv / expireDateIv with the PER_FIELD setting). Each field is Base64(ciphertext || tag). Fetch for each display; never store or cache. See docs/cards.md.',
      body: Type.Object({ cardId: CardId32 }),
      data: SecureCardView,
      errors: ['PCI_NOT_CERTIFIED', 'CARD_INVALID'],
      handler: async ({ body, partner, reply }) => {
        reply.header('cache-control', 'no-store');
        return retrieveSecureCard(deps, partner, body.cardId);
      },
    }),

    // ---- Receiving accounts and dedicated balances (4.4, D28, D29) ----
    route({
      method: 'POST',
      url: '/open-api-corp/card/v1/open-va',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Open receiving accounts (one per currency) for a dedicated-balance card; all or nothing, idempotent',
      body: Type.Object({
        cardId: CardId32,
        fundingCurrencies: Type.Array(Type.String({ maxLength: 16 }), { maxItems: 10, description: 'USD and/or HKD, at least one, no duplicates' }),
      }),
      errors: ['CARD_INVALID', 'CARD_NOT_DEDICATED', 'UNSUPPORTED_CURRENCY', 'SUBJECT_INVALID', 'CURRENCY_NOT_ALLOWED'],
      handler: ({ body, partner }) => openVirtualAccounts(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/fund/v1/deposit-account',
      auth: 'partner',
      tag: 'Funds',
      summary: 'Receiving account numbers of a card (opened with open-va) or a company (one per funding pool) (D28)',
      querystring: Type.Object({
        subjectType: Type.Union([Type.Literal('CARD'), Type.Literal('ORGANIZATION')]),
        subjectId: Type.String({ minLength: 1, maxLength: 36 }),
      }),
      data: Type.Array(DepositAccountView),
      errors: ['SUBJECT_INVALID'],
      handler: ({ query, partner }) => depositAccountsOf(deps, partner.partnerId, query),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/fund/v1/transfer',
      auth: 'partner',
      tag: 'Funds',
      summary: 'Move money between the company pool and a dedicated card of the same company (D29)',
      body: Type.Object({
        organizationId: OrganizationId,
        cardId: CardId32,
        direction: Type.Union([Type.Literal('POOL_TO_CARD'), Type.Literal('CARD_TO_POOL')]),
        currency: Type.String({ maxLength: 16 }),
        amount: Money(TRANSFER_AMOUNT),
        externalTranId: Type.String({ minLength: 1, maxLength: 64, description: 'Idempotency key, unique per partner' }),
      }),
      data: Type.Object({
        transferId: Type.String(), externalTranId: Type.String(), organizationId: Type.String(), cardId: Type.String(),
        direction: Type.String(), currency: Type.String(), amount: Type.Number(), createTime: IsoTime, poolBalance: Balance, cardBalance: Balance,
      }),
      errors: ['UNSUPPORTED_CURRENCY', 'ORGANIZATION_INVALID', 'EXTERNAL_TRAN_ID_DUPLICATE', 'CARD_INVALID', 'CARD_NOT_DEDICATED',
        'CURRENCY_NOT_ALLOWED', 'INSUFFICIENT_BALANCE'],
      handler: ({ body, partner }) => transferFunds(deps, partner.partnerId, body),
    }),
  ];
}
