import { Type } from 'typebox';
import {
  CountryCode, CustomerId, MergedStatus, OrganizationId, PRINTABLE, REF_MAX, Remark, RestrictionChangeFields, RestrictionCode,
  RestrictionView,
} from './organizations.ts';
import { Page, PagingQuery } from './wire.ts';

/** Employees (D16), their addresses (2.7) and KYC status (D17). */

/** Name parts up to 64 characters; letters, digits and spaces, at least one letter or digit (section 8, 4.5). */
export const NAME_MAX = 64;
const NAME_PATTERN = '^(?=.*[\\p{L}\\p{N}])[\\p{L}\\p{M}\\p{N} ]+$';
const MIDDLE_NAME_PATTERN = '^[\\p{L}\\p{M}\\p{N} ]*$';
/** Up to 15 digits, the local number without country code or "+"; at least 4, the shortest real numbers (4.5). */
export const PHONE_PATTERN = '^[0-9]{4,15}$';
/** An email address: up to 128 characters (section 8). */
export const EMAIL_MAX = 128;
// Not in the spec (docs/decisions.md).
/** Bounds of the address parts. */
export const ADDRESS_LINE_MAX = 128;
export const CITY_MAX = 64;
export const STATE_MAX = 64;
export const POSTAL_CODE_MAX = 20;
export const ADDRESSES_MAX = 10;

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

export const KycStatus = Type.Union([Type.Literal('PENDING'), Type.Literal('APPROVED'), Type.Literal('REJECTED')]);

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
  kycStatus: KycStatus,
  restrictions: Type.Array(RestrictionView),
  addresses: Type.Array(AddressView),
  createTime: Type.String(),
  modifyTime: Type.String(),
});

const Ref = Type.String({ minLength: 1, maxLength: REF_MAX, pattern: PRINTABLE });

export const CustomerPage = Page(CustomerView);

export const CreateCustomerBody = Type.Object({
  organizationId: OrganizationId,
  customerRef: Type.String({ minLength: 1, maxLength: REF_MAX, pattern: PRINTABLE, description: 'Unique per organization' }),
  firstName: Name,
  middleName: Type.Optional(MiddleName),
  lastName: Name,
  phoneCountryCode: Type.Optional(PhoneCountryCode),
  phoneNumber: Type.Optional(PhoneNumber),
  email: Type.Optional(Email),
  addresses: Type.Optional(Type.Array(AddressBody, { maxItems: ADDRESSES_MAX })),
});

export const CustomerQuery = Type.Object({ customerId: CustomerId });
export const ListCustomersQuery = Type.Object({ organizationId: OrganizationId, customerRef: Type.Optional(Ref), ...PagingQuery });
export const UpdateNameBody = Type.Object({ customerId: CustomerId, firstName: Name, middleName: Type.Optional(MiddleName), lastName: Name });
export const UpdatePhoneBody = Type.Object({ customerId: CustomerId, phoneCountryCode: PhoneCountryCode, phoneNumber: PhoneNumber });
export const UpdateEmailBody = Type.Object({ customerId: CustomerId, email: Email });
export const UpdateAddressBody = Type.Object({ customerId: CustomerId, addresses: Type.Array(AddressBody, { minItems: 1, maxItems: ADDRESSES_MAX }) });
export const UpdateCustomerRestrictionsBody = Type.Object({ customerId: CustomerId, ...RestrictionChangeFields });
export const CustomerRestrictions = Type.Object({
  restrictions: Type.Array(RestrictionView),
  retainedRestrictions: Type.Array(RestrictionCode, { description: 'Codes a removal could not lift: held by RISK, REGULATORY or JUDICIAL' }),
});
export const TerminateCustomerBody = Type.Object({ customerId: CustomerId, remark: Type.Optional(Remark) });
export const ResubmitBody = Type.Object({ customerId: CustomerId });
