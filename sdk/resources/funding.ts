import type { Static } from 'typebox';
import { paginate, type CallOptions, type RequestOf, type SignedHttpClient } from '../client.ts';
import type {
  BalanceAlertConfig as BalanceAlertConfigSchema, BalanceAlertSetBody, BalanceSetting as BalanceSettingSchema, FundBalance as FundBalanceSchema,
  PoolBalance as PoolBalanceSchema, StatementLine as StatementLineSchema, StatementPage, StatementQuery,
} from '../contract/funding.ts';
import type { WireAmount } from '../contract/wire.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/funding.ts).

/** Amounts are exact JSON numbers: LosslessNumber unless a safe integer (use decimalText()). */
export type FundAmount = WireAmount;

export type PoolBalance = Static<typeof PoolBalanceSchema>;
export type FundBalance = Static<typeof FundBalanceSchema>;
export type StatementLine = Static<typeof StatementLineSchema>;
export type StatementParams = Static<typeof StatementQuery>;
/** `threshold` is the canonical name; `thresholdAmount` an alias the service accepts (D41). */
export type BalanceSetting = Static<typeof BalanceSettingSchema>;
export type BalanceAlertParams = RequestOf<typeof BalanceAlertSetBody>;
export type BalanceAlertConfig = Static<typeof BalanceAlertConfigSchema>;

/** Company funds: `/open-api-corp/fund/v1/*` (pools, statement, low-balance alerts). */
export class FundingResource {
  constructor(private readonly http: SignedHttpClient) {}

  /** @example const { pools } = await client.funding.balance(organizationId); */
  balance(organizationId: string, options?: CallOptions): Promise<FundBalance> {
    return this.http.call('GET', '/open-api-corp/fund/v1/balance', { query: { organizationId } }, options);
  }

  /** @example const page = await client.funding.statement({ organizationId, currency: 'USD' }); */
  statement(params: StatementParams, options?: CallOptions): Promise<Static<typeof StatementPage>> {
    return this.http.call('GET', '/open-api-corp/fund/v1/statement', { query: { ...params } }, options);
  }
  /** Every statement line, page after page (async iterator). */
  statementAll(params: Omit<StatementParams, 'page'>, options?: CallOptions) {
    return paginate((page) => this.statement({ ...params, page, pageSize: params.pageSize ?? 100 }, options));
  }


  /**
   * Replaces the low-balance alert configuration (4.6).
   * @example await client.funding.setBalanceAlert({ organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('100.00') }] });
   */
  setBalanceAlert(params: BalanceAlertParams, options?: CallOptions): Promise<null> {
    return this.http.call('POST', '/open-api-corp/fund/v1/balance-alert-set', { body: params }, options);
  }

  /** @example const config = await client.funding.queryBalanceAlert(organizationId); */
  queryBalanceAlert(organizationId: string, options?: CallOptions): Promise<BalanceAlertConfig> {
    return this.http.call('GET', '/open-api-corp/fund/v1/balance-alert-query', { query: { organizationId } }, options);
  }
}
