import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openEmbedded, openPostgres } from '../../src/platform/db/db.ts';
import { migrate } from '../../src/migrate.ts';
import { ROOT } from './compiled-service.ts';

/**
 * Migrated template databases for the test run (issue 33): the run migrates once, and each test
 * file starts from a copy instead of booting an empty embedded database (about 2 s of initdb) or
 * applying every migration to a fresh PostgreSQL schema. A template is named by a hash of every
 * SQL file and the migration runner, so a changed migration builds a new one and a stale one is
 * never used.
 */

/** Set by test/run.ts for the test processes it starts. */
export const PGLITE_TEMPLATE_ENV = 'TEST_PGLITE_TEMPLATE';
export const PG_TEMPLATE_ENV = 'TEST_PG_TEMPLATE';

function sqlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sqlFiles(p);
    return e.name.endsWith('.sql') ? [p] : [];
  });
}

/** A hash of what decides the migrated schema: every .sql file under src/, the runner and the list of function files. */
export function schemaHash(): string {
  const h = createHash('sha256');
  const files = [...sqlFiles(path.join(ROOT, 'src')), path.join(ROOT, 'src/platform/db/migrate.ts'), path.join(ROOT, 'src/migrate.ts')].sort();
  for (const f of files) h.update(path.relative(ROOT, f)).update('\0').update(readFileSync(f)).update('\0');
  return h.digest('hex').slice(0, 16);
}

function templatesDir(): string {
  const dir = path.join(tmpdir(), 'cardsvc-test-templates');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A migrated embedded data folder for this schema, built when missing. Returns its path. */
export async function pgliteTemplate(): Promise<string> {
  const dir = path.join(templatesDir(), `pglite-${schemaHash()}`);
  if (existsSync(path.join(dir, 'PG_VERSION'))) return dir;
  // Built beside its final name and renamed: a run stopped halfway leaves no half template.
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  const db = await openEmbedded(building);
  await migrate(db);
  await db.close();
  try {
    renameSync(building, dir);
  } catch (err) {
    if (!existsSync(path.join(dir, 'PG_VERSION'))) throw err;
    rmSync(building, { recursive: true, force: true });
  }
  return dir;
}

/** The name of every copy starts with this and the test process's pid. */
const COPY_PREFIX = 'cardsvc-test-';

/**
 * A copy of the embedded template for one test process, in memory-backed /dev/shm when the machine
 * has it (a disk copy works, slower).
 */
export function copyPgliteTemplate(template: string): string {
  const base = existsSync('/dev/shm') && statSync('/dev/shm').isDirectory() ? '/dev/shm' : tmpdir();
  const copy = path.join(base, `${COPY_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`);
  cpSync(template, copy, { recursive: true });
  return copy;
}

/** Removes copies left by test processes that died before their cleanup. */
export function removeOrphanCopies(): void {
  for (const base of ['/dev/shm', tmpdir()]) {
    if (!existsSync(base)) continue;
    for (const name of readdirSync(base)) {
      const pid = new RegExp(`^${COPY_PREFIX}(\\d+)-`).exec(name)?.[1];
      if (pid && !alive(Number(pid))) rmSync(path.join(base, name), { recursive: true, force: true });
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Removes embedded templates of other schema versions (never one being built). */
export function dropStalePgliteTemplates(keep: string): void {
  const parent = path.dirname(keep);
  for (const name of readdirSync(parent)) {
    const dir = path.join(parent, name);
    if (name.startsWith('pglite-') && !name.includes('.building-') && dir !== keep) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * For a test that starts the service on an embedded data folder (`DATA_DIR`): under `npm test` the
 * folder's database starts as a copy of the run's migrated template, so the test checks the process,
 * not a first initdb (layout: src/platform/db/open.ts keeps it in `<DATA_DIR>/pgdata`). Run on its
 * own, the service creates the database itself.
 */
export function seedDataDir(dataDir: string): void {
  const template = process.env[PGLITE_TEMPLATE_ENV];
  if (template) cpSync(template, path.join(dataDir, 'pgdata'), { recursive: true });
}

/** A migrated PostgreSQL database for this schema on the server of `url`, built when missing. Returns its name. */
export async function postgresTemplate(url: string): Promise<string> {
  const name = `cardsvc_tpl_${schemaHash()}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    // Reused only when built since the server last started: crash recovery empties unlogged tables
    // (the replay store's epoch row), so a template from before a restart is built again.
    const ready = await admin.query(
      `SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate
          AND shobj_description(oid, 'pg_database') ~ '^built at [0-9]+$'
          AND substr(shobj_description(oid, 'pg_database'), 10)::bigint > extract(epoch FROM pg_postmaster_start_time()) * 1000`, [name]);
    if (ready.rowCount) return name;
    // A run stopped while building left an unmarked database, or the server restarted since: start it again.
    const stale = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate', [name]);
    if (stale.rowCount) await admin.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE false`);
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
    const db = await openPostgres({ connectionString: withDatabase(url, name), poolSize: 1 });
    await migrate(db);
    await db.close();
    // Marked only once complete; test processes clone it with CREATE DATABASE ... TEMPLATE.
    await admin.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
    await admin.query(`COMMENT ON DATABASE ${name} IS 'built at ${Date.now()}'`);
    return name;
  } finally {
    await admin.end();
  }
}

/** Drops templates of other schemas on this server (earlier versions of the migrations). */
export async function dropStalePostgresTemplates(url: string, keep: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const rows = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 'cardsvc\\_tpl\\_%' AND datname <> $1", [keep]);
    for (const { datname } of rows.rows) {
      await admin.query(`ALTER DATABASE ${datname} WITH IS_TEMPLATE false`);
      await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
