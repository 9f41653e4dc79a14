import { Type } from 'typebox';
import { Literals, Page, PagingQuery } from './wire.ts';

/** Companies (D15), restrictions (section 3, D18, D19) and the ids and bounds shared with employees. */

/** Corporate funding currencies; their amounts have two decimals (2.8, D4). */
export const FUNDING_CURRENCIES = ['USD', 'HKD'] as const;
/** The five capability codes; nothing else is a restriction (section 3, 4.5 rule 4). */
export const RESTRICTION_CODES = ['ACCOUNT_FROZEN', 'CASH_IN_FROZEN', 'CASH_OUT_FROZEN', 'PAYMENT_FROZEN', 'CARD_FROZEN'] as const;
/** Who wrote a restriction (D19). Partners write PARTNER only; operators the other three. */
export const RESTRICTION_SOURCES = ['PARTNER', 'RISK', 'REGULATORY', 'JUDICIAL'] as const;
/** The merged status (D18). */
export const MERGED_STATUSES = ['ACTIVE', 'TERMINATED', 'SUSPENDED', 'FROZEN', 'RESTRICTED'] as const;

/** organizationId: up to 20 characters on organization and fund endpoints; minted ids have at most 20 (section 8, D43). */
export const ORGANIZATION_ID_MAX = 20;
/** customerId: up to 36 characters on employee endpoints (section 8). */
export const CUSTOMER_ID_MAX = 36;
/** The remark of a restriction change: up to 256 characters (section 8). */
export const REMARK_MAX = 256;
// Not in the spec (docs/decisions.md).
/** Partner references and names: up to 64 characters, generous enough for any registry. */
export const REF_MAX = 64;
export const ORGANIZATION_NAME_MAX = 128;
export const REGISTRATION_NUMBER_MAX = 64;
/** Each restriction array holds the five codes; repeats are tolerated (set semantics) up to this bound. */
export const RESTRICTION_ARRAY_MAX = 20;

/** Printable text without control characters, at least one non-space character. */
export const PRINTABLE = '^(?=.*\\S)[^\\u0000-\\u001f\\u007f]+$';

export const OrganizationId = Type.String({ minLength: 1, maxLength: ORGANIZATION_ID_MAX, description: 'Company ID (up to 20)' });
export const CustomerId = Type.String({ minLength: 1, maxLength: CUSTOMER_ID_MAX, description: 'Employee ID (up to 36)' });
export const Remark = Type.Union([Type.String({ maxLength: REMARK_MAX }), Type.Null()], { description: 'Up to 256 characters; absent is stored as null' });
export const CountryCode = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, upper case' });
export const FundingCurrency = Literals(FUNDING_CURRENCIES, { description: 'USD or HKD' });
/** The schema above and this type go by one name. */
export type FundingCurrency = (typeof FUNDING_CURRENCIES)[number];

export const RestrictionCode = Literals(RESTRICTION_CODES, { description: 'One of the five capability codes' });
export type RestrictionCode = (typeof RESTRICTION_CODES)[number];
export const RestrictionSource = Literals(RESTRICTION_SOURCES);
export type RestrictionSource = (typeof RESTRICTION_SOURCES)[number];
export const RestrictionArray = Type.Array(RestrictionCode, { maxItems: RESTRICTION_ARRAY_MAX });

export const RestrictionView = Type.Object({ code: RestrictionCode, source: RestrictionSource });

export const MergedStatus = Literals(MERGED_STATUSES, { description: 'Merged status' });
export type MergedStatus = (typeof MERGED_STATUSES)[number];

const Ref = Type.String({ minLength: 1, maxLength: REF_MAX, pattern: PRINTABLE });

export const OrganizationView = Type.Object({
  organizationId: Type.String(),
  organizationRef: Type.String(),
  organizationName: Type.String(),
  companyRegistrationNumber: Type.String(),
  countryCode: Type.String(),
  fundingCurrencies: Type.Array(FundingCurrency),
  status: MergedStatus,
  restrictions: Type.Array(RestrictionView),
  createTime: Type.String(),
  modifyTime: Type.String(),
});
export const OrganizationPage = Page(OrganizationView);

export const CreateOrganizationBody = Type.Object({
  organizationRef: Type.String({ minLength: 1, maxLength: REF_MAX, pattern: PRINTABLE, description: "Partner's own identifier, unique per partner" }),
  organizationName: Type.String({ minLength: 1, maxLength: ORGANIZATION_NAME_MAX, pattern: PRINTABLE }),
  companyRegistrationNumber: Type.String({ minLength: 1, maxLength: REGISTRATION_NUMBER_MAX, pattern: PRINTABLE }),
  countryCode: CountryCode,
  fundingCurrencies: Type.Array(FundingCurrency, { minItems: 1, maxItems: 2, uniqueItems: true }),
});

export const OrganizationQuery = Type.Object({ organizationId: OrganizationId });
export const ListOrganizationsQuery = Type.Object({ ...PagingQuery, organizationRef: Type.Optional(Ref) });

/** Restriction changes of a company or an employee (4.5 rule 4, 4.6): add and remove sets, and a remark. */
export const RestrictionChangeFields = {
  addRestrictions: Type.Optional(RestrictionArray),
  removeRestrictions: Type.Optional(RestrictionArray),
  remark: Type.Optional(Remark),
};

export const UpdateOrganizationRestrictionsBody = Type.Object({ organizationId: OrganizationId, ...RestrictionChangeFields });
