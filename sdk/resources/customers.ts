import type { SignedHttpClient } from '../client.ts';
import type { Page, Restriction, RestrictionCode, SubjectStatus, UpdateRestrictionsParams } from './organizations.ts';

export type KycStatus = 'PENDING' | 'APPROVED' | 'REJECTED';

/** Address element (2.7). */
export interface Address {
  addressType: 'SHIPPING_ADDRESS';
  postalCode?: string | null;
  addressLine1: string;
  addressLine2?: string | null;
  addressLine3?: string | null;
  city: string;
  state: string;
  addressCountryCode: string;
}

/** Employee (2.7) with kycStatus (D16) and restrictions (D19). */
export interface Customer {
  customerId: string;
  customerRef: string;
  organizationId: string;
  firstName: string;
  middleName: string | null;
  lastName: string;
  phoneCountryCode: string | null;
  phoneNumber: string | null;
  email: string | null;
  status: SubjectStatus;
  kycStatus: KycStatus;
  restrictions: Restriction[];
  addresses: Required<Address>[];
  createTime: string;
  modifyTime: string;
}

export interface CreateCustomerParams {
  organizationId: string;
  customerRef: string;
  firstName: string;
  middleName?: string | null;
  lastName: string;
  phoneCountryCode?: string;
  phoneNumber?: string;
  email?: string;
  addresses?: Address[];
}

export interface NameParams {
  firstName: string;
  middleName?: string | null;
  lastName: string;
}

export interface CustomerRestrictions {
  restrictions: Restriction[];
  /** Codes a removal could not lift: held by RISK, REGULATORY or JUDICIAL (D19). */
  retainedRestrictions: RestrictionCode[];
}

/** Employees: `/open-api-corp/customer/v1/*`. */
export class CustomersResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Creates an employee (D16); KYC starts PENDING.
   * @example const emp = await client.customers.create({ organizationId, customerRef: 'e-1', firstName: 'Ada', lastName: 'Lovelace' });
   */
  create(params: CreateCustomerParams): Promise<Customer> {
    return this.http.call('POST', '/open-api-corp/customer/v1/create', { body: params });
  }

  /** @example const emp = await client.customers.query(customerId); */
  query(customerId: string): Promise<Customer> {
    return this.http.call('GET', '/open-api-corp/customer/v1/query', { query: { customerId } });
  }

  /** @example const page = await client.customers.list({ organizationId }); */
  list(params: { organizationId: string; customerRef?: string; page?: number; pageSize?: number }): Promise<Page<Customer>> {
    return this.http.call('GET', '/open-api-corp/customer/v1/list', { query: { ...params } });
  }

  /**
   * Replaces the name as a whole (4.5 rule 1); a real change starts a KYC review.
   * @example await client.customers.updateName(customerId, { firstName: 'Ada', lastName: 'King' });
   */
  updateName(customerId: string, params: NameParams): Promise<null> {
    return this.http.call('POST', '/open-api-corp/customer/v1/update-name', { body: { customerId, ...params } });
  }

  /** @example await client.customers.updatePhone(customerId, { phoneCountryCode: 'HK', phoneNumber: '91234567' }); */
  updatePhone(customerId: string, params: { phoneCountryCode: string; phoneNumber: string }): Promise<null> {
    return this.http.call('POST', '/open-api-corp/customer/v1/update-phone', { body: { customerId, ...params } });
  }

  /** @example await client.customers.updateEmail(customerId, 'ada@example.com'); */
  updateEmail(customerId: string, email: string): Promise<null> {
    return this.http.call('POST', '/open-api-corp/customer/v1/update-email', { body: { customerId, email } });
  }

  /** Replaces whole addresses per addressType (4.5 rule 3). */
  updateAddress(customerId: string, addresses: Address[]): Promise<null> {
    return this.http.call('POST', '/open-api-corp/customer/v1/update-address', { body: { customerId, addresses } });
  }

  /**
   * Freezes or unfreezes employee capabilities (4.5 rule 4).
   * @example const { restrictions } = await client.customers.updateRestrictions(customerId, { addRestrictions: ['PAYMENT_FROZEN'] });
   */
  updateRestrictions(customerId: string, params: UpdateRestrictionsParams): Promise<CustomerRestrictions> {
    return this.http.call('POST', '/open-api-corp/customer/v1/update-restrictions', { body: { customerId, ...params } });
  }

  /** Ends the employee's lifecycle (D16). */
  terminate(customerId: string, remark?: string): Promise<null> {
    return this.http.call('POST', '/open-api-corp/customer/v1/terminate', { body: { customerId, ...(remark !== undefined ? { remark } : {}) } });
  }

  /** Re-opens a REJECTED KYC review (D17). */
  resubmit(customerId: string): Promise<null> {
    return this.http.call('POST', '/open-api-corp/customer/v1/resubmit', { body: { customerId } });
  }
}
