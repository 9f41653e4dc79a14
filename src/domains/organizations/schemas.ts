import { paramInvalid } from '../../platform/errors.ts';
import type { RestrictionCode } from '../../../sdk/contract/organizations.ts';

/** The wire schemas and bounds of companies and restrictions live in the contract shared with the SDK. */
export {
  CountryCode, CreateOrganizationBody, CustomerId, FundingCurrency, ListOrganizationsQuery, MergedStatus, OrganizationId, OrganizationPage,
  OrganizationQuery, OrganizationView, Remark, RestrictionArray, RestrictionChangeFields, RestrictionCode, RestrictionSource, RestrictionView,
  UpdateOrganizationRestrictionsBody, CUSTOMER_ID_MAX, FUNDING_CURRENCIES, MERGED_STATUSES, ORGANIZATION_ID_MAX, ORGANIZATION_NAME_MAX,
  PRINTABLE, REF_MAX, REGISTRATION_NUMBER_MAX, REMARK_MAX, RESTRICTION_ARRAY_MAX, RESTRICTION_CODES, RESTRICTION_SOURCES,
} from '../../../sdk/contract/organizations.ts';

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
