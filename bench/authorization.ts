/**
 * npm run bench -- --scenario=authorization|forwarding
 *
 * authorization (issue 10): 200 funded cards across 40 companies on PostgreSQL; signed
 *   POST /open-api/sandbox/v1/simulate/authorization at 8 connections through the full HTTP path
 *   (the service runs as its own process, as `npm start` does). Alternating rounds with pgbench
 *   TPC-B (`-i -s 10`, then `-M prepared -c 8 -j 2`) on the same PostgreSQL. Requests go round-robin
 *   over the companies (consecutive requests, different pools); prints approvals/s,
 *   p50, p99, the CPU per request of the service and of PostgreSQL (and per TPC-B transaction),
 *   the ratio to pgbench (median of the rounds), then the embedded database's figure (its own
 *   service, started after the PostgreSQL rounds so neither disturbs the other).
 *   Target: approvals/s >= 0.40 x pgbench TPC-B, p99 < 50 ms.
 * forwarding (issue 12): the same requests, evenly paced at half the forwarded capacity measured first,
 *   with the partner's auth_url unset and set to a local partner (SDK handler in its own process,
 *   answering at once), alternating; prints the end-to-end difference, the service's recorded
 *   forwarding latency minus the partner's own time, and the host's floor (a bare exchange between
 *   two idle processes) alongside, which bounds it. Target: p99 overhead < 5 ms.
 */
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import { AdminClient, CardServiceClient, decimal } from '../sdk/index.ts';
import { serviceArgs } from './service-args.ts';
import { signedHeaders } from './signing.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const CONNECTIONS = 8;
const COMPANIES = 40;
const CARDS_PER_COMPANY = 5;
const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BENCH_DB = 'cardsvc_bench_auth';
const PGBENCH_DB = 'pgbench_bench';
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const MASTER_KEY = 'cd'.repeat(32);
const AUTHORIZE = '/open-api/sandbox/v1/simulate/authorization';
/**
 * The forwarding comparison runs at an evenly paced offered load below saturation (both rounds
 * alike, pacedAuthorizations): on this 2-core machine the partner's own RSA work shares the CPU
 * with the service and PostgreSQL, so at saturation the difference would measure CPU queueing, not
 * the forwarding path. The rate is half the forwarded authorizations/s this machine sustains at 8
 * connections (measured first), or BENCH_FORWARDING_RATE when set.
 */
const FORWARDING_RATE_SET = process.env.BENCH_FORWARDING_RATE ? Number(process.env.BENCH_FORWARDING_RATE) : null;
const FORWARDING_LOAD_SHARE = 0.5;

export interface Service {
  name: string;
  base: string;
  child: ChildProcess;
  db: pg.Client | null;
}

interface World {
  admin: AdminClient;
  partnerId: string;
  apiKey: string;
  secretKey: string;
  client: CardServiceClient;
  cardIds: string[];
}

export interface LoadSample {
  /** CPU time (user + system) per request of the service process and of all PostgreSQL processes (Linux /proc; NaN elsewhere). */
  serviceCpuMsPerRequest: number;
  postgresCpuMsPerRequest: number;
  /** Busy CPU of the whole machine per request (both cores, load generator included). */
  machineCpuMsPerRequest: number;
  approvalsPerS: number;
  requestsPerS: number;
  p50: number;
  p99: number;
  declined: number;
  non2xx: number;
  errors: number;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(url: string, timeoutMs = 90_000): Promise<void> {
  const start = Date.now();
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() - start > timeoutMs) throw new Error(`${url} did not come up`);
    await sleep(200);
  }
}

