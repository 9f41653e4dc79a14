/**
 * npm run bench [-- --scenario=signed-get|authorization|forwarding|user-assets|observability|all] (default all; --help).
 *
 * signed-get: in one run and alternating rounds, load (autocannon, 50 connections)
 *   1. plain node:http returning a 100-byte JSON,
 *   2. the service on the embedded database answering a signed GET that reads one row,
 *   3. the service on PostgreSQL (shared replay store) answering the same signed GET,
 * and print requests/s, p99 and the ratio to plain node:http (median of the rounds).
 * Targets (issue 2): signed GET on PostgreSQL >= 0.25 x plain node:http, p99 < 25 ms.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { authorizationScenario, forwardingScenario } from './authorization.ts';
import { residentMb, serviceArgs } from './service-args.ts';
import { signedHeaders } from './signing.ts';
import { userAssetScenario } from './user-assets.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const CONNECTIONS = 50;
const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BENCH_DB = 'cardsvc_bench';
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const MASTER_KEY = 'ab'.repeat(32);
const SETTINGS = '/open-api/partner/v1/settings';

interface Target {
  name: string;
  port: number;
  child: ChildProcess;
  signer?: { apiKey: string; secretKey: string };
  /** Spawn to /readyz answering, ms. */
  readyMs?: number;
}

async function waitFor(url: string, timeoutMs = 60_000): Promise<void> {
  const start = Date.now();
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() - start > timeoutMs) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function startService(name: string, port: number, env: Record<string, string>): Promise<Target> {
  // Exactly what `npm start` runs (compiled, its V8 flags); BENCH_CPU_PROFILE_DIR as in the other scenarios.
  const child = spawn(process.execPath, serviceArgs(), {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN, MASTER_KEY, RATE_LIMIT_MAX: '10000000', PREAUTH_RATE_LIMIT_MAX: '10000000', ADMIN_RATE_LIMIT_MAX: '10000000', WORKERS: 'true', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const spawnedAt = Date.now();
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/readyz`);
  const readyMs = Date.now() - spawnedAt;
  const res = await fetch(`${base}/internal/admin/v1/partners`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `bench-${name}` }),
  });
  const { data } = (await res.json()) as { data: { apiKey: string; secretKey: string } };
  return { name, port, child, signer: { apiKey: data.apiKey, secretKey: data.secretKey }, readyMs };
}

async function startPlain(port: number): Promise<Target> {
  const child = fork(path.join(import.meta.dirname, 'plain-server.ts'), [], {
    env: { ...process.env, PORT: String(port) },
    execArgv: ['--import', 'tsx'],
  });
  await new Promise<void>((resolve) => child.once('message', () => resolve()));
  return { name: 'plain node:http', port, child };
}

interface Sample {
  rps: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function load(target: Target, durationS: number): Promise<Sample> {
  const result = await autocannon({
    url: `http://127.0.0.1:${target.port}`,
    connections: CONNECTIONS,
    duration: durationS,
    requests: [{
      method: 'GET',
      path: target.signer ? SETTINGS : '/',
      setupRequest: (req: Record<string, unknown>) => ({ ...req, headers: target.signer ? signedHeaders(target.signer) : {} }),
    }],
  } as unknown as autocannon.Options);
  return { rps: result.requests.average, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors };
}

/** ROUNDS rounds of DURATION_S each, the targets alternating within a round; every sample printed. */
async function alternatingRounds(targets: Target[]): Promise<Map<string, Sample[]>> {
  const samples = new Map<string, Sample[]>(targets.map((t) => [t.name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const t of targets) {
      const s = await load(t, DURATION_S);
      samples.get(t.name)!.push(s);
      console.log(`round ${round} ${t.name.padEnd(18)} ${s.rps.toFixed(0).padStart(7)} req/s  p99 ${String(s.p99).padStart(4)} ms  non-2xx ${s.non2xx}  errors ${s.errors}`);
    }
  }
  return samples;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A new empty `cardsvc_bench` database on BENCH_PG_URL's server and a fresh embedded data folder. */
async function freshBenchDatabase(): Promise<{ pgUrl: string; dataDir: string }> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DB}`);
  await admin.query(`CREATE DATABASE ${BENCH_DB}`);
  await admin.end();
  const pgUrl = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${BENCH_DB}`);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-bench-'));
  return { pgUrl, dataDir };
}

