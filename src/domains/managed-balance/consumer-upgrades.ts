/**
 * Physical upgrades of consumer cards (issue 30, D52): the managed-balance side of the cards
 * domain's upgrade machinery. Here: the user (CARD_INVALID when unknown), the user's card capability
 * (D20), the delivery address and phone from the request (else the user's contact mobile), and the
 * fee book that charges and refunds the fees as 2.4 asset movements of the card's funding asset.
 */
import { ApiError, invariant, paramInvalid } from '../../platform/errors.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import { fromDb, toDb } from '../../platform/money.ts';
import {
  activatePhysical, cancelUpgrade, findConsumerCard, requestUpgrade, upgradeDetail, CARD_FEE_OWNER, type FeeLine, type UpgradeCardRow,
  type UpgradeFeeBook,
} from '../cards/index.ts';
import { getOrCreateAccount, post } from '../ledger/index.ts';
import { CAPABILITY_BLOCKERS } from '../organizations/index.ts';
import { findContact } from './consumer-cards-store.ts';
import { assertUserCapability, chargeFee, type ConsumerCardDeps } from './consumer-cards.ts';
import { insertMovement } from './movements-store.ts';
import { findAsset, findUser, findUsersByIds } from './users.ts';

/** The user, the consumer card and its funding asset behind an upgrade's card row. */
async function feeContext(q: Queryable, card: UpgradeCardRow) {
  invariant(card.subjectType === 'USER' && card.fundingAsset !== null, `card ${card.cardId} is a consumer card`);
  const [user] = await findUsersByIds(q, card.partnerId, [card.subjectId]);
  invariant(user, `user of card ${card.cardId} exists`);
  const consumerCard = await findConsumerCard(q, card.partnerId, user.userId, card.cardId);
  invariant(consumerCard, `consumer card ${card.cardId} exists`);
  return { user, consumerCard };
}

/** Consumer fees: USD profile amounts in the funding asset (at its rate, rounded up), free -> fee income, one movement each. */
export const consumerUpgradeFees: UpgradeFeeBook = {
  async charge(q, card, _upgrade, fees, at) {
    const { user, consumerCard } = await feeContext(q, card);
    const asset = await findAsset(q, consumerCard.fundingAsset);
    // An asset that lost its rate cannot price the fee: refused like an inactive asset (as unfreeze does).
    if (!asset || asset.status !== 'ACTIVE' || asset.usdRate === null) {
      throw new ApiError('ASSET_INVALID', `The card's funding asset ${consumerCard.fundingAsset} cannot be charged now`, { data: { errorCode: 'ASSET_INVALID', errorMsg: 'fundingAsset' } });
    }
    const account = await getOrCreateAccount(q, { partnerId: card.partnerId, ownerType: 'MANAGED_USER', ownerId: user.userId, currency: asset.asset }, at);
    const lines: FeeLine[] = [];
    for (const fee of fees) {
      const charged = await chargeFee(q, consumerCard, user, asset, fee.type, fee.amount, at);
      lines.push({ type: fee.type, currency: asset.asset, amount: String(charged.amount), accountId: account.accountId, transactionId: charged.transactionId });
    }
    return lines;
  },
  async refund(q, card, upgrade, lines, at) {
    const { user } = await feeContext(q, card);
    for (const line of lines) {
      const amount = fromDb(line.amount);
      const income = await getOrCreateAccount(q, { partnerId: card.partnerId, ownerType: 'FEE_INCOME', ownerId: CARD_FEE_OWNER, currency: line.currency }, at);
      const movementId = newId('am');
      const posting = await post(q, {
        partnerId: card.partnerId,
        kind: `${line.type}_REFUND`,
        entries: [
          { accountId: income.accountId, amount: amount.neg(), bucket: 'AVAILABLE' },
          { accountId: line.accountId, amount, bucket: 'AVAILABLE' },
        ],
        reference: movementId,
        description: `${line.type} refunded: the physical card upgrade ${upgrade.upgradeRef} of card ${card.cardId} ended`,
        createTime: at,
      });
      // The 2.4 movement of a refund: the fee's own type, as a CREDIT.
      const body = await insertMovement(q, {
        movementId, partnerId: card.partnerId, userId: user.userId, externalTranId: null, type: line.type, direction: 'CREDIT',
        asset: line.currency, amount: toDb(amount), counterAsset: null, counterAmount: null, rate: null, cardId: card.cardId,
        remark: `Refund: physical card upgrade ${upgrade.upgradeRef} ended`, postingId: posting.postingId,
        freeAfter: toDb(posting.balances.get(line.accountId)!.available), createdAt: at,
      }, user.externalUserId);
      invariant(body !== null, `refund movement ${movementId} is recorded`);
    }
  },
};

