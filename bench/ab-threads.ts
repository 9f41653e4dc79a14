/**
 * Issue 27: CPU per request of each thread of services under the signed-GET load (the main thread, the
 * export worker, V8's GC helper threads; from /proc/<pid>/task), with the whole machine's and the context
 * switches per request, in rotated rounds on one PostgreSQL database. The OTLP receiver (bench/lib/otlp-receiver.mjs)
 * runs in a process of its own. Each target: `name|ENV=V,ENV=V|dist folder|extra node flags`; `@OTLP` in a
 * value is the receiver's address. Threads are keyed by their offset from the process id (node:N). Run by hand:
 *   AB_THREADS='m||dist;t|OTEL_EXPORTER_OTLP_ENDPOINT=@OTLP|dist;t2|OTEL_EXPORTER_OTLP_ENDPOINT=@OTLP|/tmp/other-dist' \
 *     BENCH_ROUNDS=3 BENCH_DURATION_S=5 flock /tmp/cardsvc-cpu.lock npx tsx bench/ab-threads.ts
 * AB_THREADS_GC=1 writes each service's stdout with --trace-gc to $TMPDIR/gc-<name>.log; AB_THREADS_PERF=1
 * records `perf record -g` of each service's first round to $TMPDIR/perf-<name>.data (add --perf-basic-prof).
 */
import { spawn, fork } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readFileSync, readdirSync, openSync } from 'node:fs';
import { waitReady } from '../ops/runtime.ts';
import { ADMIN_TOKEN, freshBenchDatabase, load, median, ROUNDS, DURATION_S, type Target } from './lib/signed-get.ts';
import { machineCpuMs } from './lib/cpu.ts';

const rec = fork(new URL('./lib/otlp-receiver.mjs', import.meta.url).pathname, [], { stdio: 'inherit' });
const recPort = await new Promise<number>((ok) => rec.once('message', (m: { port: number }) => ok(m.port)));
const otlp = `http://127.0.0.1:${recPort}`;
const { pgUrl, dataDir } = await freshBenchDatabase();
const specs = (process.env.AB_THREADS ?? '').split(';').filter(Boolean).map((s) => {
  const [name, envs, dist, flags] = s.split('|');
  const env: Record<string, string> = {};
  for (const kv of (envs ?? '').split(',').filter(Boolean)) { const i = kv.indexOf('='); env[kv.slice(0, i)] = kv.slice(i + 1).replace('@OTLP', otlp); }
  return { name, env, dist: dist || 'dist', flags: (flags ?? '').split(' ').filter(Boolean) };
});
const targets: (Target & { pid: number })[] = [];
let port = 18390;
for (const spec of specs) {
  const args = [...(process.env.AB_THREADS_GC ? ['--trace-gc'] : []), ...spec.flags, '--max-semi-space-size=4', '--heap-growing-percent=10', '--expose-gc', `${spec.dist}/src/main.js`, 'serve'];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN, MASTER_KEY: 'ab'.repeat(32), RATE_LIMIT_MAX: '10000000', PREAUTH_RATE_LIMIT_MAX: '10000000', ADMIN_RATE_LIMIT_MAX: '10000000', WORKERS: 'false', DATABASE_URL: pgUrl, DATA_DIR: dataDir, ...spec.env },
    stdio: ['ignore', process.env.AB_THREADS_GC ? openSync(path.join(tmpdir(), `gc-${spec.name}.log`), 'w') : 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/readyz`);
  const res = await fetch(`${base}/internal/admin/v1/partners`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `p-${spec.name}` }) });
  const { data } = (await res.json()) as { data: { apiKey: string; secretKey: string } };
  targets.push({ name: spec.name, port, child, pid: child.pid!, signer: { apiKey: data.apiKey, secretKey: data.secretKey } });
  port++;
}
interface ThreadStat { comm: string; ticks: number; utime: number; stime: number; vcs: number; nvcs: number }
function threads(pid: number): Map<string, ThreadStat> {
  const m = new Map<string, ThreadStat>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const raw = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = raw.slice(raw.indexOf('(') + 1, raw.lastIndexOf(')'));
      const f = raw.slice(raw.lastIndexOf(') ') + 2).split(' ');
      const st = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      const vcs = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(st)![1]);
      const nvcs = Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(st)![1]);
      m.set(tid, { comm: tid === String(pid) ? 'MAIN' : comm, ticks: Number(f[11]) + Number(f[12]), utime: Number(f[11]), stime: Number(f[12]), vcs, nvcs });
    } catch {}
  }
  return m;
}
const out = new Map<string, Record<string, number[]>>();
for (const t of targets) await load(t, 2);
for (let round = 1; round <= ROUNDS; round++) {
  const shift = (round - 1) % targets.length;
  for (const t of [...targets.slice(shift), ...targets.slice(0, shift)]) {
    const a = threads(t.pid); const m0 = machineCpuMs();
    const perf = process.env.AB_THREADS_PERF && round === 1 ? spawn('perf', ['record', '-F', '1999', '-g', '-p', String(t.pid), '-o', path.join(tmpdir(), `perf-${t.name}.data`)], { stdio: 'ignore' }) : null;
    const s = await load(t, DURATION_S);
    if (perf) { perf.kill('SIGINT'); await new Promise((ok) => perf.once('exit', ok)); }
    const b = threads(t.pid); const m1 = machineCpuMs();
    const n = s.rps * DURATION_S;
    const groups: Record<string, number> = {};
    let vcs = 0, nvcs = 0;
    for (const [tid, x] of b) {
      const y: ThreadStat = a.get(tid) ?? { comm: x.comm, ticks: 0, vcs: 0, nvcs: 0, utime: 0, stime: 0 };
      const key = x.comm === 'MAIN' ? 'MAIN' : `${x.comm}:${Number(tid) - t.pid}`;
      groups[key] = (groups[key] ?? 0) + ((x.ticks - y.ticks) * 10_000) / n;
      if (key === 'MAIN') groups['MAIN.sys'] = ((x.stime - y.stime) * 10_000) / n;
      vcs += x.vcs - y.vcs; nvcs += x.nvcs - y.nvcs;
    }
    groups.total = Object.entries(groups).filter(([k]) => k !== 'MAIN.sys').reduce((p, [, v]) => p + v, 0);
    groups.machine = ((m1 - m0) * 1000) / n;
    groups.rps = s.rps; groups.vcsPerReq = vcs / n; groups.nvcsPerReq = nvcs / n;
    const rec = out.get(t.name) ?? {}; out.set(t.name, rec);
    for (const [k, v] of Object.entries(groups)) (rec[k] ??= []).push(v);
    console.log(`round ${round} ${t.name.padEnd(12)} ${Object.entries(groups).map(([k, v]) => `${k} ${v.toFixed(k.startsWith('vcs') || k.startsWith('nvcs') ? 3 : 1)}`).join('  ')}`);
  }
}
console.log('\nmedians:');
for (const [name, rec] of out) console.log(`${name.padEnd(12)} ${Object.entries(rec).map(([k, v]) => `${k} ${median(v).toFixed(k.includes('cs') ? 3 : 1)}`).join('  ')}`);
rec.send('count');
const r = await new Promise<{ requests: number; bytes: number; cpuMs: number }>((ok) => rec.once('message', ok)); console.log(`OTLP receiver: ${r.requests} export requests, ${(r.bytes / 1_048_576).toFixed(1)} MiB, ${(r.cpuMs / 1000).toFixed(1)} s CPU`);
for (const t of targets) t.child.kill('SIGTERM');
rec.disconnect();
rec.kill();
process.exit(0);
