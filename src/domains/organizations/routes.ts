import { route, type RouteDef } from '../../platform/http/router.ts';
import {
  CreateOrganizationBody, ListOrganizationsQuery, OrganizationPage, OrganizationQuery, OrganizationView, restrictionSets,
  UpdateOrganizationRestrictionsBody,
} from './schemas.ts';

export { OrganizationView };
import {
  createOrganization, listOrganizationsPage, queryOrganization, updateOrganizationRestrictions, type OrganizationDeps,
} from './service.ts';

export function organizationRoutes(deps: OrganizationDeps): RouteDef[] {
  return [
    route({
      method: 'POST',
      url: '/open-api-corp/organization/v1/create',
      auth: 'partner',
      tag: 'Organizations',
      summary: 'Onboard a company: ACTIVE, one funding pool per funding currency',
      body: CreateOrganizationBody,
      data: OrganizationView,
      errors: ['ORGANIZATION_REF_DUPLICATE', 'COUNTRY_SANCTIONED'],
      handler: ({ body, partner }) => createOrganization(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/organization/v1/query',
      auth: 'partner',
      tag: 'Organizations',
      summary: 'Read a company with its merged status and restrictions',
      querystring: OrganizationQuery,
      data: OrganizationView,
      errors: ['ORGANIZATION_INVALID'],
      handler: ({ query, partner }) => queryOrganization(deps, partner.partnerId, query.organizationId),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/organization/v1/list',
      auth: 'partner',
      tag: 'Organizations',
      summary: "Page the partner's companies, newest first",
      querystring: ListOrganizationsQuery,
      data: OrganizationPage,
      errors: [],
      handler: ({ query, partner }) => listOrganizationsPage(deps, partner.partnerId,
        { page: query.page ?? 1, pageSize: query.pageSize ?? 20 }, { organizationRef: query.organizationRef }),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/organization/v1/update-restrictions',
      auth: 'partner',
      tag: 'Organizations',
      summary: 'Freeze or unfreeze company capabilities',
      description: 'Idempotent set semantics over the five capability codes. Codes written by risk, regulatory or judicial processes are not lifted. Emits ORGANIZATION_STATUS_CHANGED when the set changes.',
      body: UpdateOrganizationRestrictionsBody,
      example: { organizationId: 'orgmwxdk8zq49621f23a', addRestrictions: ['PAYMENT_FROZEN'], remark: 'spending paused by finance' },
      errors: ['ORGANIZATION_INVALID', 'STATUS_CONFLICT'],
      handler: ({ body, partner }) => {
        const { add, remove } = restrictionSets(body);
        return updateOrganizationRestrictions(deps, partner.partnerId, {
          organizationId: body.organizationId, add, remove, remark: body.remark ?? null,
        });
      },
    }),
  ];
}