/** The user's scope, or CARD_INVALID for a user the partner never used (their cards do not exist). */
async function userScope(deps: ConsumerCardDeps, partnerId: string, externalUserId: string) {
  const user = await findUser(deps.db, partnerId, externalUserId);
  if (!user) throw new ApiError('CARD_INVALID');
  return { user, scope: { family: 'CONSUMER' as const, userId: user.userId } };
}

export interface ConsumerUpgradeInput {
  externalUserId: string;
  cardId: string;
  upgradeRef: string;
  cardProfileId: string;
  shippingAddress?: {
    postalCode?: string | null; addressLine1: string; addressLine2?: string | null; addressLine3?: string | null; city: string; state: string;
    addressCountryCode: string;
  };
  phoneCountryCode?: string;
  phoneNumber?: string;
}

/** POST /card/v2/upgrade-physical (D52). */
export async function upgradeConsumerCard(deps: ConsumerCardDeps, partnerId: string, input: ConsumerUpgradeInput) {
  if ((input.phoneCountryCode === undefined) !== (input.phoneNumber === undefined)) {
    throw paramInvalid(input.phoneNumber === undefined ? 'phoneNumber' : 'phoneCountryCode', 'phoneCountryCode and phoneNumber go together');
  }
  const { user, scope } = await userScope(deps, partnerId, input.externalUserId);
  return requestUpgrade(deps, {
    partnerId, upgradeRef: input.upgradeRef, cardId: input.cardId, cardProfileId: input.cardProfileId, scope,
    checkHolder: (q) => assertUserCapability(q, user, CAPABILITY_BLOCKERS.CARD),
    async delivery(q) {
      const a = input.shippingAddress;
      if (!a) throw paramInvalid('shippingAddress', 'is required: the service holds no postal address of managed users');
      let phone = input.phoneNumber !== undefined ? { phoneCountryCode: input.phoneCountryCode ?? null, phoneNumber: input.phoneNumber } : null;
      if (!phone) {
        const mobile = (await findContact(q, user.userId))?.mobile;
        // The contact mobile is E.164 (+ and country calling code), so it carries its own country.
        if (mobile) phone = { phoneCountryCode: null, phoneNumber: mobile };
      }
      if (!phone) throw paramInvalid('phoneNumber', 'is required: give phoneCountryCode and phoneNumber, or set the user\'s mobile with /card/v2/contact');
      return {
        shippingAddress: {
          postalCode: a.postalCode || null, addressLine1: a.addressLine1, addressLine2: a.addressLine2 || null, addressLine3: a.addressLine3 || null,
          city: a.city, state: a.state, addressCountryCode: a.addressCountryCode,
        },
        ...phone,
      };
    },
  });
}

export async function cancelConsumerUpgrade(deps: ConsumerCardDeps, partnerId: string, input: { externalUserId: string; upgradeRef: string }) {
  const found = await findUser(deps.db, partnerId, input.externalUserId);
  if (!found) throw new ApiError('CARD_UPGRADE_NOT_FOUND');
  return cancelUpgrade(deps, partnerId, input.upgradeRef, { family: 'CONSUMER', userId: found.userId });
}

export async function consumerUpgradeDetail(deps: ConsumerCardDeps, partnerId: string, input: { externalUserId: string; upgradeRef: string }) {
  const found = await findUser(deps.db, partnerId, input.externalUserId);
  if (!found) throw new ApiError('CARD_UPGRADE_NOT_FOUND');
  return upgradeDetail(deps, partnerId, input.upgradeRef, { family: 'CONSUMER', userId: found.userId });
}

export async function activateConsumerPhysical(deps: ConsumerCardDeps, partnerId: string, input: { externalUserId: string; cardId: string; activationCode: string }) {
  const { scope } = await userScope(deps, partnerId, input.externalUserId);
  return activatePhysical(deps, partnerId, input, scope);
}
