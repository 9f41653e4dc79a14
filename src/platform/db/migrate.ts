import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { advisoryXactLock, type Db } from './db.ts';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
// Any fixed number: every instance takes the same transaction-scoped advisory lock.
const MIGRATION_LOCK_KEY = 727_001;

export function migrationFiles(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{3}-[a-z0-9-]+\.sql$/.test(f))
    .sort();
}

/**
 * A repeatable SQL file (issue 33): the one current definition of database functions and their
 * triggers, written with CREATE OR REPLACE FUNCTION / TRIGGER so that applying it again is
 * harmless. `name` is its stable key in schema_functions.
 */
export interface RepeatableSql {
  name: string;
  file: string;
}

export interface MigrationResult {
  /** Numbered migrations applied, in order. */
  versions: string[];
  /** Repeatable files applied, in order (new or changed since they were last applied). */
  repeatable: string[];
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Brings the schema up to date in one transaction under an advisory lock, so several instances
 * starting together apply each step exactly once:
 *   1. the pending numbered migrations (migrations/NNN-name.sql: tables, indexes, data; applied
 *      once each, recorded in schema_migrations);
 *   2. then the repeatable files, in the caller's order (a file may use what earlier files define),
 *      each one only when its SHA-256 differs from the one recorded in schema_functions (new or
 *      changed): starting an instance with nothing changed rewrites nothing. A numbered migration
 *      that drops what a file defines deletes that file's schema_functions row, so it is applied again.
 * The platform knows no domain: the composition root (src/migrate.ts) passes the list.
 */
export async function migrate(db: Db, repeatable: readonly RepeatableSql[]): Promise<MigrationResult> {
  const files = repeatable.map((r) => ({ name: r.name, sql: readFileSync(r.file, 'utf8') }));
  const names = new Set<string>();
  for (const f of files) {
    if (names.has(f.name)) throw new Error(`repeatable SQL ${f.name} is listed twice`);
    names.add(f.name);
  }
  return db.tx(async (q) => {
    await advisoryXactLock(q, MIGRATION_LOCK_KEY);
    await q.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE TABLE IF NOT EXISTS schema_functions (
      name text PRIMARY KEY,
      sha256 text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set((await q.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const versions: string[] = [];
    for (const file of migrationFiles()) {
      const version = file.slice(0, -'.sql'.length);
      if (done.has(version)) continue;
      const sql = readFileSync(path.join(MIGRATIONS_DIR, file), 'utf8');
      await q.exec(sql);
      await q.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
      versions.push(version);
    }

    const recorded = new Map((await q.query<{ name: string; sha256: string }>('SELECT name, sha256 FROM schema_functions'))
      .map((r) => [r.name, r.sha256]));
    const applied: string[] = [];
    for (const f of files) {
      const sum = sha256(f.sql);
      if (recorded.get(f.name) === sum) continue;
      await q.exec(f.sql);
      await q.query(`INSERT INTO schema_functions (name, sha256, applied_at) VALUES ($1, $2, now())
        ON CONFLICT (name) DO UPDATE SET sha256 = excluded.sha256, applied_at = excluded.applied_at`, [f.name, sum]);
      applied.push(f.name);
    }
    // A file no longer listed: its record goes (what it defined is dropped by a numbered migration).
    const gone = [...recorded.keys()].filter((n) => !names.has(n));
    if (gone.length > 0) await q.query('DELETE FROM schema_functions WHERE name = ANY ($1::text[])', [gone]);
    return { versions, repeatable: applied };
  });
}
