/**
 * Consumer cards of the managed-balance model (issue 11; 4.2, D35, D36, D43): a card whose subject
 * is a partner's end user and whose funds are the user's funding asset. The cards domain owns the
 * card row and its data at rest (same PAN sealing and CVV derivation as corporate cards); the
 * managed-balance domain owns users, fees and verification codes and calls these functions.
 */
import type { Queryable } from '../../platform/db/db.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import { ApiError, invariant } from '../../platform/errors.ts';
import { recordEvent } from '../events/index.ts';
import { drawCardData, expiryYymm } from './card-data.ts';
import type { CardDeps } from './profiles.ts';
import {
  findCardById, findCardProfile, findConsumerCard as findConsumerCardRow, findConsumerCardById, insertConsumerCard,
  listConsumerCards as listConsumerCardRows, setConsumerCardStatus, type CardProfile, type CardStatus, type ConsumerCard,
} from './store.ts';

const MAX_PAN_DRAWS = 10;

/** The wire view of a consumer card (/card/v2/list and /card/v2/detail); `cardMantissa` is the PAN's last four digits. */
export function consumerCardView(c: ConsumerCard, externalUserId: string) {
  return {
    cardId: c.cardId,
    externalUserId,
    cardProfileId: c.cardProfileId,
    cardNetwork: c.cardNetwork,
    cardForm: c.cardForm,
    currency: c.currency,
    fundingAsset: c.fundingAsset,
    cardholderName: c.cardholderName,
    cardMantissa: c.panLast4,
    panFirst6: c.panFirst6,
    status: c.status,
    createTime: c.createdAt.toISOString(),
    modifyTime: c.updatedAt.toISOString(),
  };
}

/** A consumer profile the partner may use: ACTIVE, offered to it, of the ASSET family. */
export async function consumerProfile(q: Queryable, partnerId: string, cardProfileId: string): Promise<CardProfile> {
  const profile = await findCardProfile(q, cardProfileId);
  if (!profile || profile.status !== 'ACTIVE' || (profile.partnerId !== null && profile.partnerId !== partnerId)) {
    throw new ApiError('CARD_PROFILE_INVALID');
  }
  if (profile.balanceMode !== 'ASSET') {
    throw new ApiError('CARD_PROFILE_INVALID', 'Not a consumer card profile: corporate profiles are applied for under /open-api-corp/');
  }
  return profile;
}

/** The profile a consumer card was issued under, whatever its status now. */
export async function cardProfileOf(q: Queryable, card: ConsumerCard): Promise<CardProfile> {
  const profile = await findCardProfile(q, card.cardProfileId);
  invariant(profile !== null, `profile ${card.cardProfileId} of card ${card.cardId} exists`);
  return profile;
}

/**
 * Issues an ACTIVE consumer card in the caller's transaction (card keys must be ready:
 * ensureCardsReady before the transaction). The caller checked the user and charges the fees.
 */
export async function issueConsumerCard(
  deps: CardDeps,
  q: Queryable,
  input: { partnerId: string; userId: string; profile: CardProfile; cardholderName: string; fundingAsset: string; now: Date },
): Promise<ConsumerCard> {
  invariant(input.profile.balanceMode === 'ASSET', 'a consumer card is issued under an ASSET profile');
  const expiry = expiryYymm(input.now, input.profile.validityMonths);
  for (let draw = 0; draw < MAX_PAN_DRAWS; draw++) {
    const cardId = newId('cd');
    const data = await drawCardData(q, deps.config.masterKey, {
      cardId, bin: input.profile.bin, panLength: input.profile.panLength, expiry,
    });
    const card = await insertConsumerCard(q, {
      cardId,
      partnerId: input.partnerId,
      userId: input.userId,
      cardProfileId: input.profile.cardProfileId,
      cardNetwork: input.profile.cardNetwork,
      cardForm: input.profile.cardForm,
      currency: input.profile.settlementCurrencies[0],
      fundingAsset: input.fundingAsset,
      cardholderName: input.cardholderName,
      ...data,
    }, input.now);
    if (card) return card;
  }
  invariant(false, `a unique PAN within ${MAX_PAN_DRAWS} draws under BIN of profile ${input.profile.cardProfileId}`);
}

export function findConsumerCard(q: Queryable, partnerId: string, userId: string, cardId: string, forUpdate = false): Promise<ConsumerCard | null> {
  return findConsumerCardRow(q, partnerId, userId, cardId, forUpdate);
}

export function listConsumerCards(q: Queryable, f: { partnerId: string; userId: string; status?: CardStatus }, limit: number, offset: number) {
  return listConsumerCardRows(q, f, limit, offset);
}

/** Sets a consumer card's status in the caller's transaction and records CARD_STATUS_CHANGED (as corporate cards do). */
export async function changeConsumerCardStatus(
  q: Queryable,
  card: ConsumerCard,
  status: 'ACTIVE' | 'BLOCKED',
  externalUserId: string,
  now: Date,
): Promise<ConsumerCard> {
  invariant(card.status !== 'CANCELLED' && card.status !== status, `consumer card ${card.cardId} changes status`);
  const updated = await setConsumerCardStatus(q, card.cardId, status, now);
  await recordEvent(q, {
    partnerId: updated.partnerId,
    eventType: 'CARD_STATUS_CHANGED',
    businessId: updated.cardId,
    data: { ...consumerCardView(updated, externalUserId), previousStatus: card.status },
    createTime: now,
  });
  return updated;
}

/**
 * What the authorization engine needs of any card to book a refund: who it belongs to, where its
 * funds are (D29: pool, own balance, or the user's funding asset) and what it settles in.
 */
export interface SpendCard {
  cardId: string;
  partnerId: string;
  organizationId: string | null;
  subjectType: 'ORGANIZATION' | 'CUSTOMER' | 'USER';
  subjectId: string;
  balanceMode: 'SHARED' | 'DEDICATED' | 'ASSET';
  settlementCurrencies: string[];
  fundingAsset: string | null;
}

export async function findSpendCard(q: Queryable, cardId: string): Promise<SpendCard | null> {
  const corporate = await findCardById(q, cardId);
  if (corporate) {
    return {
      cardId: corporate.cardId, partnerId: corporate.partnerId, organizationId: corporate.organizationId,
      subjectType: corporate.subjectType, subjectId: corporate.subjectId, balanceMode: corporate.balanceMode,
      settlementCurrencies: corporate.settlementCurrencies, fundingAsset: null,
    };
  }
  const consumer = await findConsumerCardById(q, cardId);
  if (!consumer) return null;
  return {
    cardId: consumer.cardId, partnerId: consumer.partnerId, organizationId: null, subjectType: 'USER', subjectId: consumer.userId,
    balanceMode: 'ASSET', settlementCurrencies: [consumer.currency], fundingAsset: consumer.fundingAsset,
  };
}
