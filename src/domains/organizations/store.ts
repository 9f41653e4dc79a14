import type { Queryable } from '../../platform/db/db.ts';

/** Corporate funding currencies (2.8, D4: two decimals). */
export const FUNDING_CURRENCIES = ['USD', 'HKD'] as const;
export type FundingCurrency = (typeof FUNDING_CURRENCIES)[number];

export type Lifecycle = 'ACTIVE' | 'TERMINATED';

export interface Organization {
  organizationId: string;
  partnerId: string;
  organizationRef: string;
  organizationName: string;
  companyRegistrationNumber: string;
  countryCode: string;
  fundingCurrencies: FundingCurrency[];
  lifecycle: Lifecycle;
  suspended: boolean;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS = `organization_id AS "organizationId", partner_id AS "partnerId", organization_ref AS "organizationRef",
  organization_name AS "organizationName", company_registration_number AS "companyRegistrationNumber",
  country_code AS "countryCode", funding_currencies AS "fundingCurrencies", lifecycle, suspended,
  created_at AS "createdAt", updated_at AS "updatedAt"`;

export interface NewOrganization {
  organizationId: string;
  partnerId: string;
  organizationRef: string;
  organizationName: string;
  companyRegistrationNumber: string;
  countryCode: string;
  fundingCurrencies: FundingCurrency[];
  createdAt: Date;
}

/** Inserts the organization; null when the partner already uses organizationRef (D15). */
export async function insertOrganization(q: Queryable, o: NewOrganization): Promise<Organization | null> {
  const rows = await q.query<Organization>(
    `INSERT INTO organizations (organization_id, partner_id, organization_ref, organization_name,
       company_registration_number, country_code, funding_currencies, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
     ON CONFLICT (partner_id, organization_ref) DO NOTHING
     RETURNING ${COLUMNS}`,
    [o.organizationId, o.partnerId, o.organizationRef, o.organizationName, o.companyRegistrationNumber, o.countryCode,
      JSON.stringify(o.fundingCurrencies), o.createdAt],
  );
  return rows[0] ?? null;
}

/**
 * The partner's organization, or null: another partner's id behaves exactly like an unknown one.
 * `forUpdate` takes the row lock (restriction and lifecycle changes serialize on it).
 */
export async function findOrganization(q: Queryable, partnerId: string, organizationId: string, forUpdate = false): Promise<Organization | null> {
  const rows = await q.query<Organization>(
    `SELECT ${COLUMNS} FROM organizations WHERE organization_id = $1 AND partner_id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    [organizationId, partnerId],
  );
  return rows[0] ?? null;
}

/** Operators act across partners (D51): lookup by id alone. */
export async function findOrganizationAnyPartner(q: Queryable, organizationId: string, forUpdate = false): Promise<Organization | null> {
  const rows = await q.query<Organization>(
    `SELECT ${COLUMNS} FROM organizations WHERE organization_id = $1${forUpdate ? ' FOR UPDATE' : ''}`,
    [organizationId],
  );
  return rows[0] ?? null;
}

export async function listOrganizations(
  q: Queryable,
  partnerId: string,
  filter: { organizationRef?: string },
  limit: number,
  offset: number,
): Promise<{ total: number; rows: Organization[] }> {
  const ref = filter.organizationRef ?? null;
  const [{ total }] = await q.query<{ total: number }>(
    'SELECT count(*)::int AS total FROM organizations WHERE partner_id = $1 AND ($2::text IS NULL OR organization_ref = $2)',
    [partnerId, ref],
  );
  const rows = await q.query<Organization>(
    `SELECT ${COLUMNS} FROM organizations WHERE partner_id = $1 AND ($2::text IS NULL OR organization_ref = $2)
     ORDER BY created_at DESC, seq DESC LIMIT $3 OFFSET $4`,
    [partnerId, ref, limit, offset],
  );
  return { total, rows };
}
