/**
 * `npm test`: the whole suite, or the files given (`npm test -- test/auth.test.ts`).
 *
 * Issue 33: the run pays once for what every file needs, then runs the files in parallel.
 * 1. Builds dist/ when a source is newer: tests that start the CLI or the service spawn compiled code.
 * 2. Migrates a template database once per schema version (cached between runs, see
 *    helpers/template.ts); each test process starts from a copy of it, a database of its own.
 *    On PostgreSQL the whole-suite run leaves out the files whose first line is
 *    `// test-database: none`: they never open the test database, and the embedded pass runs them.
 * 3. Runs each file in a process of its own (`node --test`), TEST_CONCURRENCY at a time (default:
 *    one per CPU plus one: a file on the embedded database is CPU-bound, but several files wait on
 *    processes they start, a database they stop or a job's timer, and one more file fills that idle
 *    CPU; more would let a burst of signed requests miss the service's 5-second signing window),
 *    longest first, and prints a summary with the slowest files.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { buildForTests, compiledPath } from './helpers/build-tests.ts';
import { DIST_BUILT_ENV } from './helpers/compiled-service.ts';
import { dropStalePgliteTemplates, dropStalePostgresTemplates, removeOrphanCopies, PG_TEMPLATE_ENV, PGLITE_TEMPLATE_ENV, pgliteTemplate, postgresTemplate } from './helpers/template.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * Files that take longest start first, so that the run does not end waiting on one of them alone.
 * Any file not named here runs after these, in name order.
 */
const LONGEST_FIRST = [
  'sdk-package.test.ts',
  'authorization-property.test.ts',
  'runtime.test.ts',
  'console-browser.test.ts',
  'managed-balance-property.test.ts',
  'authorization-crash.test.ts',
  'cli.test.ts',
  'velocity-oracle.test.ts',
  'process.test.ts',
  'observability-metrics.test.ts',
  'openapi-examples.test.ts',
];

/**
 * The first line of a file that the PostgreSQL pass of the whole suite leaves out (the embedded pass
 * runs every file):
 * - `// test-database: none (why)`: it never opens the test database, so both passes would run the same test;
 * - `// test-database: once (what it tests; ... on both databases by: a, b)`: it opens the database only as
 *   the service's store while it tests something else (a package, a command line, a document, a browser,
 *   another language), and every service behaviour it relies on is asserted on both databases by the
 *   files it names (checked below: they exist and run on both).
 */
const EMBEDDED_ONLY = /^\/\/ test-database: (none|once)\b(.*)/;

function step(label: string, started: number): void {
  console.log(`# ${label} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}

async function main(): Promise<number> {
  const started = performance.now();
  const built = buildForTests();
  if (built.written + built.removed > 0) step(`dist/ brought up to date (${built.written} files compiled or copied, ${built.removed} removed)`, started);

  const env: NodeJS.ProcessEnv = { ...process.env, [DIST_BUILT_ENV]: '1' };
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const name = await postgresTemplate(url);
    await dropStalePostgresTemplates(url, name);
    env[PG_TEMPLATE_ENV] = name;
    step(`PostgreSQL template ${name} ready`, started);
  } else {
    const dir = await pgliteTemplate();
    dropStalePgliteTemplates(dir);
    env[PGLITE_TEMPLATE_ENV] = dir;
    step(`embedded template ${path.relative(tmpdir(), dir)} ready`, started);
  }

  const given = process.argv.slice(2);
  let files = given.length > 0 ? given : orderedFiles();
  if (url && given.length === 0) {
    const once = embeddedOnly(files);
    files = files.filter((f) => !once.none.includes(f) && !once.once.includes(f));
    console.log(`# not run again on PostgreSQL (they never open the test database; the embedded pass runs them): ${once.none.map((f) => path.basename(f)).join(', ')}`);
    console.log(`# not run again on PostgreSQL (the database only stores what they test; the files they name test that on both): ${once.once.map((f) => path.basename(f)).join(', ')}`);
  }
  const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? availableParallelism() + 1));
  const results = await runPool(files, concurrency, env);
  const total = { tests: 0, pass: 0, fail: 0, skipped: 0, cancelled: 0, todo: 0 };
  for (const r of results) for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += r.counts[k] ?? 0;
  const failed = results.filter((r) => r.code !== 0);
  removeOrphanCopies();
  console.log('\n# slowest files:');
  for (const r of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 8)) console.log(`#   ${r.seconds.toFixed(1).padStart(6)} s  ${r.file}`);
  console.log(`# ${Object.entries(total).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  for (const r of failed) console.log(`# FAILED: ${r.file} (exit code ${r.code})`);
  step(`${files.length} files, ${concurrency} at a time${failed.length ? `, ${failed.length} failed` : ''}`, started);
  return failed.length > 0 || total.fail > 0 ? 1 : 0;
}

