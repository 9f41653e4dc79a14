import type { Static } from 'typebox';
import type { AddressBody, CreateCustomerBody } from '../../../sdk/contract/customers.ts';
import type { AppContext } from '../../platform/context.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { ApiError, invariant, paramInvalid } from '../../platform/errors.ts';
import { pageOf, type Paging } from '../../platform/http/schema.ts';
import {
  assertCapability, assertNotSanctioned, findOrganization, isIsoCountry, isSupportedPhoneCountry, listRestrictions, listRestrictionsOf,
  mergedStatus, terminateCustomer, updateRestrictions, type Restriction, type RestrictionCode,
} from '../organizations/index.ts';
import { openReview, resubmitKyc } from './kyc.ts';
import {
  customerRefTaken, findCustomer as findCustomerRow, insertCustomer, listAddresses, listCustomers, setEmail, setName, setPhone, touchCustomer, upsertAddresses,
  type Address, type Customer,
} from './store.ts';

export type CustomerDeps = Pick<AppContext, 'db' | 'clock'>;

/** 2.7 (addresses always an array) plus kycStatus (D16), restrictions (D19) and times (D11). */
export function customerView(c: Customer, restrictions: Restriction[], addresses: Address[]) {
  return {
    customerId: c.customerId,
    customerRef: c.customerRef,
    organizationId: c.organizationId,
    firstName: c.firstName,
    middleName: c.middleName,
    lastName: c.lastName,
    phoneCountryCode: c.phoneCountryCode,
    phoneNumber: c.phoneNumber,
    email: c.email,
    status: mergedStatus({ lifecycle: c.lifecycle, suspended: c.suspended, codes: restrictions.map((r) => r.code) }),
    kycStatus: c.kycStatus,
    restrictions,
    addresses,
    createTime: c.createdAt.toISOString(),
    modifyTime: c.updatedAt.toISOString(),
  };
}

// Inputs are the routes' bodies (sdk/contract/customers.ts).
export type CreateCustomerInput = Static<typeof CreateCustomerBody>;
export type NameInput = Pick<CreateCustomerInput, 'firstName' | 'middleName' | 'lastName'>;
export type AddressInput = Static<typeof AddressBody>;

/** 4.5 update-name: `middleName` omitted (or empty) clears it. */
function normalizeName(n: NameInput) {
  const middle = n.middleName ?? null;
  return { firstName: n.firstName, middleName: middle === null || middle.trim() === '' ? null : middle, lastName: n.lastName };
}

/** Address bounds the schema cannot express: unique addressType, ISO country. */
function normalizeAddresses(field: string, list: AddressInput[]): Address[] {
  const seen = new Set<string>();
  return list.map((a, i) => {
    if (seen.has(a.addressType)) throw paramInvalid(`${field}.${i}.addressType`, `${a.addressType} appears twice`);
    seen.add(a.addressType);
    if (!isIsoCountry(a.addressCountryCode)) throw paramInvalid(`${field}.${i}.addressCountryCode`, 'must be an ISO 3166-1 alpha-2 country code');
    return {
      addressType: a.addressType,
      postalCode: a.postalCode ?? null,
      addressLine1: a.addressLine1,
      addressLine2: a.addressLine2 ?? null,
      addressLine3: a.addressLine3 ?? null,
      city: a.city,
      state: a.state,
      addressCountryCode: a.addressCountryCode,
    };
  });
}

function checkPhoneCountry(code: string): void {
  if (!isSupportedPhoneCountry(code)) throw paramInvalid('phoneCountryCode', `${code} is not on the supported list`);
}

async function viewOf(q: Queryable, customer: Customer) {
  const restrictions = await listRestrictions(q, { subjectType: 'CUSTOMER', subjectId: customer.customerId });
  const addresses = (await listAddresses(q, [customer.customerId])).get(customer.customerId) ?? [];
  return customerView(customer, restrictions, addresses);
}

/**
 * D16: creates the employee, KYC PENDING (D17, D51: it stays PENDING until decided). Checks after
 * the schema: phone pair and list, address types and countries (DAPI_PARAM_INVALID); organization
 * (ORGANIZATION_INVALID, also for a TERMINATED one); customerRef unique in the organization
 * (CUSTOMER_REF_DUPLICATE); address countries not sanctioned (COUNTRY_SANCTIONED).
 */
