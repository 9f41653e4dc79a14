/**
 * Organizations: companies (D15), restrictions and capabilities of companies and employees
 * (section 3, D18-D21), subject status changes, sanctions (D51) and the shared company/employee
 * schemas. The public entry of the domain: other domains and the top level import only from here.
 *
 * Capabilities (D20), for every domain that moves money or manages cards:
 *   assertCapability(q, subject, capability)       throws CAPABILITY_FROZEN (data.errorCode)
 *   capabilityDecision(q, subject, capability)     the decision without throwing (authorization)
 *   loadSubjectState(q, subject) + checkCapability(state, capability)   load once, decide often
 */
export { organizationRoutes, OrganizationView } from './routes.ts';
export { companyAdminRoutes } from './admin-routes.ts';
export {
  createOrganization, findOrganization, findOrganizationById, findOrganizationShared, listOrganizationsPage, organizationView,
  queryOrganization, requireOrganization, updateOrganizationRestrictions, type CreateOrganizationInput, type OrganizationDeps,
} from './service.ts';
export {
  assertCapability, capabilityDecision, capabilityError, checkCapability, loadSubjectState, CAPABILITY_BLOCKERS,
  type Capability, type CapabilityDecision, type DeclineDetail, type SubjectState,
} from './capabilities.ts';
export {
  canonicalCodes, listRestrictions, listRestrictionsOf, mergedStatus, RESTRICTION_CODES, RESTRICTION_SOURCES,
  type OperatorSource, type Restriction, type RestrictionCode, type RestrictionSource, type StatusInputs,
  type SubjectRef, type SubjectType,
} from './restrictions.ts';
export {
  lockSubject, onCustomerTerminated, onOrganizationTerminated, setSuspended, terminateCustomer, terminateOrganization, updateRestrictions,
  type CustomerTerminationHook, type LockedSubject, type OrganizationTerminationHook, type RestrictionsOutcome, type RestrictionsUpdate,
  type TerminationEvent,
} from './subject-status.ts';
export { useEmployeeSubjects, type EmployeeSubjects, type SubjectRow } from './subjects.ts';
export { assertNotSanctioned, isSanctioned, listSanctionedCountries, updateSanctionedCountries, type SanctionedCountry } from './sanctions.ts';
export { isIsoCountry, isSupportedPhoneCountry, ISO_COUNTRIES, SUPPORTED_PHONE_COUNTRIES } from './countries.ts';
export {
  CountryCode, CustomerId, FundingCurrency, MergedStatus, OrganizationId, Remark, RestrictionArray, RestrictionView,
  restrictionSets, CUSTOMER_ID_MAX, ORGANIZATION_ID_MAX, ORGANIZATION_NAME_MAX, PRINTABLE, REF_MAX, REGISTRATION_NUMBER_MAX, REMARK_MAX,
  RESTRICTION_ARRAY_MAX, FUNDING_CURRENCIES,
} from './schemas.ts';
export type { Lifecycle, Organization } from './store.ts';
export { restrictionDetails, type RestrictionDetail } from './operator-views.ts';
