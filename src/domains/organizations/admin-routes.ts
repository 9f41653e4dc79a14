import { Type } from 'typebox';
import type { AppContext } from '../../platform/context.ts';
import { paramInvalid } from '../../platform/errors.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import { isIsoCountry } from './countries.ts';
import { listSanctionedCountries, updateSanctionedCountries } from './sanctions.ts';
import { CountryCode, MergedStatus, OrganizationId, Remark, RestrictionArray, RestrictionView, restrictionSets } from './schemas.ts';
import { setSuspended, terminateOrganization, updateRestrictions } from './subject-status.ts';

export type AdminDeps = Pick<AppContext, 'db' | 'clock'>;

const SubjectType = Type.Union([Type.Literal('CUSTOMER'), Type.Literal('ORGANIZATION')]);
const SubjectId = Type.String({ minLength: 1, maxLength: 36 });
const COUNTRY_LIST_MAX = 50;

/** Operator routes of D51 for company and employee status and sanctions (bearer ADMIN_TOKEN). */
export function companyAdminRoutes(deps: AdminDeps): RouteDef[] {
  const now = () => new Date(deps.clock.now());
  return [
    route({
      method: 'POST',
      url: '/internal/admin/v1/restrictions',
      auth: 'admin', role: 'risk',
      tag: 'Admin',
      summary: 'Set or lift RISK, REGULATORY or JUDICIAL restrictions (D19, D51)',
      description: 'A source adds and lifts only its own codes; partners can never lift them. Emits CUSTOMER_STATUS_CHANGED or ORGANIZATION_STATUS_CHANGED when the set changes.',
      body: Type.Object({
        subjectType: SubjectType,
        subjectId: SubjectId,
        addRestrictions: Type.Optional(RestrictionArray),
        removeRestrictions: Type.Optional(RestrictionArray),
        source: Type.Union([Type.Literal('RISK'), Type.Literal('REGULATORY'), Type.Literal('JUDICIAL')]),
        remark: Type.Optional(Remark),
      }),
      data: Type.Object({
        subjectType: Type.String(), subjectId: Type.String(), status: MergedStatus,
        restrictions: Type.Array(RestrictionView), retainedRestrictions: Type.Array(Type.String()),
      }),
      errors: ['CUSTOMER_INVALID', 'ORGANIZATION_INVALID', 'STATUS_CONFLICT'],
      handler: async ({ body }) => {
        const { add, remove } = restrictionSets(body);
        const subject = { subjectType: body.subjectType, subjectId: body.subjectId };
        const outcome = await deps.db.tx((q) => updateRestrictions(q, {
          subject, partnerId: null, source: body.source, add, remove, remark: body.remark ?? null, at: now(),
        }));
        return { ...subject, status: outcome.status, restrictions: outcome.restrictions, retainedRestrictions: outcome.retainedRestrictions };
      },
    }),
    route({
      method: 'POST',
      url: '/internal/admin/v1/suspensions',
      auth: 'admin', role: 'risk',
      tag: 'Admin',
      summary: 'Suspend or reinstate a company or an employee (D18 SUSPENDED overlay)',
      body: Type.Object({ subjectType: SubjectType, subjectId: SubjectId, suspended: Type.Boolean(), remark: Type.Optional(Remark) }),
      data: Type.Object({ subjectType: Type.String(), subjectId: Type.String(), status: MergedStatus, restrictions: Type.Array(RestrictionView) }),
      errors: ['CUSTOMER_INVALID', 'ORGANIZATION_INVALID', 'STATUS_CONFLICT'],
      handler: async ({ body }) => {
        const subject = { subjectType: body.subjectType, subjectId: body.subjectId };
        const outcome = await deps.db.tx((q) => setSuspended(q, { subject, suspended: body.suspended, remark: body.remark ?? null, at: now() }));
        return { ...subject, ...outcome };
      },
    }),
    route({
      method: 'POST',
      url: '/internal/admin/v1/organizations/terminate',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Close a company: its employees are terminated, then the company (lifecycle TERMINATED)',
      body: Type.Object({ organizationId: OrganizationId, remark: Type.Optional(Remark) }),
      data: Type.Object({ organizationId: Type.String(), terminatedCustomers: Type.Integer() }),
      errors: ['ORGANIZATION_INVALID', 'STATUS_CONFLICT'],
      handler: async ({ body }) => {
        const outcome = await deps.db.tx((q) => terminateOrganization(q, { organizationId: body.organizationId, remark: body.remark ?? null, at: now() }));
        return { organizationId: body.organizationId, ...outcome };
      },
    }),
    route({
      method: 'GET',
      url: '/internal/admin/v1/sanctioned-countries',
      auth: 'admin', role: 'viewer',
      tag: 'Admin',
      summary: 'The sanctioned-country list used by update-address and onboarding (D51)',
      data: Type.Array(Type.Object({ countryCode: Type.String(), remark: Type.Union([Type.String(), Type.Null()]), createTime: Type.String() })),
      errors: [],
      handler: () => listSanctionedCountries(deps.db),
    }),
    route({
      method: 'POST',
      url: '/internal/admin/v1/sanctioned-countries/update',
      auth: 'admin', role: 'risk',
      tag: 'Admin',
      summary: 'Add or remove sanctioned countries (D51); answers the list now in force',
      body: Type.Object({
        addCountries: Type.Optional(Type.Array(CountryCode, { maxItems: COUNTRY_LIST_MAX })),
        removeCountries: Type.Optional(Type.Array(CountryCode, { maxItems: COUNTRY_LIST_MAX })),
        remark: Type.Optional(Remark),
      }),
      data: Type.Array(Type.Object({ countryCode: Type.String(), remark: Type.Union([Type.String(), Type.Null()]), createTime: Type.String() })),
      errors: [],
      handler: async ({ body }) => {
        const add = [...new Set(body.addCountries ?? [])];
        const remove = [...new Set(body.removeCountries ?? [])];
        if (add.length === 0 && remove.length === 0) throw paramInvalid('addCountries', 'addCountries or removeCountries must hold a country');
        add.forEach((c, i) => {
          if (!isIsoCountry(c)) throw paramInvalid(`addCountries.${i}`, `${c} is not an ISO 3166-1 alpha-2 code`);
          if (remove.includes(c)) throw paramInvalid(`removeCountries`, `${c} is both added and removed`);
        });
        return deps.db.tx(async (q) => {
          await updateSanctionedCountries(q, add, remove, body.remark ?? null, now());
          return listSanctionedCountries(q);
        });
      },
    }),
  ];
}
