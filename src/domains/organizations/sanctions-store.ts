import type { Queryable } from '../../platform/db/db.ts';

/** SQL of the operator-editable sanctioned-country list (D51), seeded by migration 020. */

export interface SanctionedCountryRow {
  countryCode: string;
  remark: string | null;
  createdAt: Date;
}

export async function listSanctionedCountryRows(q: Queryable): Promise<SanctionedCountryRow[]> {
  return q.query<SanctionedCountryRow>(
    'SELECT country_code AS "countryCode", remark, created_at AS "createdAt" FROM sanctioned_countries ORDER BY country_code',
  );
}

/** The codes among `countryCodes` that are on the list. */
export async function sanctionedAmong(q: Queryable, countryCodes: string[]): Promise<Set<string>> {
  const rows = await q.query<{ countryCode: string }>(
    'SELECT country_code AS "countryCode" FROM sanctioned_countries WHERE country_code = ANY($1::text[])',
    [countryCodes],
  );
  return new Set(rows.map((r) => r.countryCode));
}

export async function insertSanctionedCountries(q: Queryable, codes: string[], remark: string | null, at: Date): Promise<void> {
  await q.query(
    `INSERT INTO sanctioned_countries (country_code, remark, created_at) SELECT c, $2, $3 FROM unnest($1::text[]) AS c
     ON CONFLICT (country_code) DO NOTHING`,
    [codes, remark, at],
  );
}

export async function deleteSanctionedCountries(q: Queryable, codes: string[]): Promise<void> {
  await q.query('DELETE FROM sanctioned_countries WHERE country_code = ANY($1::text[])', [codes]);
}
