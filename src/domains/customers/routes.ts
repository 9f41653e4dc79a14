import { Type } from 'typebox';
import { Page, PagingQuery } from '../../platform/http/schema.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import {
  CountryCode, CustomerId, MergedStatus, OrganizationId, PRINTABLE, REF_MAX, Remark, RestrictionArray, RestrictionView,
  restrictionSets,
} from '../organizations/index.ts';
import {
  createCustomer, listCustomersPage, queryCustomer, resubmit, terminate, updateAddress, updateCustomerRestrictions,
  updateEmail, updateName, updatePhone, type CustomerDeps,
} from './service.ts';

/** Section 8 / 4.5: name parts up to 64; letters, digits and spaces (at least one letter or digit). */
export const NAME_MAX = 64;
const NAME_PATTERN = '^(?=.*[\\p{L}\\p{N}])[\\p{L}\\p{M}\\p{N} ]+$';
const MIDDLE_NAME_PATTERN = '^[\\p{L}\\p{M}\\p{N} ]*$';
/** 4.5: up to 15 digits, local number without country code or "+"; at least 4 (shortest real numbers). */
export const PHONE_PATTERN = '^[0-9]{4,15}$';
/** Section 8: email up to 128. */
export const EMAIL_MAX = 128;
/** Not in the spec (docs: Decisions): address part bounds. */
export const ADDRESS_LINE_MAX = 128;
export const CITY_MAX = 64;
export const STATE_MAX = 64;
export const POSTAL_CODE_MAX = 20;
const ADDRESSES_MAX = 10;

const Name = Type.String({ minLength: 1, maxLength: NAME_MAX, pattern: NAME_PATTERN, description: 'Up to 64; letters, digits and spaces' });
const MiddleName = Type.Union([Type.String({ maxLength: NAME_MAX, pattern: MIDDLE_NAME_PATTERN }), Type.Null()], {
  description: 'Up to 64; letters, digits and spaces; omitted, null or empty clears it',
});
const PhoneCountryCode = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, on the supported list' });
const PhoneNumber = Type.String({ pattern: PHONE_PATTERN, description: 'Up to 15 digits, without country code or +' });
const Email = Type.String({ format: 'email', maxLength: EMAIL_MAX });
const Required = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: PRINTABLE });
const Optional = (max: number) => Type.Optional(Type.Union([Type.String({ maxLength: max, pattern: '^[^\\u0000-\\u001f\\u007f]*$' }), Type.Null()]));

export const AddressBody = Type.Object({
  addressType: Type.Literal('SHIPPING_ADDRESS', { description: 'The only value: physical card delivery' }),
  postalCode: Optional(POSTAL_CODE_MAX),
  addressLine1: Required(ADDRESS_LINE_MAX),
  addressLine2: Optional(ADDRESS_LINE_MAX),
  addressLine3: Optional(ADDRESS_LINE_MAX),
  city: Required(CITY_MAX),
  state: Required(STATE_MAX),
  addressCountryCode: CountryCode,
});

const AddressView = Type.Object({
  addressType: Type.String(),
  postalCode: Type.Union([Type.String(), Type.Null()]),
  addressLine1: Type.String(),
  addressLine2: Type.Union([Type.String(), Type.Null()]),
  addressLine3: Type.Union([Type.String(), Type.Null()]),
  city: Type.String(),
  state: Type.String(),
  addressCountryCode: Type.String(),
});

const Nullable = Type.Union([Type.String(), Type.Null()]);
export const CustomerView = Type.Object({
  customerId: Type.String(),
  customerRef: Type.String(),
  organizationId: Type.String(),
  firstName: Type.String(),
  middleName: Nullable,
  lastName: Type.String(),
  phoneCountryCode: Nullable,
  phoneNumber: Nullable,
  email: Nullable,
  status: MergedStatus,
  kycStatus: Type.Union([Type.Literal('PENDING'), Type.Literal('APPROVED'), Type.Literal('REJECTED')]),
  restrictions: Type.Array(RestrictionView),
  addresses: Type.Array(AddressView),
  createTime: Type.String(),
  modifyTime: Type.String(),
});

const Ref = Type.String({ minLength: 1, maxLength: REF_MAX, pattern: PRINTABLE });

