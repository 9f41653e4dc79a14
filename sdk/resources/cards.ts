import type { Static } from 'typebox';
import { paginate, type CallOptions, type RequestOf, type SignedHttpClient } from '../client.ts';
import type {
  ApplyCardBody, ApplyView, BalanceAmounts as BalanceAmountsSchema, BalanceMode as BalanceModeSchema, CardNetwork as CardNetworkSchema,
  CardPage as CardPageSchema, CardStatus as CardStatusSchema, CardSubjectType as CardSubjectTypeSchema, CardView, DepositAccountView,
  ListCardsQuery, ListProfilesQuery, ProfilePage, ProfileView, TransferBody, TransferView,
} from '../contract/cards.ts';
import type { WireAmount } from '../contract/wire.ts';
import type { EncryptedSecureCard } from '../secure-card.ts';
import type { ActivatePhysicalParams, CardUpgrade, UpgradePhysicalParams } from './card-upgrades.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/cards.ts).

/** An exact amount: build one with `decimal('100.50')`; responses carry LosslessNumber (or number). */
export type CardAmount = WireAmount;

export type CardNetwork = Static<typeof CardNetworkSchema>;
export type CardForm = Card['cardForm'];
export type BalanceMode = Static<typeof BalanceModeSchema>;
export type CardSubjectType = Static<typeof CardSubjectTypeSchema>;
export type CardStatus = Static<typeof CardStatusSchema>;
export type CardApplyStatus = CardApplication['status'];

/** The paging envelope (D9). */
export interface CardPage<T> {
  page: number;
  pageSize: number;
  total: number;
  result: T[];
}

export type CardProfile = Static<typeof ProfileView>;

/**
 * `cardApplyRef` is your reference, unique per partner (the cardOrderRef of `cardOrder()`);
 * `subjectId` the organizationId (company card) or customerId (employee card);
 * `custodianCustomerId` is required for a company card: a current employee with approved KYC.
 */
export type ApplyCardParams = RequestOf<typeof ApplyCardBody>;

export type CardApplication = Static<typeof ApplyView>;

export type Card = Static<typeof CardView>;

export type ListCardsParams = Static<typeof ListCardsQuery>;
export type ListProfilesParams = Static<typeof ListProfilesQuery>;

export type DepositAccount = Static<typeof DepositAccountView>;

export type BalanceAmounts = Static<typeof BalanceAmountsSchema>;

/** `externalTranId` is the idempotency key, unique per partner: a repeat is EXTERNAL_TRAN_ID_DUPLICATE and moves nothing. */
export type TransferParams = RequestOf<typeof TransferBody>;

export type Transfer = Static<typeof TransferView>;

