import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Shared by the bench, the tests and the HA rehearsal: how the service runs, and where PostgreSQL's binaries are. */

/**
 * The checkout's root: the nearest folder above this file with a package.json. The same from the
 * source (ops/) and from its compiled copy (dist/ops/, which the tests run; dist/ has no package.json).
 */
export const ROOT = checkoutRoot(import.meta.dirname);

function checkoutRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/**
 * The node arguments of `npm start` as package.json declares them (`exec node <args...>`: compiled
 * JavaScript from dist/ and its V8 flags), so whatever spawns the service runs what production runs.
 */
export function startArgs(): string[] {
  const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start;
  const m = /^exec node (.+)$/.exec(start);
  if (!m) throw new Error(`package.json start script is not "exec node ...": ${start}`);
  return m[1].split(/\s+/);
}

/** The newest PostgreSQL server binaries installed from Debian (/usr/lib/postgresql/<version>/bin). */
export function pgBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql)');
  return path.join(root, versions[0], 'bin');
}

/**
 * Waits until `url` answers 2xx (a service's /readyz, etcd's /health), polling every 200 ms with a
 * 1 s deadline per attempt; throws after `timeoutMs`. The bench, the tests and the HA rehearsal share it.
 */
export async function waitReady(url: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await fetch(url, { signal: AbortSignal.timeout(1000) }).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not ready within ${timeoutMs} ms`);
}
