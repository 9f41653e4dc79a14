import { Type } from 'typebox';
import { AddressBody, PHONE_PATTERN } from './customers.ts';
import { ExternalUserId } from './managed-balance.ts';
import { IsoTime, Literals, Nullable, WireNumber } from './wire.ts';

/**
 * Physical card upgrades (issue 30, D52): a virtual card becomes a plastic one, keeping its cardId,
 * PAN, expiry, balance, rules and usage. Corporate routes under /open-api-corp/card/v1, consumer
 * (managed-balance) routes under /card/v2. See docs/cards.md and docs/consumer-cards.md.
 */

export const UPGRADE_STATUSES = ['PENDING', 'PRODUCING', 'SHIPPED', 'DELIVERED', 'ACTIVATED', 'REJECTED', 'CANCELLED'] as const;
export const UpgradeStatus = Literals(UPGRADE_STATUSES);
/** What the card bureau reports (operator route and sandbox simulation). */
export const BUREAU_STATUSES = ['PRODUCING', 'SHIPPED', 'DELIVERED', 'REJECTED'] as const;
export const BureauStatus = Literals(BUREAU_STATUSES, { description: 'PRODUCING, SHIPPED (carrier and trackingNumber), DELIVERED or REJECTED (rejectReason)' });

/** Same bound as cards.ts CardId32 (not imported: cards.ts embeds OpenUpgrade from here). */
const CardId32 = Type.String({ minLength: 1, maxLength: 32, description: 'Card id (up to 32)' });
export const UpgradeRef = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$', description: 'Your id of the upgrade, unique per partner' });
const ProfileId = Type.String({ minLength: 1, maxLength: 32, description: 'A PHYSICAL profile of the card\'s network and balance mode' });
export const ActivationCode = Type.String({ pattern: '^[0-9]{6}$', description: 'The 6-digit code printed on the card carrier' });
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });

const { addressType: _addressType, ...addressFields } = AddressBody.properties;
/** A delivery address as given on the consumer upgrade: an address element of the employee's addresses, addressType optional (2.7). */
export const ShippingAddressBody = Type.Object({
  ...addressFields,
  addressType: Type.Optional(Type.Literal('SHIPPING_ADDRESS')),
});
/** The address the plastic is sent to, as snapshotted when the upgrade was accepted. */
export const ShippingAddressView = Type.Object({
  postalCode: Nullable(Type.String()),
  addressLine1: Type.String(),
  addressLine2: Nullable(Type.String()),
  addressLine3: Nullable(Type.String()),
  city: Type.String(),
  state: Type.String(),
  addressCountryCode: Type.String(),
});

export const UpgradeFee = Type.Object({
  type: Literals(['CARD_PRINTING_FEE', 'CARD_POSTAL_FEE']),
  currency: Type.String({ description: 'The card currency (corporate) or the card\'s funding asset (consumer)' }),
  amount: WireNumber(),
});

/** The upgrade record (D52), also the `data` of CARD_UPGRADE_STATUS_CHANGED. */
export const UpgradeView = Type.Object({
  upgradeRef: Type.String(),
  cardId: Type.String(),
  cardProfileId: Type.String(),
  status: UpgradeStatus,
  shippingAddress: ShippingAddressView,
  phoneCountryCode: Nullable(Type.String({ description: 'Country of the delivery phone (null when the number is in E.164 form)' })),
  phoneNumber: Type.String({ description: 'Delivery contact' }),
  carrier: Nullable(Type.String()),
  trackingNumber: Nullable(Type.String()),
  rejectReason: Nullable(Type.String()),
  fees: Type.Array(UpgradeFee, { description: 'Charged at acceptance; refunded when the upgrade ends REJECTED or CANCELLED' }),
  feesRefunded: Type.Boolean(),
  activationLocked: Type.Boolean({ description: 'True after 5 wrong activation codes, until an operator unlocks it' }),
  createTime: IsoTime,
  modifyTime: IsoTime,
});
/** The card's open upgrade in the card query, list and detail (null when none is open). */
export const OpenUpgrade = Nullable(UpgradeView);

// ---- corporate ----

export const UpgradePhysicalBody = Type.Object({ cardId: CardId32, upgradeRef: UpgradeRef, cardProfileId: ProfileId });
export const UpgradeRefBody = Type.Object({ upgradeRef: UpgradeRef });
export const UpgradeDetailQuery = Type.Object({ upgradeRef: UpgradeRef });
export const ActivatePhysicalBody = Type.Object({ cardId: CardId32, activationCode: ActivationCode });

// ---- consumer (managed balance) ----

export const ConsumerUpgradePhysicalBody = Type.Object({
  externalUserId: ExternalUserId,
  cardId: CardId32,
  upgradeRef: UpgradeRef,
  cardProfileId: ProfileId,
  shippingAddress: Type.Optional(ShippingAddressBody),
  phoneCountryCode: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 with phoneNumber; absent: the user\'s contact mobile' })),
  phoneNumber: Type.Optional(Type.String({ pattern: PHONE_PATTERN, description: 'Local number (4-15 digits) with phoneCountryCode' })),
});
export const ConsumerUpgradeRefBody = Type.Object({ externalUserId: ExternalUserId, upgradeRef: UpgradeRef });
export const ConsumerUpgradeDetailQuery = Type.Object({ externalUserId: ExternalUserId, upgradeRef: UpgradeRef });
export const ConsumerActivatePhysicalBody = Type.Object({ externalUserId: ExternalUserId, cardId: CardId32, activationCode: ActivationCode });

// ---- card bureau progress: operators and the sandbox ----

const bureauFields = {
  upgradeRef: UpgradeRef,
  status: BureauStatus,
  carrier: Type.Optional(Text(64)),
  trackingNumber: Type.Optional(Text(64)),
  rejectReason: Type.Optional(Text(256)),
};
export const SimulateCardShipmentBody = Type.Object(bureauFields);
export const AdminUpgradeStatusBody = Type.Object({
  partnerId: Type.String({ minLength: 1, maxLength: 20 }),
  ...bureauFields,
  activationCode: Type.Optional(Type.String({ pattern: '^[0-9]{6}$', description: 'SHIPPED only: the code the bureau printed; absent, the service draws one and answers it once' })),
});
export const AdminUpgradeRefBody = Type.Object({ partnerId: Type.String({ minLength: 1, maxLength: 20 }), upgradeRef: UpgradeRef });
/** The upgrade after a bureau update; `activationCode` only in the answer of the update that shipped it. */
export const UpgradeStatusAnswer = Type.Intersect([UpgradeView, Type.Object({
  activationCode: Type.Optional(Type.String({ description: 'SHIPPED only, in this answer only: the code on the card carrier' })),
})]);
