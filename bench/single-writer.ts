/**
 * Issue 34: what PostgreSQL would spend per approval if one writer per partition of the cards decided
 * from memory and wrote its decisions in batches (docs/benchmarks.md "Issue 34: what a single writer per
 * partition would write"). A measurement of a design, not of the service: it builds the authorization
 * scenario's world through the API (compiled service, PostgreSQL), stops the service, loads
 * bench/prototypes/single-writer-batch.sql, and alternates with pgbench, each round in turn: TPC-B at
 * 8 clients, card_authorize at 8 clients (today's call, as the authorization scenario runs it), and
 * the batch call for several batch sizes at one client (one writer) and at two (two partitions).
 * The figure is own CPU: the run's backends (pg_stat_activity) plus pgbench, from /proc, so other work
 * on the host does not add to it. Run after `npm run build`, under the host's CPU lock:
 *   BENCH_ROUNDS=3 BENCH_DURATION_S=6 npx tsx bench/single-writer.ts
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { buildWorld, cardAuthorizeScript, DURATION_S, freshDatabase, median, pgbench, PGBENCH_DB, ROUNDS, sleep, startService, stopService } from './lib/authorizations.ts';
import { processCpuMs } from './lib/cpu.ts';

const DB = 'cardsvc_bench_single_writer';
const BATCHES = [1, 8, 32, 64, 128];

interface Run { txPerS: number; ownMsPerTx: number }

/** One pgbench run; own CPU and commits counted from 1 s after its start to 1 s before its end. */
async function ownCpu(db: string, clients: number, args: string[]): Promise<Run> {
  const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:5432/${db}` });
  await admin.connect();
  const child = spawn('pgbench', ['-h', '127.0.0.1', '-U', 'postgres', '-n', '-M', 'prepared', '-c', String(clients), '-j', String(Math.min(clients, 2)), '-T', String(DURATION_S), ...args, db], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
  const ended = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  await sleep(1000);
  const pids: number[] = (await admin.query(`SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' AND datname = $1`, [db])).rows.map((r) => r.pid);
  const commits = async () => Number((await admin.query('SELECT xact_commit FROM pg_stat_database WHERE datname = $1', [db])).rows[0].xact_commit);
  const cpu = () => [...pids, child.pid!].reduce((sum, pid) => sum + processCpuMs(pid), 0);
  const c0 = await commits(); const t0 = Date.now(); const u0 = cpu();
  await sleep((DURATION_S - 2) * 1000);
  const c1 = await commits(); const t1 = Date.now(); const u1 = cpu();
  await admin.end();
  if ((await ended) !== 0) throw new Error(`pgbench ${args.join(' ')} failed: ${stderr}`);
  const tx = c1 - c0 - 1; // the first commits read is a transaction of its own
  return { txPerS: (tx * 1000) / (t1 - t0), ownMsPerTx: (u1 - u0) / tx };
}

const dir = mkdtempSync(path.join(tmpdir(), 'cardsvc-single-writer-'));
try {
  const url = await freshDatabase(DB);
  const service = await startService('postgres', 18291, { DATABASE_URL: url, DATA_DIR: dir });
  let world;
  try {
    world = await buildWorld(service);
  } finally {
    await stopService(service);
  }
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query(readFileSync(new URL('./prototypes/single-writer-batch.sql', import.meta.url), 'utf8'));
  await freshDatabase(PGBENCH_DB);
  pgbench(['-i', '-q', '-s', '10', PGBENCH_DB]);

  const authorize = cardAuthorizeScript(world, dir);
  const batch = (b: number) => {
    const file = path.join(dir, `batch-${b}.sql`);
    writeFileSync(file, `\\set r random(1, 999999999999999)\nSELECT proto_write_batch(${b}, :r);\n`);
    return file;
  };
  const variants: { name: string; approvals: number; run: () => Promise<Run> }[] = [
    { name: 'pgbench TPC-B, 8 clients', approvals: 1, run: () => ownCpu(PGBENCH_DB, 8, []) },
    { name: 'card_authorize, 8 clients', approvals: 1, run: () => ownCpu(DB, 8, ['-f', authorize, '-D', `partner=${world.partnerId}`]) },
    ...BATCHES.map((b) => ({ name: `batch of ${b}, 1 writer`, approvals: b, run: () => ownCpu(DB, 1, ['-f', batch(b)]) })),
    { name: 'batch of 32, 2 writers', approvals: 32, run: () => ownCpu(DB, 2, ['-f', batch(32)]) },
  ];
  const samples = new Map(variants.map((v) => [v.name, [] as Run[]]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const v of variants) {
      const r = await v.run();
      samples.get(v.name)!.push(r);
      console.log(`round ${round} ${v.name.padEnd(28)} ${r.txPerS.toFixed(0).padStart(6)} calls/s  own CPU ${r.ownMsPerTx.toFixed(3)} ms per call, ${(r.ownMsPerTx / v.approvals).toFixed(3)} ms per approval`);
    }
  }
  const tpcb = median(samples.get(variants[0].name)!.map((r) => r.ownMsPerTx));
  console.log(`\nown CPU per approval, median of ${ROUNDS} rounds of ${DURATION_S} s (TPC-B ${tpcb.toFixed(3)} ms per transaction):`);
  for (const v of variants.slice(1)) {
    const ms = median(samples.get(v.name)!.map((r) => r.ownMsPerTx)) / v.approvals;
    console.log(`${v.name.padEnd(28)} ${ms.toFixed(3)} ms = ${(ms / tpcb).toFixed(2)} TPC-B transactions`);
  }
  // The batches keep the ledger's promise: every account's balances are its entries plus its holds.
  const audit = await db.query(`
    WITH hs AS (SELECT account_id, sum(held) AS held FROM ledger_hold_rows(NULL::text) GROUP BY 1),
         d AS (SELECT account_id, sum(amount) FILTER (WHERE bucket = 'AVAILABLE') AS avail, sum(amount) FILTER (WHERE bucket = 'PENDING') AS pend
                 FROM ledger_entries GROUP BY 1)
    SELECT count(*) FILTER (WHERE a.available <> COALESCE(d.avail, 0) - COALESCE(hs.held, 0) OR a.pending <> COALESCE(d.pend, 0) + COALESCE(hs.held, 0)) AS bad,
           count(*) AS accounts
      FROM ledger_accounts a LEFT JOIN d USING (account_id) LEFT JOIN hs USING (account_id)`);
  console.log(`ledger after the run: ${audit.rows[0].accounts} accounts, ${audit.rows[0].bad} whose balances differ from entries + holds`);
  await db.end();
  if (Number(audit.rows[0].bad) !== 0) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
