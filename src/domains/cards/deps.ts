/**
 * What cards need from the other domains, in one place: companies and employees, capability
 * enforcement (D20, the shared assertCapability), sanctions (D51) and velocity rules (D44), all
 * through those domains' public entries. Cards never read those tables directly.
 */
import type { Queryable } from '../../platform/db/db.ts';
import { addressesOf, findCustomer } from '../customers/index.ts';
import { assertCapability, isSanctioned } from '../organizations/index.ts';
export { findOrganization, type Organization } from '../organizations/index.ts';
export { checkRulesForCard, bindRulesToCard, type CardLookup } from '../velocity/index.ts';

export interface CardCustomer {
  customerId: string;
  organizationId: string;
  lifecycle: 'ACTIVE' | 'TERMINATED';
  kycStatus: 'PENDING' | 'APPROVED' | 'REJECTED';
  firstName: string;
  lastName: string;
  addressCountryCodes: string[];
}

/** The partner's employee (another partner's id is null, like a missing one), with address countries for screening. */
export async function findCardCustomer(q: Queryable, partnerId: string, customerId: string): Promise<CardCustomer | null> {
  const customer = await findCustomer(q, partnerId, customerId);
  if (!customer) return null;
  const addresses = await addressesOf(q, customer.customerId);
  return {
    customerId: customer.customerId,
    organizationId: customer.organizationId,
    lifecycle: customer.lifecycle,
    kycStatus: customer.kycStatus,
    firstName: customer.firstName,
    lastName: customer.lastName,
    addressCountryCodes: addresses.map((a) => a.addressCountryCode),
  };
}

/** D20 through the shared assertCapability: CARD_MANAGEMENT = card management, DEPOSIT = cash in. */
export async function assertCapabilityOf(
  q: Queryable,
  subject: { subjectType: 'ORGANIZATION' | 'CUSTOMER'; subjectId: string },
  capability: 'CARD_MANAGEMENT' | 'DEPOSIT',
): Promise<void> {
  await assertCapability(q, subject, capability === 'CARD_MANAGEMENT' ? 'CARD' : 'CASH_IN');
}

export async function isCountrySanctioned(q: Queryable, countryCode: string): Promise<boolean> {
  return isSanctioned(q, countryCode);
}

/** Where an employee's physical card goes (2.7): the SHIPPING_ADDRESS and the mobile number, or nulls. */
export async function deliveryContactOf(q: Queryable, partnerId: string, customerId: string) {
  const customer = await findCustomer(q, partnerId, customerId);
  const address = customer ? (await addressesOf(q, customer.customerId)).find((a) => a.addressType === 'SHIPPING_ADDRESS') ?? null : null;
  return {
    shippingAddress: address && {
      postalCode: address.postalCode, addressLine1: address.addressLine1, addressLine2: address.addressLine2,
      addressLine3: address.addressLine3, city: address.city, state: address.state, addressCountryCode: address.addressCountryCode,
    },
    phoneCountryCode: customer?.phoneCountryCode ?? null,
    phoneNumber: customer?.phoneNumber ?? null,
  };
}