interface FileResult { file: string; code: number; seconds: number; counts: Record<string, number> }

/**
 * Runs each file in a process of its own (`node --test`, TAP), `concurrency` at a time, longest
 * first, and prints each file's output whole when it ends, so parallel files never interleave.
 */
async function runPool(files: string[], concurrency: number, env: NodeJS.ProcessEnv): Promise<FileResult[]> {
  const queue = [...files];
  const results: FileResult[] = [];
  const worker = async (): Promise<void> => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const begun = performance.now();
      // The compiled file, run directly: node:test reports in TAP and exits non-zero when a test fails.
      const child = spawn(process.execPath, ['--enable-source-maps', '--test-reporter=tap', compiledPath(file)], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (out += c));
      const code = await new Promise<number>((resolve) => child.on('close', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
      const seconds = (performance.now() - begun) / 1000;
      const counts: Record<string, number> = {};
      for (const m of out.matchAll(/^# (tests|pass|fail|skipped|cancelled|todo) (\d+)$/gm)) counts[m[1]] = Number(m[2]);
      process.stdout.write(`\n# ===== ${file} (${seconds.toFixed(1)} s, exit code ${code}) =====\n${out}`);
      results.push({ file, code, seconds, counts });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
  return results;
}

/** The files that the PostgreSQL pass leaves out, by their first line (EMBEDDED_ONLY); a wrong mark stops the run. */
function embeddedOnly(files: string[]): { none: string[]; once: string[] } {
  const marks = new Map(files.map((f) => [f, EMBEDDED_ONLY.exec(readFileSync(path.join(ROOT, f), 'utf8').split('\n', 1)[0])]));
  const none: string[] = [];
  const once: string[] = [];
  for (const [f, m] of marks) {
    if (!m) continue;
    const text = readFileSync(path.join(ROOT, f), 'utf8');
    if (m[1] === 'none') {
      if (/helpers\/service\.ts'|TEST_DATABASE_URL/.test(text)) throw new Error(`${f} says test-database: none but uses the test database`);
      none.push(f);
      continue;
    }
    const named = /on both databases by: ([a-z0-9, -]+)\)/.exec(m[2])?.[1].split(',').map((n) => n.trim()).filter(Boolean) ?? [];
    if (named.length === 0) throw new Error(`${f} says test-database: once but names no file that tests its database work on both databases ("on both databases by: a, b)")`);
    for (const n of named) {
      const twin = path.join('test', `${n}.test.ts`);
      if (!marks.has(twin)) throw new Error(`${f} names ${n}, which is not a test file (test/${n}.test.ts)`);
      if (marks.get(twin)) throw new Error(`${f} names ${n}, which itself runs on the embedded database only`);
    }
    once.push(f);
  }
  return { none, once };
}

function orderedFiles(): string[] {
  const all = readdirSync(path.join(ROOT, 'test')).filter((f) => f.endsWith('.test.ts')).sort();
  const first = LONGEST_FIRST.filter((f) => all.includes(f));
  return [...first, ...all.filter((f) => !first.includes(f))].map((f) => path.join('test', f));
}

process.exitCode = await main();
