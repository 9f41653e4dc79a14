/**
 * Same-run A/B of the signed GET (issue 34): services started with different node flags (or from
 * different builds) on one PostgreSQL database, loaded in alternating rounds like the signed-get
 * scenario (autocannon, 50 connections), each line with the machine's and the service's CPU per
 * request (BENCH_ROUNDS, BENCH_DURATION_S), then each service's peak resident memory. Run by hand:
 *   AB_TARGETS='a=--max-semi-space-size=4 --heap-growing-percent=10 --expose-gc dist/src/main.js serve;b=...' npx tsx bench/ab-get.ts
 */
import { spawn } from 'node:child_process';
import { waitReady } from '../ops/runtime.ts';
import { residentMb } from './lib/service-args.ts';
import { ADMIN_TOKEN, alternatingRounds, freshBenchDatabase, load, median, ROUNDS, type Target } from './lib/signed-get.ts';

const specs = (process.env.AB_TARGETS ?? '').split(';').filter(Boolean).map((s) => {
  const [name, args] = s.split('=', 2).length === 2 ? [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)] : [s, s];
  return { name, args: args.trim().split(/\s+/) };
});
const { pgUrl, dataDir } = await freshBenchDatabase();
const targets: Target[] = [];
let port = 18290;
for (const spec of specs) {
  const child = spawn(process.execPath, spec.args, {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN, MASTER_KEY: 'ab'.repeat(32), RATE_LIMIT_MAX: '10000000', PREAUTH_RATE_LIMIT_MAX: '10000000', ADMIN_RATE_LIMIT_MAX: '10000000', WORKERS: 'true', DATABASE_URL: pgUrl, DATA_DIR: dataDir },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/readyz`);
  const res = await fetch(`${base}/internal/admin/v1/partners`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `ab-${spec.name}` }),
  });
  const { data } = (await res.json()) as { data: { apiKey: string; secretKey: string } };
  targets.push({ name: spec.name, port, child, signer: { apiKey: data.apiKey, secretKey: data.secretKey } });
  port++;
}
try {
  await new Promise((r) => setTimeout(r, 2000));
  for (const t of targets) console.log(`${t.name}: resident at rest ${residentMb(t.child.pid!).now.toFixed(0)} MB`);
  for (const t of targets) await load(t, 2);
  const samples = await alternatingRounds(targets, true);
  console.log(`\nmedian of ${ROUNDS} rounds (order rotated each round):`);
  for (const t of targets) {
    const list = samples.get(t.name)!;
    const med = (f: (s: (typeof list)[number]) => number) => median(list.map(f));
    console.log(`${t.name.padEnd(18)} ${med((s) => s.rps).toFixed(0).padStart(7)} req/s  p99 ${med((s) => s.p99)} ms  CPU/request: service ${med((s) => s.serviceUs).toFixed(0)} µs, machine ${med((s) => s.machineUs).toFixed(0)} µs`);
  }
  for (const t of targets) console.log(`${t.name}: resident peak ${residentMb(t.child.pid!).peak.toFixed(0)} MB`);
} finally {
  for (const t of targets) t.child.kill('SIGTERM');
}
