import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../../ops/runtime.ts';

/**
 * Issue 33: `npm test` runs compiled JavaScript, not TypeScript through a loader. Loading tsx in each
 * test process and sending every import through its hooks cost about 1.8 CPU-seconds per file (of
 * about 7 for a small file); plain node on the compiled copy pays nothing of it.
 *
 * Each TypeScript file under these folders is transpiled on its own (syntax only, like tsx; types are
 * checked by `tsc --noEmit`, which CI runs first) into dist/ at the same relative path, with a source
 * map, and only when its source is newer than its output: after the first run a change costs
 * milliseconds. The service's other files (SQL, JSON) are copied beside its JavaScript, as
 * `npm run build` does, so dist/src is also what `npm start` and the tests that spawn the service
 * run. Outputs whose source is gone are removed (a deleted migration never runs from a stale copy).
 */
const SOURCE_DIRS = ['src', 'sdk', 'test', 'ops'];
/** Never compiled: the SDK package's own build and installs. */
const SKIPPED = new Set(['node_modules', 'dist']);
export const BUILD_DIR = path.join(ROOT, 'dist');

const COMPILER_OPTIONS: ts.CompilerOptions = {
  // The options of tsconfig.build.json that change the emitted JavaScript.
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  esModuleInterop: true,
  rewriteRelativeImportExtensions: true,
  sourceMap: true,
};

/**
 * A stamp of what decides the output besides the sources: these options, the compiler's version and
 * this file. When it changes, everything is transpiled again.
 */
function stamp(): string {
  return createHash('sha256')
    .update(JSON.stringify(COMPILER_OPTIONS)).update(ts.version)
    .update(readFileSync(path.join(ROOT, 'test', 'helpers', 'build-tests.ts')))
    .digest('hex');
}

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED.has(e.name)) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

const mtime = (p: string): number => (existsSync(p) ? statSync(p).mtimeMs : -1);

/** The compiled path of a source file: test/auth.test.ts -> dist/test/auth.test.js. */
export function compiledPath(source: string): string {
  const rel = path.relative(ROOT, path.resolve(ROOT, source));
  return path.join(BUILD_DIR, rel.replace(/\.ts$/, '.js'));
}

/** Brings dist/ up to date with the sources. Returns how many files it wrote and removed. */
export function buildForTests(): { written: number; removed: number } {
  const stampFile = path.join(BUILD_DIR, '.test-build-stamp');
  const current = stamp();
  const fresh = existsSync(stampFile) && readFileSync(stampFile, 'utf8') === current;
  let written = 0;
  const expected = new Set<string>();
  for (const dir of SOURCE_DIRS) {
    for (const source of walk(path.join(ROOT, dir))) {
      const rel = path.relative(ROOT, source);
      if (source.endsWith('.d.ts')) continue;
      if (source.endsWith('.ts')) {
        const js = path.join(BUILD_DIR, rel.replace(/\.ts$/, '.js'));
        expected.add(js).add(`${js}.map`);
        if (fresh && mtime(js) >= mtime(source)) continue;
        const { outputText, sourceMapText } = ts.transpileModule(readFileSync(source, 'utf8'), {
          fileName: source, compilerOptions: COMPILER_OPTIONS, reportDiagnostics: false,
        });
        mkdirSync(path.dirname(js), { recursive: true });
        // The map points back to the source file in the checkout.
        const map = JSON.parse(sourceMapText!) as { sources: string[]; sourceRoot?: string };
        map.sources = [path.relative(path.dirname(js), source)];
        delete map.sourceRoot;
        writeFileSync(`${js}.map`, JSON.stringify(map));
        writeFileSync(js, outputText);
        written++;
      } else if (dir === 'src') {
        // What the service reads at run time (migrations, SQL functions, JSON), beside its JavaScript.
        const copy = path.join(BUILD_DIR, rel);
        expected.add(copy);
        if (mtime(copy) >= mtime(source)) continue;
        mkdirSync(path.dirname(copy), { recursive: true });
        copyFileSync(source, copy);
        written++;
      }
    }
  }
  let removed = 0;
  for (const dir of SOURCE_DIRS) {
    const built = path.join(BUILD_DIR, dir);
    if (!existsSync(built)) continue;
    for (const file of walk(built)) {
      if (expected.has(file)) continue;
      // tsc's own outputs (`npm run build`) of a source that still exists are kept.
      const source = path.join(ROOT, path.relative(BUILD_DIR, file)).replace(/\.js(\.map)?$/, '.ts');
      if (existsSync(source)) continue;
      rmSync(file);
      removed++;
    }
  }
  if (!fresh) writeFileSync(stampFile, current);
  return { written, removed };
}
