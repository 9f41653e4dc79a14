import type { Queryable } from '../../platform/db/db.ts';
import { ApiError } from '../../platform/errors.ts';

/** The operator-editable sanctioned-country list (D51), seeded by migration 020. */
export interface SanctionedCountry {
  countryCode: string;
  remark: string | null;
  createTime: string;
}

export async function listSanctionedCountries(q: Queryable): Promise<SanctionedCountry[]> {
  const rows = await q.query<{ countryCode: string; remark: string | null; createdAt: Date }>(
    'SELECT country_code AS "countryCode", remark, created_at AS "createdAt" FROM sanctioned_countries ORDER BY country_code',
  );
  return rows.map((r) => ({ countryCode: r.countryCode, remark: r.remark, createTime: r.createdAt.toISOString() }));
}

export async function isSanctioned(q: Queryable, countryCode: string): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM sanctioned_countries WHERE country_code = $1', [countryCode]);
  return rows.length > 0;
}

/** COUNTRY_SANCTIONED naming the field, for the first sanctioned code among `checks`. */
export async function assertNotSanctioned(q: Queryable, checks: { field: string; countryCode: string }[]): Promise<void> {
  if (checks.length === 0) return;
  const rows = await q.query<{ countryCode: string }>(
    'SELECT country_code AS "countryCode" FROM sanctioned_countries WHERE country_code = ANY($1::text[])',
    [checks.map((c) => c.countryCode)],
  );
  const sanctioned = new Set(rows.map((r) => r.countryCode));
  const hit = checks.find((c) => sanctioned.has(c.countryCode));
  if (hit) throw new ApiError('COUNTRY_SANCTIONED', `Country ${hit.countryCode} (${hit.field}) is sanctioned`);
}

export async function updateSanctionedCountries(q: Queryable, add: string[], remove: string[], remark: string | null, at: Date): Promise<void> {
  if (add.length > 0) {
    await q.query(
      `INSERT INTO sanctioned_countries (country_code, remark, created_at) SELECT c, $2, $3 FROM unnest($1::text[]) AS c
       ON CONFLICT (country_code) DO NOTHING`,
      [add, remark, at],
    );
  }
  if (remove.length > 0) await q.query('DELETE FROM sanctioned_countries WHERE country_code = ANY($1::text[])', [remove]);
}
