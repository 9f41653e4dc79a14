import { Type } from 'typebox';
import { Page, PagingQuery } from '../../platform/http/schema.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import {
  CountryCode, FundingCurrency, MergedStatus, ORGANIZATION_NAME_MAX, OrganizationId, PRINTABLE, REF_MAX,
  REGISTRATION_NUMBER_MAX, Remark, RestrictionArray, RestrictionView, restrictionSets,
} from './schemas.ts';
import {
  createOrganization, listOrganizationsPage, queryOrganization, updateOrganizationRestrictions, type OrganizationDeps,
} from './service.ts';

export const OrganizationView = Type.Object({
  organizationId: Type.String(),
  organizationRef: Type.String(),
  organizationName: Type.String(),
  companyRegistrationNumber: Type.String(),
  countryCode: Type.String(),
  fundingCurrencies: Type.Array(Type.String()),
  status: MergedStatus,
  restrictions: Type.Array(RestrictionView),
  createTime: Type.String(),
  modifyTime: Type.String(),
});

const Ref = Type.String({ minLength: 1, maxLength: REF_MAX, pattern: PRINTABLE });

export function organizationRoutes(deps: OrganizationDeps): RouteDef[] {
  return [
    route({
      method: 'POST',
      url: '/open-api-corp/organization/v1/create',
      auth: 'partner',
      tag: 'Organizations',
      summary: 'Onboard a company (D15): ACTIVE, one funding pool per funding currency',
      body: Type.Object({
        organizationRef: Type.String({ minLength: 1, maxLength: REF_MAX, pattern: PRINTABLE, description: "Partner's own identifier, unique per partner" }),
        organizationName: Type.String({ minLength: 1, maxLength: ORGANIZATION_NAME_MAX, pattern: PRINTABLE }),
        companyRegistrationNumber: Type.String({ minLength: 1, maxLength: REGISTRATION_NUMBER_MAX, pattern: PRINTABLE }),
        countryCode: CountryCode,
        fundingCurrencies: Type.Array(FundingCurrency, { minItems: 1, maxItems: 2, uniqueItems: true }),
      }),
      data: OrganizationView,
      errors: ['ORGANIZATION_REF_DUPLICATE', 'COUNTRY_SANCTIONED'],
      handler: ({ body, partner }) => createOrganization(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/organization/v1/query',
      auth: 'partner',
      tag: 'Organizations',
      summary: 'Read a company (2.8) with its merged status and restrictions',
      querystring: Type.Object({ organizationId: OrganizationId }),
      data: OrganizationView,
      errors: ['ORGANIZATION_INVALID'],
      handler: ({ query, partner }) => queryOrganization(deps, partner.partnerId, query.organizationId),
    }),
    route({
      method: 'GET',
      url: '/open-api-corp/organization/v1/list',
      auth: 'partner',
      tag: 'Organizations',
      summary: "Page the partner's companies, newest first (D15, D9)",
      querystring: Type.Object({ ...PagingQuery, organizationRef: Type.Optional(Ref) }),
      data: Page(OrganizationView),
      errors: [],
      handler: ({ query, partner }) => listOrganizationsPage(deps, partner.partnerId,
        { page: query.page ?? 1, pageSize: query.pageSize ?? 20 }, { organizationRef: query.organizationRef }),
    }),
    route({
      method: 'POST',
      url: '/open-api-corp/organization/v1/update-restrictions',
      auth: 'partner',
      tag: 'Organizations',
      summary: 'Freeze or unfreeze company capabilities (4.6, section 3, D18, D19, D21)',
      description: 'Idempotent set semantics over the five capability codes. Codes written by risk, regulatory or judicial processes are not lifted. Emits ORGANIZATION_STATUS_CHANGED when the set changes.',
      body: Type.Object({
        organizationId: OrganizationId,
        addRestrictions: Type.Optional(RestrictionArray),
        removeRestrictions: Type.Optional(RestrictionArray),
        remark: Type.Optional(Remark),
      }),
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