export async function startService(name: string, port: number, env: Record<string, string>): Promise<Service> {
  const child = spawn(process.execPath, serviceArgs(), {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN, MASTER_KEY, RATE_LIMIT_MAX: '10000000', PREAUTH_RATE_LIMIT_MAX: '10000000', ADMIN_RATE_LIMIT_MAX: '10000000', WORKERS: 'true', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/readyz`);
  let db: pg.Client | null = null;
  if (env.DATABASE_URL) {
    db = new pg.Client({ connectionString: env.DATABASE_URL });
    await db.connect();
  }
  return { name, base, child, db };
}

/** 40 companies, an approved employee each, 5 shared cards each, pools funded far beyond the run. */
async function buildWorld(service: Service): Promise<World> {
  const admin = new AdminClient(service.base, ADMIN_TOKEN);
  const partner = await admin.createPartner({ name: `bench-${service.name}` });
  const client = new CardServiceClient({ baseUrl: service.base, apiKey: partner.apiKey!, secretKey: partner.secretKey! });
  const applyIds: string[] = [];
  for (let c = 0; c < COMPANIES; c++) {
    const org = await client.organizations.create({
      organizationRef: `bench-org-${c}`, organizationName: `Bench Company ${c}`, companyRegistrationNumber: `CR-${c}`,
      countryCode: 'HK', fundingCurrencies: ['USD', 'HKD'],
    });
    const employee = await client.customers.create({
      organizationId: org.organizationId, customerRef: `bench-emp-${c}`, firstName: 'Ada', lastName: 'Lovelace',
      phoneCountryCode: 'HK', phoneNumber: '91234567', email: 'ada@example.com',
    });
    await client.sandbox.kycDecision({ customerId: employee.customerId, decision: 'APPROVED' });
    await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: org.organizationId, currency: 'USD', amount: decimal('1000000000.00') });
    for (let k = 0; k < CARDS_PER_COMPANY; k++) {
      const applied = await client.cards.apply({
        organizationId: org.organizationId, cardApplyRef: `bench-${c}-${k}`, cardProfileId: 'sbx-visa-shared',
        subjectType: 'CUSTOMER', subjectId: employee.customerId,
      });
      applyIds.push(applied.cardApplyId);
    }
  }
  // The service's own card-application job issues the cards.
  const cardIds: string[] = [];
  for (const id of applyIds) {
    for (let tries = 0; ; tries++) {
      const a = await client.cards.queryApply(id);
      if (a.status === 'SUCCESS') {
        cardIds.push(a.cardId!);
        break;
      }
      if (a.status === 'REJECTED' || tries > 600) throw new Error(`application ${id} ended ${a.status}`);
      await sleep(100);
    }
  }
  // Round-robin over companies, not over one company's cards in a row: 8 connections then hit 8
  // different pools, as traffic from 40 companies does, instead of queueing on one pool's row lock.
  const interleaved = Array.from({ length: CARDS_PER_COMPANY }, (_, k) =>
    Array.from({ length: COMPANIES }, (_, c) => cardIds[c * CARDS_PER_COMPANY + k])).flat();
  return { admin, partnerId: partner.partnerId, apiKey: partner.apiKey!, secretKey: partner.secretKey!, client, cardIds: interleaved };
}

function signed(world: World, body: string): Record<string, string> {
  return { 'content-type': 'application/json', ...signedHeaders(world, body) };
}

async function approvedCount(service: Service, world: World): Promise<number> {
  if (service.db) {
    const r = await service.db.query(`SELECT count(*)::int AS n FROM card_transactions WHERE partner_id = $1 AND status <> 'DECLINED'`, [world.partnerId]);
    return r.rows[0].n as number;
  }
  const page = await world.client.transactions.list({ status: 'PENDING', pageSize: 1 });
  return page.total;
}

/** CPU (service, PostgreSQL, machine) per request of an autocannon run at the scenarios' 8 connections. */
export interface CpuPerRequest { service: number; postgres: number; machine: number }

/** The CPU spent since `before` (a cpuTimes reading), per request of `requests`. */
function cpuPerRequestSince(service: Service, before: ReturnType<typeof cpuTimes>, requests: number): CpuPerRequest {
  const after = cpuTimes(service);
  const n = requests || 1;
  return { service: (after.service - before.service) / n, postgres: (after.postgres - before.postgres) / n, machine: (after.machine - before.machine) / n };
}

/** One autocannon run of `request` against the service at 8 connections, with the CPU it cost per request. */
export async function loadAt(service: Service, durationS: number, request: Record<string, unknown>): Promise<{ result: autocannon.Result; cpu: CpuPerRequest }> {
  const before = cpuTimes(service);
  const result = await autocannon({ url: service.base, connections: CONNECTIONS, duration: durationS, requests: [request] } as unknown as autocannon.Options);
  return { result, cpu: cpuPerRequestSince(service, before, result.requests.total) };
}

/** The bench's purchase: 1.00 USD at a POS in Hong Kong. */
const authorizationBody = (cardId: string) =>
  `{"cardId":"${cardId}","amount":1.00,"currency":"USD","merchantName":"Bench","mcc":"5814","merchantCountry":"HK","channel":"POS"}`;

export async function loadAuthorizations(service: Service, world: World, durationS: number): Promise<LoadSample> {
  let i = 0;
  let declined = 0;
  const before = await approvedCount(service, world);
  const { result, cpu } = await loadAt(service, durationS, {
    method: 'POST',
    path: AUTHORIZE,
    setupRequest: (req: Record<string, unknown>) => {
      const body = authorizationBody(world.cardIds[i++ % world.cardIds.length]);
      return { ...req, body, headers: signed(world, body) };
    },
    onResponse: (_status: number, body: string) => {
      if (!body.includes('"approved":true')) declined++;
    },
  });
  const after = await approvedCount(service, world);
  return {
    serviceCpuMsPerRequest: cpu.service,
    postgresCpuMsPerRequest: cpu.postgres,
    machineCpuMsPerRequest: cpu.machine,
    approvalsPerS: (after - before) / durationS,
    requestsPerS: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    declined,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/**
 * Open-loop load at an evenly paced rate over `CONNECTIONS` keep-alive connections: request k is
 * due at k/rate seconds, whatever the earlier ones did, and its latency counts from that moment (a
 * request waiting for a free connection waits on the clock). autocannon's `overallRate` is not
 * used here: it sends each connection's quota for the second back to back and then pauses, so its
 * "150/s" is bursts of saturation a quarter of a second long.
 */
export async function pacedAuthorizations(service: Service, world: World, durationS: number, rate: number): Promise<LoadSample> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS, scheduling: 'fifo' });
  const target = new URL(AUTHORIZE, service.base);
  let declined = 0;
  let non2xx = 0;
  let errors = 0;
  let i = 0;
  const latencies: number[] = [];
  const before = await approvedCount(service, world);
  const cpuBefore = cpuTimes(service);
  const one = (due: number) => new Promise<void>((resolve) => {
    const body = authorizationBody(world.cardIds[i++ % world.cardIds.length]);
    const req = http.request(target, { method: 'POST', agent, headers: signed(world, body) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        latencies.push(performance.now() - due);
        if ((res.statusCode ?? 0) >= 300) non2xx++;
        else if (!Buffer.concat(chunks).toString('utf8').includes('"approved":true')) declined++;
        resolve();
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (errors++ === 0) console.log(`  (paced load: first transport error ${err.code ?? ''} ${err.message})`);
      resolve();
    });
    req.end(body);
  });
  const started = performance.now();
  const total = Math.round(durationS * rate);
  const pending: Promise<void>[] = [];
  for (let k = 0; k < total; k++) {
    const due = started + (k * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(one(due));
  }
  await Promise.all(pending);
  const elapsedS = (performance.now() - started) / 1000;
  agent.destroy();
  const cpu = cpuPerRequestSince(service, cpuBefore, total);
  const after = await approvedCount(service, world);
  latencies.sort((x, y) => x - y);
  return {
    serviceCpuMsPerRequest: cpu.service,
    postgresCpuMsPerRequest: cpu.postgres,
    machineCpuMsPerRequest: cpu.machine,
    approvalsPerS: (after - before) / elapsedS,
    requestsPerS: total / elapsedS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    declined,
    non2xx,
    errors,
  };
}

const CLOCK_TICKS_PER_S = 100;

/**
 * utime + stime of a process in ms, from /proc (Linux); NaN when unavailable. With `reaped`, also the
 * CPU of its children that ended (cutime + cstime): the postmaster's count of exited backends.
 */
function processCpuMs(pid: number, reaped = false): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + (reaped ? Number(fields[13]) + Number(fields[14]) : 0);
    return (ticks * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return NaN;
  }
}

/**
 * Busy CPU of the whole machine so far (/proc/stat: everything but idle, iowait and steal; both cores), in
 * ms: the load generator, the kernel's loopback work and the partner process included. Per request,
 * it is what the machine pays for one request, steadier than throughput when neighbours share the host.
 */
export function machineCpuMs(): number {
  try {
    // Steal (the host ran someone else) is not this machine's work.
    const [, user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    return ((user + nice + system + irq + softirq) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return NaN;
  }
}

/** CPU used so far by the service process, by every PostgreSQL process and by the whole machine. */
export function cpuTimes(service: Service): { service: number; postgres: number; machine: number } {
  return { service: service.child.pid ? processCpuMs(service.child.pid) : NaN, postgres: postgresCpuMs(), machine: machineCpuMs() };
}

/** The summary line comparing the machine CPU of one request with that of one TPC-B transaction. */
export function costRatioLine(what: string, requestCpuMs: number, tpcbCpuMs: number): string {
  return `  machine CPU (both cores, load generators included) per ${what} ${requestCpuMs.toFixed(2)} ms, per TPC-B transaction ` +
    `${tpcbCpuMs.toFixed(2)} ms: cost ratio ${(tpcbCpuMs / requestCpuMs).toFixed(2)} (steadier than throughput on a shared machine)`;
}

export function pgbench(args: string[]): string {
  const r = spawnSync('pgbench', ['-h', '127.0.0.1', '-U', 'postgres', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pgbench ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

function postgresCpuMs(): number {
  let total = 0;
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') total += processCpuMs(Number(entry), true);
      } catch {
        // the process ended meanwhile
      }
    }
  } catch {
    return NaN;
  }
  return total;
}

/** TPC-B (or `script`'s) transactions per second, and the PostgreSQL CPU per transaction beside it. */
export function pgbenchTps(durationS: number, script: string[] = [], db = PGBENCH_DB): { tps: number; postgresCpuMsPerTx: number; machineCpuMsPerTx: number } {
  const cpuBefore = postgresCpuMs();
  const machineBefore = machineCpuMs();
  const out = pgbench(['-M', 'prepared', '-c', String(CONNECTIONS), '-j', '2', '-T', String(durationS), ...script, db]);
  const cpu = postgresCpuMs() - cpuBefore;
  const machine = machineCpuMs() - machineBefore;
  const m = /tps = ([\d.]+) \(without initial connection time\)/.exec(out) ?? /tps = ([\d.]+)/.exec(out);
  const done = /number of transactions actually processed: (\d+)/.exec(out);
  if (!m || !done) throw new Error(`no tps in pgbench output:\n${out}`);
  return { tps: Number(m[1]), postgresCpuMsPerTx: cpu / Number(done[1]), machineCpuMsPerTx: machine / Number(done[1]) };
}

export async function freshDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
}

const line = (label: string, s: LoadSample) =>
  `${label.padEnd(26)} ${s.approvalsPerS.toFixed(0).padStart(6)} approvals/s  p50 ${s.p50.toFixed(1).padStart(5)} ms  p99 ${s.p99.toFixed(1).padStart(5)} ms  declined ${s.declined}  non-2xx ${s.non2xx}  errors ${s.errors}` +
  `  cpu/request: service ${s.serviceCpuMsPerRequest.toFixed(2)} ms, postgres ${s.postgresCpuMsPerRequest.toFixed(2)} ms, machine ${s.machineCpuMsPerRequest.toFixed(2)} ms`;

/**
 * The decision function alone, without HTTP and Node: pgbench calls card_authorize (1.00 on one of
 * the world's cards, fresh ids) at the same 8 clients. Shows how much of the end-to-end gap to
 * TPC-B is the database work and how much the HTTP path sharing the same two cores.
 */
async function authorizeCallAlone(service: Service, world: World, durationS: number, dir: string): Promise<{ tps: number; postgresCpuMsPerTx: number; machineCpuMsPerTx: number }> {
  await service.db!.query('DROP TABLE IF EXISTS bench_cards');
  await service.db!.query('CREATE TABLE bench_cards (i int PRIMARY KEY, card_id text NOT NULL)');
  await service.db!.query('INSERT INTO bench_cards SELECT n, id FROM unnest($1::text[]) WITH ORDINALITY AS c(id, n)', [world.cardIds]);
  const now = new Date();
  const y = now.getUTCFullYear();
  const m = String(now.getUTCMonth() + 1).padStart(2, '0');
  const keys = `{${y}${m}${String(now.getUTCDate()).padStart(2, '0')},${y}${m},${y}Q${Math.floor(now.getUTCMonth() / 3) + 1},${y}}`;
  const script = path.join(dir, 'card-authorize.sql');
  writeFileSync(script, [
    `\\set i random(1, ${world.cardIds.length})`,
    '\\set r random(1, 999999999999999)',
    `SELECT a.outcome FROM bench_cards c, card_authorize(:partner, c.card_id, 'SANDBOX', 'pgb' || :r, false, 1.00, 'USD', NULL, NULL, 'Bench shop', '5411', 'SG', 'POS', now(), now(), '${keys}'::text[], '{PAYMENT_FROZEN,ACCOUNT_FROZEN}'::text[], 'pbt' || :r, 'pbo' || :r, 'pbp' || :r, 'pbe' || :r, 'pbf' || :r, now() + interval '30 days') a WHERE c.i = :i;`,
    '',
  ].join('\n'));
  return pgbenchTps(durationS, ['-f', script, '-D', `partner=${world.partnerId}`], BENCH_DB);
}

/**
 * The floor of any signed request at the same 8 connections: GET /open-api/v1/service-public-key
 * (authenticate, replay-store write, an answer from memory, no other database work) on the same
 * service, with its machine CPU per request. An approval through HTTP costs at least this plus the
 * decision call, so its cost ratio to TPC-B cannot exceed TPC-B / (floor + call); see boundLines.
 */
export async function signedGetFloor(service: Service, signer: { apiKey: string; secretKey: string }, durationS: number): Promise<{ requestsPerS: number; machineCpuMsPerRequest: number }> {
  const { result, cpu } = await loadAt(service, durationS, {
    method: 'GET',
    path: '/open-api/v1/service-public-key',
    setupRequest: (req: Record<string, unknown>) => ({ ...req, headers: signedHeaders(signer) }),
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`signed GET floor: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { requestsPerS: result.requests.total / durationS, machineCpuMsPerRequest: cpu.machine };
}

/**
 * What the machine's CPU allows (all in machine CPU per operation, both cores, load generators
 * included; on a saturated machine these costs add up): a request through HTTP costs at least the
 * signed-request floor plus the database call, so its cost ratio to TPC-B is at most
 * tpcb / (floor + call), and reaching `target` needs a call of at most tpcb / target - floor.
 */
export function boundLines(what: string, floorMs: number, callMs: number, tpcbMs: number, target: number): string {
  const needed = tpcbMs / target - floorMs;
  return `  machine CPU of a signed GET at ${CONNECTIONS} connections (the floor of any signed request) ${floorMs.toFixed(2)} ms, of the call alone ${callMs.toFixed(2)} ms\n` +
    `  bound for ${what} through HTTP: cost ratio <= ${tpcbMs.toFixed(2)} / (${floorMs.toFixed(2)} + ${callMs.toFixed(2)}) = ${(tpcbMs / (floorMs + callMs)).toFixed(2)} x TPC-B; ` +
    `${target.toFixed(2)} x needs a call of at most ${needed.toFixed(2)} ms = ${(needed / tpcbMs).toFixed(1)} TPC-B transactions (this one: ${(callMs / tpcbMs).toFixed(1)})`;
}

export async function authorizationScenario(): Promise<boolean> {
  if (spawnSync('pgbench', ['--version']).status !== 0) throw new Error('pgbench is missing: apt-get install postgresql-client');
  const pgUrl = await freshDatabase(BENCH_DB);
  await freshDatabase(PGBENCH_DB);
  pgbench(['-i', '-q', '-s', '10', PGBENCH_DB]);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-bench-auth-'));
  const services: Service[] = [];
  try {
    // The PostgreSQL rounds run alone: the embedded service (whose own workers would keep retrying
    // its warm-up's webhook events) starts only after them.
    const pgService = await startService('postgres', 18283, { DATABASE_URL: pgUrl, DATA_DIR: dataDir });
    services.push(pgService);
    console.log(`setting up ${COMPANIES} companies x ${CARDS_PER_COMPANY} funded cards on PostgreSQL ...`);
    const pgWorld = await buildWorld(pgService);
    if (process.env.BENCH_API_ONLY === '1') {
      pgService.child.kill('SIGTERM');
      await new Promise((r) => pgService.child.once('exit', r));
      const apiOnly = await startService('postgres', 18283, { DATABASE_URL: pgUrl, DATA_DIR: dataDir, WORKERS: 'false' });
      pgService.child = apiOnly.child;
      await apiOnly.db?.end();
    }
    await loadAuthorizations(pgService, pgWorld, 2); // warm-up

    const auth: LoadSample[] = [];
    const tps: number[] = [];
    const tpsMachineCpu: number[] = [];
    const callAlone: number[] = [];
    const callAloneCpu: number[] = [];
    const floorCpu: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const a = await loadAuthorizations(pgService, pgWorld, DURATION_S);
      auth.push(a);
      console.log(line(`round ${round} PostgreSQL`, a));
      const t = pgbenchTps(DURATION_S);
      tps.push(t.tps);
      tpsMachineCpu.push(t.machineCpuMsPerTx);
      console.log(`round ${round} pgbench TPC-B          ${t.tps.toFixed(0).padStart(6)} tps  cpu/transaction: postgres ${t.postgresCpuMsPerTx.toFixed(2)} ms, machine ${t.machineCpuMsPerTx.toFixed(2)} ms`);
      const alone = await authorizeCallAlone(pgService, pgWorld, DURATION_S, dataDir);
      callAlone.push(alone.tps);
      callAloneCpu.push(alone.machineCpuMsPerTx);
      console.log(`round ${round} card_authorize alone   ${alone.tps.toFixed(0).padStart(6)} calls/s  cpu/call: postgres ${alone.postgresCpuMsPerTx.toFixed(2)} ms, machine ${alone.machineCpuMsPerTx.toFixed(2)} ms  (pgbench, no HTTP)`);
      const f = await signedGetFloor(pgService, pgWorld, DURATION_S);
      floorCpu.push(f.machineCpuMsPerRequest);
      console.log(`round ${round} signed GET floor       ${f.requestsPerS.toFixed(0).padStart(6)} requests/s  cpu/request: machine ${f.machineCpuMsPerRequest.toFixed(2)} ms`);
    }
    await stopService(pgService);

    const embedded = await startService('embedded', 18284, { DATA_DIR: dataDir });
    services.push(embedded);
    console.log(`setting up the same world on the embedded database ...`);
    const embeddedWorld = await buildWorld(embedded);
    await loadAuthorizations(embedded, embeddedWorld, 2);
    const emb: LoadSample[] = [];
    for (let round = 1; round <= 2; round++) {
      const e = await loadAuthorizations(embedded, embeddedWorld, DURATION_S);
      emb.push(e);
      console.log(line(`round ${round} embedded (PGlite)`, e));
    }
    const approvals = median(auth.map((s) => s.approvalsPerS));
    const p50 = median(auth.map((s) => s.p50));
    const p99 = median(auth.map((s) => s.p99));
    const pgTps = median(tps);
    const ratio = approvals / pgTps;
    console.log(`\nmedian of ${ROUNDS} rounds, ${CONNECTIONS} connections, ${DURATION_S} s each, ${pgWorld.cardIds.length} cards in ${COMPANIES} companies:`);
    console.log(`  PostgreSQL          ${approvals.toFixed(0)} approvals/s  p50 ${p50} ms  p99 ${p99} ms`);
    console.log(`  pgbench TPC-B       ${pgTps.toFixed(0)} tps`);
    console.log(`  ratio               ${ratio.toFixed(2)} x pgbench TPC-B`);
    console.log(`  the decision call alone (pgbench, no HTTP): ${median(callAlone).toFixed(0)} calls/s = ${(median(callAlone) / pgTps).toFixed(2)} x TPC-B`);
    console.log(costRatioLine('approval', median(auth.map((s) => s.machineCpuMsPerRequest)), median(tpsMachineCpu)));
    console.log(boundLines('an approval', median(floorCpu), median(callAloneCpu), median(tpsMachineCpu), 0.4));
    console.log(`  embedded (PGlite)   ${median(emb.map((s) => s.approvalsPerS)).toFixed(0)} approvals/s  p99 ${median(emb.map((s) => s.p99))} ms`);
    const ok = ratio >= 0.4 && p99 < 50 && auth.every((s) => s.non2xx === 0 && s.errors === 0 && s.declined === 0);
    console.log(`target approvals/s >= 0.40 x pgbench TPC-B and p99 < 50 ms: ${ok ? 'MET' : 'NOT MET'}`);
    return ok;
  } finally {
    for (const s of services) await stopService(s);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function stopService(s: Service): Promise<void> {
  await s.db?.end();
  s.db = null;
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  await exited;
}

/** A partner's auth_url in its own process (bench/auth-partner.ts): the SDK handler, approving at once. */
async function localPartner(servicePublicKey: string): Promise<{ url: string; publicKey: string; ownMs(): Promise<{ handler: Map<string, number>; whole: Map<string, number> }>; close(): Promise<void> }> {
  const child = fork(path.join(import.meta.dirname, 'auth-partner.ts'), [], {
    env: { ...process.env, SERVICE_PUBLIC_KEY: servicePublicKey },
    execArgv: ['--import', 'tsx'],
  });
  const ready = await new Promise<{ url: string; publicKey: string }>((resolve) => child.once('message', (m) => resolve(m as { url: string; publicKey: string })));
  return {
    ...ready,
    ownMs: () => new Promise((resolve) => {
      child.once('message', (m) => {
        const times = m as { ownMs: Record<string, number>; wholeMs: Record<string, number> };
        resolve({ handler: new Map(Object.entries(times.ownMs)), whole: new Map(Object.entries(times.wholeMs)) });
      });
      child.send('report');
    }),
    close: () => new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.send('stop');
    }),
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * The host's own floor for one forwarding hop: sequential POSTs of a forwarding-sized body (1 KiB)
 * between two Node processes that do nothing else (bench/floor-client.ts to plain node:http in
 * bench/plain-server.ts) over loopback, paced at the forwarding rate: first with nothing else
 * running, then alongside each round. Waking the other process and back is what every forwarding
 * pays on top of the partner's work, whatever the service does.
 */
interface Floor { p50: number; p99: number; max: number }

/** A floor's figures, or the median of each over the rounds. */
function floorText(floors: Floor[]): string {
  const m = (k: keyof Floor) => median(floors.map((f) => f[k])).toFixed(2);
  return `p50 ${m('p50')} ms  p99 ${m('p99')} ms  max ${m('max')} ms`;
}

/** One paced round, with the floor's bare exchange running alongside it for most of the round. */
function pacedWithFloor(service: Service, world: World, rate: number): Promise<[LoadSample, Floor]> {
  return Promise.all([pacedAuthorizations(service, world, DURATION_S, rate), loopbackFloor(rate, Math.round(DURATION_S * rate * 0.9))]);
}

async function loopbackFloor(rate: number, requests = 400): Promise<Floor> {
  const port = 18290;
  const server = fork(path.join(import.meta.dirname, 'plain-server.ts'), [], { env: { ...process.env, PORT: String(port) }, execArgv: ['--import', 'tsx'] });
  try {
    await new Promise<void>((resolve) => server.once('message', () => resolve()));
    const client = fork(path.join(import.meta.dirname, 'floor-client.ts'), [], {
      env: { ...process.env, PORT: String(port), RATE: String(rate), REQUESTS: String(requests) }, execArgv: ['--import', 'tsx'],
    });
    const times = await new Promise<number[]>((resolve, reject) => {
      client.once('message', (m) => resolve(m as number[]));
      client.once('exit', (code) => reject(new Error(`the floor client exited with ${code} before reporting`)));
    });
    times.sort((x, y) => x - y);
    return { p50: percentile(times, 50), p99: percentile(times, 99), max: times[times.length - 1] };
  } finally {
    server.kill('SIGTERM');
  }
}

export async function forwardingScenario(): Promise<boolean> {
  const pgUrl = await freshDatabase(`${BENCH_DB}_fwd`);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-bench-fwd-'));
  let service: Service | null = null;
  let partner: Awaited<ReturnType<typeof localPartner>> | null = null;
  try {
    service = await startService('postgres', 18285, { DATABASE_URL: pgUrl, DATA_DIR: dataDir });
    console.log(`setting up ${COMPANIES} companies x ${CARDS_PER_COMPANY} funded cards ...`);
    const world = await buildWorld(service);
    if (process.env.BENCH_API_ONLY === '1') {
      const first = service;
      first.child.kill('SIGTERM');
      await new Promise((r) => first.child.once('exit', r));
      const apiOnly = await startService('postgres', 18285, { DATABASE_URL: pgUrl, DATA_DIR: dataDir, WORKERS: 'false' });
      first.child = apiOnly.child;
      await apiOnly.db?.end();
    }
    partner = await localPartner((await world.client.partner.servicePublicKey()).publicKey);
    const setForwarding = async (on: boolean) => {
      await world.admin.updatePartner(world.partnerId, on ? { authUrl: partner!.url, externalPublicKey: partner!.publicKey } : { authUrl: null });
      await sleep(1500); // the service re-reads a partner's auth_url within 1 s
    };
    await loadAuthorizations(service, world, 2);
    await setForwarding(true);
    const capacity = (await loadAuthorizations(service, world, 3)).approvalsPerS;
    const rate = FORWARDING_RATE_SET ?? Math.max(10, Math.round(capacity * FORWARDING_LOAD_SHARE));
    console.log(`forwarded authorizations at saturation (8 connections, closed loop): ${capacity.toFixed(0)}/s; paced rate ${rate}/s${FORWARDING_RATE_SET ? ' (BENCH_FORWARDING_RATE)' : ` (${FORWARDING_LOAD_SHARE * 100} % of it)`}`);
    console.log(`host floor: a bare loopback HTTP exchange between two idle Node processes at ${rate}/s: ${floorText([await loopbackFloor(rate)])}`);
    const plain: LoadSample[] = [];
    const floorUnderLoad: Floor[] = [];
    const floorUnderForwarding: Floor[] = [];
    const forwarded: LoadSample[] = [];
    const recorded: number[] = [];
    const excludingPartner: number[] = [];
    const excludingPartnerServer: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      await setForwarding(false);
      // The same bare exchange as the floor, alongside this round's authorizations: what the host
      // does to any cross-process exchange under this load.
      const [a, loaded] = await pacedWithFloor(service, world, rate);
      floorUnderLoad.push(loaded);
      plain.push(a);
      console.log(line(`round ${round} no auth_url`, a));
      await setForwarding(true);
      const since = new Date();
      const [b, loadedForwarding] = await pacedWithFloor(service, world, rate);
      floorUnderForwarding.push(loadedForwarding);
      forwarded.push(b);
      console.log(line(`round ${round} local auth_url`, b));
      const rows = await service.db!.query(`SELECT trans_id, latency_ms FROM auth_forwardings WHERE created_at >= $1`, [since]);
      const partnerMs = await partner.ownMs();
      for (const r of rows.rows) {
        recorded.push(Number(r.latency_ms));
        const own = partnerMs.handler.get(String(r.trans_id));
        if (own !== undefined) excludingPartner.push(Math.max(0, Number(r.latency_ms) - own));
        const whole = partnerMs.whole.get(String(r.trans_id));
        if (whole !== undefined) excludingPartnerServer.push(Math.max(0, Number(r.latency_ms) - whole));
      }
    }
    const p50a = median(plain.map((s) => s.p50));
    const p99a = median(plain.map((s) => s.p99));
    const p50b = median(forwarded.map((s) => s.p50));
    const p99b = median(forwarded.map((s) => s.p99));
    recorded.sort((x, y) => x - y);
    excludingPartner.sort((x, y) => x - y);
    excludingPartnerServer.sort((x, y) => x - y);
    console.log(`\nmedian of ${ROUNDS} rounds, ${CONNECTIONS} connections at ${rate} requests/s offered, ${DURATION_S} s each:`);
    console.log(`  without auth_url    p50 ${p50a.toFixed(1)} ms  p99 ${p99a.toFixed(1)} ms  ${median(plain.map((s) => s.approvalsPerS)).toFixed(0)} approvals/s`);
    console.log(`  with local auth_url p50 ${p50b.toFixed(1)} ms  p99 ${p99b.toFixed(1)} ms  ${median(forwarded.map((s) => s.approvalsPerS)).toFixed(0)} approvals/s`);
    console.log(`  overhead            p50 ${(p50b - p50a).toFixed(1)} ms  p99 ${(p99b - p99a).toFixed(1)} ms`);
    console.log(`  host floor under the load without auth_url (the bare exchange alongside): ${floorText(floorUnderLoad)}`);
    console.log(`  recorded forwarding latency (${recorded.length} forwardings): p50 ${percentile(recorded, 50)} ms  p99 ${percentile(recorded, 99)} ms`);
    const p99Own = percentile(excludingPartner, 99);
    console.log(`  the same minus the partner's own time: p50 ${percentile(excludingPartner, 50).toFixed(1)} ms  p99 ${p99Own.toFixed(1)} ms`);
    // Informative: what is left when the partner's whole server time (from the request's arrival in
    // its HTTP server to its answer written, queueing behind its other requests included) is taken out.
    console.log(`  the same minus the partner's server time (arrival to answer): p50 ${percentile(excludingPartnerServer, 50).toFixed(1)} ms  p99 ${percentile(excludingPartnerServer, 99).toFixed(1)} ms`);
    // The bound: a forwarding's leg holds one cross-process HTTP exchange, so its p99 cannot be
    // below that of a bare exchange between two idle processes run alongside the same load.
    const floorP99 = median(floorUnderForwarding.map((f) => f.p99));
    console.log(`  host floor under the forwarding load (the bare exchange alongside): ${floorText(floorUnderForwarding)}`);
    console.log(`  bound: the leg holds one such exchange, so its p99 cannot be expected below the floor's ${floorP99.toFixed(2)} ms (${floorP99 < 5 ? 'below' : 'not below'} the 5 ms target); the leg's p99 minus the partner's own time is ${Math.abs(p99Own - floorP99).toFixed(1)} ms ${p99Own >= floorP99 ? 'above' : 'below'} it`);
    const ok = p99Own < 5 && forwarded.every((s) => s.declined === 0 && s.errors === 0);
    console.log(`target forwarding overhead excluding the partner's own time p99 < 5 ms at ${CONNECTIONS} connections: ${ok ? 'MET' : 'NOT MET'}`);
    return ok;
  } finally {
    await partner?.close();
    await service?.db?.end();
    service?.child.kill('SIGTERM');
    await sleep(1000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
