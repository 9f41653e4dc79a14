import type { Static } from 'typebox';
import { paginate, type SignedHttpClient } from '../client.ts';
import type {
  AssetList, AssetMovement as AssetMovementSchema, AssetMovementPage, ConvertBody, CreditBody, DebitBody, MovementDetailBody,
  MovementListFilter, UserBalance as UserBalanceSchema,
} from '../contract/managed-balance.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/managed-balance.ts).

export type CreditParams = Static<typeof CreditBody>;
export type DebitParams = Static<typeof DebitBody>;
export type ConvertParams = Static<typeof ConvertBody>;
export type AssetMovement = Static<typeof AssetMovementSchema>;
export type UserBalance = Static<typeof UserBalanceSchema>;
export type MovementListParams = Static<typeof MovementListFilter>;
export type AssetInfo = Static<typeof AssetList>[number];

/** Managed-balance user assets: `/user-asset/v1/*` (4.3). Amounts are exact (use `decimal('1.5')`). */
export class UserAssetsResource {
  constructor(private readonly http: SignedHttpClient) {}

  /** @example await client.userAssets.credit({ externalTranId: 'dep-1', asset: 'USDT', amount: decimal('10.5'), externalUserId: 'u-1' }); */
  credit(params: CreditParams): Promise<AssetMovement> {
    return this.http.call('POST', '/user-asset/v1/credit', { body: params });
  }

  debit(params: DebitParams): Promise<AssetMovement> {
    return this.http.call('POST', '/user-asset/v1/debit', { body: params });
  }

  convert(params: ConvertParams): Promise<AssetMovement> {
    return this.http.call('POST', '/user-asset/v1/convert', { body: params });
  }

  /** One 2.3 balance object per asset. */
  balance(externalUserId: string, asset?: string): Promise<UserBalance[]> {
    return this.http.call('GET', '/user-asset/v1/balance', { query: asset === undefined ? { externalUserId } : { externalUserId, asset } });
  }

  /** Movements, newest first; `method: 'POST'` sends the filters as a body (D48: both work). */
  transactions(params: MovementListParams, method: 'GET' | 'POST' = 'GET'): Promise<Static<typeof AssetMovementPage>> {
    return method === 'GET'
      ? this.http.call('GET', '/user-asset/v1/transactions', { query: { ...params } })
      : this.http.call('POST', '/user-asset/v1/transactions', { body: params });
  }
  transactionsAll(params: Omit<MovementListParams, 'page'>) {
    return paginate((page) => this.transactions({ ...params, page, pageSize: params.pageSize ?? 100 }));
  }

  transactionDetail(params: Static<typeof MovementDetailBody>): Promise<AssetMovement> {
    return this.http.call('POST', '/user-asset/v1/transaction-detail', { body: params });
  }

  transferQuery(externalTranId: string): Promise<AssetMovement> {
    return this.http.call('GET', '/user-asset/v1/transfer-query', { query: { externalTranId } });
  }

  assets(): Promise<AssetInfo[]> {
    return this.http.call('GET', '/user-asset/v1/assets');
  }
}
