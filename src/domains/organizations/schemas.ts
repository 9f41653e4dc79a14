import { Type } from 'typebox';
import { paramInvalid } from '../../platform/errors.ts';
import { RESTRICTION_CODES, RESTRICTION_SOURCES, type MergedStatus as MergedStatusCode, type RestrictionCode } from './restrictions.ts';

/** Corporate funding currencies (2.8, D4: two decimals). */
export const FUNDING_CURRENCIES = ['USD', 'HKD'] as const;

/** Section 8: organizationId up to 20 on organization and fund endpoints (minted ids are <= 20, D43). */
export const ORGANIZATION_ID_MAX = 20;
/** Section 8: customerId up to 36 on employee endpoints. */
export const CUSTOMER_ID_MAX = 36;
/** Section 8: remark up to 256 (restrictions). */
export const REMARK_MAX = 256;
/** Not in the spec: partner references and names, generous enough for any registry (docs: Decisions). */
export const REF_MAX = 64;
export const ORGANIZATION_NAME_MAX = 128;
export const REGISTRATION_NUMBER_MAX = 64;
/** Each restriction array holds the five codes; repeats are tolerated (set semantics) up to this bound. */
export const RESTRICTION_ARRAY_MAX = 20;

/** Printable text without control characters, at least one non-space character. */
export const PRINTABLE = '^(?=.*\\S)[^\\u0000-\\u001f\\u007f]+$';

export const OrganizationId = Type.String({ minLength: 1, maxLength: ORGANIZATION_ID_MAX, description: 'Company ID (up to 20)' });
export const CustomerId = Type.String({ minLength: 1, maxLength: CUSTOMER_ID_MAX, description: 'Employee ID (up to 36)' });
export const Remark = Type.Union([Type.String({ maxLength: REMARK_MAX }), Type.Null()], { description: 'Up to 256 characters; absent is stored as null (D48)' });
export const CountryCode = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, upper case' });
export const FundingCurrency = Type.Union(FUNDING_CURRENCIES.map((c) => Type.Literal(c)), { description: 'USD or HKD' });
/** Corporate funding currencies (2.8): the schema above and this type go by one name. */
export type FundingCurrency = (typeof FUNDING_CURRENCIES)[number];

const Code = Type.Union(RESTRICTION_CODES.map((c) => Type.Literal(c)), { description: 'One of the five capability codes (section 3)' });
export const RestrictionArray = Type.Array(Code, { maxItems: RESTRICTION_ARRAY_MAX });

export const RestrictionView = Type.Object({
  code: Code,
  source: Type.Union(RESTRICTION_SOURCES.map((s) => Type.Literal(s))),
});

export const MergedStatus = Type.Union(
  ['ACTIVE', 'TERMINATED', 'SUSPENDED', 'FROZEN', 'RESTRICTED'].map((s) => Type.Literal(s)),
  { description: 'Merged status (D18)' },
);
/** D18 merged status: the schema above and this type go by one name. */
export type MergedStatus = MergedStatusCode;

/**
 * 4.5 rule 4 and D47: at least one code across the two arrays (both absent, both empty, or one
 * empty and the other absent is DAPI_PARAM_INVALID), and a code may not be both added and removed.
 */
export function restrictionSets(body: { addRestrictions?: RestrictionCode[]; removeRestrictions?: RestrictionCode[] }) {
  const add = [...new Set(body.addRestrictions ?? [])];
  const remove = [...new Set(body.removeRestrictions ?? [])];
  if (add.length === 0 && remove.length === 0) {
    throw paramInvalid('addRestrictions', 'addRestrictions or removeRestrictions must hold at least one code');
  }
  const both = add.find((c) => remove.includes(c));
  if (both) throw paramInvalid('removeRestrictions', `${both} is both added and removed`);
  return { add, remove };
}
