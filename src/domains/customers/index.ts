/**
 * Customers: employees of companies (D16), their addresses and KYC reviews (D17). The public entry
 * of the domain: other domains and the top level import only from here.
 */
export { customerRoutes, CustomerView, AddressBody } from './routes.ts';
export { customerAdminRoutes } from './admin-routes.ts';
export {
  addressesOf, createCustomer, customerView, findCustomer, listCustomersPage, queryCustomer, resubmit, terminate, updateAddress,
  updateCustomerRestrictions, updateEmail, updateName, updatePhone,
  type AddressInput, type CreateCustomerInput, type CustomerDeps, type NameInput,
} from './service.ts';
export { decideKyc, resubmitKyc, type DecisionInput, type KycDecider, type KycDecision } from './kyc.ts';
export { customerSubjects } from './subjects.ts';
export type { Address, AddressType, Customer, KycStatus } from './store.ts';
export { findCustomerAnyPartner, pendingKycReviews, type PendingKyc } from './operator-views.ts';
