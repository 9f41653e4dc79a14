/**
 * Citus spike (issue 28 section 4, docs/scaling.md): checks the design for outgrowing one PostgreSQL
 * on a real cluster. Not run by CI. `npm run spike:citus` (needs root or the postgres user, and Citus
 * 13 installed into the local PostgreSQL 15, built from the Citus source release: docs/scaling.md).
 *
 *  1. three `initdb` clusters on free ports under a temporary folder, shared_preload_libraries=citus:
 *     a coordinator and two workers (citus_add_node);
 *  2. the real schema through the project's migration runner (migrate(db)) on the coordinator;
 *  3. the distribution of ops/citus/plan.ts: partner_id added to the children, primary keys, unique
 *     constraints and foreign keys widened by partner_id, create_distributed_table /
 *     create_reference_table, the functions' partner filters, create_distributed_function;
 *  4. one card authorization (card_authorize) and one user-asset credit (user_asset_move), each with
 *     ledger_post inside, called on the coordinator and delegated to the worker holding the partner;
 *  5. checks: the calls were pushed down (EXPLAIN, the DEBUG1 notice), every row they wrote is on that
 *     worker's shards; then what two of today's forms do on the cluster: a job's lease scan over all
 *     partners, and the network ingress' call (no partner).
 * The clusters are stopped and removed at the end, also on failure.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openPostgres } from '../../src/platform/db/db.ts';
import { migrate } from '../../src/migrate.ts';
import { pgBinDir } from '../runtime.ts';
import {
  CARD_ROUTES_DDL, CHILDREN, COORDINATOR_TABLES, DISTRIBUTED_FUNCTIONS, DISTRIBUTION_COLUMN, OWN_KEY_TABLES, PARTNER_FILTERS,
  REFERENCE_TABLES,
} from './plan.ts';

const SHARD_COUNT = 8;
const asRoot = userInfo().uid === 0;
const bin = pgBinDir();
const started = Date.now();

function log(line: string): void {
  console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${line}`);
}

function fail(message: string): never {
  console.error(`spike:citus: ${message}`);
  process.exit(1);
}

/** Citus must be installed into the PostgreSQL whose binaries we use. */
function checkCitusInstalled(): void {
  const version = path.basename(path.dirname(bin));
  const lib = path.join(path.dirname(bin), 'lib', 'citus.so');
  const control = `/usr/share/postgresql/${version}/extension/citus.control`;
  if (!existsSync(lib) || !existsSync(control)) {
    fail(`the citus extension is not installed in PostgreSQL ${version} (${lib} missing): install Citus 13 for this PostgreSQL first (docs/scaling.md, "The spike")`);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A PostgreSQL binary, as the postgres user when we are root (initdb refuses root). */
function pgRun(tool: string, args: string[]): void {
  const file = path.join(bin, tool);
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed (exit ${r.status}): ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`);
}

interface Node { name: string; port: number; dir: string }

class Cluster {
  readonly nodes: Node[] = [];
  constructor(readonly work: string) {}

  async create(names: string[]): Promise<void> {
    for (const name of names) {
      const node = { name, port: await freePort(), dir: path.join(this.work, name) };
      pgRun('initdb', ['-D', node.dir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
      this.nodes.push(node);
      pgRun('pg_ctl', ['-D', node.dir, '-l', path.join(this.work, `${name}.log`), '-w', '-t', '60', '-o',
        [`-p ${node.port}`, `-k ${this.work}`, "-c listen_addresses=127.0.0.1", '-c shared_preload_libraries=citus',
          '-c max_prepared_transactions=50', '-c citus.enable_unsafe_triggers=on', '-c fsync=off', '-c max_connections=60'].join(' '), 'start']);
      log(`${name}: PostgreSQL with citus on 127.0.0.1:${node.port}`);
    }
  }

  url(node: Node): string {
    return `postgres://postgres@127.0.0.1:${node.port}/postgres`;
  }

  stop(): void {
    for (const node of this.nodes) {
      try { pgRun('pg_ctl', ['-D', node.dir, '-m', 'immediate', '-w', 'stop']); } catch { /* already down */ }
    }
  }
}

async function connect(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {}); // a backend that dies is reported by the query that was running
  await c.connect();
  return c;
}

