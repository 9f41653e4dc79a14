/**
 * Customers: employees of companies (D16), their addresses and KYC reviews (D17). The public entry
 * of the domain: other domains and the top level import only from here.
 */
export { customerRoutes } from './routes.ts';
export { customerAdminRoutes } from './admin-routes.ts';
export { addressesOf, findCustomer } from './service.ts';
export { decideKyc } from './kyc.ts';
export { customerSubjects } from './subjects.ts';
export { findCustomerAnyPartner, pendingKycReviews } from './operator-views.ts';
