/**
 * Shared by the authorization, forwarding and user-assets scenarios (bench/scenarios/): the service
 * as `npm start` runs it, a world of funded cards, loads at 8 connections with their CPU per
 * request (Linux /proc), pgbench and fresh databases.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import { AdminClient, CardServiceClient, decimal } from '../../sdk/index.ts';
import { waitReady } from '../../ops/runtime.ts';
import { machineCpuMs, processCpuMs } from './cpu.ts';
import { serviceArgs } from './service-args.ts';
import { signedHeaders } from './signing.ts';

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
export const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
export const CONNECTIONS = 8;
export const COMPANIES = 40;
export const CARDS_PER_COMPANY = 5;
const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const PGBENCH_DB = 'pgbench_bench';
export const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const MASTER_KEY = 'cd'.repeat(32);
const AUTHORIZE = '/open-api/sandbox/v1/simulate/authorization';
export interface Service {
  name: string;
  base: string;
  child: ChildProcess;
}

export interface World {
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
  /** Busy CPU of the whole machine per request (all cores, load generator included). */
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
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startService(name: string, port: number, env: Record<string, string>): Promise<Service> {
  const child = spawn(process.execPath, serviceArgs(), {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN, MASTER_KEY, RATE_LIMIT_MAX: '10000000', PREAUTH_RATE_LIMIT_MAX: '10000000', ADMIN_RATE_LIMIT_MAX: '10000000', WORKERS: 'true', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/readyz`, 90_000);
  return { name, base, child };
}

/** 40 companies, an approved employee each, 5 shared cards each, pools funded far beyond the run. */
export async function buildWorld(service: Service): Promise<World> {
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

/** Authorizations of the world's partner that were not declined (they stay PENDING during a run), read through the API. */
async function approvedCount(world: World): Promise<number> {
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
  const before = await approvedCount(world);
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
  const after = await approvedCount(world);
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
  const before = await approvedCount(world);
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
  const after = await approvedCount(world);
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

/** CPU used so far by the service process, by every PostgreSQL process and by the whole machine. */
export function cpuTimes(service: Service): { service: number; postgres: number; machine: number } {
  return { service: service.child.pid ? processCpuMs(service.child.pid) : NaN, postgres: postgresCpuMs(), machine: machineCpuMs() };
}

/** The summary line comparing the machine CPU of one request with that of one TPC-B transaction. */
export function costRatioLine(what: string, requestCpuMs: number, tpcbCpuMs: number): string {
  return `  machine CPU (all cores, load generators included) per ${what} ${requestCpuMs.toFixed(2)} ms, per TPC-B transaction ` +
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
export function pgbenchTps(durationS: number, script: string[] = [], db = PGBENCH_DB, clients = CONNECTIONS): { tps: number; postgresCpuMsPerTx: number; machineCpuMsPerTx: number } {
  const cpuBefore = postgresCpuMs();
  const machineBefore = machineCpuMs();
  const out = pgbench(['-M', 'prepared', '-c', String(clients), '-j', String(Math.min(2, clients)), '-T', String(durationS), ...script, db]);
  const cpu = postgresCpuMs() - cpuBefore;
  const machine = machineCpuMs() - machineBefore;
  const m = /tps = ([\d.]+) \(without initial connection time\)/.exec(out) ?? /tps = ([\d.]+)/.exec(out);
  const done = /number of transactions actually processed: (\d+)/.exec(out);
  if (!m || !done) throw new Error(`no tps in pgbench output:\n${out}`);
  return { tps: Number(m[1]), postgresCpuMsPerTx: cpu / Number(done[1]), machineCpuMsPerTx: machine / Number(done[1]) };
}

/**
 * The pgbench script of `card_authorize` alone (issue 34): 1.00 USD on one of the world's cards at
 * random, fresh ids, as the sandbox calls it; the partner is pgbench's variable `partner`.
 */
export function cardAuthorizeScript(world: World, dir: string): string {
  const script = path.join(dir, 'card-authorize.sql');
  writeFileSync(script, [
    `\\set i random(1, ${world.cardIds.length})`,
    '\\set r random(1, 999999999999999)',
    `SELECT a.outcome FROM card_authorize(:partner, (ARRAY[${world.cardIds.map((id) => `'${id}'`).join(',')}]::text[])[:i], 'SANDBOX', 'pgb' || :r, false, 1.00, 'USD', NULL, NULL, 'Bench shop', '5411', 'SG', 'POS', now(), now(), '{PAYMENT_FROZEN,ACCOUNT_FROZEN}'::text[], 'pbt' || :r, 'pbo' || :r, 'pbp' || :r, 'pbe' || :r, 'pbf' || :r, now() + interval '30 days') a;`,
    '',
  ].join('\n'));
  return script;
}

/**
 * The pgbench script of `card_authorize_batch` (issue 34): `size` authorizations of 1.00 USD in one
 * call, on consecutive cards of the world's list (so on different companies, as the bench's requests
 * go), fresh ids, as the service's authorization lane sends them.
 */
export function cardAuthorizeBatchScript(world: World, dir: string, size: number): string {
  const script = path.join(dir, `card-authorize-batch-${size}.sql`);
  const n = world.cardIds.length;
  const same = (value: string) => `array_fill(${value}, ARRAY[${size}])`;
  const ids = (prefix: string) => `(SELECT array_agg('${prefix}' || :r || '_' || g ORDER BY g) FROM generate_series(1, ${size}) g)`;
  writeFileSync(script, [
    `\\set i random(0, ${n - 1})`,
    '\\set r random(1, 999999999999999)',
    `SELECT count(*) FROM card_authorize_batch(p_partner_id => ${same(':partner::text')}, ` +
      `p_card_id => (SELECT array_agg(c[1 + ((:i + g) % ${n})] ORDER BY g) FROM (SELECT ARRAY[${world.cardIds.map((id) => `'${id}'`).join(',')}]::text[] AS c) s, generate_series(0, ${size - 1}) g), ` +
      `p_source => ${same("'SANDBOX'::text")}, p_network_id => ${ids('pgb')}, p_replay_guard => ${same('false')}, ` +
      `p_amount => ${same('1.00::numeric')}, p_currency => ${same("'USD'::text")}, p_billing_amount => ${same('NULL::numeric')}, ` +
      `p_billing_currency => ${same('NULL::text')}, p_merchant_name => ${same("'Bench shop'::text")}, p_mcc => ${same("'5411'::text")}, ` +
      `p_country => ${same("'SG'::text")}, p_channel => ${same("'POS'::text")}, p_now => ${same('now()')}, p_transaction_time => ${same('now()')}, ` +
      `p_blockers => '{PAYMENT_FROZEN,ACCOUNT_FROZEN}'::text[], p_trans_id => ${ids('pbt')}, p_outstanding_id => ${ids('pbo')}, ` +
      `p_posting_id => ${ids('pbp')}, p_event_id => ${ids('pbe')}, p_alert_event_id => ${ids('pbf')}, ` +
      `p_expiry_due_at => ${same("now() + interval '30 days'")}, p_decision_token => ${same('NULL::text')}, ` +
      `p_default_deadline_ms => ${same('2000')}, p_decision_grace_ms => ${same('5000')});`,
    '',
  ].join('\n'));
  return script;
}

/** Items decided and database calls made so far by one of the service's lanes (`authorization`, `user_asset`), from its /metrics. */
export async function laneCalls(service: Service, lane: string): Promise<{ decided: number; calls: number }> {
  const text = await (await fetch(`${service.base}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
  const value = (name: string) => Number(new RegExp(`^${name} ([\\d.e+]+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { decided: value(`${lane}_batch_size_sum`), calls: value(`${lane}_batch_size_count`) };
}

/** Items per database call between two laneCalls readings. */
export function perCall(before: { decided: number; calls: number }, after: { decided: number; calls: number }): string {
  return ((after.decided - before.decided) / (after.calls - before.calls)).toFixed(1);
}

export async function freshDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
}

export const line = (label: string, s: LoadSample) =>
  `${label.padEnd(26)} ${s.approvalsPerS.toFixed(0).padStart(6)} approvals/s  p50 ${s.p50.toFixed(1).padStart(5)} ms  p99 ${s.p99.toFixed(1).padStart(5)} ms  declined ${s.declined}  non-2xx ${s.non2xx}  errors ${s.errors}` +
  `  cpu/request: service ${s.serviceCpuMsPerRequest.toFixed(2)} ms, postgres ${s.postgresCpuMsPerRequest.toFixed(2)} ms, machine ${s.machineCpuMsPerRequest.toFixed(2)} ms`;

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
 * What the machine's CPU allows (all in machine CPU per operation, all cores, load generators
 * included; on a saturated machine these costs add up): a request through HTTP costs at least the
 * signed-request floor plus the database call, so its cost ratio to TPC-B is at most
 * tpcb / (floor + call), and reaching `target` needs a call of at most tpcb / target - floor.
 */
/** The CPU figures a round of the authorization and user-assets scenarios takes beside its HTTP load. */
export interface CostRounds {
  tps: number[];
  tpsMachineCpu: number[];
  callAlone: number[];
  callAloneCpu: number[];
  floorCpu: number[];
}

export function costRounds(): CostRounds {
  return { tps: [], tpsMachineCpu: [], callAlone: [], callAloneCpu: [], floorCpu: [] };
}

type PgbenchFigures = { tps: number; postgresCpuMsPerTx: number; machineCpuMsPerTx: number };

/**
 * One round's references, printed and kept: pgbench TPC-B, the scenario's database call alone
 * (`callName`, through pgbench), and the floor of any signed request on `service`.
 */
export async function costRound(
  into: CostRounds, round: number, callName: string, callAlone: () => PgbenchFigures | Promise<PgbenchFigures>,
  service: Service, signer: { apiKey: string; secretKey: string }, durationS: number,
): Promise<void> {
  const t = pgbenchTps(durationS);
  into.tps.push(t.tps);
  into.tpsMachineCpu.push(t.machineCpuMsPerTx);
  console.log(`round ${round} pgbench TPC-B          ${t.tps.toFixed(0).padStart(6)} tps  cpu/transaction: postgres ${t.postgresCpuMsPerTx.toFixed(2)} ms, machine ${t.machineCpuMsPerTx.toFixed(2)} ms`);
  const alone = await callAlone();
  into.callAlone.push(alone.tps);
  into.callAloneCpu.push(alone.machineCpuMsPerTx);
  console.log(`round ${round} ${callName.padEnd(22)} ${alone.tps.toFixed(0).padStart(6)} calls/s  cpu/call: postgres ${alone.postgresCpuMsPerTx.toFixed(2)} ms, machine ${alone.machineCpuMsPerTx.toFixed(2)} ms  (pgbench, no HTTP)`);
  const f = await signedGetFloor(service, signer, durationS);
  into.floorCpu.push(f.machineCpuMsPerRequest);
  console.log(`round ${round} signed GET floor       ${f.requestsPerS.toFixed(0).padStart(6)} requests/s  cpu/request: machine ${f.machineCpuMsPerRequest.toFixed(2)} ms`);
}

/**
 * The PostgreSQL summary of the authorization and user-assets scenarios: throughput against TPC-B,
 * the database call alone, the CPU cost ratio and the bound it allows. Returns the TPC-B ratio.
 */
export function printCostSummary(cost: CostRounds, o: {
  unit: string; one: string; aOne: string; callKind: string; perS: number; p50: number; p99: number; machineCpuMsPerRequest: number; target: number;
}): number {
  const pgTps = median(cost.tps);
  const ratio = o.perS / pgTps;
  console.log(`  PostgreSQL          ${o.perS.toFixed(0)} ${o.unit}/s  p50 ${o.p50} ms  p99 ${o.p99} ms`);
  console.log(`  pgbench TPC-B       ${pgTps.toFixed(0)} tps`);
  console.log(`  ratio               ${ratio.toFixed(2)} x pgbench TPC-B`);
  console.log(`  the ${o.callKind} call alone (pgbench, no HTTP): ${median(cost.callAlone).toFixed(0)} calls/s = ${(median(cost.callAlone) / pgTps).toFixed(2)} x TPC-B`);
  console.log(costRatioLine(o.one, o.machineCpuMsPerRequest, median(cost.tpsMachineCpu)));
  console.log(boundLines(o.aOne, median(cost.floorCpu), median(cost.callAloneCpu), median(cost.tpsMachineCpu), o.target));
  return ratio;
}

export function boundLines(what: string, floorMs: number, callMs: number, tpcbMs: number, target: number): string {
  const needed = tpcbMs / target - floorMs;
  return `  machine CPU of a signed GET at ${CONNECTIONS} connections (the floor of any signed request) ${floorMs.toFixed(2)} ms, of the call alone ${callMs.toFixed(2)} ms\n` +
    `  bound for ${what} through HTTP: cost ratio <= ${tpcbMs.toFixed(2)} / (${floorMs.toFixed(2)} + ${callMs.toFixed(2)}) = ${(tpcbMs / (floorMs + callMs)).toFixed(2)} x TPC-B; ` +
    `${target.toFixed(2)} x needs a call of at most ${needed.toFixed(2)} ms = ${(needed / tpcbMs).toFixed(1)} TPC-B transactions (this one: ${(callMs / tpcbMs).toFixed(1)})`;
}

export async function stopService(s: Service): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  await exited;
}

export function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
