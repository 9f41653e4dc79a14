import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ROOT, startArgs, waitReady as waitReadyUrl } from '../../ops/runtime.ts';

/** The checkout's root, from the source or from its compiled copy in dist/ (which `npm test` runs). */
export { ROOT };

/** The compiled entry point: tests that run the CLI or the service run what production runs (issue 28, 33). */
export const MAIN_JS = path.join(ROOT, 'dist', 'src', 'main.js');

/** Set by test/run.ts once it has built dist/, so files under `npm test` do not build it again. */
export const DIST_BUILT_ENV = 'TEST_DIST_BUILT';

/**
 * Compiles the service (incremental `tsc`, as `npm ci` does through `prepare`) so dist/ is current.
 * Skipped under `npm test`, which built it before starting the files.
 */
export function buildService(): void {
  if (process.env[DIST_BUILT_ENV] === '1') return;
  const r = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm run build failed: ${r.stdout}${r.stderr}`);
}

export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['DATABASE_URL', 'ADMIN_TOKEN', 'MASTER_KEY', 'CARDSVC_ENV', 'PORT', 'DATA_DIR', 'NODE_OPTIONS']) delete env[name];
  return { ...env, ...extra };
}

export interface RunningService {
  child: ChildProcess;
  base: string;
  output(): string;
  exited: Promise<number | null>;
}

/** Waits for the service at `base` to answer /readyz (ops/runtime.ts). */
export function waitReady(base: string, timeoutMs = 60_000): Promise<void> {
  return waitReadyUrl(`${base}/readyz`, timeoutMs);
}

export interface StartOptions {
  /** Node arguments before `npm start`'s own (a preload, say). */
  nodeArgs?: string[];
  /** Inherited variables whose names match are left out, so only those `env` names reach the service (OTEL_*, say). */
  dropInherited?: RegExp;
}

/**
 * Spawns exactly what `npm start` runs (compiled JavaScript, no TypeScript loader), and waits for
 * /readyz; a service that never gets ready is killed, and the error carries its output.
 */
export async function startCompiled(env: Record<string, string>, port: number, options: StartOptions = {}): Promise<RunningService> {
  const full = cleanEnv({ ...env, PORT: String(port), HOST: '127.0.0.1' });
  const { dropInherited } = options;
  if (dropInherited) for (const name of Object.keys(full)) if (dropInherited.test(name) && !(name in env)) delete full[name];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...startArgs()], { cwd: ROOT, env: full });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitReady(base);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}\n${out}`);
  }
  return { child, base, output: () => out, exited };
}
