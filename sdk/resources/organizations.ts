import type { SignedHttpClient } from '../client.ts';

export type RestrictionCode = 'ACCOUNT_FROZEN' | 'CASH_IN_FROZEN' | 'CASH_OUT_FROZEN' | 'PAYMENT_FROZEN' | 'CARD_FROZEN';
export type RestrictionSource = 'PARTNER' | 'RISK' | 'REGULATORY' | 'JUDICIAL';
/** Merged status (D18). */
export type SubjectStatus = 'ACTIVE' | 'TERMINATED' | 'SUSPENDED' | 'FROZEN' | 'RESTRICTED';
export type FundingCurrency = 'USD' | 'HKD';

export interface Restriction {
  code: RestrictionCode;
  source: RestrictionSource;
}

/** Organization (2.8) with its restrictions (D19). */
export interface Organization {
  organizationId: string;
  organizationRef: string;
  organizationName: string;
  companyRegistrationNumber: string;
  countryCode: string;
  fundingCurrencies: FundingCurrency[];
  status: SubjectStatus;
  restrictions: Restriction[];
  createTime: string;
  modifyTime: string;
}

export interface CreateOrganizationParams {
  organizationRef: string;
  organizationName: string;
  companyRegistrationNumber: string;
  countryCode: string;
  fundingCurrencies: FundingCurrency[];
}

export interface Page<T> {
  page: number;
  pageSize: number;
  total: number;
  result: T[];
}

export interface UpdateRestrictionsParams {
  addRestrictions?: RestrictionCode[];
  removeRestrictions?: RestrictionCode[];
  remark?: string | null;
}

/** Companies: `/open-api-corp/organization/v1/*`. */
export class OrganizationsResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Onboards a company (D15), ACTIVE, with one funding pool per currency.
   * @example const org = await client.organizations.create({ organizationRef: 'acme-1', organizationName: 'Acme Ltd',
   *   companyRegistrationNumber: '12345678', countryCode: 'HK', fundingCurrencies: ['USD', 'HKD'] });
   */
  create(params: CreateOrganizationParams): Promise<Organization> {
    return this.http.call('POST', '/open-api-corp/organization/v1/create', { body: params });
  }

  /** @example const org = await client.organizations.query(organizationId); */
  query(organizationId: string): Promise<Organization> {
    return this.http.call('GET', '/open-api-corp/organization/v1/query', { query: { organizationId } });
  }

  /** @example const page = await client.organizations.list({ page: 1, pageSize: 20 }); */
  list(params: { page?: number; pageSize?: number; organizationRef?: string } = {}): Promise<Page<Organization>> {
    return this.http.call('GET', '/open-api-corp/organization/v1/list', { query: { ...params } });
  }

  /**
   * Freezes or unfreezes company capabilities (4.6); resolves null.
   * @example await client.organizations.updateRestrictions(organizationId, { addRestrictions: ['CASH_IN_FROZEN'] });
   */
  updateRestrictions(organizationId: string, params: UpdateRestrictionsParams): Promise<null> {
    return this.http.call('POST', '/open-api-corp/organization/v1/update-restrictions', { body: { organizationId, ...params } });
  }
}
