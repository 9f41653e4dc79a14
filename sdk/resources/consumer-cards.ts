import type { Static } from 'typebox';
import { paginate, type SignedHttpClient } from '../client.ts';
import type {
  ConsumerApplyBody, ConsumerApplyView, ConsumerBlockBody, ConsumerCardPage, ConsumerCardView, ConsumerListQuery, ConsumerTransaction,
  ConsumerTransactionPage, ContactBody, ContactView, FiatTransactionsQuery, SendCodeBody, SendCodeView,
} from '../contract/consumer-cards.ts';
import type { CardUpgrade, ConsumerActivatePhysicalParams, ConsumerUpgradePhysicalParams } from './card-upgrades.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/consumer-cards.ts).

export type ConsumerApplyParams = Static<typeof ConsumerApplyBody>;
export type ConsumerCard = Static<typeof ConsumerCardView>;
export type ConsumerApplyResult = Static<typeof ConsumerApplyView>;
export type ConsumerBlockParams = Static<typeof ConsumerBlockBody>;
export type ConsumerListParams = Static<typeof ConsumerListQuery>;
export type SendCodeParams = Static<typeof SendCodeBody>;
export type FiatTransactionsParams = Static<typeof FiatTransactionsQuery>;
export type ConsumerCardTransaction = Static<typeof ConsumerTransaction>;

/** Consumer cards of the managed-balance model: `/card/v2/*` and their transactions (4.2; D35, D36). */
export class ConsumerCardsResource {
  constructor(private readonly http: SignedHttpClient) {}

  /** @example await client.consumerCards.apply({ externalUserId: 'u-1', cardProfileId: 'sbx-visa-consumer', cardholderName: 'ADA LOVELACE', fundingAsset: 'USDT' }); */
  apply(params: ConsumerApplyParams): Promise<ConsumerApplyResult> {
    return this.http.call('POST', '/card/v2/apply', { body: params });
  }

  list(params: ConsumerListParams): Promise<Static<typeof ConsumerCardPage>> {
    return this.http.call('GET', '/card/v2/list', { query: { ...params } });
  }
  listAll(params: Omit<ConsumerListParams, 'page'>) {
    return paginate((page) => this.list({ ...params, page, pageSize: params.pageSize ?? 100 }));
  }

  detail(externalUserId: string, cardId: string): Promise<ConsumerCard> {
    return this.http.call('GET', '/card/v2/detail', { query: { externalUserId, cardId } });
  }

  /** block=true freezes; block=false unfreezes with smsCode or emailCode. Answers false on success (4.2). */
  block(params: ConsumerBlockParams): Promise<boolean> {
    return this.http.call('POST', '/card/v2/block', { body: params });
  }

  sendVerificationCode(params: SendCodeParams): Promise<Static<typeof SendCodeView>> {
    return this.http.call('POST', '/card/v2/send-verification-code', { body: params });
  }

  setContact(params: Static<typeof ContactBody>): Promise<Static<typeof ContactView>> {
    return this.http.call('POST', '/card/v2/contact', { body: params });
  }

  fiatTransactions(params: FiatTransactionsParams = {}): Promise<Static<typeof ConsumerTransactionPage>> {
    return this.http.call('GET', '/card/v1/fiat/transactions', { query: { ...params } });
  }

  statementDetail(externalUserId: string, transId: string): Promise<ConsumerCardTransaction> {
    return this.http.call('GET', '/card/v2/statements/detail', { query: { externalUserId, transId } });
  }

  /**
   * Upgrades the user's ACTIVE virtual card to a physical one (fees charged now from the funding asset).
   * @example await client.consumerCards.upgradePhysical({ externalUserId: 'u-1', cardId, upgradeRef: 'upgrade-0001', cardProfileId: 'sbx-visa-consumer-physical', shippingAddress: { addressLine1: '1 Queen\'s Road Central', city: 'Central', state: 'Hong Kong Island', addressCountryCode: 'HK' } });
   */
  upgradePhysical(params: ConsumerUpgradePhysicalParams): Promise<CardUpgrade> {
    return this.http.call('POST', '/card/v2/upgrade-physical', { body: params });
  }

  /** Cancels an upgrade before it is shipped; the fees are refunded. */
  cancelUpgrade(externalUserId: string, upgradeRef: string): Promise<CardUpgrade> {
    return this.http.call('POST', '/card/v2/cancel-upgrade', { body: { externalUserId, upgradeRef } });
  }

  upgradeDetail(externalUserId: string, upgradeRef: string): Promise<CardUpgrade> {
    return this.http.call('GET', '/card/v2/upgrade-detail', { query: { externalUserId, upgradeRef } });
  }

  /** Activates the shipped card with the code on its carrier. */
  activatePhysical(params: ConsumerActivatePhysicalParams): Promise<CardUpgrade> {
    return this.http.call('POST', '/card/v2/activate-physical', { body: params });
  }
}
