import { route, type RouteDef } from '../../platform/http/router.ts';
import {
  ActivatePhysicalBody, AdminUpgradeRefBody, AdminUpgradeStatusBody, UpgradeDetailQuery, UpgradePhysicalBody, UpgradeRefBody,
  UpgradeStatusAnswer, UpgradeView,
} from '../../../sdk/contract/card-upgrades.ts';
import type { CardDeps } from './profiles.ts';
import {
  activatePhysical, cancelUpgrade, reportBureauStatus, unlockActivation, upgradeCorporateCard, upgradeDetail,
} from './upgrades.ts';

const CORPORATE = { family: 'CORPORATE' } as const;

/** Example of a delivery the bureau reports (operators) or the sandbox simulates. */
const SHIPPED_EXAMPLE = { upgradeRef: 'upgrade-0001', status: 'SHIPPED', carrier: 'DHL', trackingNumber: 'JD014600006281230' };

/** Physical card upgrades of corporate cards (issue 30) and the card bureau's operator routes. */
export function upgradeRoutes(deps: CardDeps): RouteDef[] {
  return [
    route({
      method: 'POST',
      url: '/open-api-corp/card/v1/upgrade-physical',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Upgrade an ACTIVE virtual card to a physical card; the card keeps its id, number, balance and rules',
      description: 'Checks, in order: upgradeRef unused (CARD_UPGRADE_REF_DUPLICATE); the card is yours, ACTIVE and VIRTUAL (CARD_INVALID); the profile is an ACTIVE PHYSICAL profile '
        + 'offered to you of the card\'s network, balance mode and currency (CARD_PROFILE_INVALID); card management is not frozen for the company or the employee '
        + '(CAPABILITY_FROZEN, data.errorCode CARD_FROZEN or ACCOUNT_FROZEN, or SUSPENDED when an operator suspended the company or the employee); the cardholder (the employee, or the custodian of a company card) is a current employee '
        + '(CUSTOMER_INVALID) with approved KYC (KYC_NOT_APPROVED); the card has no open upgrade (CARD_UPGRADE_IN_PROGRESS); the cardholder has a SHIPPING_ADDRESS and a phone number '
        + '(DAPI_PARAM_INVALID naming shippingAddress or phoneNumber). The address and phone are copied into the upgrade now: later changes do not move the card. '
        + 'The profile\'s issuanceFee (CARD_PRINTING_FEE) and postalFee (CARD_POSTAL_FEE) are charged now, in the card currency, from the company pool (shared cards) or the card\'s '
        + 'own balance (dedicated cards); INSUFFICIENT_BALANCE creates nothing. The upgrade starts PENDING; CARD_UPGRADE_STATUS_CHANGED follows every change.',
      body: UpgradePhysicalBody,
      data: UpgradeView,
      example: { cardId: 'cdmwxdk8zr3fa53eaf45', upgradeRef: 'upgrade-0001', cardProfileId: 'sbx-visa-shared-physical' },
      errors: ['CARD_UPGRADE_REF_DUPLICATE', 'CARD_INVALID', 'CARD_PROFILE_INVALID', 'CAPABILITY_FROZEN', 'CUSTOMER_INVALID', 'KYC_NOT_APPROVED',
        'CARD_UPGRADE_IN_PROGRESS', 'INSUFFICIENT_BALANCE'],
      handler: ({ body, partner }) => upgradeCorporateCard(deps, partner.partnerId, body),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/card/v1/cancel-upgrade',
      auth: 'partner',
      tag: 'Cards',
      summary: 'Cancel a physical card upgrade before it is shipped; its fees are refunded',
      description: 'Allowed while the upgrade is PENDING or PRODUCING; otherwise CARD_UPGRADE_STATUS_INVALID. The card stays as it was (virtual, ACTIVE).',
      body: UpgradeRefBody,
      data: UpgradeView,
      example: { upgradeRef: 'upgrade-0001' },
      errors: ['CARD_UPGRADE_NOT_FOUND', 'CARD_UPGRADE_STATUS_INVALID'],
      handler: ({ body, partner }) => cancelUpgrade(deps, partner.partnerId, body.upgradeRef, CORPORATE),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/card/v1/upgrade-detail',
      auth: 'partner',
      tag: 'Cards',
      summary: 'A physical card upgrade: status, delivery address, carrier and tracking number, fees',
      querystring: UpgradeDetailQuery,
      data: UpgradeView,
      errors: ['CARD_UPGRADE_NOT_FOUND'],
      handler: ({ query, partner }) => upgradeDetail(deps, partner.partnerId, query.upgradeRef, CORPORATE),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/card/v1/activate-physical',
      auth: 'partner',
      // The body holds the activation code: no Idempotency-Key store (it keeps an unkeyed hash of the body); a retry after
      // success answers CARD_UPGRADE_STATUS_INVALID and upgrade-detail shows ACTIVATED.
      idempotent: false,
      tag: 'Cards',
      summary: 'Activate the physical card with the 6-digit code printed on its carrier; the card becomes PHYSICAL',
      description: 'Allowed once the upgrade is SHIPPED or DELIVERED (else CARD_UPGRADE_STATUS_INVALID). A wrong code is CARD_ACTIVATION_CODE_INVALID; after 5 wrong codes '
        + 'every try, the right code included, is CARD_ACTIVATION_LOCKED until support unlocks it. The card keeps its id, number, balance and rules.',
      body: ActivatePhysicalBody,
      data: UpgradeView,
      example: { cardId: 'cdmwxdk8zr3fa53eaf45', activationCode: '204817' },
      errors: ['CARD_INVALID', 'CARD_UPGRADE_STATUS_INVALID', 'CARD_ACTIVATION_CODE_INVALID', 'CARD_ACTIVATION_LOCKED'],
      handler: ({ body, partner }) => activatePhysical(deps, partner.partnerId, body, CORPORATE),
    }),

    // ---- Operators: the card bureau's progress ----
    route({
      method: 'POST',
      url: '/internal/admin/v1/card-upgrades/status',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Record the card bureau\'s progress of a physical card upgrade (PRODUCING, SHIPPED, DELIVERED, REJECTED)',
      description: 'SHIPPED needs carrier and trackingNumber and sets the activation code: the bureau\'s (activationCode) or one the service draws and answers here once. '
        + 'REJECTED needs rejectReason and refunds the fees. Moves the states do not allow are CARD_UPGRADE_STATUS_INVALID.',
      body: AdminUpgradeStatusBody,
      data: UpgradeStatusAnswer,
      example: { partnerId: 'ptmwxdk8zr3eac7b1705', ...SHIPPED_EXAMPLE },
      errors: ['CARD_UPGRADE_NOT_FOUND', 'CARD_UPGRADE_STATUS_INVALID'],
      handler: ({ body }) => reportBureauStatus(deps, body),
    }),
    route({
      method: 'POST',
      url: '/internal/admin/v1/card-upgrades/unlock-activation',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Unlock an activation locked by wrong codes (the count starts again)',
      body: AdminUpgradeRefBody,
      data: UpgradeView,
      example: { partnerId: 'ptmwxdk8zr3eac7b1705', upgradeRef: 'upgrade-0001' },
      errors: ['CARD_UPGRADE_NOT_FOUND', 'CARD_UPGRADE_STATUS_INVALID'],
      handler: ({ body }) => unlockActivation(deps, body),
    }),
  ];
}
