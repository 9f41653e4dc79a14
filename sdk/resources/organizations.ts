import type { Static } from 'typebox';
import { paginate, type CallOptions, type RequestOf, type SignedHttpClient } from '../client.ts';
import type {
  CreateOrganizationBody, ListOrganizationsQuery, OrganizationPage, OrganizationView, RestrictionView, UpdateOrganizationRestrictionsBody,
} from '../contract/organizations.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/organizations.ts).
export type { FundingCurrency, MergedStatus as SubjectStatus, RestrictionCode, RestrictionSource } from '../contract/organizations.ts';

export type Restriction = Static<typeof RestrictionView>;

/** Organization (2.8) with its merged status (D18) and restrictions (D19). */
export type Organization = Static<typeof OrganizationView>;

export type CreateOrganizationParams = RequestOf<typeof CreateOrganizationBody>;

/** The paging envelope of every list (D9). */
export interface Page<T> {
  page: number;
  pageSize: number;
  total: number;
  result: T[];
}

export type UpdateRestrictionsParams = Omit<RequestOf<typeof UpdateOrganizationRestrictionsBody>, 'organizationId'>;
export type ListOrganizationsParams = Static<typeof ListOrganizationsQuery>;

/** Companies: `/open-api-corp/organization/v1/*`. */
export class OrganizationsResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Onboards a company (D15), ACTIVE, with one funding pool per currency.
   * @example const org = await client.organizations.create({ organizationRef: 'acme-1', organizationName: 'Acme Ltd',
   *   companyRegistrationNumber: '12345678', countryCode: 'HK', fundingCurrencies: ['USD', 'HKD'] });
   */
  create(params: CreateOrganizationParams, options?: CallOptions): Promise<Organization> {
    return this.http.call('POST', '/open-api-corp/organization/v1/create', { body: params }, options);
  }

  /** @example const org = await client.organizations.query(organizationId); */
  query(organizationId: string, options?: CallOptions): Promise<Organization> {
    return this.http.call('GET', '/open-api-corp/organization/v1/query', { query: { organizationId } }, options);
  }

  /** @example const page = await client.organizations.list({ page: 1, pageSize: 20 }); */
  list(params: ListOrganizationsParams = {}, options?: CallOptions): Promise<Static<typeof OrganizationPage>> {
    return this.http.call('GET', '/open-api-corp/organization/v1/list', { query: { ...params } }, options);
  }
  /** Every organization, page after page: `for await (const org of client.organizations.listAll()) ...`. */
  listAll(params: Omit<ListOrganizationsParams, 'page'> = {}, options?: CallOptions) {
    return paginate((page) => this.list({ ...params, page, pageSize: params.pageSize ?? 100 }, options));
  }


  /**
   * Freezes or unfreezes company capabilities (4.6); resolves null.
   * @example await client.organizations.updateRestrictions(organizationId, { addRestrictions: ['CASH_IN_FROZEN'] });
   */
  updateRestrictions(organizationId: string, params: UpdateRestrictionsParams, options?: CallOptions): Promise<null> {
    return this.http.call('POST', '/open-api-corp/organization/v1/update-restrictions', { body: { organizationId, ...params } }, options);
  }
}
