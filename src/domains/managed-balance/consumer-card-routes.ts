import { Type } from 'typebox';
import { route, type RouteDef } from '../../platform/http/router.ts';
import {
  ConsumerApplyBody, ConsumerApplyView, ConsumerBlockBody, ConsumerCardPage, ConsumerCardView, ConsumerDetailQuery, ConsumerListProfilesQuery,
  ConsumerListQuery, ConsumerTransaction, ConsumerTransactionPage, ContactBody, ContactView, FiatTransactionsQuery, SendCodeBody, SendCodeView,
  StatementDetailQuery,
} from '../../../sdk/contract/consumer-cards.ts';
import { ProfilePage } from '../../../sdk/contract/cards.ts';
import { listProfilesForPartner } from '../cards/index.ts';
import {
  applyConsumerCard, blockUserCard, consumerCardDetail, fiatTransactions, listUserCards, sendVerificationCode, setUserContact,
  statementDetail, type ConsumerCardDeps,
} from './consumer-cards.ts';
import {
  ConsumerActivatePhysicalBody, ConsumerUpgradeDetailQuery, ConsumerUpgradePhysicalBody, ConsumerUpgradeRefBody, UpgradeView,
} from '../../../sdk/contract/card-upgrades.ts';
import { activateConsumerPhysical, cancelConsumerUpgrade, consumerUpgradeDetail, upgradeConsumerCard } from './consumer-upgrades.ts';

const TAG = 'Consumer cards';
const paging = (q: { page?: number; pageSize?: number }) => ({ page: q.page ?? 1, pageSize: q.pageSize ?? 20 });

