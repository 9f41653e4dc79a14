/**
 * Same-run A/B of the signed POSTs of issue 34: an approval (POST /open-api/sandbox/v1/simulate/authorization
 * over the authorization scenario's 200 funded cards) or a credit (POST /user-asset/v1/credit over 1,000
 * users), on PostgreSQL at the scenarios' 8 connections. Services from different builds (or node flags)
 * run on one database with the same partner (AB_DATABASE=per-target: each on a database of its own, for builds
 * whose database functions or tables differ, since the last service to start applies its own); each round loads every service once, the order rotated
 * each round; every line has the CPU per request of the service process, of PostgreSQL and of the
 * whole machine (/proc). Run by hand under the host's CPU lock, e.g. with a copy of the previous build:
 *   cp -r dist .tmp/dist-old && npm run build
 *   AB_SCENARIO=authorization AB_TARGETS='old=--max-semi-space-size=4 --heap-growing-percent=10 --expose-gc .tmp/dist-old/src/main.js serve;new=--max-semi-space-size=4 --heap-growing-percent=10 --expose-gc dist/src/main.js serve' \
 *     BENCH_ROUNDS=6 BENCH_DURATION_S=5 npx tsx bench/ab-post.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { waitReady } from '../ops/runtime.ts';
import {
  ADMIN_TOKEN, buildWorld, freshDatabase, loadAt, loadAuthorizations, median, ROUNDS, DURATION_S, stopService, type Service,
} from './lib/authorizations.ts';
import { signedHeaders } from './lib/signing.ts';

const scenario = process.env.AB_SCENARIO ?? 'authorization';
if (scenario !== 'authorization' && scenario !== 'user-assets') throw new Error('AB_SCENARIO is authorization or user-assets');
const specs = (process.env.AB_TARGETS ?? '').split(';').filter(Boolean).map((s) => {
  const at = s.indexOf('=');
  return { name: s.slice(0, at), args: s.slice(at + 1).trim().split(/\s+/) };
});
if (specs.length < 2) throw new Error('AB_TARGETS names at least two services: name=node args;name=node args');

interface Sample { perS: number; p99: number; bad: number; service: number; postgres: number; machine: number }

async function start(name: string, args: string[], port: number, env: Record<string, string>): Promise<Service> {
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN, MASTER_KEY: 'cd'.repeat(32), RATE_LIMIT_MAX: '10000000',
      PREAUTH_RATE_LIMIT_MAX: '10000000', ADMIN_RATE_LIMIT_MAX: '10000000', WORKERS: 'true', LOG_LEVEL: 'warn', ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/readyz`, 90_000);
  return { name, base, child };
}

let sequence = 0;
const run = Date.now().toString(36);
async function loadCredits(service: Service, signer: { apiKey: string; secretKey: string }, durationS: number): Promise<Sample> {
  let bad = 0;
  const { result, cpu } = await loadAt(service, durationS, {
    method: 'POST',
    path: '/user-asset/v1/credit',
    setupRequest: (req: Record<string, unknown>) => {
      const n = sequence++;
      const body = `{"externalTranId":"ab-${run}-${n}","asset":"USDT","amount":1.000000000000000001,"externalUserId":"bench-user-${n % 1000}"}`;
      return { ...req, body, headers: { 'content-type': 'application/json', ...signedHeaders(signer, body) } };
    },
    onResponse: (_status: number, body: string) => {
      if (!body.includes('"code":"SYS_SUCCESS"')) bad++;
    },
  });
  return { perS: result.requests.total / durationS, p99: result.latency.p99, bad: bad + result.errors, service: cpu.service, postgres: cpu.postgres, machine: cpu.machine };
}

const perTarget = process.env.AB_DATABASE === 'per-target';
const pgUrl = perTarget ? '' : await freshDatabase('h34s_ab_post');
const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-ab-post-'));
const services: Service[] = [];
try {
  let port = 18480;
  for (const spec of specs) {
    const url = perTarget ? await freshDatabase(`h34s_ab_post_${spec.name.replace(/\W/g, '_')}`) : pgUrl;
    services.push(await start(spec.name, spec.args, port++, { DATABASE_URL: url, DATA_DIR: dataDir }));
  }
  // One world (partner, cards or users) on the shared database, or one per target's database.
  const worldOf = <W>(make: (s: Service) => Promise<W>): Promise<(s: Service) => W> => (async () => {
    const made = new Map<Service, W>();
    for (const s of perTarget ? services : [services[0]]) made.set(s, await make(s));
    return (s: Service) => made.get(s) ?? made.get(services[0])!;
  })();
  let loadOne: (s: Service, durationS: number) => Promise<Sample>;
  if (scenario === 'authorization') {
    const world = await worldOf((s) => buildWorld(s));
    loadOne = async (s, d) => {
      const a = await loadAuthorizations(s, world(s), d);
      return { perS: a.approvalsPerS, p99: a.p99, bad: a.declined + a.non2xx + a.errors, service: a.serviceCpuMsPerRequest, postgres: a.postgresCpuMsPerRequest, machine: a.machineCpuMsPerRequest };
    };
  } else {
    const signer = await worldOf(async (s) => {
      const res = await fetch(`${s.base}/internal/admin/v1/partners`, {
        method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'ab-post' }),
      });
      return ((await res.json()) as { data: { apiKey: string; secretKey: string } }).data;
    });
    loadOne = (s, d) => loadCredits(s, signer(s), d);
  }
  for (const s of services) await loadOne(s, 3); // warm-up (the credits' first use creates the users)
  const samples = new Map<string, Sample[]>(services.map((s) => [s.name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    const order = services.map((_, i) => services[(i + round - 1) % services.length]);
    for (const s of order) {
      const x = await loadOne(s, DURATION_S);
      samples.get(s.name)!.push(x);
      console.log(`round ${round} ${s.name.padEnd(10)} ${x.perS.toFixed(0).padStart(6)}/s  p99 ${String(x.p99).padStart(4)} ms  bad ${x.bad}  cpu/request: service ${x.service.toFixed(3)} ms, postgres ${x.postgres.toFixed(3)} ms, machine ${x.machine.toFixed(3)} ms`);
    }
  }
  console.log(`\n${scenario}: median of ${ROUNDS} rounds (order rotated each round), ${DURATION_S} s each, 8 connections`);
  for (const s of services) {
    const list = samples.get(s.name)!;
    const med = (f: (x: Sample) => number) => median(list.map(f));
    console.log(`${s.name.padEnd(10)} ${med((x) => x.perS).toFixed(0).padStart(6)}/s  p99 ${med((x) => x.p99)} ms  cpu/request: service ${med((x) => x.service).toFixed(3)} ms, postgres ${med((x) => x.postgres).toFixed(3)} ms, machine ${med((x) => x.machine).toFixed(3)} ms`);
  }
} finally {
  for (const s of services) await stopService(s);
  rmSync(dataDir, { recursive: true, force: true });
}
