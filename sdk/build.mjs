// Builds the SDK for both module systems (issue 32): dist/esm (import) and dist/cjs (require),
// each with its declarations; the package.json in each folder tells Node which format its .js files are.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const here = import.meta.dirname;
const tsc = createRequire(path.join(here, 'package.json')).resolve('typescript/bin/tsc');
rmSync(path.join(here, 'dist'), { recursive: true, force: true });
for (const [config, folder, type] of [['tsconfig.json', 'esm', 'module'], ['tsconfig.cjs.json', 'cjs', 'commonjs']]) {
  execFileSync(process.execPath, [tsc, '-p', path.join(here, config)], { stdio: 'inherit' });
  mkdirSync(path.join(here, 'dist', folder), { recursive: true });
  writeFileSync(path.join(here, 'dist', folder, 'package.json'), `${JSON.stringify({ type })}\n`);
}

// typebox is an ES module only: the CommonJS declarations import its types with resolution-mode
// 'import' (TypeScript >= 5.3), else a CommonJS TypeScript project rejects them (TS1541).
const cjs = path.join(here, 'dist', 'cjs');
for (const file of readdirSync(cjs, { recursive: true }).filter((f) => f.endsWith('.d.ts'))) {
  const full = path.join(cjs, file);
  const text = readFileSync(full, 'utf8').replace(/^import (?:type )?\{([^}]*)\} from 'typebox';$/gm,
    (_all, names) => `import type {${names.replace(/\btype /g, '')}} from 'typebox' with { 'resolution-mode': 'import' };`);
  writeFileSync(full, text);
}

// What a partner's editor shows is the declarations' doc comments: they speak the partner's language.
// The sources cite the service's design decisions, spec sections and issues for contributors, in
// parentheses ("(D9)", "(spec 5.3, D6)", "(4.5 rule 1)", "(issue 30, D52)"); those parentheses are dropped
// from the declarations. test/sdk-package.test.ts fails on any reference left in the packed package.
const REF = String.raw`(?:D\d{1,3}(?:\s*-\s*D\d{1,3})?|(?:(?:spec|sections?)\s+)?\d+(?:\.\d+)+(?:\s*-\s*\d+(?:\.\d+)+)?(?:\s+rules?\s+\d+)?|(?:spec|sections?)\s+\d+|issues?\s+#?\d+)`;
const REFERENCES = new RegExp(String.raw`\s?\(\s*${REF}(?:\s*[,;]\s*${REF})*\s*\)`, 'g');
for (const folder of ['esm', 'cjs']) {
  const root = path.join(here, 'dist', folder);
  for (const file of readdirSync(root, { recursive: true }).filter((f) => f.endsWith('.d.ts'))) {
    const full = path.join(root, file);
    const lines = readFileSync(full, 'utf8').split('\n');
    // Only comment lines: "/** ...", " * ...".
    writeFileSync(full, lines.map((line) => (/^\s*(?:\/\*\*|\*)/.test(line) ? line.replace(REFERENCES, '') : line)).join('\n'));
  }
}

