import { route, type RouteDef } from '../../platform/http/router.ts';
import {
  CreateCustomerBody, CustomerPage, CustomerQuery, CustomerRestrictions, CustomerView, ListCustomersQuery, ResubmitBody,
  TerminateCustomerBody, UpdateAddressBody, UpdateCustomerRestrictionsBody, UpdateEmailBody, UpdateNameBody, UpdatePhoneBody,
} from '../../../sdk/contract/customers.ts';
import { restrictionSets } from '../organizations/index.ts';
import {
  createCustomer, listCustomersPage, queryCustomer, resubmit, terminate, updateAddress, updateCustomerRestrictions,
  updateEmail, updateName, updatePhone, type CustomerDeps,
} from './service.ts';

export { AddressBody, CustomerView } from '../../../sdk/contract/customers.ts';

export function customerRoutes(deps: CustomerDeps): RouteDef[] {
  return [
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/create',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Create an employee; KYC starts PENDING',
      body: CreateCustomerBody,
      data: CustomerView,
      errors: ['ORGANIZATION_INVALID', 'CUSTOMER_REF_DUPLICATE', 'COUNTRY_SANCTIONED'],
      handler: ({ body, partner }) => createCustomer(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/customer/v1/query',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Read an employee, TERMINATED ones included',
      querystring: CustomerQuery,
      data: CustomerView,
      errors: ['CUSTOMER_INVALID'],
      handler: ({ query, partner }) => queryCustomer(deps, partner.partnerId, query.customerId),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/customer/v1/list',
      auth: 'partner',
      tag: 'Employees',
      summary: "Page a company's employees, newest first",
      querystring: ListCustomersQuery,
      data: CustomerPage,
      errors: ['ORGANIZATION_INVALID'],
      handler: ({ query, partner }) => listCustomersPage(deps, partner.partnerId, query.organizationId,
        { page: query.page ?? 1, pageSize: query.pageSize ?? 20 }, { customerRef: query.customerRef }),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/update-name',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Replace the name as a whole; a real change starts a KYC review',
      body: UpdateNameBody,
      errors: ['CUSTOMER_INVALID', 'KYC_IN_REVIEW'],
      handler: ({ body, partner }) => updateName(deps, partner.partnerId, body.customerId, body),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/update-phone',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Change the mobile number; also the physical-card delivery contact',
      body: UpdatePhoneBody,
      errors: ['CUSTOMER_INVALID', 'CAPABILITY_FROZEN'],
      handler: ({ body, partner }) => updatePhone(deps, partner.partnerId, body.customerId, body),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/update-email',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Change the email address',
      body: UpdateEmailBody,
      errors: ['CUSTOMER_INVALID', 'CAPABILITY_FROZEN'],
      handler: ({ body, partner }) => updateEmail(deps, partner.partnerId, body.customerId, body.email),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/update-address',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Replace addresses per addressType',
      body: UpdateAddressBody,
      errors: ['CUSTOMER_INVALID', 'COUNTRY_SANCTIONED'],
      handler: ({ body, partner }) => updateAddress(deps, partner.partnerId, body.customerId, body.addresses),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/update-restrictions',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Freeze or unfreeze employee capabilities',
      description: 'Idempotent set semantics over the five capability codes. Answers the set now held and the codes a removal could not lift (written by risk, regulatory or judicial processes). Emits CUSTOMER_STATUS_CHANGED when the set changes.',
      body: UpdateCustomerRestrictionsBody,
      example: { customerId: 'cusmwxdk8zr9bf0f6582', addRestrictions: ['CARD_FROZEN'], removeRestrictions: ['PAYMENT_FROZEN'], remark: 'card lost, spending allowed again' },
      data: CustomerRestrictions,
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
      summary: "End an employee's lifecycle: TERMINATED, cards cancelled",
      body: TerminateCustomerBody,
      errors: ['CUSTOMER_INVALID', 'CAPABILITY_FROZEN'],
      handler: ({ body, partner }) => terminate(deps, partner.partnerId, body.customerId, body.remark ?? null),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/customer/v1/resubmit',
      auth: 'partner',
      tag: 'Employees',
      summary: 'Re-open a REJECTED KYC review',
      body: ResubmitBody,
      errors: ['CUSTOMER_INVALID', 'KYC_IN_REVIEW', 'STATUS_CONFLICT'],
      handler: ({ body, partner }) => resubmit(deps, partner.partnerId, body.customerId),
    }),
  ];
}