async function rows<T = Record<string, unknown>>(c: pg.Client, sql: string, params?: unknown[]): Promise<T[]> {
  return (await c.query(sql, params)).rows as T[];
}

const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** Applies the distribution of plan.ts to the migrated schema. Returns what it changed, for the report. */
async function distribute(c: pg.Client): Promise<string[]> {
  const report: string[] = [];
  const tables = (await rows<{ t: string }>(c, `SELECT relname AS t FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY 1`)).map((r) => r.t);
  const planned = new Set<string>([...REFERENCE_TABLES, ...COORDINATOR_TABLES, ...OWN_KEY_TABLES.map((t) => t.table)]);
  const withPartner = new Set((await rows<{ t: string }>(c, `SELECT table_name AS t FROM information_schema.columns WHERE table_schema = 'public' AND column_name = $1`, [DISTRIBUTION_COLUMN])).map((r) => r.t));
  const children = new Set(CHILDREN.map((ch) => ch.table));
  const distributed = tables.filter((t) => !planned.has(t) && t !== 'card_routes');
  const unplanned = distributed.filter((t) => !withPartner.has(t) && !children.has(t));
  if (unplanned.length > 0) throw new Error(`tables with no place in ops/citus/plan.ts (no partner_id, not reference or coordinator): ${unplanned.join(', ')}`);
  report.push(`${tables.length} tables after the migrations: ${distributed.length} distributed by partner_id (${children.size} of them given a partner_id), ` +
    `${REFERENCE_TABLES.length - 1} reference (+ new card_routes), ${COORDINATOR_TABLES.length} coordinator-only, ${OWN_KEY_TABLES.length} distributed by its own key`);

  await c.query(CARD_ROUTES_DDL);
  for (const ch of CHILDREN) {
    await c.query(`ALTER TABLE ${ch.table} ADD COLUMN ${DISTRIBUTION_COLUMN} text`);
    await c.query(ch.backfill);
    await c.query(`ALTER TABLE ${ch.table} ALTER COLUMN ${DISTRIBUTION_COLUMN} SET NOT NULL`);
  }

  // Foreign keys between distributed tables must include the distribution column on both sides: drop
  // them now, re-create them widened after the tables are distributed.
  const dist = new Set(distributed);
  const fks = await rows<{ tbl: string; name: string; cols: string[]; ref: string; refcols: string[]; deferrable: boolean; deferred: boolean; del: string }>(c, `
    SELECT conrelid::regclass::text AS tbl, conname AS name, confrelid::regclass::text AS ref, condeferrable AS deferrable, condeferred AS deferred, confdeltype AS del,
           ARRAY(SELECT attname FROM unnest(conkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = conrelid AND a.attnum = k.n ORDER BY i)::text[] AS cols,
           ARRAY(SELECT attname FROM unnest(confkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = confrelid AND a.attnum = k.n ORDER BY i)::text[] AS refcols
      FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace`);
  // Those to reference tables are dropped too and re-created unchanged afterwards: a local table
  // referencing a new reference table would become a "Citus local table", which Citus then refuses to
  // distribute when it has an identity column.
  const ref = new Set<string>(REFERENCE_TABLES);
  const widened = fks.filter((f) => dist.has(f.tbl) && dist.has(f.ref));
  const toReference = fks.filter((f) => (dist.has(f.tbl) || ref.has(f.tbl)) && ref.has(f.ref));
  for (const f of [...widened, ...toReference]) await c.query(`ALTER TABLE ${f.tbl} DROP CONSTRAINT ${f.name}`);
  const badFks = fks.filter((f) => !dist.has(f.tbl) && dist.has(f.ref));
  if (badFks.length > 0) throw new Error(`foreign keys from non-distributed to distributed tables: ${badFks.map((f) => f.name).join(', ')}`);

  // Primary keys and unique constraints without the distribution column: widened by it.
  const uniques = await rows<{ tbl: string; name: string; def: string; contype: string }>(c, `
    SELECT conrelid::regclass::text AS tbl, conname AS name, pg_get_constraintdef(oid) AS def, contype
      FROM pg_constraint WHERE contype IN ('p', 'u') AND connamespace = 'public'::regnamespace
       AND NOT EXISTS (SELECT 1 FROM unnest(conkey) k(n) JOIN pg_attribute a ON a.attrelid = conrelid AND a.attnum = k.n WHERE a.attname = $1)`, [DISTRIBUTION_COLUMN]);
  let keys = 0;
  for (const u of uniques.filter((x) => dist.has(x.tbl))) {
    const m = /^(PRIMARY KEY|UNIQUE) \((.+)\)$/.exec(u.def);
    if (!m) throw new Error(`unexpected constraint ${u.name}: ${u.def}`);
    await c.query(`ALTER TABLE ${u.tbl} DROP CONSTRAINT ${u.name}`);
    await c.query(`ALTER TABLE ${u.tbl} ADD CONSTRAINT ${u.name} ${m[1]} (${DISTRIBUTION_COLUMN}, ${m[2]})`);
    keys++;
  }
  // Unique indexes that are not constraints (partial ones): the same.
  const indexes = await rows<{ tbl: string; name: string; def: string }>(c, `
    SELECT i.indrelid::regclass::text AS tbl, c.relname AS name, pg_get_indexdef(i.indexrelid) AS def
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indisunique AND c.relnamespace = 'public'::regnamespace
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
       AND NOT EXISTS (SELECT 1 FROM unnest(i.indkey) k(n) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n WHERE a.attname = $1)`, [DISTRIBUTION_COLUMN]);
  for (const ix of indexes.filter((x) => dist.has(x.tbl))) {
    const def = ix.def.replace(/USING btree \(/, `USING btree (${DISTRIBUTION_COLUMN}, `);
    await c.query(`DROP INDEX ${ix.name}`);
    await c.query(def);
    keys++;
  }
  report.push(`${CHILDREN.length} children given partner_id; ${keys} primary keys / unique constraints / unique indexes widened to start with partner_id; ${widened.length} foreign keys between distributed tables widened to (partner_id, ...)`);

  for (const t of [...REFERENCE_TABLES]) await c.query(`SELECT create_reference_table(${quote(t)})`);
  await c.query(`SET citus.shard_count = ${SHARD_COUNT}`);
  // Parents before children does not matter without the foreign keys; one colocation group.
  const [first, ...rest] = distributed;
  await c.query(`SELECT create_distributed_table(${quote(first)}, ${quote(DISTRIBUTION_COLUMN)})`);
  for (const t of rest) await c.query(`SELECT create_distributed_table(${quote(t)}, ${quote(DISTRIBUTION_COLUMN)}, colocate_with => ${quote(first)})`);
  for (const o of OWN_KEY_TABLES) await c.query(`SELECT create_distributed_table(${quote(o.table)}, ${quote(o.column)}, colocate_with => 'none')`);
  for (const f of widened) {
    const del = f.del === 'c' ? ' ON DELETE CASCADE' : '';
    const defer = f.deferrable ? ` DEFERRABLE INITIALLY ${f.deferred ? 'DEFERRED' : 'IMMEDIATE'}` : '';
    await c.query(`ALTER TABLE ${f.tbl} ADD CONSTRAINT ${f.name} FOREIGN KEY (${DISTRIBUTION_COLUMN}, ${f.cols.join(', ')}) ` +
      `REFERENCES ${f.ref} (${DISTRIBUTION_COLUMN}, ${f.refcols.join(', ')})${del}${defer}`);
  }
  for (const f of toReference) {
    const del = f.del === 'c' ? ' ON DELETE CASCADE' : '';
    await c.query(`ALTER TABLE ${f.tbl} ADD CONSTRAINT ${f.name} FOREIGN KEY (${f.cols.join(', ')}) REFERENCES ${f.ref} (${f.refcols.join(', ')})${del}`);
  }
  report.push(`create_reference_table x${REFERENCE_TABLES.length}, create_distributed_table x${distributed.length + OWN_KEY_TABLES.length} (${SHARD_COUNT} shards each), foreign keys re-created (${widened.length} widened, ${toReference.length} to reference tables unchanged)`);

  // Partner filters in the function bodies (plan.ts), then every function propagated to the workers.
  const byFn = new Map<string, typeof PARTNER_FILTERS>();
  for (const f of PARTNER_FILTERS) byFn.set(f.fn, [...(byFn.get(f.fn) ?? []), f]);
  for (const [fn, filters] of byFn) {
    const defs = await rows<{ def: string }>(c, `SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p WHERE p.proname = $1 AND p.pronamespace = 'public'::regnamespace`, [fn]);
    if (defs.length !== 1) throw new Error(`function ${fn}: ${defs.length} definitions`);
    let def = defs[0].def;
    for (const f of filters) {
      const n = def.split(f.find).length - 1;
      if (n !== f.count) throw new Error(`partner filter for ${fn} expects ${f.count} x "${f.find}", found ${n}: the function changed, update ops/citus/plan.ts`);
      def = def.replaceAll(f.find, f.replace);
    }
    await c.query(def);
  }
  report.push(`${PARTNER_FILTERS.reduce((n, f) => n + f.count, 0)} partner filters added to ${byFn.size} functions (${[...byFn.keys()].join(', ')})`);

  const fns = await rows<{ sig: string; name: string }>(c, `
    SELECT p.oid::regprocedure::text AS sig, p.proname AS name FROM pg_proc p
     WHERE p.pronamespace = 'public'::regnamespace AND p.prokind = 'f'
       AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e') ORDER BY 2`);
  for (const f of fns) {
    const d = DISTRIBUTED_FUNCTIONS.find((x) => x.name === f.name);
    await c.query(d
      ? `SELECT create_distributed_function(${quote(f.sig)}, ${quote(d.arg)}, colocate_with => ${quote(first)})`
      : `SELECT create_distributed_function(${quote(f.sig)})`);
  }
  report.push(`create_distributed_function x${fns.length}: ${DISTRIBUTED_FUNCTIONS.map((d) => `${d.name}(${d.arg})`).join(', ')} by partner; the rest propagated only`);
  return report;
}

const NOW = '2026-11-26T10:00:00Z';

async function seed(c: pg.Client, partner: string, suffix: string): Promise<{ card: string; pool: string }> {
  const org = `org-${suffix}`;
  const cust = `cus-${suffix}`;
  const card = `crd-${suffix}`;
  const apply = `apl-${suffix}`;
  await c.query(`INSERT INTO partners (partner_id, name) VALUES ($1, $2)`, [partner, `Partner ${suffix}`]);
  await c.query(`INSERT INTO organizations (organization_id, partner_id, organization_ref, organization_name, company_registration_number, country_code, funding_currencies, created_at, updated_at)
    VALUES ($1, $2, 'ref', 'Org', 'CRN', 'HK', '["USD"]', $3, $3)`, [org, partner, NOW]);
  await c.query(`INSERT INTO customers (customer_id, partner_id, organization_id, customer_ref, first_name, last_name, kyc_status, kyc_updated_at, created_at, updated_at)
    VALUES ($1, $2, $3, 'ref', 'Ada', 'Lovelace', 'APPROVED', $4, $4, $4)`, [cust, partner, org, NOW]);
  await c.query(`INSERT INTO card_applications (card_apply_id, partner_id, card_apply_ref, organization_id, card_profile_id, subject_type, subject_id, custodian_customer_id, rule_ids, status, card_id, created_at, updated_at)
    VALUES ($1, $2, 'ref', $3, 'prf-1', 'CUSTOMER', $4, $4, '[]', 'SUCCESS', $5, $6, $6)`, [apply, partner, org, cust, card, NOW]);
  await c.query(`INSERT INTO cards (card_id, partner_id, organization_id, card_apply_id, card_profile_id, card_network, card_form, balance_mode, currency, settlement_currencies,
      subject_type, subject_id, custodian_customer_id, pan_first6, pan_last4, pan_fingerprint, pan_key_id, pan_enc, cvk_key_id, status, created_at, updated_at)
    VALUES ($1, $2, $3, $4, 'prf-1', 'VISA', 'VIRTUAL', 'SHARED', 'USD', '["USD"]', 'CUSTOMER', $5, $5, '411111', '4242', $6, 'key-pan', 'sealed', 'key-cvk', 'ACTIVE', $7, $7)`,
  [card, partner, org, apply, cust, `fp-${suffix}`, NOW]);
  await c.query(`INSERT INTO card_routes (card_id, partner_id, pan_fingerprint) VALUES ($1, $2, $3)`, [card, partner, `fp-${suffix}`]);
  const pool = `acc-pool-${suffix}`;
  const ext = `acc-ext-${suffix}`;
  await c.query(`INSERT INTO ledger_accounts (account_id, partner_id, organization_id, owner_type, owner_id, currency, allow_negative, created_at)
    VALUES ($1, $2, $3, 'ORGANIZATION_POOL', $3, 'USD', false, $5), ($4, $2, NULL, 'EXTERNAL', 'FUNDING', 'USD', true, $5)`, [pool, partner, org, ext, NOW]);
  // The pool's funding: a ledger_post call, itself delegated to the partner's worker.
  await c.query(`SELECT * FROM ledger_post('pst-fund-${suffix}', ${quote(partner)}, 'FUNDING', false, NULL, 'seed', '${NOW}',
    ARRAY[${quote(ext)}, ${quote(pool)}], ARRAY['USD', 'USD'], ARRAY['AVAILABLE', 'AVAILABLE'], ARRAY[-1000, 1000]::numeric[])`);
  return { card, pool };
}

/**
 * The calls exactly as the service sends them (src/domains/authorization/store.ts authorizeInDb and
 * src/domains/managed-balance/movements-store.ts moveInDb): parameterized SQL, one statement,
 * autocommit. Citus plans such a statement with its parameters as constants (it refuses generic
 * plans for a distributed function call), so it can route it by the partner argument.
 */
const AUTHORIZE_SQL = `SELECT outcome, body, answer_partner AS "partnerId", stand_in AS "standIn", deadline_ms AS "deadlineMs"
       FROM card_authorize($1, $2, $3, $4, $5, $6::numeric, $7, $8::numeric, $9, $10, $11, $12, $13, $14, $15,
       $16::text[], $17, $18, $19, $20, $21, $22, $23, $24, $25)`;
const MOVE_SQL = `SELECT outcome, body FROM user_asset_move($1, $2, $3, $4, $5, $6, $7, $8::numeric, $9, $10::text[], $11, $12, $13, $14, $15)`;

function authorizeParams(partner: string | null, card: string, n: string): unknown[] {
  return [partner, card, 'NETWORK', `net-${n}`, true, '25.00', 'USD', null, null, 'Corner Shop', '5411', 'US', 'POS', new Date(NOW), new Date(NOW),
    ['ACCOUNT_FROZEN', 'PAYMENT_FROZEN'], `trn-${n}`, `out-${n}`, `pst-${n}`, `evt-${n}`, `evl-${n}`,
    new Date('2026-12-26T10:00:00Z'), null, 2000, 5000];
}

function moveParams(partner: string, n: string): unknown[] {
  return [partner, `user-${n}`, `usr-${n}`, `ext-${n}`, 'DEPOSIT', 'CREDIT', 'USDT', '150.5', 'spike', ['ACCOUNT_FROZEN', 'CASH_IN_FROZEN'], new Date(NOW),
    `mov-${n}`, `pst-mv-${n}`, `acc-usr-${n}`, `acc-ctr-${n}`];
}

/** The same call with its parameters written out, for EXPLAIN (which takes no parameters). */
function literal(sql: string, params: unknown[]): string {
  const lit = (v: unknown): string => v === null ? 'NULL' : v instanceof Date ? quote(v.toISOString()) : Array.isArray(v) ? `ARRAY[${v.map(lit).join(', ')}]`
    : typeof v === 'string' ? quote(v) : String(v);
  return sql.replace(/\$(\d+)/g, (_, i: string) => lit(params[Number(i) - 1]));
}

/** Runs a statement with Citus' DEBUG1 planner messages on: its rows and what the planner said about pushing it down. */
async function traced<T>(c: pg.Client, sql: string, params: unknown[]): Promise<{ rows: T[]; pushdown: string }> {
  const notices: string[] = [];
  const onNotice = (n: { message?: string }) => { if (n.message) notices.push(n.message); };
  c.on('notice', onNotice);
  await c.query('SET client_min_messages = debug1');
  try {
    const r = await rows<T>(c, sql, params);
    return { rows: r, pushdown: notices.find((m) => /push|distribution argument|shard interval/.test(m)) ?? 'no pushdown message (not delegated)' };
  } finally {
    c.off('notice', onNotice);
    await c.query('RESET client_min_messages').catch(() => {});
  }
}

/** The task node of the call's EXPLAIN: where Citus sends it. */
async function explainNode(c: pg.Client, sql: string): Promise<string> {
  const plan = (await rows<{ 'QUERY PLAN': string }>(c, `EXPLAIN (COSTS OFF) ${sql}`)).map((r) => r['QUERY PLAN']);
  return plan.find((l) => /Node: host=/.test(l))?.trim() ?? `no task node (${plan[0]?.trim()})`;
}

/** The worker (port) holding a partner's shard group. */
async function workerOf(c: pg.Client, partner: string): Promise<number> {
  const r = await rows<{ port: number }>(c, `SELECT nodeport AS port FROM citus_shards WHERE table_name = 'ledger_accounts'::regclass
    AND shardid = get_shard_id_for_distribution_column('ledger_accounts', $1::text)`, [partner]);
  return r[0].port;
}

/** Rows a partner has in each table, per node: proves everything landed on one worker. */
async function placement(c: pg.Client, partner: string, tables: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const t of tables) {
    const r = await rows<{ port: number; n: string }>(c, `
      SELECT s.nodeport AS port, sum(x.result::bigint)::text AS n
        FROM run_command_on_shards(${quote(t)}, $$SELECT count(*) FROM %s WHERE partner_id = ${quote(partner)}$$) x
        JOIN citus_shards s ON s.shardid = x.shardid WHERE x.success GROUP BY 1 HAVING sum(x.result::bigint) > 0 ORDER BY 1`);
    out.push(`${t}: ${r.map((x) => `${x.n} on :${x.port}`).join(', ') || 'none'}`);
  }
  return out;
}

