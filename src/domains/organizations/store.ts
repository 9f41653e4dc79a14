import type { Queryable } from '../../platform/db/db.ts';
import type { FundingCurrency } from './schemas.ts';

export type { FundingCurrency };

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

/** What a new organization row is given; lifecycle and suspension start at their defaults, updatedAt = createdAt. */
export type NewOrganization = Omit<Organization, 'lifecycle' | 'suspended' | 'updatedAt'>;

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

export async function organizationRefTaken(q: Queryable, partnerId: string, organizationRef: string): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM organizations WHERE partner_id = $1 AND organization_ref = $2', [partnerId, organizationRef]);
  return rows.length > 0;
}

/**
 * The partner's organization read FOR SHARE: a concurrent status change (which takes FOR UPDATE)
 * either precedes the caller's transaction or waits for it.
 */
export async function findOrganizationForShare(q: Queryable, partnerId: string, organizationId: string): Promise<Organization | null> {
  const rows = await q.query<Organization>(
    `SELECT ${COLUMNS} FROM organizations WHERE organization_id = $1 AND partner_id = $2 FOR SHARE`,
    [organizationId, partnerId],
  );
  return rows[0] ?? null;
}

// ---------------------------------------------------------------------------------------------
// The company as a subject of restrictions and status changes (D18-D21)

export interface SubjectRow {
  partnerId: string;
  /** The company: the subject itself for an organization, the employer for an employee. */
  organizationId: string;
  lifecycle: Lifecycle;
  suspended: boolean;
}

/** Locks the organization row; with a partnerId, another partner's organization is null. */
export async function lockOrganizationSubject(q: Queryable, organizationId: string, partnerId: string | null): Promise<SubjectRow | null> {
  const rows = await q.query<SubjectRow>(
    `SELECT partner_id AS "partnerId", organization_id AS "organizationId", lifecycle, suspended
       FROM organizations WHERE organization_id = $1 AND ($2::text IS NULL OR partner_id = $2) FOR UPDATE`,
    [organizationId, partnerId],
  );
  return rows[0] ?? null;
}

/** Lifecycle, suspension and the restriction codes in force, in one statement (the capability check's read). */
export async function organizationStateRow(
  q: Queryable, organizationId: string,
): Promise<{ partnerId: string; lifecycle: Lifecycle; suspended: boolean; codes: unknown } | null> {
  const rows = await q.query<{ partnerId: string; lifecycle: Lifecycle; suspended: boolean; codes: unknown }>(
    `SELECT s.partner_id AS "partnerId", s.lifecycle, s.suspended,
            (SELECT array_agg(DISTINCT r.code) FROM subject_restrictions r
              WHERE r.subject_type = 'ORGANIZATION' AND r.subject_id = s.organization_id) AS codes
       FROM organizations s WHERE s.organization_id = $1`,
    [organizationId],
  );
  return rows[0] ?? null;
}

export async function touchOrganization(q: Queryable, organizationId: string, at: Date): Promise<void> {
  await q.query('UPDATE organizations SET updated_at = $2 WHERE organization_id = $1', [organizationId, at]);
}

export async function setOrganizationSuspended(q: Queryable, organizationId: string, suspended: boolean, at: Date): Promise<void> {
  await q.query('UPDATE organizations SET suspended = $2, updated_at = $3 WHERE organization_id = $1', [organizationId, suspended, at]);
}

export async function markOrganizationTerminated(q: Queryable, organizationId: string, at: Date): Promise<void> {
  await q.query(`UPDATE organizations SET lifecycle = 'TERMINATED', updated_at = $2 WHERE organization_id = $1`, [organizationId, at]);
}
