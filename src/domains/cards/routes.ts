import { Type } from 'typebox';
import { route, type RouteDef } from '../../platform/http/router.ts';
import { IsoTime, Money, Nullable, Page, PagingQuery } from '../../platform/http/schema.ts';
import {
  AdminProfileView, ApplyCardBody, ApplyView, BalanceMode, CardForm, CardIdBody, CardNetwork, CardOrderQuery, CardPage, CardQuery,
  CardView, Currency, DepositAccountList, DepositAccountQuery, FEE_RULES, ListCardsQuery, ListProfilesQuery, OpenVaBody, ProfilePage,
  ProfileStatus, QueryApplyQuery, SecureCardView, TransferBody, TransferView,
} from '../../../sdk/contract/cards.ts';
import { upgradeRoutes } from './upgrade-routes.ts';
import { cardKeyInventory, reencryptCardData, rotatePanDataKey } from './keys.ts';
import { createCardProfile, listProfilesForOperator, listProfilesForPartner, updateCardProfileSettings, type CardDeps } from './profiles.ts';
import {
  applyForCard, blockCard, cancelCard, cardOrderDetail, depositAccountsOf, listCardsOf, openVirtualAccounts, queryApply,
  queryCard, retrieveSecureCard, transferFunds, unblockCard,
} from './service.ts';

const paging = (q: { page?: number; pageSize?: number }) => ({ page: q.page ?? 1, pageSize: q.pageSize ?? 20 });

