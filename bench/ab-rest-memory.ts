/**
 * Issue 27: heap and resident memory of compiled services at rest (started as `npm start` runs them,
 * on one fresh PostgreSQL database, the OTLP receiver bench/lib/otlp-receiver.mjs in a process of its
 * own), one service at a time, in rotated rounds. Each target: `name|ENV=V,ENV=V|dist folder`; `@OTLP`
 * in a value is the receiver's address. Each service runs alone: ready, one admin request, AB_REST_S
 * seconds of rest (default 3), then two full collections (`gc()`, the start flags expose it) and
 * `process.memoryUsage()`, read by a preloaded probe on SIGUSR2. Run by hand:
 *   AB_REST='off||dist;main|OTEL_EXPORTER_OTLP_ENDPOINT=@OTLP|/tmp/main/dist;new|OTEL_EXPORTER_OTLP_ENDPOINT=@OTLP|dist' \
 *     BENCH_ROUNDS=5 flock /tmp/cardsvc-cpu.lock npx tsx bench/ab-rest-memory.ts
 */
import { fork, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitReady } from '../ops/runtime.ts';
import { ADMIN_TOKEN, freshBenchDatabase, median, ROUNDS } from './lib/signed-get.ts';

const REST_S = Number(process.env.AB_REST_S ?? 3);
const dir = mkdtempSync(path.join(tmpdir(), 'rest-memory-'));
const probe = path.join(dir, 'probe.mjs');
writeFileSync(probe, `import { writeFileSync } from 'node:fs';
process.on('SIGUSR2', () => { globalThis.gc(); globalThis.gc(); writeFileSync(process.env.REST_MEMORY_OUT, JSON.stringify(process.memoryUsage())); });\n`);

const rec = fork(new URL('./lib/otlp-receiver.mjs', import.meta.url).pathname, [], { stdio: 'inherit' });
const recPort = await new Promise<number>((ok) => rec.once('message', (m: { port: number }) => ok(m.port)));
const otlp = `http://127.0.0.1:${recPort}`;
const { pgUrl, dataDir } = await freshBenchDatabase();
const specs = (process.env.AB_REST ?? '').split(';').filter(Boolean).map((s) => {
  const [name, envs, dist] = s.split('|');
  const env: Record<string, string> = {};
  for (const kv of (envs ?? '').split(',').filter(Boolean)) { const i = kv.indexOf('='); env[kv.slice(0, i)] = kv.slice(i + 1).replace('@OTLP', otlp); }
  return { name, env, dist: dist || 'dist' };
});

async function once(spec: (typeof specs)[number]): Promise<{ heapMB: number; rssMB: number }> {
  const out = path.join(dir, `${spec.name}.json`);
  const child = spawn(process.execPath, ['--import', probe, '--max-semi-space-size=4', '--heap-growing-percent=10', '--expose-gc', `${spec.dist}/src/main.js`, 'serve'], {
    env: { ...process.env, PORT: '18490', HOST: '127.0.0.1', ADMIN_TOKEN, MASTER_KEY: 'ab'.repeat(32), WORKERS: 'false', DATABASE_URL: pgUrl, DATA_DIR: dataDir, REST_MEMORY_OUT: out, ...spec.env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((ok) => child.once('exit', ok));
  await waitReady('http://127.0.0.1:18490/readyz');
  await fetch('http://127.0.0.1:18490/internal/admin/v1/partners', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  await new Promise((ok) => setTimeout(ok, REST_S * 1000));
  child.kill('SIGUSR2');
  while (!existsSync(out)) await new Promise((ok) => setTimeout(ok, 50));
  await new Promise((ok) => setTimeout(ok, 50));
  const m = JSON.parse(readFileSync(out, 'utf8')) as NodeJS.MemoryUsage;
  child.kill('SIGTERM');
  await exited;
  rmSync(out);
  return { heapMB: m.heapUsed / 1e6, rssMB: m.rss / 1e6 };
}

const results = new Map<string, { heapMB: number[]; rssMB: number[] }>();
for (let round = 1; round <= ROUNDS; round++) {
  const shift = (round - 1) % specs.length;
  for (const spec of [...specs.slice(shift), ...specs.slice(0, shift)]) {
    const r = await once(spec);
    const acc = results.get(spec.name) ?? { heapMB: [], rssMB: [] };
    results.set(spec.name, acc);
    acc.heapMB.push(r.heapMB); acc.rssMB.push(r.rssMB);
    console.log(`round ${round} ${spec.name.padEnd(10)} heap ${r.heapMB.toFixed(1)} MB  rss ${r.rssMB.toFixed(1)} MB`);
  }
}
console.log('\nmedians:');
for (const [name, r] of results) console.log(`${name.padEnd(10)} heap ${median(r.heapMB).toFixed(1)} MB (${Math.min(...r.heapMB).toFixed(1)}-${Math.max(...r.heapMB).toFixed(1)})  rss ${median(r.rssMB).toFixed(1)} MB (${Math.min(...r.rssMB).toFixed(1)}-${Math.max(...r.rssMB).toFixed(1)})`);
rec.disconnect();
rec.kill();
process.exit(0);
