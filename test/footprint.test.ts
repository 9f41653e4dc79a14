import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildService, ROOT, startCompiled } from './helpers/compiled-service.ts';
import { withAdmin } from './helpers/service.ts';
import { seedDataDir, withDatabase } from './helpers/template.ts';

/**
 * Issue 28: what the service started as `npm start` runs keeps resident at rest (docs/benchmarks.md
 * "Issue 28: resident memory at rest"). Without timing or memory asserts: the modules that a
 * configuration does not use are not loaded. On PostgreSQL (TEST_DATABASE_URL) the service runs on a
 * database of its own on that server; otherwise on the embedded database.
 */

const ADMIN_TOKEN = 'footprint-admin-token-0123456789';
const MASTER_KEY = 'ef'.repeat(32);
const PRELOAD = path.join(ROOT, 'test', 'fixtures', 'loaded-modules.mjs');

interface Loaded { esm: string[]; cjs: string[]; node: string[] }

before(() => buildService());

describe('the started service loads only what its configuration uses (issue 28)', () => {
  const work = mkdtempSync(path.join(tmpdir(), 'cardsvc-footprint-'));
  const adminUrl = process.env.TEST_DATABASE_URL;
  const database = `footprint_${process.pid}`;
  after(async () => {
    rmSync(work, { recursive: true, force: true });
    if (adminUrl) await withAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
  });

  it('Node\'s fetch (undici), commander, the API explorer, the SMTP and Redis clients, and on PostgreSQL PGlite, stay unloaded', async () => {
    const env: Record<string, string> = { ADMIN_TOKEN, MASTER_KEY, API_EXPLORER: 'false', LOADED_MODULES_OUT: path.join(work, 'loaded.json') };
    if (adminUrl) {
      await withAdmin(adminUrl, (c) => c.query(`CREATE DATABASE ${database}`));
      env.DATABASE_URL = withDatabase(adminUrl, database);
    } else {
      env.DATA_DIR = path.join(work, 'data');
      seedDataDir(env.DATA_DIR);
    }
    const loaded = await modulesOfStartedService(env);
    const packages = new Set([...loaded.esm, ...loaded.cjs].map((m) => /node_modules\/((@[^/]+\/)?[^/]+)\//.exec(m)?.[1]).filter(Boolean));
    // Sanity: the recording works (the service's own modules and its packages are there).
    assert.ok(loaded.esm.some((m) => m.endsWith('/dist/src/app.js')), 'app.js recorded');
    assert.ok(packages.has('fastify') && packages.has('pg'), `fastify and pg recorded: ${[...packages].join(' ')}`);
    // pg probes for Cloudflare by constructing a Response; db.ts loads it without one (about 4 MB).
    assert.ok(!loaded.node.includes('NativeModule internal/deps/undici/undici'), 'Node\'s fetch implementation (undici) is not loaded');
    for (const name of ['commander', '@fastify/swagger-ui', 'nodemailer', 'ioredis']) assert.ok(!packages.has(name), `${name} is not loaded`);
    if (adminUrl) assert.ok(!packages.has('@electric-sql/pglite'), 'PGlite is not loaded on PostgreSQL');
    else assert.ok(packages.has('@electric-sql/pglite'), 'PGlite is loaded on the embedded database');
  });

  it('the global Response that db.ts hides while loading pg is back and works', async () => {
    await import('../src/platform/db/db.ts');
    assert.equal(typeof Response, 'function');
    assert.equal(await new Response('ok').text(), 'ok');
  });
});

/** Starts the service as `npm start` does, with the recording preload; answers what it loaded once ready. */
async function modulesOfStartedService(env: Record<string, string>): Promise<Loaded> {
  const service = await startCompiled(env, 20000 + Math.floor(Math.random() * 20000), { nodeArgs: ['--import', PRELOAD] });
  try {
    service.child.kill('SIGUSR2');
    for (let i = 0; i < 50 && !existsSync(env.LOADED_MODULES_OUT); i++) await new Promise((r) => setTimeout(r, 100));
    return JSON.parse(readFileSync(env.LOADED_MODULES_OUT, 'utf8')) as Loaded;
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
  }
}