async function signedGetScenario(): Promise<boolean> {
  const { pgUrl, dataDir } = await freshBenchDatabase();

  const targets: Target[] = [];
  try {
    targets.push(await startPlain(18181));
    targets.push(await startService('embedded (PGlite)', 18182, { DATA_DIR: dataDir }));
    // Issue 28: the PostgreSQL instance measured is the second start on the database, so it starts on
    // an already migrated schema (the first one applies the migrations and stops).
    const migrating = await startService('PostgreSQL (migrating)', 18183, { DATABASE_URL: pgUrl, DATA_DIR: dataDir });
    migrating.child.kill('SIGTERM');
    await new Promise((r) => migrating.child.once('exit', r));
    const onPg = await startService('PostgreSQL', 18183, { DATABASE_URL: pgUrl, DATA_DIR: dataDir });
    targets.push(onPg);
    await new Promise((r) => setTimeout(r, 2000));
    const atRest = residentMb(onPg.child.pid!);
    for (const t of targets) await load(t, 2); // warm-up (JIT, pools, caches)

    const samples = await alternatingRounds(targets);

    const plainRps = median(samples.get(targets[0].name)!.map((s) => s.rps));
    console.log(`\nmedian of ${ROUNDS} rounds, ${CONNECTIONS} connections, ${DURATION_S} s each:`);
    console.log('target              req/s    p99 ms  x plain node:http');
    let failed = false;
    for (const t of targets) {
      const list = samples.get(t.name)!;
      const rps = median(list.map((s) => s.rps));
      const p99 = median(list.map((s) => s.p99));
      const bad = list.reduce((n, s) => n + s.non2xx + s.errors, 0);
      console.log(`${t.name.padEnd(18)} ${rps.toFixed(0).padStart(7)}  ${String(p99).padStart(7)}  ${(rps / plainRps).toFixed(2).padStart(6)}${bad ? `  (${bad} failed requests!)` : ''}`);
      if (bad) failed = true;
      if (t.name === 'PostgreSQL') {
        const ok = rps / plainRps >= 0.25 && p99 < 25;
        console.log(`\ntarget signed GET on PostgreSQL >= 0.25 x plain and p99 < 25 ms: ${ok ? 'MET' : 'NOT MET'}`);
      }
    }
    // Issue 28: resident memory of the PostgreSQL instance at rest (2 s after ready, before any
    // traffic) and its peak over the warm-up and every round of 50 connections of signed traffic.
    const peak = residentMb(onPg.child.pid!).peak;
    const memoryOk = atRest.now <= 100 && peak <= 160 && onPg.readyMs! <= 2000;
    console.log(`service on PostgreSQL (compiled, as npm start): ready ${onPg.readyMs} ms after spawn on a migrated database; resident ${atRest.now.toFixed(0)} MB at rest, ${peak.toFixed(0)} MB at peak under ${CONNECTIONS} connections`);
    console.log(`target ready <= 2 s, resident <= 100 MB at rest and <= 160 MB at peak: ${memoryOk ? 'MET' : 'NOT MET'}`);
    return !failed;
  } finally {
    for (const t of targets) t.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Issue 27: the cost of observability on signed requests, in one run and alternating rounds, three
 * services on one PostgreSQL database answering the signed GET of signed-get:
 *   1. metrics and traces off (METRICS_ENABLED=false, no OTLP endpoint),
 *   2. metrics on (scraped every 5 s as Prometheus would), traces off,
 *   3. metrics on and traces exported over OTLP/HTTP protobuf to a local receiver (every request sampled),
 *   4. the same with 10 % of the requests sampled (OTEL_TRACES_SAMPLER=parentbased_traceidratio), for reference.
 * Targets: metrics cost at most 5 % of (1); traces (3) cost at most 15 % of (2).
 */
async function observabilityScenario(): Promise<boolean> {
  const { pgUrl, dataDir } = await freshBenchDatabase();
  // The local OTLP receiver: counts the export requests and their bytes, answers 200.
  const received = { requests: 0, bytes: 0 };
  const receiver = http.createServer((req, res) => {
    received.requests++;
    req.on('data', (c: Buffer) => { received.bytes += c.length; });
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
  const otlp = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const targets: Target[] = [];
  const scrapers: NodeJS.Timeout[] = [];
  try {
    const common = { DATABASE_URL: pgUrl, DATA_DIR: dataDir, WORKERS: 'false' };
    targets.push(await startService('both off', 18191, { ...common, METRICS_ENABLED: 'false' }));
    targets.push(await startService('metrics on', 18192, common));
    targets.push(await startService('metrics + traces', 18193, { ...common, OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }));
    targets.push(await startService('+ traces 10 %', 18194, {
      ...common, OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1',
    }));
    for (const t of targets.slice(1)) {
      scrapers.push(setInterval(() => {
        fetch(`http://127.0.0.1:${t.port}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.text(), () => '');
      }, 5_000));
    }
    for (const t of targets) await load(t, 2); // warm-up
    const samples = await alternatingRounds(targets);
    const rps = (name: string) => median(samples.get(name)!.map((s) => s.rps));
    console.log(`\nmedian of ${ROUNDS} rounds, ${CONNECTIONS} connections, ${DURATION_S} s each, signed GET on PostgreSQL:`);
    for (const t of targets) {
      console.log(`${t.name.padEnd(18)} ${rps(t.name).toFixed(0).padStart(7)} req/s  p99 ${String(median(samples.get(t.name)!.map((s) => s.p99))).padStart(4)} ms`);
    }
    const metricsCost = 1 - rps('metrics on') / rps('both off');
    const tracesCost = 1 - rps('metrics + traces') / rps('metrics on');
    console.log(`OTLP receiver: ${received.requests} export requests, ${(received.bytes / 1_048_576).toFixed(1)} MiB`);
    console.log(`metrics cost ${(metricsCost * 100).toFixed(1)} % of both off (target <= 5 %): ${metricsCost <= 0.05 ? 'MET' : 'NOT MET'}`);
    console.log(`traces cost ${(tracesCost * 100).toFixed(1)} % of metrics on (target <= 15 %): ${tracesCost <= 0.15 ? 'MET' : 'NOT MET'}`);
    console.log(`traces cost with 10 % of requests sampled: ${((1 - rps('+ traces 10 %') / rps('metrics on')) * 100).toFixed(1)} % of metrics on`);
    const bad = [...samples.values()].flat().reduce((n, s) => n + s.non2xx + s.errors, 0);
    if (bad) console.log(`(${bad} failed requests!)`);
    return bad === 0 && received.requests > 0;
  } finally {
    for (const s of scrapers) clearInterval(s);
    for (const t of targets) t.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const SCENARIOS: Record<string, () => Promise<boolean>> = {
  'signed-get': signedGetScenario,
  authorization: authorizationScenario,
  forwarding: forwardingScenario,
  'user-assets': userAssetScenario,
  observability: observabilityScenario,
};
const USAGE = `usage: npm run bench [-- --scenario=${Object.keys(SCENARIOS).join('|')}|all]
  signed-get     signed GET vs plain node:http (issue 2)
  authorization  simulate/authorization vs pgbench TPC-B on PostgreSQL, embedded beside it (issue 10)
  forwarding     auth_url forwarding overhead with a local partner (issue 12)
  user-assets    signed /user-asset/v1/credit (1,000 users) vs pgbench TPC-B, embedded beside it (issue 11)
  observability  signed GET with metrics and OTLP traces on vs off (issue 27)
environment: BENCH_ROUNDS (3), BENCH_DURATION_S (8), BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/test)`;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return;
  }
  const chosen = args.find((a) => a.startsWith('--scenario='))?.slice('--scenario='.length) ?? 'all';
  const unknown = args.find((a) => !a.startsWith('--scenario='));
  if (unknown !== undefined || (chosen !== 'all' && !SCENARIOS[chosen])) {
    console.error(`bench: unknown ${unknown !== undefined ? `option ${unknown}` : `scenario ${chosen}`}\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  let ok = true;
  for (const [name, run] of Object.entries(SCENARIOS)) {
    if (chosen !== 'all' && chosen !== name) continue;
    console.log(`\n=== ${name} ===`);
    ok = (await run()) && ok;
  }
  if (!ok) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
