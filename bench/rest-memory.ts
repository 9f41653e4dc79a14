/**
 * Resident memory at rest of several builds or flag sets (issue 28): each target's service is started
 * REST_STARTS times (default 5), the targets interleaved, on one migrated PostgreSQL database, with the
 * environment of the signed-get scenario; resident memory (VmRSS, and its anonymous and file-backed
 * parts) is read 2 s and 6 s after /readyz answers, then the service is stopped. Run by hand, a target
 * per build or flag set (node arguments as in package.json's start script):
 *   REST_TARGETS='main=--expose-gc /tmp/main-dist/src/main.js serve;branch=--expose-gc dist/src/main.js serve' npx tsx bench/rest-memory.ts
 * Without REST_TARGETS: `npm start`'s own arguments once.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startArgs, waitReady } from '../ops/runtime.ts';
import { ADMIN_TOKEN, freshBenchDatabase } from './lib/signed-get.ts';

const STARTS = Number(process.env.REST_STARTS ?? 5);
const specs = (process.env.REST_TARGETS ?? `npm-start=${startArgs().join(' ')}`).split(';').filter(Boolean).map((s) => ({
  name: s.slice(0, s.indexOf('=')), args: s.slice(s.indexOf('=') + 1).trim().split(/\s+/), samples: [] as number[][],
}));

function resident(pid: number): number[] {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return ['VmRSS', 'RssAnon', 'RssFile'].map((f) => Number(new RegExp(`^${f}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const { pgUrl, dataDir } = await freshBenchDatabase();
const env = { ...process.env, PORT: '18280', HOST: '127.0.0.1', ADMIN_TOKEN, MASTER_KEY: 'ab'.repeat(32), WORKERS: 'true', DATABASE_URL: pgUrl, DATA_DIR: dataDir };
// The first start migrates the fresh database; every measured start finds it migrated, as in the scenario.
for (let i = 0; i <= STARTS; i++) {
  for (const spec of i % 2 ? [...specs].reverse() : specs) {
    const child = spawn(process.execPath, spec.args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
    await waitReady('http://127.0.0.1:18280/readyz');
    await sleep(2000);
    const at2 = resident(child.pid!);
    await sleep(4000);
    const at6 = resident(child.pid!);
    if (i > 0) spec.samples.push([...at2, at6[0]]);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    if (i === 0) break;
  }
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
for (const s of specs) {
  const col = (k: number) => s.samples.map((x) => x[k]);
  console.log(`${s.name.padEnd(20)} at 2 s: ${col(0).map((x) => x.toFixed(1)).join(' ')}  mean ${mean(col(0)).toFixed(1)} MB (anon ${mean(col(1)).toFixed(1)}, file ${mean(col(2)).toFixed(1)}); at 6 s mean ${mean(col(3)).toFixed(1)} MB`);
}
