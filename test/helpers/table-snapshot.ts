import type { Db } from '../../src/platform/db/db.ts';

/**
 * Snapshots of every table of the service's schema (issue 26 section 3: a refused request changes
 * no table). Tables are enumerated from the catalog, so a table added by a later migration is
 * covered without touching the tests. Only the stores a refusal writes by design are left out:
 */
export const REFUSAL_WRITES: Readonly<Record<string, string>> = {
  // D5: an accepted signature's nonce is recorded before the body is validated, so that a replayed
  // copy is refused whatever the outcome of the first.
  replay_nonces: 'the signature replay store: every authenticated request is recorded before validation (D5)',
  // Issue 14: a business refusal (HTTP 200 with a code) is an answer; a retry with the same
  // Idempotency-Key must get it again without running the handler.
  idempotency_keys: 'the Idempotency-Key answer store: a refusal is stored so that its retry replays it (issue 14)',
  // Issue 29: an operator's refused action is itself audited (outcome FAILED or DENIED) in the hash chain.
  audit_trail: 'the operator audit trail: a refused admin POST is recorded as FAILED or DENIED (issue 29)',
  audit_trail_head: 'the head of the audit trail\'s hash chain, moved by every entry (issue 29)',
};

/** Table name -> `rows:md5 of the rows' text in order`; any insert, update or delete changes it. */
export type TableSnapshot = Map<string, string>;

export async function snapshotTables(db: Db): Promise<TableSnapshot> {
  const tables = (await db.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`,
  )).map((r) => r.name).filter((name) => !(name in REFUSAL_WRITES));
  if (tables.length < 40) throw new Error(`the catalog lists only ${tables.length} tables: is current_schema() the service's?`);
  const sql = tables.map((t) =>
    `SELECT '${t}' AS t, count(*)::text || ':' || md5(COALESCE(string_agg(x::text, E'\\n' ORDER BY x::text), '')) AS f FROM "${t}" x`,
  ).join(' UNION ALL ');
  const rows = await db.query<{ t: string; f: string }>(sql);
  return new Map(rows.map((r) => [r.t, r.f]));
}

/** The tables whose contents differ (with their row counts before and after), empty when none. */
export function changedTables(before: TableSnapshot, after: TableSnapshot): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].sort().filter((t) => before.get(t) !== after.get(t))
    .map((t) => `${t} (rows ${before.get(t)?.split(':')[0] ?? 'absent'} -> ${after.get(t)?.split(':')[0] ?? 'absent'})`);
}