async function main(): Promise<void> {
  checkCitusInstalled();
  const work = mkdtempSync(path.join(tmpdir(), 'cardsvc-citus-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(work, uid, gid);
  }
  const cluster = new Cluster(work);
  const clients: pg.Client[] = [];
  let cleaned = false;
  const cleanup = () => {
    if (cleaned) return;
    cleaned = true;
    if (process.env.SPIKE_KEEP_LOGS) spawnSync('sh', ['-c', `cp ${work}/*.log ${process.env.SPIKE_KEEP_LOGS}/`]);
    cluster.stop();
    rmSync(work, { recursive: true, force: true });
  };
  process.once('SIGINT', () => { cleanup(); process.exit(130); });
  // Synchronous, so it also runs when the process dies of an uncaught error.
  process.once('exit', cleanup);
  const findings: string[] = [];
  try {
    await cluster.create(['coordinator', 'worker1', 'worker2']);
    const [coord, w1, w2] = cluster.nodes;
    for (const node of cluster.nodes) {
      const c = await connect(cluster.url(node));
      await c.query('CREATE EXTENSION citus');
      await c.end();
    }
    const c = await connect(cluster.url(coord));
    clients.push(c);
    await c.query(`SELECT citus_set_coordinator_host('127.0.0.1', ${coord.port})`);
    for (const w of [w1, w2]) await c.query(`SELECT citus_add_node('127.0.0.1', ${w.port})`);
    const version = (await rows<{ v: string }>(c, `SELECT extversion AS v FROM pg_extension WHERE extname = 'citus'`))[0].v;
    findings.push(`Citus ${version} on PostgreSQL ${(await rows<{ server_version: string }>(c, 'SHOW server_version'))[0].server_version}: coordinator :${coord.port}, workers :${w1.port} and :${w2.port}`);
    log(findings[0]);

    // The real schema, through the project's own migration runner.
    const db = await openPostgres({ connectionString: cluster.url(coord), poolSize: 2 });
    const applied = await migrate(db);
    await db.close();
    findings.push(`migrate(db): ${applied.versions.length} migrations and ${applied.repeatable.length} function files applied unchanged on the coordinator (plain tables)`);
    log(findings.at(-1)!);

    for (const line of await distribute(c)) { findings.push(line); log(line); }

    // Shared reference data, then one partner on each worker.
    await c.query(`INSERT INTO card_keys (key_id, purpose, wrapped_key, source, status, check_value, created_at) VALUES
      ('key-pan', 'PAN_DATA', 'sealed', 'GENERATED', 'ACTIVE', 'kcv', '${NOW}'), ('key-cvk', 'CVK', 'sealed', 'GENERATED', 'ACTIVE', 'kcv', '${NOW}')`);
    await c.query(`INSERT INTO card_profiles (card_profile_id, partner_id, profile_name, card_network, card_form, balance_mode, settlement_currencies, bin, status, created_at, updated_at)
      VALUES ('prf-1', NULL, 'Virtual USD', 'VISA', 'VIRTUAL', 'SHARED', '["USD"]', '411111', 'ACTIVE', '${NOW}', '${NOW}')`);
    const partners: string[] = [];
    for (let i = 0; partners.length < 2 && i < 50; i++) {
      const candidate = `ptn-${String(i).padStart(3, '0')}`;
      const port = await workerOf(c, candidate);
      if (partners.length === 0 || (await workerOf(c, partners[0])) !== port) partners.push(candidate);
    }
    const [pa, pb] = partners;
    const { card } = await seed(c, pa, 'a');
    await seed(c, pb, 'b');
    const workerA = await workerOf(c, pa);
    const workerB = await workerOf(c, pb);
    findings.push(`partners ${pa} (shards on :${workerA}) and ${pb} (shards on :${workerB}) seeded: company, employee, card, funded USD pool (the funding itself a delegated ledger_post)`);
    log(findings.at(-1)!);

    // 1. The authorization, as the ingress will call it once it knows the card's partner (card_routes).
    const route = (await rows<{ partner_id: string }>(c, 'SELECT partner_id FROM card_routes WHERE card_id = $1', [card]))[0].partner_id;
    const authParams = authorizeParams(route, card, 'a1');
    const authNode = await explainNode(c, literal(AUTHORIZE_SQL, authParams));
    const auth = await traced<{ outcome: string; body: string }>(c, AUTHORIZE_SQL, authParams);
    const authBody = JSON.parse(auth.rows[0].body) as { status: string; holdAmount: string };
    findings.push(`card_authorize(${route}, ${card}, 25.00 USD), the service's parameterized call: ${auth.rows[0].outcome}, status ${authBody.status}, ` +
      `hold ${authBody.holdAmount}; planner: "${auth.pushdown}"; EXPLAIN: ${authNode}`);
    log(findings.at(-1)!);
    const pool = (await rows<{ available: string; pending: string }>(c, `SELECT available, pending FROM ledger_accounts WHERE partner_id = $1 AND owner_type = 'ORGANIZATION_POOL'`, [pa]))[0];
    findings.push(`pool of ${pa} after the hold: available ${pool.available}, pending ${pool.pending} (was 1000.00 / 0)`);
    log(findings.at(-1)!);
    const authTables = ['card_transactions', 'ledger_postings', 'ledger_entries', 'ledger_accounts', 'velocity_counters', 'events', 'event_sequences'];
    for (const line of await placement(c, pa, authTables)) { findings.push(`  ${pa} ${line}`); log(findings.at(-1)!); }

    // 2. A user-asset credit for the other partner (first use: creates the user and its accounts).
    const mvParams = moveParams(pb, 'b1');
    const creditNode = await explainNode(c, literal(MOVE_SQL, mvParams));
    const credit = await traced<{ outcome: string; body: string }>(c, MOVE_SQL, mvParams);
    const creditBody = JSON.parse(credit.rows[0].body) as { freeAfter: string };
    findings.push(`user_asset_move(${pb}, CREDIT 150.5 USDT), the service's parameterized call: ${credit.rows[0].outcome}, freeAfter ${creditBody.freeAfter}; ` +
      `planner: "${credit.pushdown}"; EXPLAIN: ${creditNode}`);
    log(findings.at(-1)!);
    for (const line of await placement(c, pb, ['managed_users', 'asset_movements', 'ledger_accounts', 'ledger_postings', 'ledger_entries', 'user_stream'])) {
      findings.push(`  ${pb} ${line}`);
      log(findings.at(-1)!);
    }

    // 3. The webhook worker's lease of due events, as src/domains/events/store.ts leaseDue sends it
    //    (its SELECT ... FOR UPDATE SKIP LOCKED over all partners); the other lease scans have its shape.
    try {
      const leased = await rows(c, `WITH due AS (
          SELECT event_id FROM event_deliveries WHERE status = 'PENDING' AND next_attempt_at <= $1 ORDER BY next_attempt_at, event_id LIMIT $4 FOR UPDATE SKIP LOCKED
        ), leased AS (
          UPDATE event_deliveries e SET next_attempt_at = $2, lease_token = $3, attempts = e.attempts + 1 FROM due WHERE e.event_id = due.event_id RETURNING e.*
        ) SELECT event_id FROM leased`, [new Date('2027-01-01T00:00:00Z'), new Date('2027-01-01T00:01:00Z'), 'spike-lease', 50]);
      findings.push(`the webhook worker's lease of due events over all partners (leaseDue): leased ${leased.length}`);
    } catch (err) {
      findings.push(`the webhook worker's lease of due events over all partners (leaseDue): refused: ${(err as Error).message}`);
    }
    log(findings.at(-1)!);

    // The same connection, after that error: is the next authorization still delegated?
    // (Not delegated, card_authorize runs on the coordinator and ledger_post's inserts reach the
    // worker's shards over another connection, without ledger_post's transaction-local setting.)
    await c.query('SET client_min_messages = debug1');
    const seen: string[] = [];
    const onNotice = (n: { message?: string }) => { if (n.message && /push/.test(n.message)) seen.push(n.message); };
    c.on('notice', onNotice);
    try {
      const r = await rows<{ outcome: string }>(c, AUTHORIZE_SQL, authorizeParams(route, card, 'a2'));
      findings.push(`the next authorization on that connection (after the refused lease): ${r[0].outcome}, planner: "${seen[0] ?? 'no pushdown message'}"`);
    } catch (err) {
      findings.push(`the next authorization on that connection (after the refused lease): planner: "${seen[0] ?? 'no pushdown message'}", failed: ${(err as Error).message}`);
    } finally {
      c.off('notice', onNotice);
      await c.query('RESET client_min_messages');
    }
    log(findings.at(-1)!);
    const fresh = await connect(cluster.url(coord));
    clients.push(fresh);
    const again2 = await traced<{ outcome: string }>(fresh, AUTHORIZE_SQL, authorizeParams(route, card, 'a3'));
    findings.push(`the same on a fresh connection: ${again2.rows[0].outcome}, planner: "${again2.pushdown}"`);
    log(findings.at(-1)!);

    // 4. The network ingress' call today: it has only the card id, so the partner argument is NULL
    //    (on a fresh connection, as a pooled connection of the service would be).
    let netOutcome: string;
    const net = await connect(cluster.url(coord));
    clients.push(net);
    try {
      const r = await traced<{ outcome: string }>(net, AUTHORIZE_SQL, authorizeParams(null, card, 'n1'));
      netOutcome = `answered ${r.rows[0].outcome} (planner: "${r.pushdown}")`;
    } catch (err) {
      netOutcome = `failed: ${(err as Error).message}`;
    }
    let crash = '';
    for (let i = 0; i < 20 && !crash; i++) {
      await new Promise((r) => setTimeout(r, 250)); // the postmaster logs the crash a moment later
      crash = spawnSync('grep', ['-m1', 'terminated by signal', path.join(work, 'coordinator.log')], { encoding: 'utf8' }).stdout.trim();
    }
    findings.push(`card_authorize(NULL, ${card}) as the ingress calls it today: ${netOutcome}` +
      (crash ? `; coordinator log: "${crash.replace(/^\S+ \S+ \S+ \[\d+\] /, '')}"` : ''));
    log(findings.at(-1)!);
    if (crash) {
      // The postmaster restarts every backend after a crash: wait for it, then check the data is intact.
      let back: pg.Client | null = null;
      for (let i = 0; i < 60 && !back; i++) {
        back = await connect(cluster.url(coord)).catch(async () => { await new Promise((r) => setTimeout(r, 500)); return null; });
      }
      if (!back) throw new Error('the coordinator did not come back after the crash');
      clients.push(back);
      const n = (await rows<{ n: string }>(back, `SELECT count(*)::text AS n FROM card_transactions`))[0].n;
      findings.push(`after the crash the coordinator restarted every connection (recovery); ${n} card transaction(s) committed before it are intact`);
      log(findings.at(-1)!);
    }

    console.log('\nFindings:');
    for (const f of findings) console.log(`- ${f}`);
  } finally {
    for (const cl of clients) await cl.end().catch(() => {});
    cleanup();
    log(`clusters stopped and ${work} removed`);
  }
}

main().catch((err: unknown) => {
  fail(err instanceof Error ? err.message : String(err));
});
