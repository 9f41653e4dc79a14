import type { Static } from 'typebox';
import { paginate, type SignedHttpClient } from '../client.ts';
import type {
  AddressBody, CreateCustomerBody, CustomerPage, CustomerRestrictions as CustomerRestrictionsSchema, CustomerView, ListCustomersQuery,
  UpdateNameBody, UpdatePhoneBody,
} from '../contract/customers.ts';
import type { UpdateRestrictionsParams } from './organizations.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/customers.ts).
export type KycStatus = Customer['kycStatus'];

/** Address element (2.7) as sent; answers carry every field (null when absent). */
export type Address = Static<typeof AddressBody>;

/** Employee (2.7) with kycStatus (D16) and restrictions (D19). */
export type Customer = Static<typeof CustomerView>;

export type CreateCustomerParams = Static<typeof CreateCustomerBody>;

export type NameParams = Omit<Static<typeof UpdateNameBody>, 'customerId'>;
export type PhoneParams = Omit<Static<typeof UpdatePhoneBody>, 'customerId'>;
export type ListCustomersParams = Static<typeof ListCustomersQuery>;

export type CustomerRestrictions = Static<typeof CustomerRestrictionsSchema>;

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
  list(params: ListCustomersParams): Promise<Static<typeof CustomerPage>> {
    return this.http.call('GET', '/open-api-corp/customer/v1/list', { query: { ...params } });
  }
  /** Every employee of a company, page after page (async iterator). */
  listAll(params: Omit<ListCustomersParams, 'page'>) {
    return paginate((page) => this.list({ ...params, page, pageSize: params.pageSize ?? 100 }));
  }


  /**
   * Replaces the name as a whole (4.5 rule 1); a real change starts a KYC review.
   * @example await client.customers.updateName(customerId, { firstName: 'Ada', lastName: 'King' });
   */
  updateName(customerId: string, params: NameParams): Promise<null> {
    return this.http.call('POST', '/open-api-corp/customer/v1/update-name', { body: { customerId, ...params } });
  }

  /** @example await client.customers.updatePhone(customerId, { phoneCountryCode: 'HK', phoneNumber: '91234567' }); */
  updatePhone(customerId: string, params: PhoneParams): Promise<null> {
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
