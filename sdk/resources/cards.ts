import type { LosslessNumber } from 'lossless-json';
import type { SignedHttpClient } from '../client.ts';
import type { EncryptedSecureCard } from '../secure-card.ts';

/** An exact amount: build one with `decimal('100.50')`; responses carry LosslessNumber (or number). */
export type CardAmount = LosslessNumber | number;

export type CardNetwork = 'VISA' | 'MASTERCARD';
export type CardForm = 'VIRTUAL' | 'PHYSICAL';
export type BalanceMode = 'SHARED' | 'DEDICATED';
export type CardSubjectType = 'ORGANIZATION' | 'CUSTOMER';
export type CardStatus = 'ACTIVE' | 'BLOCKED' | 'CANCELLED';
export type CardApplyStatus = 'PENDING' | 'PROCESSING' | 'SUCCESS' | 'REJECTED';

export interface CardPage<T> {
  page: number;
  pageSize: number;
  total: number;
  result: T[];
}

export interface CardProfile {
  cardProfileId: string;
  profileName: string;
  cardNetwork: CardNetwork;
  cardForm: CardForm;
  balanceMode: BalanceMode;
  settlementCurrencies: string[];
  fees: { issuanceFee: CardAmount; monthlyFee: CardAmount };
  status: 'ACTIVE' | 'INACTIVE';
}

export interface ApplyCardParams {
  organizationId: string;
  /** Your reference, unique per partner; it is the cardOrderRef of `cardOrder()`. */
  cardApplyRef: string;
  cardProfileId: string;
  subjectType: CardSubjectType;
  /** The organizationId for a company card, the customerId for an employee card. */
  subjectId: string;
  /** Required for a company card: a current employee with approved KYC. */
  custodianCustomerId?: string;
  cardholderName?: string;
  ruleIds?: string[];
}

export interface CardApplication {
  cardApplyId: string;
  cardApplyRef: string;
  organizationId: string;
  status: CardApplyStatus;
  cardId: string | null;
  rejectReason: string | null;
  createTime: string;
  modifyTime: string;
  cardProfileId: string;
  subjectType: CardSubjectType;
  subjectId: string;
  custodianCustomerId: string;
  ruleIds: string[];
}

export interface Card {
  cardId: string;
  panFirst6: string;
  panLast4: string;
  organizationId: string;
  subjectType: CardSubjectType;
  subjectId: string;
  cardProfileId: string;
  cardNetwork: CardNetwork;
  currency: string;
  status: CardStatus;
  cardForm: CardForm;
  balanceMode: BalanceMode;
  settlementCurrencies: string[];
  custodianCustomerId: string;
  cardholderName: string | null;
  cardApplyId: string;
  createTime: string;
  modifyTime: string;
}

export interface ListCardsParams {
  organizationId: string;
  subjectType?: CardSubjectType;
  subjectId?: string;
  status?: CardStatus;
  page?: number;
  pageSize?: number;
}

export interface DepositAccount {
  currency: string;
  accountNumber: string;
  accountName: string;
  bankName: string;
  bankCode: string;
  status: string;
  subjectType: 'CARD' | 'ORGANIZATION';
  subjectId: string;
  createTime: string;
}

export interface BalanceAmounts {
  available: CardAmount;
  pending: CardAmount;
  total: CardAmount;
}

export interface TransferParams {
  organizationId: string;
  cardId: string;
  direction: 'POOL_TO_CARD' | 'CARD_TO_POOL';
  currency: string;
  amount: CardAmount;
  /** Idempotency key, unique per partner: a repeat is EXTERNAL_TRAN_ID_DUPLICATE and moves nothing. */
  externalTranId: string;
}

export interface Transfer {
  transferId: string;
  externalTranId: string;
  organizationId: string;
  cardId: string;
  direction: 'POOL_TO_CARD' | 'CARD_TO_POOL';
  currency: string;
  amount: CardAmount;
  createTime: string;
  poolBalance: BalanceAmounts;
  cardBalance: BalanceAmounts;
}

