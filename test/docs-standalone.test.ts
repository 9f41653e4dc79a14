// test-database: once (what a partner reads: guides, READMEs, error messages, the OpenAPI document, built from the routes without a query; the service's document is read on both databases by: fuzz-openapi, openapi-examples)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { ERROR_CATALOG } from '../src/platform/errors.ts';
import { internalReferences } from './helpers/internal-references.ts';
import { ROOT } from './helpers/compiled-service.ts';

/**
 * Issue 32, item 6: the repository stands alone. What a partner reads (the API reference, the error
 * messages, the READMEs) speaks the partner's language: no internal decision numbers ("D23"),
 * spec section numbers ("4.5 rule 1", "(2.12)") or issue numbers; those stay in code comments,
 * tests and docs/decisions.md (the detector: test/helpers/internal-references.ts). And no markdown
 * link points outside the repository.
 */

/**
 * The partner guides: what a partner developer reads next to the OpenAPI document. Operator and
 * contributor documents (operations, security, observability, contributing, console, benchmarks,
 * decisions) may cite decision numbers; these may not.
 */
const PARTNER_GUIDES = [
  'README.md', 'sdk/README.md', 'docs/api-guide.md', 'docs/authorizations.md', 'docs/auth-url.md', 'docs/cards.md',
  'docs/companies-and-employees.md', 'docs/consumer-cards.md', 'docs/managed-balance.md', 'docs/qr-payments.md',
  'docs/push.md', 'docs/velocity.md', 'docs/webhooks.md', 'docs/first-ten-minutes.md',
];

/** The prose of a markdown text: code blocks and inline code (data such as `203.0.113.9`) removed, line numbers kept. */
export function markdownProse(markdown: string): string {
  const blank = (code: string) => code.replace(/[^\n]/g, '');
  return markdown.replace(/```[\s\S]*?```/g, blank).replace(/`[^`\n]*(?:\n[^`\n]*)?`/g, blank);
}

/** Every prose string of the OpenAPI document with its JSON pointer (examples, enums and patterns are data, not prose). */
function proseOf(node: unknown, pointer = ''): [string, string][] {
  if (typeof node === 'string') return [[pointer, node]];
  if (Array.isArray(node)) return node.flatMap((item, i) => proseOf(item, `${pointer}/${i}`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) => {
    if (['example', 'examples', 'const', 'enum', 'default', 'pattern', 'operationId', '$ref', 'format', 'name', 'type', 'in', 'required'].includes(key)) return [];
    // Property names and paths are identifiers; only their values are prose.
    return proseOf(value, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
  });
}

/** Markdown files of the repository (not dependencies or build output). */
function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (['node_modules', 'dist', '.git', 'data'].includes(name)) return [];
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? markdownFiles(full) : name.endsWith('.md') ? [full] : [];
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchorsOf(markdown: string): Set<string> {
  const headings = markdown.replace(/```[\s\S]*?```/g, '').split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => l.replace(/^#+ /, '').trim());
  return new Set(headings.map((h) => h.toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')));
}

/** Inline links and images `[text](target)` and reference definitions `[id]: target`, outside code. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const inline = [...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const definitions = [...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]);
  return [...inline, ...definitions];
}

describe('the repository stands alone (issue 32)', () => {
  let svc: TestService;
  let doc: unknown;

  before(async () => {
    svc = await startService();
    doc = await (await fetch(`${svc.baseUrl}/openapi.json`)).json();
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('the detector finds each kind of internal reference (negative control)', () => {
    for (const text of ['Apply for a card (D23, D44)', 'Replace the name (4.5 rule 1)', 'Set alerts (2.12)', 'signed as in 5.3', 'see spec 5.2', 'since issue 14', '| 2.3 rule | How |', 'codes (4.3 says "not shown")', 'the 4.5 table',
      '/** 4.3: credit and debit share one body. */', ' * 2.12 / section 8: thresholds', 'balance (the 2.3 object)']) {
      assert.ok(internalReferences(text).length > 0, text);
    }
    for (const text of ['Apply for a virtual card', 'at most 2 decimal places', 'AES-256-GCM, 3DS', 'TLS 1.3 only', '12.50: the amount', 'the 12.50 balance is exact']) {
      assert.deepEqual(internalReferences(text), [], text);
    }
  });

  it('the OpenAPI document cites no decision, section or issue numbers in its summaries, descriptions and titles', () => {
    const prose = proseOf(doc);
    assert.ok(prose.length > 200, `prose strings: ${prose.length}`);
    const offending = prose.flatMap(([pointer, text]) => internalReferences(text).map((r) => `${pointer}: ${r}`));
    assert.deepEqual(offending, [], 'say it in the partner\'s words; keep the number in a code comment or docs/decisions.md');
  });

  it("the error catalog's messages cite none either", () => {
    const offending = Object.entries(ERROR_CATALOG).flatMap(([code, entry]) => internalReferences(entry.message).map((r) => `${code}: ${r}`));
    assert.deepEqual(offending, []);
  });

  it('the READMEs and the partner guides cite none either', () => {
    const offending: string[] = [];
    for (const file of PARTNER_GUIDES) {
      markdownProse(readFileSync(path.join(ROOT, file), 'utf8')).split('\n').forEach((line, i) => {
        for (const r of internalReferences(line)) offending.push(`${file}:${i + 1}: ${r}`);
      });
    }
    assert.deepEqual(offending, [], "say what the service does; keep the number in a code comment, a test or docs/decisions.md");
  });

  it('the partner-guide check reads prose, not code, and keeps line numbers (negative control)', () => {
    const text = 'Paging as D9.\n```json\n{"note": "D9"}\n```\nAn `error` such as `x (203.0.113.9) is not\non the list` is data; so is `D38`.\nsince issue 26';
    const prose = markdownProse(text).split('\n');
    assert.equal(prose.length, text.split('\n').length);
    assert.deepEqual(prose.map((line) => internalReferences(line).length > 0), [true, false, false, false, false, false, true]);
    // Every listed guide exists, so a renamed file cannot silently escape the check.
    for (const file of PARTNER_GUIDES) assert.ok(existsSync(path.join(ROOT, file)), file);
  });

  it('every relative markdown link resolves to a file or folder inside the repository', () => {
    const files = markdownFiles(ROOT);
    assert.ok(files.some((f) => f.endsWith(`${path.sep}README.md`)) && files.length > 5, `markdown files: ${files.length}`);
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const link of linksOf(readFileSync(file, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:
        checked++;
        const [pathPart, fragment] = link.split('#');
        const target = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURI(pathPart));
        const where = `${path.relative(ROOT, file)}: ${link}`;
        if (target !== ROOT && !target.startsWith(ROOT + path.sep)) broken.push(`${where} points outside the repository`);
        else if (!existsSync(target)) broken.push(`${where} does not exist`);
        else if (fragment && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(fragment)) broken.push(`${where}: no such heading`);
      }
    }
    assert.ok(checked > 20, `relative links checked: ${checked}`);
    assert.deepEqual(broken, []);
  });

  it('the link check does catch a link outside the repository, and knows heading anchors (negative controls)', () => {
    assert.ok(anchorsOf('## Pool <-> card transfers\n### `GET /x` (list)').has('pool---card-transfers'));
    assert.ok(anchorsOf('## Pool <-> card transfers\n### `GET /x` (list)').has('get-x-list'));
    assert.deepEqual(linksOf('See [the contract](../shared/spec/interface.md) and `[not](../code)`.\n\n[ref]: ../x.md'), ['../shared/spec/interface.md', '../x.md']);
  });
});
