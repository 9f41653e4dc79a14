import type { Static } from 'typebox';
import type { AppContext } from '../../platform/context.ts';
import type { CreateOrganizationBody } from './schemas.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { ApiError, invariant, paramInvalid } from '../../platform/errors.ts';
import { pageOf, type Paging } from '../../platform/http/schema.ts';
import { getOrCreateAccount, listAccountsOfOwner } from '../ledger/index.ts';
import { isIsoCountry } from './countries.ts';
import { listRestrictions, listRestrictionsOf, mergedStatus, type Restriction, type RestrictionCode } from './restrictions.ts';
import { assertNotSanctioned } from './sanctions.ts';
import {
  findOrganization as findOrganizationRow, findOrganizationAnyPartner as findOrganizationAnyPartnerRow, findOrganizationForShare,
  insertOrganization, listOrganizations, organizationRefTaken, type Organization,
} from './store.ts';
import { updateRestrictions } from './subject-status.ts';

export type OrganizationDeps = Pick<AppContext, 'db' | 'clock'>;

/** 2.8 plus `countryCode`, `restrictions` (D19) and times (D11). */
export function organizationView(o: Organization, restrictions: Restriction[]) {
  return {
    organizationId: o.organizationId,
    organizationRef: o.organizationRef,
    organizationName: o.organizationName,
    companyRegistrationNumber: o.companyRegistrationNumber,
    countryCode: o.countryCode,
    fundingCurrencies: o.fundingCurrencies,
    status: mergedStatus({ lifecycle: o.lifecycle, suspended: o.suspended, codes: restrictions.map((r) => r.code) }),
    restrictions,
    createTime: o.createdAt.toISOString(),
    modifyTime: o.updatedAt.toISOString(),
  };
}

/** The create route's body (sdk/contract/organizations.ts). */
export type CreateOrganizationInput = Static<typeof CreateOrganizationBody>;

/**
 * D15: creates the company ACTIVE with one funding pool (ledger account) per currency, in one
 * transaction. Checks after the schema: country code is ISO (DAPI_PARAM_INVALID), organizationRef
 * unique per partner (ORGANIZATION_REF_DUPLICATE), country not sanctioned (COUNTRY_SANCTIONED).
 */
export async function createOrganization(deps: OrganizationDeps, partnerId: string, input: CreateOrganizationInput) {
  if (!isIsoCountry(input.countryCode)) throw paramInvalid('countryCode', 'must be an ISO 3166-1 alpha-2 country code');
  invariant(new Set(input.fundingCurrencies).size === input.fundingCurrencies.length, 'fundingCurrencies unique (schema)');
  const now = new Date(deps.clock.now());
  return deps.db.tx(async (q) => {
    if (await organizationRefTaken(q, partnerId, input.organizationRef)) throw new ApiError('ORGANIZATION_REF_DUPLICATE', `organizationRef ${input.organizationRef} is already used`);
    await assertNotSanctioned(q, [{ field: 'countryCode', countryCode: input.countryCode }]);
    const organization = await insertOrganization(q, {
      organizationId: newId('org'),
      partnerId,
      organizationRef: input.organizationRef,
      organizationName: input.organizationName,
      companyRegistrationNumber: input.companyRegistrationNumber,
      countryCode: input.countryCode,
      fundingCurrencies: input.fundingCurrencies,
      createdAt: now,
    });
    // A concurrent create with the same ref won the unique constraint.
    if (!organization) throw new ApiError('ORGANIZATION_REF_DUPLICATE', `organizationRef ${input.organizationRef} is already used`);
    for (const currency of input.fundingCurrencies) {
      await getOrCreateAccount(q, {
        partnerId, ownerType: 'ORGANIZATION_POOL', ownerId: organization.organizationId, currency, organizationId: organization.organizationId,
      }, now);
    }
    const pools = await listAccountsOfOwner(q, partnerId, 'ORGANIZATION_POOL', organization.organizationId);
    invariant(pools.length === input.fundingCurrencies.length, 'one funding pool per funding currency');
    return organizationView(organization, []);
  });
}

/** The partner's organization or ORGANIZATION_INVALID (another partner's id is unknown). */
export async function requireOrganization(q: Queryable, partnerId: string, organizationId: string, forUpdate = false): Promise<Organization> {
  const organization = await findOrganizationRow(q, partnerId, organizationId, forUpdate);
  if (!organization) throw new ApiError('ORGANIZATION_INVALID');
  return organization;
}

export async function queryOrganization(deps: OrganizationDeps, partnerId: string, organizationId: string) {
  const organization = await requireOrganization(deps.db, partnerId, organizationId);
  const restrictions = await listRestrictions(deps.db, { subjectType: 'ORGANIZATION', subjectId: organizationId });
  return organizationView(organization, restrictions);
}

export async function listOrganizationsPage(deps: OrganizationDeps, partnerId: string, paging: Paging, filter: { organizationRef?: string }) {
  const { total, rows } = await listOrganizations(deps.db, partnerId, filter, paging.pageSize, (paging.page - 1) * paging.pageSize);
  const restrictions = await listRestrictionsOf(deps.db, 'ORGANIZATION', rows.map((r) => r.organizationId));
  return pageOf(paging, total, rows.map((o) => organizationView(o, restrictions.get(o.organizationId) ?? [])));
}

/** 4.6 update-restrictions for a company: data null (4.6); ORGANIZATION_STATUS_CHANGED (D21). */
export async function updateOrganizationRestrictions(
  deps: OrganizationDeps,
  partnerId: string,
  input: { organizationId: string; add: RestrictionCode[]; remove: RestrictionCode[]; remark: string | null },
): Promise<null> {
  const at = new Date(deps.clock.now());
  await deps.db.tx((q) => updateRestrictions(q, {
    subject: { subjectType: 'ORGANIZATION', subjectId: input.organizationId },
    partnerId,
    source: 'PARTNER',
    add: input.add,
    remove: input.remove,
    remark: input.remark,
    at,
  }));
  return null;
}

/** The partner's organization in any state, or null; `forUpdate` takes the row lock. */
export async function findOrganization(q: Queryable, partnerId: string, organizationId: string, forUpdate = false): Promise<Organization | null> {
  return findOrganizationRow(q, partnerId, organizationId, forUpdate);
}

/**
 * The partner's organization read FOR SHARE: a concurrent status change either precedes the
 * caller's transaction or waits for it (deposits check the company this way).
 */
export async function findOrganizationShared(q: Queryable, partnerId: string, organizationId: string): Promise<Organization | null> {
  return findOrganizationForShare(q, partnerId, organizationId);
}

/** Operators and background jobs act across partners (D51): an organization by id alone. */
export async function findOrganizationById(q: Queryable, organizationId: string): Promise<Organization | null> {
  return findOrganizationAnyPartnerRow(q, organizationId);
}