export function customerRoutes(deps: CustomerDeps): RouteDef[] {
  return [
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/create',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Create an employee (D16); KYC starts PENDING (D17)',
      body: Type.Object({
        organizationId: OrganizationId,
        customerRef: Type.String({ minLength: 1, maxLength: REF_MAX, pattern: PRINTABLE, description: 'Unique per organization (D48)' }),
        firstName: Name,
        middleName: Type.Optional(MiddleName),
        lastName: Name,
        phoneCountryCode: Type.Optional(PhoneCountryCode),
        phoneNumber: Type.Optional(PhoneNumber),
        email: Type.Optional(Email),
        addresses: Type.Optional(Type.Array(AddressBody, { maxItems: ADDRESSES_MAX })),
      }),
      data: CustomerView,
      errors: ['ORGANIZATION_INVALID', 'CUSTOMER_REF_DUPLICATE', 'COUNTRY_SANCTIONED'],
      handler: ({ body, partner }) => createCustomer(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/customer/v1/query',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Read an employee (2.7), TERMINATED ones included (D43)',
      querystring: Type.Object({ customerId: CustomerId }),
      data: CustomerView,
      errors: ['CUSTOMER_INVALID'],
      handler: ({ query, partner }) => queryCustomer(deps, partner.partnerId, query.customerId),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/customer/v1/list',
      auth: 'partner',
      tag: 'Employees',
      summary: "Page a company's employees, newest first (D16, D9)",
      querystring: Type.Object({ organizationId: OrganizationId, customerRef: Type.Optional(Ref), ...PagingQuery }),
      data: Page(CustomerView),
      errors: ['ORGANIZATION_INVALID'],
      handler: ({ query, partner }) => listCustomersPage(deps, partner.partnerId, query.organizationId,
        { page: query.page ?? 1, pageSize: query.pageSize ?? 20 }, { customerRef: query.customerRef }),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/update-name',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Replace the name as a whole (4.5 rule 1); a real change starts a KYC review',
      body: Type.Object({ customerId: CustomerId, firstName: Name, middleName: Type.Optional(MiddleName), lastName: Name }),
      errors: ['CUSTOMER_INVALID', 'KYC_IN_REVIEW'],
      handler: ({ body, partner }) => updateName(deps, partner.partnerId, body.customerId, body),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/update-phone',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Change the mobile number (4.5); also the physical-card delivery contact',
      body: Type.Object({ customerId: CustomerId, phoneCountryCode: PhoneCountryCode, phoneNumber: PhoneNumber }),
      errors: ['CUSTOMER_INVALID', 'CAPABILITY_FROZEN'],
      handler: ({ body, partner }) => updatePhone(deps, partner.partnerId, body.customerId, body),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/update-email',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Change the email address (4.5)',
      body: Type.Object({ customerId: CustomerId, email: Email }),
      errors: ['CUSTOMER_INVALID', 'CAPABILITY_FROZEN'],
      handler: ({ body, partner }) => updateEmail(deps, partner.partnerId, body.customerId, body.email),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/update-address',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Replace addresses per addressType (4.5 rule 3)',
      body: Type.Object({ customerId: CustomerId, addresses: Type.Array(AddressBody, { minItems: 1, maxItems: ADDRESSES_MAX }) }),
      errors: ['CUSTOMER_INVALID', 'COUNTRY_SANCTIONED'],
      handler: ({ body, partner }) => updateAddress(deps, partner.partnerId, body.customerId, body.addresses),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/update-restrictions',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Freeze or unfreeze employee capabilities (4.5 rule 4, section 3, D18, D19)',
      description: 'Idempotent set semantics over the five capability codes. Answers the set now held and the codes a removal could not lift (written by risk, regulatory or judicial processes). Emits CUSTOMER_STATUS_CHANGED when the set changes.',
      body: Type.Object({
        customerId: CustomerId,
        addRestrictions: Type.Optional(RestrictionArray),
        removeRestrictions: Type.Optional(RestrictionArray),
        remark: Type.Optional(Remark),
      }),
      data: Type.Object({ restrictions: Type.Array(RestrictionView), retainedRestrictions: Type.Array(Type.String()) }),
      errors: ['CUSTOMER_INVALID', 'STATUS_CONFLICT'],
      handler: ({ body, partner }) => {
        const { add, remove } = restrictionSets(body);
        return updateCustomerRestrictions(deps, partner.partnerId, { customerId: body.customerId, add, remove, remark: body.remark ?? null });
      },
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/terminate',
      auth: 'partner',
      tag: 'Employees',
      summary: "End an employee's lifecycle (D16): TERMINATED, cards cancelled",
      body: Type.Object({ customerId: CustomerId, remark: Type.Optional(Remark) }),
      errors: ['CUSTOMER_INVALID', 'CAPABILITY_FROZEN'],
      handler: ({ body, partner }) => terminate(deps, partner.partnerId, body.customerId, body.remark ?? null),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/resubmit',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Re-open a REJECTED KYC review (D17)',
      body: Type.Object({ customerId: CustomerId }),
      errors: ['CUSTOMER_INVALID', 'KYC_IN_REVIEW', 'STATUS_CONFLICT'],
      handler: ({ body, partner }) => resubmit(deps, partner.partnerId, body.customerId),
    }),
  ];
}