export function cardRoutes(deps: CardDeps): RouteDef[] {
  return [
    // ---- Operators: profiles (D22) and card keys (D26) ----
    route({
      method: 'POST',
      url: '/internal/admin/v1/card-profiles',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Create a card profile',
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
        fees: Type.Optional(Type.Object({
          issuanceFee: Type.Optional(Money(FEE_RULES)), monthlyFee: Type.Optional(Money(FEE_RULES)),
          postalFee: Type.Optional(Money(FEE_RULES)), frozenFee: Type.Optional(Money(FEE_RULES)),
        })),
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
        fees: Type.Optional(Type.Object({
          issuanceFee: Type.Optional(Money(FEE_RULES)), monthlyFee: Type.Optional(Money(FEE_RULES)),
          postalFee: Type.Optional(Money(FEE_RULES)), frozenFee: Type.Optional(Money(FEE_RULES)),
        })),
      }),
      data: AdminProfileView,
      errors: ['CARD_PROFILE_INVALID'],
      handler: ({ body }) => updateCardProfileSettings(deps, body),
    }),
    route({
      method: 'GET',
      url: '/internal/admin/v1/card-profiles',
      auth: 'admin', role: 'viewer',
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
      auth: 'admin', role: 'viewer',
      tag: 'Admin',
      summary: 'Card key inventory: ids, purposes, status and check values, never key material',
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
      summary: 'Rotate the PAN data key; the CVK rotates through CARD_CVK / CARD_CVK_ID',
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
      summary: 'Corporate card profiles (SHARED, DEDICATED) offered to the partner, newest first',
      description: 'The profiles corporate apply accepts: shared ones and the partner\'s own, balanceMode SHARED or DEDICATED. '
        + 'Consumer (ASSET) profiles are listed by GET /card/v2/list-profiles.',
      querystring: ListProfilesQuery,
      data: ProfilePage,
      errors: [],
      handler: ({ query, partner }) => {
        const { page, pageSize, ...filter } = query;
        return listProfilesForPartner(deps, partner.partnerId, 'CORPORATE', filter, paging({ page, pageSize }));
      },
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/card/v1/apply',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Apply for a virtual card; the outcome arrives as CARD_CREATED / CARD_REJECTED',
      description: 'Checks, in order: fields, cardApplyRef unique, organization, profile, subject and custodian, KYC, capabilities, rules. ' +
        'Accepted applications are PENDING; query-apply shows PROCESSING, then SUCCESS (cardId) or REJECTED (rejectReason).',
      body: ApplyCardBody,
      // A company card: subjectId is the organization, the custodian one of its employees (D23).
      example: {
        organizationId: 'orgmwxdk8zq49621f23a', cardApplyRef: 'acme-card-0001', cardProfileId: 'sbx-visa-shared', subjectType: 'ORGANIZATION',
        subjectId: 'orgmwxdk8zq49621f23a', custodianCustomerId: 'cusmwxdk8zr9bf0f6582', cardholderName: 'ACME TRADING', ruleIds: ['vrmwxdk8zrfc8dd4f18e'],
      },
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
      summary: 'Progress of a card application',
      querystring: QueryApplyQuery,
      data: ApplyView,
      errors: ['APPLY_NOT_FOUND'],
      handler: ({ query, partner }) => queryApply(deps, partner.partnerId, query.cardApplyId),
    }),
    route({
      method: 'GET',
      url: '/open-api/card-order/v1/detail',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Card order by cardOrderRef (= cardApplyRef): the card application record',
      querystring: CardOrderQuery,
      data: ApplyView,
      errors: ['APPLY_NOT_FOUND'],
      handler: ({ query, partner }) => cardOrderDetail(deps, partner.partnerId, query.cardOrderRef),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/card/v1/query',
      auth: 'partner',
      tag: 'Cards',
      summary: 'One card; every status is readable',
      querystring: CardQuery,
      data: CardView,
      errors: ['CARD_INVALID'],
      handler: ({ query, partner }) => queryCard(deps, partner.partnerId, query.cardId),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/card/v1/list',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Cards of a company, filtered, newest first',
      querystring: ListCardsQuery,
      data: CardPage,
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
      body: CardIdBody,
      data: CardView,
      errors: ['CARD_INVALID'],
      handler: ({ body, partner }) => blockCard(deps, partner.partnerId, body.cardId),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/card/v1/unblock',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Unblock a card (idempotent); refused while card management is frozen',
      body: CardIdBody,
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
      body: CardIdBody,
      data: CardView,
      errors: ['CARD_INVALID'],
      handler: ({ body, partner }) => cancelCard(deps, partner.partnerId, body.cardId),
    }),

    // ---- Secure card data (2.6, D27) ----
    route({
      method: 'POST',
      url: '/open-api-corp/card/v1/retrieve-secure-card',
      auth: 'partner',
      // Card data ciphertext is never stored (D26): no Idempotency-Key answer store; repeating it is harmless.
      idempotent: false,
      tag: 'Cards',
      summary: 'Full card data as AES-256-GCM ciphertext under the partner secretKey; PCI allowlist only',
      description: 'Decrypt with AES/GCM/NoPadding, 128-bit tag, key = the 32 UTF-8 bytes of secretKey, IV = Base64-decoded iv ' +
        '(cvv2Iv / expireDateIv with the PER_FIELD setting). Each field is Base64(ciphertext || tag). Fetch for each display; never store or cache. See docs/cards.md.',
      body: CardIdBody,
      data: SecureCardView,
      errors: ['PCI_NOT_CERTIFIED', 'CARD_INVALID'],
      // Never cached: every answer of the service is Cache-Control: no-store (app.ts).
      handler: ({ body, partner }) => retrieveSecureCard(deps, partner, body.cardId),
    }),

    // ---- Receiving accounts and dedicated balances (4.4, D28, D29) ----
    route({
      method: 'POST',
      url: '/open-api-corp/card/v1/open-va',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Open receiving accounts (one per currency) for a dedicated-balance card; all or nothing, idempotent',
      body: OpenVaBody,
      example: { cardId: 'cdmwxdk8zr3fa53eaf45', fundingCurrencies: ['USD', 'HKD'] },
      errors: ['CARD_INVALID', 'CARD_NOT_DEDICATED', 'UNSUPPORTED_CURRENCY', 'SUBJECT_INVALID', 'CURRENCY_NOT_ALLOWED'],
      handler: ({ body, partner }) => openVirtualAccounts(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/fund/v1/deposit-account',
      auth: 'partner',
      tag: 'Funds',
      summary: 'Receiving account numbers of a card (opened with open-va) or a company (one per funding pool)',
      querystring: DepositAccountQuery,
      data: DepositAccountList,
      errors: ['SUBJECT_INVALID'],
      handler: ({ query, partner }) => depositAccountsOf(deps, partner.partnerId, query),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/fund/v1/transfer',
      auth: 'partner',
      tag: 'Funds',
      summary: 'Move money between the company pool and a dedicated card of the same company',
      body: TransferBody,
      data: TransferView,
      errors: ['UNSUPPORTED_CURRENCY', 'ORGANIZATION_INVALID', 'EXTERNAL_TRAN_ID_DUPLICATE', 'CARD_INVALID', 'CARD_NOT_DEDICATED',
        'CURRENCY_NOT_ALLOWED', 'INSUFFICIENT_BALANCE'],
      handler: ({ body, partner }) => transferFunds(deps, partner.partnerId, body),
    }),
    // ---- Physical card upgrades (issue 30) ----
    ...upgradeRoutes(deps),
  ];
}
