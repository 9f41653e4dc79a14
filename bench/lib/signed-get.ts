import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { waitReady } from '../../ops/runtime.ts';
import { machineCpuMs, processCpuMs } from './cpu.ts';
import { serviceArgs } from './service-args.ts';
import { signedHeaders } from './signing.ts';

/** Shared by the signed-get and observability scenarios: services answering a signed GET, loaded in alternating rounds. */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
export const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
export const CONNECTIONS = 50;
const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BENCH_DB = 'cardsvc_bench';
export const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const MASTER_KEY = 'ab'.repeat(32);
const SETTINGS = '/open-api/partner/v1/settings';

export interface Target {
  name: string;
  port: number;
  child: ChildProcess;
  signer?: { apiKey: string; secretKey: string };
  /** Spawn to /readyz answering, ms. */
  readyMs?: number;
}

export async function startService(name: string, port: number, env: Record<string, string>): Promise<Target> {
  // Exactly what `npm start` runs (compiled, its V8 flags); BENCH_CPU_PROFILE_DIR as in the other scenarios.
  const child = spawn(process.execPath, serviceArgs(), {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN, MASTER_KEY, RATE_LIMIT_MAX: '10000000', PREAUTH_RATE_LIMIT_MAX: '10000000', ADMIN_RATE_LIMIT_MAX: '10000000', WORKERS: 'true', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const spawnedAt = Date.now();
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/readyz`);
  const readyMs = Date.now() - spawnedAt;
  const res = await fetch(`${base}/internal/admin/v1/partners`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `bench-${name}` }),
  });
  const { data } = (await res.json()) as { data: { apiKey: string; secretKey: string } };
  return { name, port, child, signer: { apiKey: data.apiKey, secretKey: data.secretKey }, readyMs };
}

export async function startPlain(port: number): Promise<Target> {
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

export async function load(target: Target, durationS: number): Promise<Sample> {
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

/** A round's sample with the CPU per request answered: of the target's process, and of the whole machine (/proc). */
export interface MeasuredSample extends Sample {
  serviceUs: number;
  machineUs: number;
}

/**
 * ROUNDS rounds of DURATION_S each, the targets alternating within a round; every sample printed with
 * its CPU per request. The order changes every round, so no target is always first or always after the
 * same neighbour: reversed every second round, or with `rotate` (A/B runs of several targets) each round
 * starting one target later.
 */
export async function alternatingRounds(targets: Target[], rotate = false): Promise<Map<string, MeasuredSample[]>> {
  const samples = new Map<string, MeasuredSample[]>(targets.map((t) => [t.name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    const shift = (round - 1) % targets.length;
    const order = rotate ? [...targets.slice(shift), ...targets.slice(0, shift)] : round % 2 === 0 ? [...targets].reverse() : targets;
    for (const t of order) {
      const [service0, machine0] = [processCpuMs(t.child.pid!), machineCpuMs()];
      const s = await load(t, DURATION_S);
      const requests = s.rps * DURATION_S;
      const serviceUs = ((processCpuMs(t.child.pid!) - service0) / requests) * 1e3;
      const machineUs = ((machineCpuMs() - machine0) / requests) * 1e3;
      samples.get(t.name)!.push({ ...s, serviceUs, machineUs });
      console.log(`round ${round} ${t.name.padEnd(18)} ${s.rps.toFixed(0).padStart(7)} req/s  p99 ${String(s.p99).padStart(4)} ms  non-2xx ${s.non2xx}  errors ${s.errors}  CPU/request: service ${serviceUs.toFixed(0)} µs, machine ${machineUs.toFixed(0)} µs`);
    }
  }
  return samples;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A new empty `cardsvc_bench` database on BENCH_PG_URL's server and a fresh embedded data folder. */
export async function freshBenchDatabase(): Promise<{ pgUrl: string; dataDir: string }> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DB}`);
  await admin.query(`CREATE DATABASE ${BENCH_DB}`);
  await admin.end();
  const pgUrl = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${BENCH_DB}`);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-bench-'));
  return { pgUrl, dataDir };
}

