import type { Static } from 'typebox';
import { paginate, type CallOptions, type RequestOf, type SignedHttpClient } from '../client.ts';
import type {
  AssetList, AssetMovement as AssetMovementSchema, AssetMovementPage, ConvertBody, CreditBody, DebitBody, MovementDetailBody,
  MovementListFilter, UserBalance as UserBalanceSchema,
} from '../contract/managed-balance.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/managed-balance.ts).

export type CreditParams = RequestOf<typeof CreditBody>;
export type DebitParams = RequestOf<typeof DebitBody>;
export type ConvertParams = RequestOf<typeof ConvertBody>;
export type AssetMovement = Static<typeof AssetMovementSchema>;
export type UserBalance = Static<typeof UserBalanceSchema>;
export type MovementListParams = Static<typeof MovementListFilter>;
export type AssetInfo = Static<typeof AssetList>[number];

/** Managed-balance user assets: `/user-asset/v1/*` (4.3). Amounts are exact (use `decimal('1.5')`). */
export class UserAssetsResource {
  constructor(private readonly http: SignedHttpClient) {}

  /** @example await client.userAssets.credit({ externalTranId: 'dep-1', asset: 'USDT', amount: decimal('10.5'), externalUserId: 'u-1' }); */
  credit(params: CreditParams, options?: CallOptions): Promise<AssetMovement> {
    return this.http.call('POST', '/user-asset/v1/credit', { body: params }, options);
  }

  debit(params: DebitParams, options?: CallOptions): Promise<AssetMovement> {
    return this.http.call('POST', '/user-asset/v1/debit', { body: params }, options);
  }

  convert(params: ConvertParams, options?: CallOptions): Promise<AssetMovement> {
    return this.http.call('POST', '/user-asset/v1/convert', { body: params }, options);
  }

  /** One balance object per asset (2.3). */
  balance(externalUserId: string, asset?: string, options?: CallOptions): Promise<UserBalance[]> {
    return this.http.call('GET', '/user-asset/v1/balance', { query: asset === undefined ? { externalUserId } : { externalUserId, asset } }, options);
  }

  /** Movements, newest first; `method: 'POST'` sends the filters as a body; both work (D48). */
  transactions(params: MovementListParams, method: 'GET' | 'POST' = 'GET', options?: CallOptions): Promise<Static<typeof AssetMovementPage>> {
    return method === 'GET'
      ? this.http.call('GET', '/user-asset/v1/transactions', { query: { ...params } }, options)
      : this.http.call('POST', '/user-asset/v1/transactions', { body: params }, options);
  }
  transactionsAll(params: Omit<MovementListParams, 'page'>, options?: CallOptions) {
    return paginate((page) => this.transactions({ ...params, page, pageSize: params.pageSize ?? 100 }, 'GET', options));
  }

  transactionDetail(params: RequestOf<typeof MovementDetailBody>, options?: CallOptions): Promise<AssetMovement> {
    return this.http.call('POST', '/user-asset/v1/transaction-detail', { body: params }, options);
  }

  transferQuery(externalTranId: string, options?: CallOptions): Promise<AssetMovement> {
    return this.http.call('GET', '/user-asset/v1/transfer-query', { query: { externalTranId } }, options);
  }

  assets(options?: CallOptions): Promise<AssetInfo[]> {
    return this.http.call('GET', '/user-asset/v1/assets', {}, options);
  }
}