export async function createCustomer(deps: CustomerDeps, partnerId: string, input: CreateCustomerInput) {
  if ((input.phoneCountryCode === undefined) !== (input.phoneNumber === undefined)) {
    throw paramInvalid(input.phoneCountryCode === undefined ? 'phoneCountryCode' : 'phoneNumber', 'phoneCountryCode and phoneNumber go together');
  }
  if (input.phoneCountryCode !== undefined) checkPhoneCountry(input.phoneCountryCode);
  const addresses = normalizeAddresses('addresses', input.addresses ?? []);
  const name = normalizeName(input);
  const at = new Date(deps.clock.now());
  return deps.db.tx(async (q) => {
    const organization = await findOrganization(q, partnerId, input.organizationId, true);
    if (!organization) throw new ApiError('ORGANIZATION_INVALID');
    if (organization.lifecycle !== 'ACTIVE') throw new ApiError('ORGANIZATION_INVALID', 'Organization is TERMINATED');
    if (await customerRefTaken(q, organization.organizationId, input.customerRef)) {
      throw new ApiError('CUSTOMER_REF_DUPLICATE', `customerRef ${input.customerRef} is already used in this organization`);
    }
    await assertNotSanctioned(q, addresses.map((a, i) => ({ field: `addresses.${i}.addressCountryCode`, countryCode: a.addressCountryCode })));
    const customer = await insertCustomer(q, {
      customerId: newId('cus'),
      partnerId,
      organizationId: organization.organizationId,
      customerRef: input.customerRef,
      ...name,
      phoneCountryCode: input.phoneCountryCode ?? null,
      phoneNumber: input.phoneNumber ?? null,
      email: input.email ?? null,
      createdAt: at,
    });
    // The organization row lock serializes creates in one company, so the ref check above holds.
    invariant(customer, 'customerRef free under the organization lock');
    await upsertAddresses(q, customer.customerId, addresses, at);
    await openReview(q, customer, 'CREATE', at);
    return viewOf(q, (await findCustomerRow(q, partnerId, customer.customerId))!);
  });
}

/** The partner's employee or CUSTOMER_INVALID; `forUpdate` for writes, which also need it ACTIVE (D43). */
async function requireCustomer(q: Queryable, partnerId: string, customerId: string, forUpdate: boolean): Promise<Customer> {
  const customer = await findCustomerRow(q, partnerId, customerId, forUpdate);
  if (!customer) throw new ApiError('CUSTOMER_INVALID');
  if (forUpdate && customer.lifecycle !== 'ACTIVE') throw new ApiError('CUSTOMER_INVALID', 'Employee is TERMINATED');
  return customer;
}

/** D43: reads show every state, TERMINATED included. */
export async function queryCustomer(deps: CustomerDeps, partnerId: string, customerId: string) {
  const customer = await requireCustomer(deps.db, partnerId, customerId, false);
  return viewOf(deps.db, customer);
}

export async function listCustomersPage(deps: CustomerDeps, partnerId: string, organizationId: string, paging: Paging, filter: { customerRef?: string }) {
  const organization = await findOrganization(deps.db, partnerId, organizationId);
  if (!organization) throw new ApiError('ORGANIZATION_INVALID');
  const { total, rows } = await listCustomers(deps.db, partnerId, organizationId, filter, paging.pageSize, (paging.page - 1) * paging.pageSize);
  const ids = rows.map((r) => r.customerId);
  const restrictions = await listRestrictionsOf(deps.db, 'CUSTOMER', ids);
  const addresses = await listAddresses(deps.db, ids);
  return pageOf(paging, total, rows.map((c) => customerView(c, restrictions.get(c.customerId) ?? [], addresses.get(c.customerId) ?? [])));
}

/**
 * 4.5 update-name, rule 1: the name is replaced as a whole. While a review is in flight the call
 * is KYC_IN_REVIEW (even for an identical name); an identical name changes nothing; a real change
 * opens a new review (PENDING, CUSTOMER_KYC_CHANGED).
 */
export async function updateName(deps: CustomerDeps, partnerId: string, customerId: string, input: NameInput): Promise<null> {
  const name = normalizeName(input);
  const at = new Date(deps.clock.now());
  await deps.db.tx(async (q) => {
    const customer = await requireCustomer(q, partnerId, customerId, true);
    if (customer.kycStatus === 'PENDING') throw new ApiError('KYC_IN_REVIEW');
    const same = customer.firstName === name.firstName && customer.middleName === name.middleName && customer.lastName === name.lastName;
    if (same) return;
    await setName(q, customerId, name, at);
    await openReview(q, customer, 'NAME_CHANGE', at);
  });
  return null;
}

