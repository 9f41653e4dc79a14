import type { Static } from 'typebox';
import { paginate, type CallOptions, type RequestOf, type SignedHttpClient } from '../client.ts';
import type {
  AddressBody, CreateCustomerBody, CustomerPage, CustomerRestrictions as CustomerRestrictionsSchema, CustomerView, ListCustomersQuery,
  UpdateNameBody, UpdatePhoneBody,
} from '../contract/customers.ts';
import type { UpdateRestrictionsParams } from './organizations.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/customers.ts).
export type KycStatus = Customer['kycStatus'];

/** Address element (2.7) as sent; answers carry every field (null when absent). */
export type Address = RequestOf<typeof AddressBody>;

/** Employee (2.7) with kycStatus (D16) and restrictions (D19). */
export type Customer = Static<typeof CustomerView>;

export type CreateCustomerParams = RequestOf<typeof CreateCustomerBody>;

export type NameParams = Omit<RequestOf<typeof UpdateNameBody>, 'customerId'>;
export type PhoneParams = Omit<RequestOf<typeof UpdatePhoneBody>, 'customerId'>;
export type ListCustomersParams = Static<typeof ListCustomersQuery>;

export type CustomerRestrictions = Static<typeof CustomerRestrictionsSchema>;

/** Employees: `/open-api-corp/customer/v1/*`. */
export class CustomersResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Creates an employee (D16); KYC starts PENDING.
   * @example const emp = await client.customers.create({ organizationId, customerRef: 'e-1', firstName: 'Ada', lastName: 'Lovelace' });
   */
  create(params: CreateCustomerParams, options?: CallOptions): Promise<Customer> {
    return this.http.call('POST', '/open-api-corp/customer/v1/create', { body: params }, options);
  }

  /** @example const emp = await client.customers.query(customerId); */
  query(customerId: string, options?: CallOptions): Promise<Customer> {
    return this.http.call('GET', '/open-api-corp/customer/v1/query', { query: { customerId } }, options);
  }

  /** @example const page = await client.customers.list({ organizationId }); */
  list(params: ListCustomersParams, options?: CallOptions): Promise<Static<typeof CustomerPage>> {
    return this.http.call('GET', '/open-api-corp/customer/v1/list', { query: { ...params } }, options);
  }
  /** Every employee of a company, page after page (async iterator). */
  listAll(params: Omit<ListCustomersParams, 'page'>, options?: CallOptions) {
    return paginate((page) => this.list({ ...params, page, pageSize: params.pageSize ?? 100 }, options));
  }


  /**
   * Replaces the name as a whole (4.5 rule 1); a real change starts a KYC review.
   * @example await client.customers.updateName(customerId, { firstName: 'Ada', lastName: 'King' });
   */
  updateName(customerId: string, params: NameParams, options?: CallOptions): Promise<null> {
    return this.http.call('POST', '/open-api-corp/customer/v1/update-name', { body: { customerId, ...params } }, options);
  }

  /** @example await client.customers.updatePhone(customerId, { phoneCountryCode: 'HK', phoneNumber: '91234567' }); */
  updatePhone(customerId: string, params: PhoneParams, options?: CallOptions): Promise<null> {
    return this.http.call('POST', '/open-api-corp/customer/v1/update-phone', { body: { customerId, ...params } }, options);
  }

  /** @example await client.customers.updateEmail(customerId, 'ada@example.com'); */
  updateEmail(customerId: string, email: string, options?: CallOptions): Promise<null> {
    return this.http.call('POST', '/open-api-corp/customer/v1/update-email', { body: { customerId, email } }, options);
  }

  /** Replaces whole addresses per addressType (4.5 rule 3). */
  updateAddress(customerId: string, addresses: Address[], options?: CallOptions): Promise<null> {
    return this.http.call('POST', '/open-api-corp/customer/v1/update-address', { body: { customerId, addresses } }, options);
  }

  /**
   * Freezes or unfreezes employee capabilities (4.5 rule 4).
   * @example const { restrictions } = await client.customers.updateRestrictions(customerId, { addRestrictions: ['PAYMENT_FROZEN'] });
   */
  updateRestrictions(customerId: string, params: UpdateRestrictionsParams, options?: CallOptions): Promise<CustomerRestrictions> {
    return this.http.call('POST', '/open-api-corp/customer/v1/update-restrictions', { body: { customerId, ...params } }, options);
  }

  /** Ends the employee's lifecycle (D16). */
  terminate(customerId: string, remark?: string, options?: CallOptions): Promise<null> {
    return this.http.call('POST', '/open-api-corp/customer/v1/terminate', { body: { customerId, ...(remark !== undefined ? { remark } : {}) } }, options);
  }

  /** Re-opens a REJECTED KYC review (D17). */
  resubmit(customerId: string, options?: CallOptions): Promise<null> {
    return this.http.call('POST', '/open-api-corp/customer/v1/resubmit', { body: { customerId } }, options);
  }
}
