import type { Static } from 'typebox';
import { paginate, type CallOptions, type RequestOf, type SignedHttpClient } from '../client.ts';
import type {
  ConsumerApplyBody, ConsumerApplyView, ConsumerBlockBody, ConsumerCardPage, ConsumerCardView, ConsumerListProfilesQuery, ConsumerListQuery,
  ConsumerTransaction, ConsumerTransactionPage, ContactBody, ContactView, FiatTransactionsQuery, SendCodeBody, SendCodeView,
} from '../contract/consumer-cards.ts';
import type { ProfilePage } from '../contract/cards.ts';
import type { CardUpgrade, ConsumerActivatePhysicalParams, ConsumerUpgradePhysicalParams } from './card-upgrades.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/consumer-cards.ts).

export type ConsumerApplyParams = RequestOf<typeof ConsumerApplyBody>;
export type ConsumerCard = Static<typeof ConsumerCardView>;
export type ConsumerApplyResult = Static<typeof ConsumerApplyView>;
export type ConsumerBlockParams = RequestOf<typeof ConsumerBlockBody>;
export type ConsumerListParams = Static<typeof ConsumerListQuery>;
export type SendCodeParams = RequestOf<typeof SendCodeBody>;
export type FiatTransactionsParams = Static<typeof FiatTransactionsQuery>;
export type ConsumerCardTransaction = Static<typeof ConsumerTransaction>;
export type ConsumerListProfilesParams = Static<typeof ConsumerListProfilesQuery>;

/** Consumer cards of the managed-balance model: `/card/v2/*` and their transactions (4.2; D35, D36). */
export class ConsumerCardsResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Consumer (ASSET) card profiles offered to you, for `apply`; corporate ones are `cards.listProfiles()`.
   * @example const { result } = await client.consumerCards.listProfiles({ cardNetwork: 'VISA' });
   */
  listProfiles(params: ConsumerListProfilesParams = {}, options?: CallOptions): Promise<Static<typeof ProfilePage>> {
    return this.http.call('GET', '/card/v2/list-profiles', { query: { ...params } }, options);
  }

  /** @example await client.consumerCards.apply({ externalUserId: 'u-1', cardProfileId: 'sbx-visa-consumer', cardholderName: 'ADA LOVELACE', fundingAsset: 'USDT' }); */
  apply(params: ConsumerApplyParams, options?: CallOptions): Promise<ConsumerApplyResult> {
    return this.http.call('POST', '/card/v2/apply', { body: params }, options);
  }

  list(params: ConsumerListParams, options?: CallOptions): Promise<Static<typeof ConsumerCardPage>> {
    return this.http.call('GET', '/card/v2/list', { query: { ...params } }, options);
  }
  listAll(params: Omit<ConsumerListParams, 'page'>, options?: CallOptions) {
    return paginate((page) => this.list({ ...params, page, pageSize: params.pageSize ?? 100 }, options));
  }

  detail(externalUserId: string, cardId: string, options?: CallOptions): Promise<ConsumerCard> {
    return this.http.call('GET', '/card/v2/detail', { query: { externalUserId, cardId } }, options);
  }

  /** block=true freezes; block=false unfreezes with smsCode or emailCode. Answers false on success (4.2). */
  block(params: ConsumerBlockParams, options?: CallOptions): Promise<boolean> {
    return this.http.call('POST', '/card/v2/block', { body: params }, options);
  }

  sendVerificationCode(params: SendCodeParams, options?: CallOptions): Promise<Static<typeof SendCodeView>> {
    return this.http.call('POST', '/card/v2/send-verification-code', { body: params }, options);
  }

  setContact(params: RequestOf<typeof ContactBody>, options?: CallOptions): Promise<Static<typeof ContactView>> {
    return this.http.call('POST', '/card/v2/contact', { body: params }, options);
  }

  fiatTransactions(params: FiatTransactionsParams = {}, options?: CallOptions): Promise<Static<typeof ConsumerTransactionPage>> {
    return this.http.call('GET', '/card/v1/fiat/transactions', { query: { ...params } }, options);
  }

  statementDetail(externalUserId: string, transId: string, options?: CallOptions): Promise<ConsumerCardTransaction> {
    return this.http.call('GET', '/card/v2/statements/detail', { query: { externalUserId, transId } }, options);
  }

  /**
   * Upgrades the user's ACTIVE virtual card to a physical one (fees charged now from the funding asset).
   * @example await client.consumerCards.upgradePhysical({ externalUserId: 'u-1', cardId, upgradeRef: 'upgrade-0001', cardProfileId: 'sbx-visa-consumer-physical', shippingAddress: { addressLine1: '1 Queen\'s Road Central', city: 'Central', state: 'Hong Kong Island', addressCountryCode: 'HK' } });
   */
  upgradePhysical(params: ConsumerUpgradePhysicalParams, options?: CallOptions): Promise<CardUpgrade> {
    return this.http.call('POST', '/card/v2/upgrade-physical', { body: params }, options);
  }

  /** Cancels an upgrade before it is shipped; the fees are refunded. */
  cancelUpgrade(externalUserId: string, upgradeRef: string, options?: CallOptions): Promise<CardUpgrade> {
    return this.http.call('POST', '/card/v2/cancel-upgrade', { body: { externalUserId, upgradeRef } }, options);
  }

  upgradeDetail(externalUserId: string, upgradeRef: string, options?: CallOptions): Promise<CardUpgrade> {
    return this.http.call('GET', '/card/v2/upgrade-detail', { query: { externalUserId, upgradeRef } }, options);
  }

  /** Activates the shipped card with the code on its carrier. */
  activatePhysical(params: ConsumerActivatePhysicalParams, options?: CallOptions): Promise<CardUpgrade> {
    return this.http.call('POST', '/card/v2/activate-physical', { body: params }, options);
  }
}