/** Consumer cards of the managed-balance model (4.2; D35, D36, D43). See docs/consumer-cards.md. */
export function consumerCardRoutes(deps: ConsumerCardDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      url: '/card/v2/list-profiles',
      auth: 'partner',
      tag: TAG,
      summary: 'Consumer card profiles (ASSET) offered to the partner, newest first',
      description: 'The profiles /card/v2/apply accepts: shared ones and the partner\'s own, balanceMode ASSET; items as in the corporate list. '
        + 'Corporate (SHARED, DEDICATED) profiles are listed by GET /open-api-corp/card/v1/list-profiles.',
      querystring: ConsumerListProfilesQuery,
      data: ProfilePage,
      errors: [],
      handler: ({ query, partner }) => {
        const { page, pageSize, ...filter } = query;
        return listProfilesForPartner(deps, partner.partnerId, 'CONSUMER', filter, paging({ page, pageSize }));
      },
    }),
    route({
      method: 'POST',
      url: '/card/v2/apply',
      auth: 'partner',
      tag: TAG,
      summary: 'Issue a consumer card to a user, charging the profile\'s fees',
      description: 'Synchronous: the card is ACTIVE in the answer. The card bills in USD and spends `fundingAsset` (default USD): 1:1 when the asset is USD-pegged, else at the asset\'s operator rate; an asset without a rate is ASSET_INVALID. '
        + 'Fees of the profile (USD) are charged from the user\'s free balance in that asset, at its rate rounded up: CARD_PRINTING_FEE (issuanceFee) and, for a PHYSICAL card, CARD_POSTAL_FEE (postalFee); '
        + 'a fee above free refuses the apply with INSUFFICIENT_BALANCE and nothing is created. `mobile` and `email` (optional) are where verification codes go. '
        + 'Refused with CAPABILITY_FROZEN (data.errorCode CARD_FROZEN or ACCOUNT_FROZEN) when the user\'s card management is frozen. Retry safely with an Idempotency-Key header.',
      body: ConsumerApplyBody,
      data: ConsumerApplyView,
      example: { externalUserId: 'user-42', cardProfileId: 'sbx-visa-consumer', cardholderName: 'ADA LOVELACE', fundingAsset: 'USDT', email: 'ada@example.com' },
      errors: ['ASSET_INVALID', 'CARD_PROFILE_INVALID', 'CAPABILITY_FROZEN', 'INSUFFICIENT_BALANCE'],
      handler: ({ body, partner }) => applyConsumerCard(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: '/card/v2/list',
      auth: 'partner',
      tag: TAG,
      summary: 'The user\'s consumer cards in every state, newest first',
      querystring: ConsumerListQuery,
      data: ConsumerCardPage,
      errors: [],
      handler: ({ query, partner }) => {
        const { page, pageSize, ...filter } = query;
        return listUserCards(deps, partner.partnerId, filter, paging({ page, pageSize }));
      },
    }),
    route({
      method: 'GET',
      url: '/card/v2/detail',
      auth: 'partner',
      tag: TAG,
      summary: 'One consumer card of the user, with cardMantissa (last four digits)',
      description: 'Every state is readable. Another user\'s or partner\'s card, or a corporate card, is CARD_INVALID.',
      querystring: ConsumerDetailQuery,
      data: ConsumerCardView,
      errors: ['CARD_INVALID'],
      handler: ({ query, partner }) => consumerCardDetail(deps, partner.partnerId, query),
    }),
    route({
      method: 'POST',
      url: '/card/v2/block',
      auth: 'partner',
      tag: TAG,
      summary: 'Freeze (block=true) or unfreeze (block=false) a consumer card',
      description: '`data` is false on success both ways. Freezing needs no code. Unfreezing needs `smsCode` or `emailCode` from /card/v2/send-verification-code '
        + '(6 digits, 5 minutes, at most 5 attempts, single use; otherwise VERIFICATION_CODE_INVALID), the user\'s card capability, and charges the profile\'s '
        + 'CARD_VIP_FROZEN_FEE (frozenFee) when it has one. A card already in the asked state answers false and changes nothing.',
      body: ConsumerBlockBody,
      data: Type.Boolean(),
      errors: ['CARD_INVALID', 'VERIFICATION_CODE_INVALID', 'CAPABILITY_FROZEN', 'INSUFFICIENT_BALANCE'],
      handler: ({ body, partner }) => blockUserCard(deps, partner.partnerId, body),
    }),
    route({
      method: 'POST',
      url: '/card/v2/send-verification-code',
      auth: 'partner',
      tag: TAG,
      summary: 'Send the user a 6-digit code for unfreezing the card',
      description: 'Sent to the user\'s mobile (SMS) or email (EMAIL) given at apply or with /card/v2/contact, through the notification transport; in sandbox also as the event VERIFICATION_CODE_SENT (with the code). '
        + 'A user without that contact is DAPI_PARAM_INVALID naming it (mobile or email); in sandbox the code is issued all the same and goes to the event only (destination "event:VERIFICATION_CODE_SENT"). '
        + 'A new code replaces the card\'s earlier ones. Codes of one card are at least 60 s apart and at most 10 in 24 hours: otherwise VERIFICATION_CODE_TOO_FREQUENT with a Retry-After header (seconds).',
      body: SendCodeBody,
      data: SendCodeView,
      errors: ['CARD_INVALID', 'VERIFICATION_CODE_TOO_FREQUENT'],
      handler: ({ body, partner }) => sendVerificationCode(deps, partner.partnerId, body),
    }),
    route({
      method: 'POST',
      url: '/card/v2/contact',
      auth: 'partner',
      tag: TAG,
      summary: 'Set where the user\'s verification codes go (mobile, email)',
      description: 'Given fields replace the stored ones; absent fields stay. The user is created on first use.',
      body: ContactBody,
      data: ContactView,
      errors: [],
      handler: ({ body, partner }) => setUserContact(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: '/card/v1/fiat/transactions',
      auth: 'partner',
      tag: TAG,
      summary: 'Transactions of consumer cards, newest first',
      description: 'Authorizations, clearings, reversals and refunds of the partner\'s consumer cards, of one user when `externalUserId` is given; filters by card, authType, status and time (startTime inclusive, endTime exclusive); paged (page, pageSize).',
      querystring: FiatTransactionsQuery,
      data: ConsumerTransactionPage,
      errors: [],
      handler: ({ query, partner }) => {
        const { page, pageSize, ...filter } = query;
        return fiatTransactions(deps, partner.partnerId, filter, paging({ page, pageSize }));
      },
    }),
    route({
      method: 'GET',
      url: '/card/v2/statements/detail',
      auth: 'partner',
      tag: TAG,
      summary: 'One transaction of the user\'s consumer cards by transId',
      querystring: StatementDetailQuery,
      data: ConsumerTransaction,
      errors: ['TRANSACTION_NOT_FOUND'],
      handler: ({ query, partner }) => statementDetail(deps, partner.partnerId, query),
    }),

    // ---- Physical card upgrades (issue 30) ----
    route({
      method: 'POST',
      url: '/card/v2/upgrade-physical',
      auth: 'partner',
      tag: TAG,
      summary: 'Upgrade a user\'s ACTIVE virtual card to a physical card; the card keeps its id, number, balance and rules',
      description: 'Checks, in order: upgradeRef unused (CARD_UPGRADE_REF_DUPLICATE); the card is the user\'s, ACTIVE and VIRTUAL (CARD_INVALID); the profile is an ACTIVE PHYSICAL consumer '
        + 'profile offered to you of the card\'s network (CARD_PROFILE_INVALID); the user\'s card management is not frozen (CAPABILITY_FROZEN, data.errorCode CARD_FROZEN or ACCOUNT_FROZEN); '
        + 'the card has no open upgrade (CARD_UPGRADE_IN_PROGRESS); shippingAddress is given and a phone is known: phoneCountryCode and phoneNumber, else the user\'s mobile of '
        + '/card/v2/contact (DAPI_PARAM_INVALID naming the missing one). The address and phone are copied into the upgrade now. The profile\'s issuanceFee (CARD_PRINTING_FEE) '
        + 'and postalFee (CARD_POSTAL_FEE), in USD, are charged now from the user\'s free balance in the card\'s funding asset (at its rate, rounded up); INSUFFICIENT_BALANCE creates nothing.',
      body: ConsumerUpgradePhysicalBody,
      data: UpgradeView,
      example: {
        externalUserId: 'user-42', cardId: 'cdmwxdk8zr3fa53eaf45', upgradeRef: 'upgrade-0001', cardProfileId: 'sbx-visa-consumer-physical',
        shippingAddress: { addressLine1: '1 Queen\'s Road Central', city: 'Central', state: 'Hong Kong Island', addressCountryCode: 'HK' },
        phoneCountryCode: 'HK', phoneNumber: '91234567',
      },
      errors: ['CARD_UPGRADE_REF_DUPLICATE', 'CARD_INVALID', 'CARD_PROFILE_INVALID', 'CAPABILITY_FROZEN', 'CARD_UPGRADE_IN_PROGRESS', 'ASSET_INVALID',
        'INSUFFICIENT_BALANCE'],
      handler: ({ body, partner }) => upgradeConsumerCard(deps, partner.partnerId, body),
    }),
    route({
      method: 'POST',
      url: '/card/v2/cancel-upgrade',
      auth: 'partner',
      tag: TAG,
      summary: 'Cancel a physical card upgrade before it is shipped; its fees are refunded to the user',
      description: 'Allowed while the upgrade is PENDING or PRODUCING; otherwise CARD_UPGRADE_STATUS_INVALID.',
      body: ConsumerUpgradeRefBody,
      data: UpgradeView,
      example: { externalUserId: 'user-42', upgradeRef: 'upgrade-0001' },
      errors: ['CARD_UPGRADE_NOT_FOUND', 'CARD_UPGRADE_STATUS_INVALID'],
      handler: ({ body, partner }) => cancelConsumerUpgrade(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: '/card/v2/upgrade-detail',
      auth: 'partner',
      tag: TAG,
      summary: 'A physical card upgrade of the user: status, delivery address, carrier and tracking number, fees',
      querystring: ConsumerUpgradeDetailQuery,
      data: UpgradeView,
      errors: ['CARD_UPGRADE_NOT_FOUND'],
      handler: ({ query, partner }) => consumerUpgradeDetail(deps, partner.partnerId, query),
    }),
    route({
      method: 'POST',
      url: '/card/v2/activate-physical',
      auth: 'partner',
      // The body holds the activation code: no Idempotency-Key store (it keeps an unkeyed hash of the body); a retry after
      // success answers CARD_UPGRADE_STATUS_INVALID and upgrade-detail shows ACTIVATED.
      idempotent: false,
      tag: TAG,
      summary: 'Activate the user\'s physical card with the 6-digit code printed on its carrier; the card becomes PHYSICAL',
      description: 'Allowed once the upgrade is SHIPPED or DELIVERED (else CARD_UPGRADE_STATUS_INVALID). A wrong code is CARD_ACTIVATION_CODE_INVALID; after 5 wrong codes '
        + 'every try, the right code included, is CARD_ACTIVATION_LOCKED until support unlocks it.',
      body: ConsumerActivatePhysicalBody,
      data: UpgradeView,
      example: { externalUserId: 'user-42', cardId: 'cdmwxdk8zr3fa53eaf45', activationCode: '204817' },
      errors: ['CARD_INVALID', 'CARD_UPGRADE_STATUS_INVALID', 'CARD_ACTIVATION_CODE_INVALID', 'CARD_ACTIVATION_LOCKED'],
      handler: ({ body, partner }) => activateConsumerPhysical(deps, partner.partnerId, body),
    }),
  ];
}
