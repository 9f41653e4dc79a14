import type { LosslessNumber } from 'lossless-json';
import type { SignedHttpClient } from '../client.ts';
import type { FundingCurrency, Page } from './organizations.ts';

/** Amounts are exact JSON numbers: LosslessNumber unless a safe integer (use decimalText()). */
export type FundAmount = LosslessNumber | number;

export interface PoolBalance {
  currency: string;
  available: FundAmount;
  pending: FundAmount;
  total: FundAmount;
}

export interface FundBalance {
  organizationId: string;
  pools: PoolBalance[];
  cards: (PoolBalance & { cardId: string })[];
}

export interface StatementLine {
  statementId: string;
  postingId: string;
  currency: string;
  type: string;
  amount: FundAmount;
  availableChange: FundAmount;
  pendingChange: FundAmount;
  availableAfter: FundAmount;
  pendingAfter: FundAmount;
  totalAfter: FundAmount;
  reference: string | null;
  description: string | null;
  createTime: string;
}

export interface StatementParams {
  organizationId: string;
  /** A dedicated card of the company: the movements of its own balance instead of the pools'. */
  cardId?: string;
  currency?: FundingCurrency;
  startTime?: string;
  endTime?: string;
  page?: number;
  pageSize?: number;
}

export interface BalanceSetting {
  currency: FundingCurrency;
  /** Canonical name (D41). */
  threshold?: FundAmount;
  /** Alias accepted by the service (D41). */
  thresholdAmount?: FundAmount;
}

export interface BalanceAlertParams {
  organizationId: string;
  balanceSettings: BalanceSetting[];
  emailSettings?: string[];
}

export interface BalanceAlertConfig {
  organizationId: string;
  balanceSettings: { currency: FundingCurrency; threshold: FundAmount }[];
  emailSettings: string[];
}

/** Company funds: `/open-api-corp/fund/v1/*` (pools, statement, low-balance alerts). */
export class FundingResource {
  constructor(private readonly http: SignedHttpClient) {}

  /** @example const { pools } = await client.funding.balance(organizationId); */
  balance(organizationId: string): Promise<FundBalance> {
    return this.http.call('GET', '/open-api-corp/fund/v1/balance', { query: { organizationId } });
  }

  /** @example const page = await client.funding.statement({ organizationId, currency: 'USD' }); */
  statement(params: StatementParams): Promise<Page<StatementLine>> {
    return this.http.call('GET', '/open-api-corp/fund/v1/statement', { query: { ...params } });
  }

  /**
   * Replaces the low-balance alert configuration (4.6).
   * @example await client.funding.setBalanceAlert({ organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('100.00') }] });
   */
  setBalanceAlert(params: BalanceAlertParams): Promise<null> {
    return this.http.call('POST', '/open-api-corp/fund/v1/balance-alert-set', { body: params });
  }

  /** @example const config = await client.funding.queryBalanceAlert(organizationId); */
  queryBalanceAlert(organizationId: string): Promise<BalanceAlertConfig> {
    return this.http.call('GET', '/open-api-corp/fund/v1/balance-alert-query', { query: { organizationId } });
  }
}
