import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { buildApp, type AppContext } from '../../src/app.ts';
import type { PartnerDecisionStage } from '../../src/domains/authorization/index.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { openEmbedded, openPostgres, type Db } from '../../src/platform/db/db.ts';
import { migrate } from '../../src/migrate.ts';
import type { FastifyInstance } from 'fastify';
import { copyPgliteTemplate, PG_TEMPLATE_ENV, PGLITE_TEMPLATE_ENV, withDatabase } from './template.ts';
import { AdminClient, CardServiceClient, type CreatePartnerInput, type CreatedPartner } from '../../sdk/index.ts';

/** A clock the tests move: starts at real time, shifts by advance(). */
export class TestClock {
  offsetMs = 0;
  now = (): number => Date.now() + this.offsetMs;
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const MASTER_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

interface TestDatabase {
  db: Db;
  /** Opens another connection pool to the same database (a second service instance). */
  openAnother(): Promise<Db>;
  drop(): Promise<void>;
}

let shared: Promise<TestDatabase> | null = null;

/**
 * One database per test process, dropped when the process's tests end: embedded PGlite by default,
 * or a database of its own on the server of TEST_DATABASE_URL. Under `npm test` (test/run.ts) it
 * starts as a copy of the run's migrated template (issue 33); a file run on its own migrates.
 */
export function testDatabase(): Promise<TestDatabase> {
  shared ??= (async () => {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) {
      const template = process.env[PGLITE_TEMPLATE_ENV];
      if (!template) {
        const db = await openEmbedded(null);
        await migrate(db);
        return { db, openAnother: async () => db, drop: () => db.close() };
      }
      const dir = copyPgliteTemplate(template);
      const db = await openEmbedded(dir);
      return {
        db,
        openAnother: async () => db,
        drop: async () => {
          await db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    const template = process.env[PG_TEMPLATE_ENV];
    let open: () => Promise<Db>;
    let dropIt: (c: pg.Client) => Promise<unknown>;
    if (template) {
      const name = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
      await withAdmin(url, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
      open = () => openPostgres({ connectionString: withDatabase(url, name), poolSize: 5 });
      dropIt = (c) => c.query(`DROP DATABASE ${name} WITH (FORCE)`);
    } else {
      const schema = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
      await withAdmin(url, (c) => c.query(`CREATE SCHEMA ${schema}`));
      open = () => openPostgres({ connectionString: url, poolSize: 5, schema });
      dropIt = (c) => c.query(`DROP SCHEMA ${schema} CASCADE`);
    }
    const db = await open();
    if (!template) await migrate(db);
    const extra: Db[] = [];
    return {
      db,
      openAnother: async () => {
        const another = await open();
        extra.push(another);
        return another;
      },
      drop: async () => {
        for (const d of extra) await d.close();
        await db.close();
        await withAdmin(url, dropIt);
      },
    };
  })();
  return shared;
}

/** Runs `fn` on a client of its own to `url` (creating or dropping databases), closed afterwards. */
export async function withAdmin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export interface TestService {
  baseUrl: string;
  app: FastifyInstance;
  ctx: AppContext;
  config: Config;
  db: Db;
  clock: TestClock;
  admin: AdminClient;
  /** Every log line the service wrote, for scans that no secret or card data leaked. */
  logs: string[];
  /** Creates a partner through the admin API and a signed client for it. */
  newPartner(input?: Partial<CreatePartnerInput>): Promise<{ partner: CreatedPartner; client: CardServiceClient }>;
  clientFor(partner: { apiKey: string | null; secretKey: string | null }): CardServiceClient;
  close(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  clock?: TestClock;
  /** Use this database instead of the process's shared one (a second instance). */
  db?: Db;
  /** The authorization pipeline's partner-decision stage (D34). */
  partnerDecision?: PartnerDecisionStage;
}

/** Starts the real HTTP service on 127.0.0.1 with a random port. */
export async function startService(options: StartOptions = {}): Promise<TestService> {
  const database = await testDatabase();
  const db = options.db ?? database.db;
  const { config } = loadConfig({
    CARDSVC_ENV: 'sandbox',
    ADMIN_TOKEN,
    MASTER_KEY,
    DATA_DIR: '/nonexistent-test-data-dir',
    DATABASE_URL: 'postgres://unused-by-tests',
    LOG_LEVEL: 'info',
    PORT: '0',
    // Suites refuse hundreds of bad signatures and admin tokens from one address on purpose; the
    // limits by address have their own tests (test/hardening.test.ts), which set them low.
    AUTH_FAILURE_LIMIT_MAX: '1000000',
    ADMIN_AUTH_FAILURE_LIMIT_MAX: '1000000',
    PREAUTH_RATE_LIMIT_MAX: '1000000',
    ADMIN_RATE_LIMIT_MAX: '1000000',
    // The clients of the tests (fetch) keep an idle connection until about a second before the server's
    // keep-alive timeout, and the server runs in the test's own process: when the event loop was busy
    // past that timeout, the server closed a connection in the same turn as the client wrote its next
    // request on it, which failed with ECONNRESET (CI, 2026-11-27). The suites often wait 4-5 s between
    // calls (the default keep-alive of 5 s), never two minutes; the idle guard (default 30 s) outlasts it.
    // test/hardening.test.ts sets its own timeouts.
    HTTP_KEEP_ALIVE_TIMEOUT_MS: '120000',
    HTTP_IDLE_TIMEOUT_MS: '300000',
    ...options.env,
  });
  const clock = options.clock ?? new TestClock();
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const { app, ctx } = await buildApp({ config, db, clock, logStream, partnerDecision: options.partnerDecision });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const admin = new AdminClient(baseUrl, config.adminToken);
  const clientFor = (p: { apiKey: string | null; secretKey: string | null }) =>
    new CardServiceClient({ baseUrl, apiKey: p.apiKey!, secretKey: p.secretKey!, now: clock.now });
  return {
    baseUrl, app, ctx, config, db, clock, admin, logs, clientFor,
    async newPartner(input = {}) {
      const partner = await admin.createPartner({ name: `partner-${randomBytes(3).toString('hex')}`, ...input });
      return { partner, client: clientFor(partner) };
    },
    close: () => app.close(),
  };
}

/** Call once per test file, in after(): closes the shared database. */
export async function closeTestDatabase(): Promise<void> {
  if (shared) await (await shared).drop();
  shared = null;
}