/** Corporate cards (spec 4.4, D22-D29). Method -> route mapping in docs/cards.md. */
export class CardsResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Card profiles offered to you (D22).
   * @example const { result } = await client.cards.listProfiles({ balanceMode: 'DEDICATED' });
   */
  listProfiles(params: { cardNetwork?: CardNetwork; balanceMode?: BalanceMode; status?: 'ACTIVE' | 'INACTIVE'; page?: number; pageSize?: number } = {}): Promise<CardPage<CardProfile>> {
    return this.http.call('GET', '/open-api-corp/card/v1/list-profiles', { query: { ...params } });
  }

  /**
   * Applies for a virtual card; the answer is the PENDING application. Poll `queryApply` or wait for
   * CARD_CREATED / CARD_REJECTED.
   * @example const { cardApplyId } = await client.cards.apply({ organizationId, cardApplyRef: 'ref-1', cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER', subjectId: customerId });
   */
  apply(params: ApplyCardParams): Promise<CardApplication> {
    return this.http.call('POST', '/open-api-corp/card/v1/apply', { body: params });
  }

  /** @example const application = await client.cards.queryApply(cardApplyId); */
  queryApply(cardApplyId: string): Promise<CardApplication> {
    return this.http.call('GET', '/open-api-corp/card/v1/query-apply', { query: { cardApplyId } });
  }

  /** The application by cardOrderRef (= cardApplyRef). @example await client.cards.cardOrder('ref-1'); */
  cardOrder(cardOrderRef: string): Promise<CardApplication> {
    return this.http.call('GET', '/open-api/card-order/v1/detail', { query: { cardOrderRef } });
  }

  /** @example const card = await client.cards.query(cardId); */
  query(cardId: string): Promise<Card> {
    return this.http.call('GET', '/open-api-corp/card/v1/query', { query: { cardId } });
  }

  /** @example const page = await client.cards.list({ organizationId, status: 'ACTIVE' }); */
  list(params: ListCardsParams): Promise<CardPage<Card>> {
    return this.http.call('GET', '/open-api-corp/card/v1/list', { query: { ...params } });
  }

  /** @example await client.cards.block(cardId); */
  block(cardId: string): Promise<Card> {
    return this.http.call('POST', '/open-api-corp/card/v1/block', { body: { cardId } });
  }

  /** @example await client.cards.unblock(cardId); */
  unblock(cardId: string): Promise<Card> {
    return this.http.call('POST', '/open-api-corp/card/v1/unblock', { body: { cardId } });
  }

  /** @example await client.cards.cancel(cardId); */
  cancel(cardId: string): Promise<Card> {
    return this.http.call('POST', '/open-api-corp/card/v1/cancel', { body: { cardId } });
  }

  /**
   * Full card data as ciphertext (PCI allowlist only). Decrypt with `decryptSecureCard(secretKey, data)`
   * right before display; never store or cache the result.
   * @example const card = decryptSecureCard(secretKey, await client.cards.retrieveSecureCard(cardId));
   */
  retrieveSecureCard(cardId: string): Promise<EncryptedSecureCard> {
    return this.http.call('POST', '/open-api-corp/card/v1/retrieve-secure-card', { body: { cardId } });
  }

  /** Opens receiving accounts for a dedicated card. @example await client.cards.openVa(cardId, ['USD']); */
  openVa(cardId: string, fundingCurrencies: string[]): Promise<null> {
    return this.http.call('POST', '/open-api-corp/card/v1/open-va', { body: { cardId, fundingCurrencies } });
  }

  /** @example const accounts = await client.cards.depositAccounts('CARD', cardId); */
  depositAccounts(subjectType: 'CARD' | 'ORGANIZATION', subjectId: string): Promise<DepositAccount[]> {
    return this.http.call('GET', '/open-api-corp/fund/v1/deposit-account', { query: { subjectType, subjectId } });
  }

  /**
   * Moves money between the company pool and a dedicated card (D29).
   * @example await client.cards.transfer({ organizationId, cardId, direction: 'POOL_TO_CARD', currency: 'USD', amount: decimal('25.00'), externalTranId: 'tx-1' });
   */
  transfer(params: TransferParams): Promise<Transfer> {
    return this.http.call('POST', '/open-api-corp/fund/v1/transfer', { body: params });
  }
}
