import type { Queryable } from '../../platform/db/db.ts';
import { ApiError } from '../../platform/errors.ts';
import { deleteSanctionedCountries, insertSanctionedCountries, listSanctionedCountryRows, sanctionedAmong } from './sanctions-store.ts';

/** The operator-editable sanctioned-country list (D51), seeded by migration 020. */
export interface SanctionedCountry {
  countryCode: string;
  remark: string | null;
  createTime: string;
}

export async function listSanctionedCountries(q: Queryable): Promise<SanctionedCountry[]> {
  const rows = await listSanctionedCountryRows(q);
  return rows.map((r) => ({ countryCode: r.countryCode, remark: r.remark, createTime: r.createdAt.toISOString() }));
}

export async function isSanctioned(q: Queryable, countryCode: string): Promise<boolean> {
  return (await sanctionedAmong(q, [countryCode])).has(countryCode);
}

/** COUNTRY_SANCTIONED naming the field, for the first sanctioned code among `checks`. */
export async function assertNotSanctioned(q: Queryable, checks: { field: string; countryCode: string }[]): Promise<void> {
  if (checks.length === 0) return;
  const sanctioned = await sanctionedAmong(q, checks.map((c) => c.countryCode));
  const hit = checks.find((c) => sanctioned.has(c.countryCode));
  if (hit) throw new ApiError('COUNTRY_SANCTIONED', `Country ${hit.countryCode} (${hit.field}) is sanctioned`);
}

export async function updateSanctionedCountries(q: Queryable, add: string[], remove: string[], remark: string | null, at: Date): Promise<void> {
  if (add.length > 0) await insertSanctionedCountries(q, add, remark, at);
  if (remove.length > 0) await deleteSanctionedCountries(q, remove);
}