/** 4.5 update-phone (rule 2: also the physical-card delivery contact). ACCOUNT_FROZEN refuses it (4.5 table). */
export async function updatePhone(deps: CustomerDeps, partnerId: string, customerId: string, input: { phoneCountryCode: string; phoneNumber: string }): Promise<null> {
  checkPhoneCountry(input.phoneCountryCode);
  const at = new Date(deps.clock.now());
  await deps.db.tx(async (q) => {
    await requireCustomer(q, partnerId, customerId, true);
    await assertCapability(q, { subjectType: 'CUSTOMER', subjectId: customerId }, 'ACCOUNT');
    await setPhone(q, customerId, input.phoneCountryCode, input.phoneNumber, at);
  });
  return null;
}

/** 4.5 update-email. ACCOUNT_FROZEN refuses it (4.5 table). */
export async function updateEmail(deps: CustomerDeps, partnerId: string, customerId: string, email: string): Promise<null> {
  const at = new Date(deps.clock.now());
  await deps.db.tx(async (q) => {
    await requireCustomer(q, partnerId, customerId, true);
    await assertCapability(q, { subjectType: 'CUSTOMER', subjectId: customerId }, 'ACCOUNT');
    await setEmail(q, customerId, email, at);
  });
  return null;
}

/** 4.5 update-address, rule 3: whole objects per addressType; sanctioned countries refused. */
export async function updateAddress(deps: CustomerDeps, partnerId: string, customerId: string, list: AddressInput[]): Promise<null> {
  const addresses = normalizeAddresses('addresses', list);
  const at = new Date(deps.clock.now());
  await deps.db.tx(async (q) => {
    await requireCustomer(q, partnerId, customerId, true);
    await assertNotSanctioned(q, addresses.map((a, i) => ({ field: `addresses.${i}.addressCountryCode`, countryCode: a.addressCountryCode })));
    await upsertAddresses(q, customerId, addresses, at);
    await touchCustomer(q, customerId, at);
  });
  return null;
}

/** 4.5 update-restrictions for an employee: data {restrictions, retainedRestrictions} (D19). */
export async function updateCustomerRestrictions(
  deps: CustomerDeps,
  partnerId: string,
  input: { customerId: string; add: RestrictionCode[]; remove: RestrictionCode[]; remark: string | null },
) {
  const at = new Date(deps.clock.now());
  const outcome = await deps.db.tx((q) => updateRestrictions(q, {
    subject: { subjectType: 'CUSTOMER', subjectId: input.customerId },
    partnerId,
    source: 'PARTNER',
    add: input.add,
    remove: input.remove,
    remark: input.remark,
    at,
  }));
  return { restrictions: outcome.restrictions, retainedRestrictions: outcome.retainedRestrictions };
}

/** D16 terminate. ACCOUNT_FROZEN refuses closure (4.5 table); an already terminated employee is CUSTOMER_INVALID. */
export async function terminate(deps: CustomerDeps, partnerId: string, customerId: string, remark: string | null): Promise<null> {
  const at = new Date(deps.clock.now());
  await deps.db.tx(async (q) => {
    await requireCustomer(q, partnerId, customerId, true);
    await assertCapability(q, { subjectType: 'CUSTOMER', subjectId: customerId }, 'ACCOUNT');
    await terminateCustomer(q, { customerId, partnerId, remark, at });
  });
  return null;
}

export async function resubmit(deps: CustomerDeps, partnerId: string, customerId: string): Promise<null> {
  const at = new Date(deps.clock.now());
  await deps.db.tx((q) => resubmitKyc(q, partnerId, customerId, at));
  return null;
}

/** The partner's employee in any state, or null (another partner's id is null, like a missing one). */
export async function findCustomer(q: Queryable, partnerId: string, customerId: string): Promise<Customer | null> {
  return findCustomerRow(q, partnerId, customerId);
}

/** The employee's addresses (2.7), for screening and card delivery. */
export async function addressesOf(q: Queryable, customerId: string): Promise<Address[]> {
  return (await listAddresses(q, [customerId])).get(customerId) ?? [];
}