/** Corporate cards (spec 4.4, D22-D29). Method -> route mapping in docs/cards.md. */
export class CardsResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Card profiles offered to you (D22).
   * @example const { result } = await client.cards.listProfiles({ balanceMode: 'DEDICATED' });
   */
  listProfiles(params: ListProfilesParams = {}, options?: CallOptions): Promise<Static<typeof ProfilePage>> {
    return this.http.call('GET', '/open-api-corp/card/v1/list-profiles', { query: { ...params } }, options);
  }

  /**
   * Applies for a virtual card; the answer is the PENDING application. Poll `queryApply` or wait for
   * CARD_CREATED / CARD_REJECTED.
   * @example const { cardApplyId } = await client.cards.apply({ organizationId, cardApplyRef: 'ref-1', cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER', subjectId: customerId });
   */
  apply(params: ApplyCardParams, options?: CallOptions): Promise<CardApplication> {
    return this.http.call('POST', '/open-api-corp/card/v1/apply', { body: params }, options);
  }

  /** @example const application = await client.cards.queryApply(cardApplyId); */
  queryApply(cardApplyId: string, options?: CallOptions): Promise<CardApplication> {
    return this.http.call('GET', '/open-api-corp/card/v1/query-apply', { query: { cardApplyId } }, options);
  }

  /** The application by cardOrderRef (= cardApplyRef). @example await client.cards.cardOrder('ref-1'); */
  cardOrder(cardOrderRef: string, options?: CallOptions): Promise<CardApplication> {
    return this.http.call('GET', '/open-api/card-order/v1/detail', { query: { cardOrderRef } }, options);
  }

  /** @example const card = await client.cards.query(cardId); */
  query(cardId: string, options?: CallOptions): Promise<Card> {
    return this.http.call('GET', '/open-api-corp/card/v1/query', { query: { cardId } }, options);
  }

  /** @example const page = await client.cards.list({ organizationId, status: 'ACTIVE' }); */
  list(params: ListCardsParams, options?: CallOptions): Promise<Static<typeof CardPageSchema>> {
    return this.http.call('GET', '/open-api-corp/card/v1/list', { query: { ...params } }, options);
  }
  /** Every card matching the filter, page after page (async iterator). */
  listAll(params: Omit<ListCardsParams, 'page'>, options?: CallOptions) {
    return paginate((page) => this.list({ ...params, page, pageSize: params.pageSize ?? 100 }, options));
  }


  /** @example await client.cards.block(cardId); */
  block(cardId: string, options?: CallOptions): Promise<Card> {
    return this.http.call('POST', '/open-api-corp/card/v1/block', { body: { cardId } }, options);
  }

  /** @example await client.cards.unblock(cardId); */
  unblock(cardId: string, options?: CallOptions): Promise<Card> {
    return this.http.call('POST', '/open-api-corp/card/v1/unblock', { body: { cardId } }, options);
  }

  /** @example await client.cards.cancel(cardId); */
  cancel(cardId: string, options?: CallOptions): Promise<Card> {
    return this.http.call('POST', '/open-api-corp/card/v1/cancel', { body: { cardId } }, options);
  }

  /**
   * Full card data as ciphertext (PCI allowlist only). Decrypt with `decryptSecureCard(secretKey, data)`
   * right before display; never store or cache the result.
   * @example const card = decryptSecureCard(secretKey, await client.cards.retrieveSecureCard(cardId));
   */
  retrieveSecureCard(cardId: string, options?: CallOptions): Promise<EncryptedSecureCard> {
    return this.http.call('POST', '/open-api-corp/card/v1/retrieve-secure-card', { body: { cardId } }, options);
  }

  /** Opens receiving accounts for a dedicated card. @example await client.cards.openVa(cardId, ['USD']); */
  openVa(cardId: string, fundingCurrencies: string[], options?: CallOptions): Promise<null> {
    return this.http.call('POST', '/open-api-corp/card/v1/open-va', { body: { cardId, fundingCurrencies } }, options);
  }

  /** @example const accounts = await client.cards.depositAccounts('CARD', cardId); */
  depositAccounts(subjectType: 'CARD' | 'ORGANIZATION', subjectId: string, options?: CallOptions): Promise<DepositAccount[]> {
    return this.http.call('GET', '/open-api-corp/fund/v1/deposit-account', { query: { subjectType, subjectId } }, options);
  }

  /**
   * Moves money between the company pool and a dedicated card (D29).
   * @example await client.cards.transfer({ organizationId, cardId, direction: 'POOL_TO_CARD', currency: 'USD', amount: decimal('25.00'), externalTranId: 'tx-1' });
   */
  transfer(params: TransferParams, options?: CallOptions): Promise<Transfer> {
    return this.http.call('POST', '/open-api-corp/fund/v1/transfer', { body: params }, options);
  }

  /**
   * Upgrades an ACTIVE virtual card to a physical one (fees charged now); the card keeps its id and number.
   * @example const upgrade = await client.cards.upgradePhysical({ cardId, upgradeRef: 'upgrade-0001', cardProfileId: 'sbx-visa-shared-physical' });
   */
  upgradePhysical(params: UpgradePhysicalParams, options?: CallOptions): Promise<CardUpgrade> {
    return this.http.call('POST', '/open-api-corp/card/v1/upgrade-physical', { body: params }, options);
  }

  /** Cancels an upgrade before it is shipped; the fees are refunded. @example await client.cards.cancelUpgrade('upgrade-0001'); */
  cancelUpgrade(upgradeRef: string, options?: CallOptions): Promise<CardUpgrade> {
    return this.http.call('POST', '/open-api-corp/card/v1/cancel-upgrade', { body: { upgradeRef } }, options);
  }

  /** @example const upgrade = await client.cards.upgradeDetail('upgrade-0001'); // status, carrier, trackingNumber, ... */
  upgradeDetail(upgradeRef: string, options?: CallOptions): Promise<CardUpgrade> {
    return this.http.call('GET', '/open-api-corp/card/v1/upgrade-detail', { query: { upgradeRef } }, options);
  }

  /** Activates the shipped card with the code on its carrier. @example await client.cards.activatePhysical({ cardId, activationCode: '204817' }); */
  activatePhysical(params: ActivatePhysicalParams, options?: CallOptions): Promise<CardUpgrade> {
    return this.http.call('POST', '/open-api-corp/card/v1/activate-physical', { body: params }, options);
  }
}
