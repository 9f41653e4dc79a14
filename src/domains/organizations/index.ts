/**
 * Organizations: companies (D15), restrictions and capabilities of companies and employees
 * (section 3, D18-D21), subject status changes, sanctions (D51) and the shared company/employee
 * schemas. The public entry of the domain: other domains and the top level import only from here.
 *
 * Capabilities (D20), for every domain that moves money or manages cards:
 *   assertCapability(q, subject, capability)   throws CAPABILITY_FROZEN (data.errorCode)
 *   CAPABILITY_BLOCKERS                         the restriction codes that refuse each capability, in
 *                                               order (the authorization passes them to card_authorize)
 */
export { organizationRoutes } from './routes.ts';
export { companyAdminRoutes } from './admin-routes.ts';
export { findOrganization, findOrganizationById, findOrganizationShared } from './service.ts';
export { assertCapability, CAPABILITY_BLOCKERS } from './capabilities.ts';
export {
  listRestrictions, listRestrictionsOf, mergedStatus, type Restriction, type RestrictionCode, type SubjectType,
} from './restrictions.ts';
export { onCustomerTerminated, onOrganizationTerminated, terminateCustomer, updateRestrictions } from './subject-status.ts';
export { useEmployeeSubjects, type EmployeeSubjects } from './subjects.ts';
export { assertNotSanctioned, isSanctioned } from './sanctions.ts';
export { isIsoCountry, isSupportedPhoneCountry } from './countries.ts';
export { CustomerId, Remark, restrictionSets, FUNDING_CURRENCIES } from './schemas.ts';
export type { Organization } from './store.ts';
export { restrictionDetails } from './operator-views.ts';
