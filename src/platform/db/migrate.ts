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
 * Applies pending migrations in one transaction under an advisory lock, so several instances
 * starting together apply each migration exactly once. Returns the versions applied.
 */
export async function migrate(db: Db): Promise<string[]> {
  return db.tx(async (q) => {
    await advisoryXactLock(q, MIGRATION_LOCK_KEY);
    await q.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set((await q.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const applied: string[] = [];
    for (const file of migrationFiles()) {
      const version = file.slice(0, -'.sql'.length);
      if (done.has(version)) continue;
      const sql = readFileSync(path.join(MIGRATIONS_DIR, file), 'utf8');
      await q.exec(sql);
      await q.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
      applied.push(version);
    }
    return applied;
  });
}
