// test-database: none (never opens the test database: `npm test` runs it in the embedded pass only; test/run.ts)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers/compiled-service.ts';

/**
 * Domain boundaries (issue 9; docs/contributing.md "Domain layering"), checked from the source text:
 *
 *   bypass            a file outside domain D imports a file of D other than src/domains/D/index.ts
 *                     (other domains, app.ts / workers.ts / main.ts, tests and bench alike); tests and
 *                     bench may also import D's test entry src/domains/D/testing.ts
 *   store-export      an index.ts or testing.ts re-exports a value (a function) of a store file:
 *                     stores are private
 *   unused-export     an index.ts exports a name that no other domain and no top-level file (src/)
 *                     imports: the public entry is what production uses; what only tests need is
 *                     exported by the domain's testing.ts (issue 33)
 *   testing-import    production code (src/) imports a domain's testing.ts or a file under test/
 *                     (helpers, test oracles)
 *   missing-index     a domain folder without index.ts
 *   unknown-domain    a domain missing from the layering of docs/contributing.md
 *   layering          a domain imports a domain of the same or a higher layer
 *   domain-cycle      domains importing each other, directly or through others
 *   app-import        a domain imports src/app.ts, src/workers.ts, src/main.ts or the command line (src/cli/)
 *   platform-import   the platform (src/platform, src/config.ts) imports a domain or the top level
 *   sql-outside-store SQL (SELECT / INSERT / UPDATE / DELETE / CREATE ...) outside store files
 *                     (store.ts, store-*.ts, *-store.ts) and src/platform/db/
 *   foreign-table     a store reads or writes a table another domain owns
 *   unowned-table     a migration creates a table TABLE_OWNERS does not assign
 *   sql-function      database functions (issue 33): a numbered migration creates a function or
 *                     trigger (they live in src/domains/<d>/sql/; the one exception is a measurement
 *                     prototype under bench/prototypes/, loaded only into a throwaway bench database); a domain SQL file creates one
 *                     without OR REPLACE (it is applied again whenever it changes); a function is
 *                     defined twice; a file under src/domains/<d>/sql/ is missing from
 *                     DATABASE_FUNCTIONS (src/migrate.ts) or listed there but absent; a function
 *                     calls a function of a domain in the same or a higher layer; a store calls a
 *                     function of another domain
 *   foreign-table     (also) a database function reads, writes or hooks a trigger on a table of
 *                     another domain without its line in the ```sql-foreign-tables block of
 *                     docs/contributing.md; a line there that no function needs
 *   sdk-import        the SDK (sdk/) imports server code; the shared contract (sdk/contract/)
 *                     imports anything but typebox, lossless-json types and itself; the service
 *                     imports SDK files other than the contract (except the operator command line,
 *                     src/cli/: a client of the admin API, it calls it through the SDK's AdminClient)
 *
 * Type-only imports count like any other: a dependency of types is a dependency. The checker is a
 * pure function of the files' text, so a negative control can feed it a synthetic bad tree.
 */


/** Which domain owns each table (platform for cross-cutting ones). A new table needs an entry. */
const TABLE_OWNERS: Record<string, string> = {
  schema_migrations: 'platform',
  schema_functions: 'platform',
  outbox_mail: 'platform',
  card_keys: 'platform',
  idempotency_keys: 'platform',
  partners: 'partners',
  replay_nonces: 'partners',
  replay_store_epoch: 'partners',
  credential_links: 'partners',
  partner_webhook_secrets: 'partners',
  event_sequences: 'events',
  events: 'events',
  event_attempts: 'events',
  event_deliveries: 'events',
  decimal_probes: 'diagnostics',
  organizations: 'organizations',
  subject_restrictions: 'organizations',
  subject_status_changes: 'organizations',
  sanctioned_countries: 'organizations',
  customers: 'customers',
  customer_addresses: 'customers',
  kyc_reviews: 'customers',
  ledger_accounts: 'ledger',
  ledger_postings: 'ledger',
  ledger_entries: 'ledger',
  ledger_audit_runs: 'ledger',
  balance_alert_settings: 'funding',
  balance_alert_emails: 'funding',
  card_profiles: 'cards',
  card_applications: 'cards',
  cards: 'cards',
  deposit_accounts: 'cards',
  card_transfers: 'cards',
  card_upgrades: 'cards',
  velocity_rules: 'velocity',
  velocity_rule_amount_limits: 'velocity',
  velocity_rule_bindings: 'velocity',
  velocity_usage: 'velocity',
  velocity_counters: 'velocity',
  velocity_period_zones: 'velocity',
  card_transactions: 'authorization',
  network_keys: 'authorization',
  service_rsa_keys: 'authorization',
  auth_forwarding_settings: 'authorization',
  auth_forwardings: 'authorization',
  auth_decisions: 'authorization',
  rule_backtests: 'authorization',
  rule_backtest_subjects: 'authorization',
  assets: 'managed-balance',
  managed_users: 'managed-balance',
  managed_user_restrictions: 'managed-balance',
  asset_movements: 'managed-balance',
  user_stream: 'managed-balance',
  user_stream_horizon: 'managed-balance',
  qr_payments: 'managed-balance',
  managed_user_contacts: 'managed-balance',
  card_verification_codes: 'managed-balance',
  operators: 'operators',
  operator_sessions: 'operators',
  audit_trail: 'operators',
  audit_trail_head: 'operators',
};

export type ViolationKind =
  | 'bypass' | 'store-export' | 'missing-index' | 'unknown-domain' | 'layering' | 'domain-cycle' | 'app-import'
  | 'platform-import' | 'sql-outside-store' | 'foreign-table' | 'unowned-table' | 'sdk-import' | 'sql-function' | 'unused-export' | 'testing-import';

export interface Violation {
  kind: ViolationKind;
  file: string;
  detail: string;
}

interface ImportRef {
  specifier: string;
  /** `export ... from`: a re-export. */
  reexport: boolean;
  /** Only types are named (`import type`, `export type`, or every specifier marked `type`). */
  typeOnly: boolean;
}

/** Files as repository-relative paths with '/' separators, and their text. */
export type SourceTree = Map<string, string>;

/** Block comments, and line comments that start a line or follow whitespace (so 'http://' in strings stays). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|[ \t])\/\/.*$/gm, '$1');
}

const STATIC_IMPORT = /^[ \t]*(import|export)[ \t]+(type[ \t]+)?(\*(?:[ \t]+as[ \t]+\w+)?|\{[^}]*\}|\w+(?:[ \t]*,[ \t]*(?:\{[^}]*\}|\*[ \t]+as[ \t]+\w+))?)[ \t]*from[ \t]*['"]([^'"]+)['"]/gm;
const BARE_IMPORT = /^[ \t]*import[ \t]*['"]([^'"]+)['"]/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

export function importsOf(text: string): ImportRef[] {
  const code = withoutComments(text);
  const refs: ImportRef[] = [];
  for (const m of code.matchAll(STATIC_IMPORT)) {
    const names = m[3];
    const listed = names.startsWith('{') ? names.slice(1, -1).split(',').map((s) => s.trim()).filter(Boolean) : [];
    const typeOnly = Boolean(m[2]) || (listed.length > 0 && listed.every((s) => s.startsWith('type ')));
    refs.push({ specifier: m[4], reexport: m[1] === 'export', typeOnly });
  }
  for (const m of code.matchAll(BARE_IMPORT)) refs.push({ specifier: m[1], reexport: false, typeOnly: false });
  for (const m of code.matchAll(DYNAMIC_IMPORT)) refs.push({ specifier: m[1], reexport: false, typeOnly: false });
  return refs;
}

/** The names listed in `{ a, type B, c as d }`: the original (`c`) or the alias (`d`). */
function listedNames(list: string, side: 'original' | 'alias'): string[] {
  return list.split(',').map((s) => s.trim().replace(/^type\s+/, '')).filter(Boolean).map((s) => {
    const m = /^(\w+)(?:\s+as\s+(\w+))?$/.exec(s);
    return m ? (side === 'alias' ? (m[2] ?? m[1]) : m[1]) : s;
  });
}

/** The names a module exports: `export { ... } [from]` lists (aliases) and exported declarations. */
export function exportedNames(text: string): string[] {
  const code = withoutComments(text);
  const names: string[] = [];
  for (const m of code.matchAll(/^[ \t]*export[ \t]+(?:type[ \t]+)?\{([^}]*)\}/gm)) names.push(...listedNames(m[1], 'alias'));
  for (const m of code.matchAll(/^[ \t]*export[ \t]+(?:declare[ \t]+)?(?:async[ \t]+)?(?:const|let|function\*?|class|interface|type|enum)[ \t]+(\w+)/gm)) names.push(m[1]);
  return names;
}

/**
 * The names a file imports from each specifier (original names, not local aliases); `*` stands
 * for every name (a namespace import, `export *`, or a dynamic import that is not destructured).
 */
export function importedNames(text: string): { specifier: string; names: string[] }[] {
  const code = withoutComments(text);
  const out: { specifier: string; names: string[] }[] = [];
  for (const m of code.matchAll(STATIC_IMPORT)) {
    const list = /\{([^}]*)\}/.exec(m[3]);
    out.push({ specifier: m[4], names: m[3].includes('*') ? ['*'] : list ? listedNames(list[1], 'original') : ['default'] });
  }
  const destructured = new Set<number>();
  for (const m of code.matchAll(/\{([^}]*)\}\s*=\s*await\s+import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    out.push({ specifier: m[2], names: listedNames(m[1].replace(/:\s*\w+/g, ''), 'original') });
    destructured.add(m.index! + m[0].indexOf('import('));
  }
  for (const m of code.matchAll(DYNAMIC_IMPORT)) if (!destructured.has(m.index!)) out.push({ specifier: m[1], names: ['*'] });
  return out;
}

/** SQL statements as this codebase writes them: upper-case keywords. */
const SQL = /\b(SELECT[ \t\n]+[\s\S]{0,400}?\bFROM\b|SELECT[ \t]+(?:1|pg_\w+)\b|INSERT[ \t\n]+INTO\b|UPDATE[ \t\n]+\w+(?:[ \t\n]+\w+)?[ \t\n]+SET\b|DELETE[ \t\n]+FROM\b|CREATE[ \t\n]+(?:UNIQUE[ \t\n]+)?(?:TABLE|INDEX|SCHEMA|VIEW|FUNCTION|TRIGGER|SEQUENCE|TYPE)\b|ALTER[ \t\n]+TABLE\b)/;
const TABLE_REF = /\b(?:FROM|JOIN|INTO|UPDATE)[ \t\n]+([a-z_][a-z0-9_]*)/g;
/** Words after FROM/JOIN/... that are not tables: CTE names, functions and aliases used in this code base. */
const NOT_TABLES = new Set(['unnest', 'due', 'leased', 'ins', 'k', 'g', 'e', 'l', 'd', 's', 'p', 'a', 'r', 'b', 'i', 'lateral', 'the', 'a']);

function isStoreFile(file: string): boolean {
  const base = path.posix.basename(file);
  return base === 'store.ts' || /^store-[\w-]+\.ts$/.test(base) || /-store\.ts$/.test(base);
}

function domainOf(file: string): string | null {
  const m = /^src\/domains\/([^/]+)\//.exec(file);
  return m ? m[1] : null;
}

function isPlatform(file: string): boolean {
  return file.startsWith('src/platform/') || file === 'src/config.ts';
}

const TOP_LEVEL = new Set(['src/app.ts', 'src/workers.ts', 'src/main.ts', 'src/migrate.ts']);

function resolve(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  return path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
}

/** Tables each CREATE TABLE of the migrations makes. */
function createdTables(tree: SourceTree): Map<string, string> {
  const out = new Map<string, string>();
  for (const [file, text] of tree) {
    if (!/^src\/platform\/db\/migrations\/.*\.sql$/.test(file)) continue;
    for (const m of text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)/g)) out.set(m[1], file);
  }
  return out;
}

/** The shortest path from `start` back to itself inside `members` (breadth first). */
function shortestCycle(edges: Map<string, Set<string>>, members: Set<string>, start: string): string[] {
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of [...(edges.get(v) ?? [])].sort()) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(parent.get(path[0])!);
        return [...path, start];
      }
      if (!parent.has(w)) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/**
 * Domain cycles, transitive ones included: each strongly connected component of the domain graph
 * (Tarjan) with more than one domain, as {members, one cycle through them}.
 */
export function domainCycles(edges: Map<string, Set<string>>): { members: string[]; cycle: string[] }[] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: { members: string[]; cycle: string[] }[] = [];
  const nodes = new Set<string>([...edges.keys(), ...[...edges.values()].flatMap((s) => [...s])]);
  const visit = (v: string) => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
      }
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || edges.get(v)?.has(v)) {
        const members = component.sort();
        cycles.push({ members, cycle: shortestCycle(edges, new Set(members), members[0]) });
      }
    }
  };
  for (const v of [...nodes].sort()) if (!indexOf.has(v)) visit(v);
  return cycles;
}

/** Parses the ```layering block of docs/contributing.md: "<layer> <domain> ..." lines. */
export function parseLayering(markdown: string): Map<string, number> {
  const block = /```layering\n([\s\S]*?)```/.exec(markdown);
  const layers = new Map<string, number>();
  for (const line of block?.[1].split('\n') ?? []) {
    const m = /^\s*(\d+)\s+([a-z][a-z0-9-]*)\b/.exec(line);
    if (m) layers.set(m[2], Number(m[1]));
  }
  return layers;
}

/** How a database function touches a table: reads (FROM / JOIN), writes (INSERT / UPDATE / DELETE), on (a trigger on it). */
export type TableUse = 'reads' | 'writes' | 'on';

/** One line of the ```sql-foreign-tables block: `<function> <reads|writes|on> <table> ...`. */
export interface ForeignTableGrant {
  fn: string;
  use: TableUse;
  table: string;
}

/** Parses the ```sql-foreign-tables block of docs/contributing.md (text after `#` is a comment). */
export function parseForeignTableGrants(markdown: string): ForeignTableGrant[] {
  const block = /```sql-foreign-tables\n([\s\S]*?)```/.exec(markdown);
  const grants: ForeignTableGrant[] = [];
  for (const raw of block?.[1].split('\n') ?? []) {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) continue;
    const [fn, use, ...tables] = line.split(/\s+/);
    if (use !== 'reads' && use !== 'writes' && use !== 'on') throw new Error(`sql-foreign-tables: "${raw}" is not <function> reads|writes|on <table>...`);
    for (const table of tables) grants.push({ fn, use, table });
  }
  return grants;
}

/** A database function of a domain SQL file, with the tables it touches and the functions it calls. */
export interface SqlFunction {
  name: string;
  file: string;
  domain: string;
  tables: { use: TableUse; table: string }[];
  calls: string[];
}

function withoutSqlComments(text: string): string {
  return text.replace(/--.*$/gm, '');
}

const CREATE_FUNCTION = /\bCREATE[ \t\n]+(OR[ \t\n]+REPLACE[ \t\n]+)?FUNCTION[ \t\n]+([a-z_][a-z0-9_]*)/g;
const CREATE_TRIGGER = /\bCREATE[ \t\n]+(OR[ \t\n]+REPLACE[ \t\n]+)?(?:CONSTRAINT[ \t\n]+)?TRIGGER[ \t\n]+([a-z_][a-z0-9_]*)[\s\S]*?[ \t\n]ON[ \t\n]+([a-z_][a-z0-9_]*)[\s\S]*?EXECUTE[ \t\n]+(?:FUNCTION|PROCEDURE)[ \t\n]+([a-z_][a-z0-9_]*)/g;
/** Upper-case keywords and lower-case names, as this code base writes SQL. */
const SQL_WRITE = /\b(?:INSERT[ \t\n]+INTO|DELETE[ \t\n]+FROM)[ \t\n]+([a-z_][a-z0-9_]*)|\bUPDATE[ \t\n]+([a-z_][a-z0-9_]*)(?:[ \t\n]+[a-z_][a-z0-9_]*)?[ \t\n]+SET\b/g;
const SQL_READ = /\b(?:FROM|JOIN)[ \t\n]+([a-z_][a-z0-9_]*)(?![a-z0-9_]*[ \t\n]*\()/g;
const SQL_CALL = /\b([a-z_][a-z0-9_]*)[ \t\n]*\(/g;

/** The functions of the domain SQL files (src/domains/<d>/sql/*.sql): body by body, what each touches. */
export function sqlFunctions(tree: SourceTree): SqlFunction[] {
  const out: SqlFunction[] = [];
  for (const [file, text] of tree) {
    const m = /^src\/domains\/([^/]+)\/sql\/[^/]+\.sql$/.exec(file);
    if (!m) continue;
    const code = withoutSqlComments(text);
    const starts = [...code.matchAll(CREATE_FUNCTION)];
    starts.forEach((start, i) => {
      const end = i + 1 < starts.length ? starts[i + 1].index : code.length;
      const body = code.slice(start.index, end).replace(CREATE_TRIGGER, '');
      const tables: SqlFunction['tables'] = [];
      const reads = body.replace(SQL_WRITE, (w, a?: string, b?: string) => {
        tables.push({ use: 'writes', table: (a ?? b)! });
        return ' '.repeat(w.length);
      });
      for (const r of reads.matchAll(SQL_READ)) tables.push({ use: 'reads', table: r[1] });
      const calls = [...body.matchAll(SQL_CALL)].map((c) => c[1]).filter((c) => c !== start[2]);
      out.push({ name: start[2], file, domain: m[1], tables, calls });
    });
    for (const t of code.matchAll(CREATE_TRIGGER)) {
      const fn = out.find((f) => f.name === t[4] && f.file === file);
      fn?.tables.push({ use: 'on', table: t[3] });
    }
  }
  return out;
}

/** The repeatable files of DATABASE_FUNCTIONS in src/migrate.ts, as repository paths. */
function listedSqlFiles(tree: SourceTree): string[] {
  const text = tree.get('src/migrate.ts') ?? '';
  const list = /DATABASE_FUNCTIONS[^=]*=\s*\[([\s\S]*?)\]/.exec(text)?.[1] ?? '';
  return [...list.matchAll(/'([a-z0-9-]+\/sql\/[a-z0-9_]+\.sql)'/g)].map((m) => `src/domains/${m[1]}`);
}

function checkSqlFunctions(tree: SourceTree, layering: Map<string, number>, tableOwners: Record<string, string>,
  grants: readonly ForeignTableGrant[], add: (kind: ViolationKind, file: string, detail: string) => void): void {
  for (const [file, text] of tree) {
    if (!file.endsWith('.sql')) continue;
    // A design measured before it is built (bench/single-writer.ts): never applied to a service's database.
    if (/^bench\/prototypes\/[^/]+\.sql$/.test(file)) continue;
    const code = withoutSqlComments(text);
    const domainSql = /^src\/domains\/[^/]+\/sql\/[^/]+\.sql$/.test(file);
    for (const f of code.matchAll(CREATE_FUNCTION)) {
      if (!domainSql) add('sql-function', file, `creates function ${f[2]}: database functions live in src/domains/<domain>/sql/`);
      else if (!f[1]) add('sql-function', file, `CREATE FUNCTION ${f[2]} without OR REPLACE: the file is applied again whenever it changes`);
    }
    for (const t of code.matchAll(CREATE_TRIGGER)) {
      if (!domainSql) add('sql-function', file, `creates trigger ${t[2]}: triggers live beside their function in src/domains/<domain>/sql/`);
      else if (!t[1]) add('sql-function', file, `CREATE TRIGGER ${t[2]} without OR REPLACE: the file is applied again whenever it changes`);
    }
  }

  const listed = listedSqlFiles(tree);
  const onDisk = [...tree.keys()].filter((f) => /^src\/domains\/[^/]+\/sql\/[^/]+\.sql$/.test(f));
  for (const f of onDisk) if (!listed.includes(f)) add('sql-function', f, 'not listed in DATABASE_FUNCTIONS (src/migrate.ts): it would never be applied');
  for (const f of listed) if (!tree.has(f)) add('sql-function', 'src/migrate.ts', `DATABASE_FUNCTIONS lists ${f}, which does not exist`);
  for (const f of new Set(listed)) if (listed.indexOf(f) !== listed.lastIndexOf(f)) add('sql-function', 'src/migrate.ts', `DATABASE_FUNCTIONS lists ${f} twice`);

  const fns = sqlFunctions(tree);
  const owner = new Map<string, SqlFunction>();
  for (const fn of fns) {
    const first = owner.get(fn.name);
    if (first) add('sql-function', fn.file, `function ${fn.name} is defined again (first in ${first.file}): one definition per function`);
    else owner.set(fn.name, fn);
  }
  const used = new Set<ForeignTableGrant>();
  for (const fn of fns) {
    const seen = new Set<string>();
    for (const { use, table } of fn.tables) {
      const tableOwner = tableOwners[table];
      if (tableOwner === undefined || tableOwner === fn.domain || seen.has(`${use} ${table}`)) continue;
      seen.add(`${use} ${table}`);
      const grant = grants.find((g) => g.fn === fn.name && g.use === use && g.table === table);
      if (grant) used.add(grant);
      else add('foreign-table', fn.file, `${fn.name} ${use} table ${table} of ${tableOwner} without a line in the sql-foreign-tables block of docs/contributing.md`);
    }
    for (const called of new Set(fn.calls)) {
      const target = owner.get(called);
      if (!target || target.domain === fn.domain) continue;
      const a = layering.get(fn.domain);
      const b = layering.get(target.domain);
      if (a !== undefined && b !== undefined && b >= a) {
        add('sql-function', fn.file, `${fn.name} (${fn.domain}, layer ${a}) calls ${called} of ${target.domain} (layer ${b}): only lower layers`);
      }
    }
  }
  for (const g of grants) {
    if (!used.has(g)) add('foreign-table', 'docs/contributing.md', `sql-foreign-tables grants ${g.fn} ${g.use} ${g.table}, which no function needs: remove the line`);
  }

  // A store calls only its own domain's database functions (another domain's are reached through its index.ts).
  for (const [file, text] of tree) {
    const domain = domainOf(file);
    if (!domain || !file.endsWith('.ts') || !isStoreFile(file)) continue;
    for (const c of withoutComments(text).matchAll(SQL_CALL)) {
      const target = owner.get(c[1]);
      if (target && target.domain !== domain) add('sql-function', file, `calls ${c[1]} of ${target.domain}: a store calls only its own domain's database functions`);
    }
  }
}

export function checkBoundaries(tree: SourceTree, layering: Map<string, number>, tableOwners: Record<string, string> = TABLE_OWNERS,
  foreignTableGrants: readonly ForeignTableGrant[] = []): Violation[] {
  const violations: Violation[] = [];
  const add = (kind: ViolationKind, file: string, detail: string) => violations.push({ kind, file, detail });
  const edges = new Map<string, Set<string>>();
  const domains = new Set<string>();

  for (const file of tree.keys()) {
    const d = domainOf(file);
    if (d) domains.add(d);
  }
  for (const d of domains) {
    if (!tree.has(`src/domains/${d}/index.ts`)) add('missing-index', `src/domains/${d}/`, `domain ${d} has no index.ts`);
    if (!layering.has(d)) add('unknown-domain', `src/domains/${d}/`, `domain ${d} is not in the layering of docs/contributing.md`);
  }

  /** Per domain: the names its index.ts exports, and the names production files outside it import from there. */
  const exported = new Map<string, string[]>();
  const usedOutside = new Map<string, Set<string>>();
  for (const [file, text] of tree) {
    if (!file.endsWith('.ts')) continue;
    const fromDomain = domainOf(file);
    const entry = /^src\/domains\/([^/]+)\/index\.ts$/.exec(file);
    if (entry) exported.set(entry[1], exportedNames(text));
    if (file.startsWith('src/')) {
      for (const { specifier, names } of importedNames(text)) {
        const target = resolve(file, specifier);
        const m = target ? /^src\/domains\/([^/]+)\/index\.ts$/.exec(target) : null;
        if (!m || m[1] === fromDomain) continue;
        if (!usedOutside.has(m[1])) usedOutside.set(m[1], new Set());
        for (const n of names) usedOutside.get(m[1])!.add(n);
      }
    }
    for (const ref of importsOf(text)) {
      const target = resolve(file, ref.specifier);
      // The SDK stays installable on its own: no server code; the shared contract only typebox and itself.
      if (file.startsWith('sdk/')) {
        if (target && !target.startsWith('sdk/')) add('sdk-import', file, `imports ${target}`);
        if (file.startsWith('sdk/contract/') && (target ? !target.startsWith('sdk/contract/') : !['typebox', 'lossless-json'].includes(ref.specifier))) {
          add('sdk-import', file, `the shared contract imports ${target ?? ref.specifier}`);
        }
        if (file.startsWith('sdk/contract/') && ref.specifier === 'lossless-json' && !ref.typeOnly) add('sdk-import', file, 'the shared contract imports lossless-json values');
        continue;
      }
      if (!target) continue;
      if (file.startsWith('src/') && (target.startsWith('test/') || /^src\/domains\/[^/]+\/testing\.ts$/.test(target))) {
        add('testing-import', file, `imports ${target}: test entries and test code are for tests only`);
      }
      if (file.startsWith('src/') && !file.startsWith('src/cli/') && target.startsWith('sdk/') && !target.startsWith('sdk/contract/')) {
        add('sdk-import', file, `imports ${target}: the service shares only sdk/contract/ with the SDK`);
      }
      const toDomain = domainOf(target);
      if (fromDomain && (TOP_LEVEL.has(target) || target.startsWith('src/cli/'))) add('app-import', file, `imports ${target}`);
      if (isPlatform(file) && (toDomain || TOP_LEVEL.has(target))) add('platform-import', file, `imports ${target}`);
      if (toDomain && toDomain !== fromDomain) {
        const testEntry = !file.startsWith('src/') && target === `src/domains/${toDomain}/testing.ts`;
        if (target !== `src/domains/${toDomain}/index.ts` && !testEntry) {
          add('bypass', file, `imports ${target} instead of src/domains/${toDomain}/index.ts${file.startsWith('src/') ? '' : ' (or its testing.ts)'}`);
        }
        if (fromDomain) {
          if (!edges.has(fromDomain)) edges.set(fromDomain, new Set());
          edges.get(fromDomain)!.add(toDomain);
        }
      }
      if (fromDomain && toDomain === fromDomain && ['index.ts', 'testing.ts'].includes(path.posix.basename(file)) && ref.reexport && !ref.typeOnly && isStoreFile(target)) {
        add('store-export', file, `re-exports values of ${target}: stores are private (export their types only)`);
      }
    }

    if (file.startsWith('src/') && !isStoreFile(file) && !file.startsWith('src/platform/db/')) {
      const sql = SQL.exec(withoutComments(text));
      if (sql) add('sql-outside-store', file, `SQL "${sql[0].replace(/\s+/g, ' ').slice(0, 60)}" outside a store`);
    }
    if (file.startsWith('src/') && isStoreFile(file)) {
      const owner = fromDomain ?? (isPlatform(file) ? 'platform' : null);
      const code = withoutComments(text);
      for (const m of code.matchAll(TABLE_REF)) {
        const table = m[1];
        if (NOT_TABLES.has(table) || !(table in tableOwners)) continue;
        if (tableOwners[table] !== owner) add('foreign-table', file, `uses table ${table} of ${tableOwners[table]}`);
      }
    }
  }

  checkSqlFunctions(tree, layering, tableOwners, foreignTableGrants, add);
  for (const [d, names] of exported) {
    const used = usedOutside.get(d) ?? new Set<string>();
    if (used.has('*')) continue;
    const unused = names.filter((n) => !used.has(n));
    if (unused.length > 0) {
      add('unused-export', `src/domains/${d}/index.ts`, `exports ${unused.join(', ')}, which no other domain and no top-level file imports (tests: src/domains/${d}/testing.ts)`);
    }
  }

  for (const [table, file] of createdTables(tree)) {
    if (!(table in tableOwners)) add('unowned-table', file, `table ${table} has no owner in TABLE_OWNERS (test/architecture-boundaries.test.ts)`);
  }

  for (const [from, tos] of edges) {
    for (const to of tos) {
      const a = layering.get(from);
      const b = layering.get(to);
      if (a !== undefined && b !== undefined && b >= a) add('layering', `src/domains/${from}/`, `${from} (layer ${a}) imports ${to} (layer ${b}): only lower layers`);
    }
  }
  for (const { members, cycle } of domainCycles(edges)) {
    add('domain-cycle', `src/domains/${members[0]}/`, `${cycle.join(' -> ')} (domains in the cycle: ${members.join(', ')})`);
  }
  return violations;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    if (statSync(full).isDirectory()) walk(full, out);
    else if (/\.(ts|sql)$/.test(entry)) out.push(full);
  }
  return out;
}

/** This file holds bad imports as fixture text for the negative control; it is not scanned itself. */
const SELF = 'test/architecture-boundaries.test.ts';

function repositoryTree(): SourceTree {
  const tree: SourceTree = new Map();
  for (const top of ['src', 'test', 'bench', 'sdk']) {
    for (const file of walk(path.join(ROOT, top))) {
      const rel = path.relative(ROOT, file).split(path.sep).join('/');
      if (rel !== SELF) tree.set(rel, readFileSync(file, 'utf8'));
    }
  }
  return tree;
}

function report(violations: Violation[]): string {
  return violations.map((v) => `  ${v.kind}: ${v.file}: ${v.detail}`).join('\n');
}

describe('architecture: domain boundaries (docs/contributing.md)', () => {
  const contributing = readFileSync(path.join(ROOT, 'docs/contributing.md'), 'utf8');
  const layering = parseLayering(contributing);
  const grants = parseForeignTableGrants(contributing);

  it('the layering is written in docs/contributing.md', () => {
    assert.ok(layering.size >= 10, 'the ```layering block lists the domains');
    for (const d of ['partners', 'events', 'ledger', 'organizations', 'customers', 'funding', 'velocity', 'cards', 'authorization', 'sandbox']) {
      assert.ok(layering.has(d), `${d} has a layer`);
    }
  });

  it('the source keeps every boundary: public entries only, private stores, layered domains without cycles, no app.ts in domains, a platform that imports no domain, SQL only in stores, own tables only', () => {
    const tree = repositoryTree();
    assert.ok([...tree.keys()].filter((f) => f.startsWith('src/domains/')).length > 40, 'the scan sees the domains');
    assert.ok([...tree.keys()].some((f) => f.startsWith('test/')), 'the scan sees the tests');
    const violations = checkBoundaries(tree, layering, TABLE_OWNERS, grants);
    assert.equal(violations.length, 0, `boundary violations:\n${report(violations)}`);
  });

  it('database functions (issue 33): each defined once, in its domain\'s sql/ folder, touching other domains\' tables only as docs/contributing.md lists', () => {
    const tree = repositoryTree();
    const fns = sqlFunctions(tree);
    const home = new Map(fns.map((f) => [f.name, f.file]));
    assert.equal(home.size, fns.length, 'no function is defined twice');
    // The scan sees the pipeline where it lives, and what it touches.
    assert.equal(home.get('card_authorize'), 'src/domains/authorization/sql/card_authorize.sql');
    assert.equal(home.get('ledger_post'), 'src/domains/ledger/sql/ledger_post.sql');
    assert.equal(home.get('card_velocity_refusal'), 'src/domains/velocity/sql/card_velocity_refusal.sql');
    assert.equal(home.get('user_asset_move'), 'src/domains/managed-balance/sql/user_asset_move.sql');
    const authorize = fns.find((f) => f.name === 'card_authorize')!;
    assert.ok(authorize.tables.some((t) => t.use === 'writes' && t.table === 'card_transactions'), 'card_authorize writes card_transactions');
    // Issue 34, step 4: the hold is a pending amount moved by the ledger's ledger_hold (no posting at approval).
    assert.ok(authorize.calls.includes('ledger_hold') && authorize.calls.includes('card_velocity_refusal'), 'card_authorize calls ledger_hold and card_velocity_refusal');
    assert.ok(grants.length >= 10, 'the sql-foreign-tables block of docs/contributing.md lists the exceptions');
    for (const file of [...tree.keys()].filter((f) => /^src\/platform\/db\/migrations\/.*\.sql$/.test(f))) {
      assert.doesNotMatch(tree.get(file)!, /\bCREATE\s+(OR\s+REPLACE\s+)?(FUNCTION|TRIGGER)\b/, `${file} defines no function or trigger`);
    }
  });

  it('negative control: a tree with one of each shortcut is reported for each, and the corrected tree is clean', () => {
    const layers = new Map([['alpha', 1], ['beta', 2], ['gamma', 3]]);
    const bad: SourceTree = new Map([
      ['src/domains/alpha/index.ts', "export { a } from './service.ts';\nexport { insertA } from './store.ts';\n"],
      ['src/domains/alpha/service.ts', "import type { B } from '../beta/index.ts';\nexport const a = 1;\n"],
      ['src/domains/alpha/store.ts', "export async function insertA(q) { await q.query(`INSERT INTO beta_things (id) VALUES ($1)`, []); }\n"],
      ['src/domains/beta/index.ts', "export * from './service.ts';\n"],
      ['src/domains/beta/service.ts', [
        "import { insertA } from '../alpha/store.ts';",
        "import { g } from '../gamma/index.ts';",
        "import type { AppContext } from '../../app.ts';",
        'export async function b(q) {',
        "  return q.query('SELECT id FROM alpha_things WHERE id = $1', [1]);",
        '}',
      ].join('\n')],
      ['src/domains/gamma/index.ts', "export { b } from '../beta/index.ts';\n"],
      ['src/domains/gamma/service.ts', "import { CliFailure } from '../../cli/admin.ts';\nimport { helper } from '../alpha/testing.ts';\nimport { model } from '../../../test/oracles/alpha.ts';\n"],
      ['src/domains/delta/service.ts', 'export const d = 4;\n'],
      ['src/platform/http/router.ts', "import type { X } from '../../domains/alpha/index.ts';\n"],
      ['src/app.ts', "import { b } from './domains/beta/service.ts';\n"],
      ['test/beta.test.ts', "const { b } = await import('../src/domains/beta/service.ts');\n"],
      ['sdk/resources/alpha.ts', "import type { A } from '../../src/domains/alpha/index.ts';\n"],
      ['sdk/contract/alpha.ts', "import { Type } from 'typebox';\nimport { decimal } from '../client.ts';\n"],
      ['src/domains/alpha/routes.ts', "import { CardServiceClient } from '../../../sdk/index.ts';\n"],
      ['src/platform/db/migrations/001-x.sql', 'CREATE TABLE alpha_things (id text);\nCREATE TABLE beta_things (id text);\nCREATE TABLE stray (id text);\n'],
      // Database functions: one in a numbered migration, one without OR REPLACE writing beta's table,
      // one defined twice (in a file DATABASE_FUNCTIONS does not list), one calling a higher layer.
      ['src/platform/db/migrations/002-y.sql', 'CREATE FUNCTION old_rule() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;\nCREATE TRIGGER t BEFORE INSERT ON alpha_things FOR EACH ROW EXECUTE FUNCTION old_rule();\n'],
      ['src/domains/alpha/sql/alpha_fn.sql', 'CREATE FUNCTION alpha_fn() RETURNS void LANGUAGE plpgsql AS $$\nBEGIN\n  INSERT INTO beta_things (id) VALUES (1);\n  PERFORM gamma_fn();\nEND $$;\n'],
      ['src/domains/alpha/sql/alpha_again.sql', 'CREATE OR REPLACE FUNCTION alpha_fn() RETURNS void LANGUAGE sql AS $$ SELECT 1 $$;\n'],
      ['src/domains/gamma/sql/gamma_fn.sql', 'CREATE OR REPLACE FUNCTION gamma_fn() RETURNS void LANGUAGE sql AS $$ SELECT 1 $$;\n'],
      ['src/domains/beta/store.ts', "export const x = (q) => q.query('SELECT alpha_fn()', []);\n"],
      ['src/migrate.ts', "export const DATABASE_FUNCTIONS: readonly string[] = [\n  'alpha/sql/alpha_fn.sql',\n  'gamma/sql/gamma_fn.sql',\n  'alpha/sql/gone.sql',\n];\n"],
    ]);
    const owners = { alpha_things: 'alpha', beta_things: 'beta' };
    const found = checkBoundaries(bad, layers, owners, [{ fn: 'alpha_fn', use: 'reads', table: 'beta_things' }]);
    const kinds = new Set(found.map((v) => v.kind));
    const expected: ViolationKind[] = [
      'bypass', 'store-export', 'missing-index', 'unknown-domain', 'layering', 'domain-cycle', 'app-import', 'platform-import',
      'sql-outside-store', 'foreign-table', 'unowned-table', 'sdk-import', 'sql-function', 'unused-export', 'testing-import',
    ];
    for (const kind of expected) assert.ok(kinds.has(kind), `reports ${kind}:\n${report(found)}`);
    const sqlFinding = (file: string, detail: RegExp) => found.some((v) => v.file === file && detail.test(v.detail));
    assert.ok(sqlFinding('src/platform/db/migrations/002-y.sql', /creates function old_rule/), 'a function in a numbered migration');
    assert.ok(sqlFinding('src/platform/db/migrations/002-y.sql', /creates trigger t:/), 'a trigger in a numbered migration');
    assert.ok(sqlFinding('src/domains/alpha/sql/alpha_fn.sql', /CREATE FUNCTION alpha_fn without OR REPLACE/), 'a function that cannot be applied again');
    assert.ok(sqlFinding('src/domains/alpha/sql/alpha_again.sql', /alpha_fn is defined again/), 'a function defined twice');
    assert.ok(sqlFinding('src/domains/alpha/sql/alpha_again.sql', /not listed in DATABASE_FUNCTIONS/), 'a file never applied');
    assert.ok(sqlFinding('src/migrate.ts', /lists src\/domains\/alpha\/sql\/gone\.sql, which does not exist/), 'a listed file that is gone');
    assert.ok(sqlFinding('src/domains/alpha/sql/alpha_fn.sql', /alpha_fn \(alpha, layer 1\) calls gamma_fn of gamma \(layer 3\)/), 'a call to a higher layer');
    assert.ok(sqlFinding('src/domains/beta/store.ts', /calls alpha_fn of alpha/), 'a store calling another domain\'s function');
    assert.ok(found.some((v) => v.kind === 'foreign-table' && v.file === 'src/domains/alpha/sql/alpha_fn.sql' && /alpha_fn writes table beta_things of beta/.test(v.detail)),
      'a function writing another domain\'s table without a grant');
    assert.ok(found.some((v) => v.kind === 'foreign-table' && v.file === 'docs/contributing.md' && /grants alpha_fn reads beta_things, which no function needs/.test(v.detail)),
      'a grant no function needs');
    assert.ok(found.some((v) => v.kind === 'bypass' && v.file === 'test/beta.test.ts'), 'a test reaching into a domain is a bypass too');
    assert.ok(found.some((v) => v.kind === 'bypass' && v.file === 'src/app.ts'), 'the top level reaching into a domain is a bypass');
    assert.ok(found.some((v) => v.kind === 'app-import' && v.file === 'src/domains/gamma/service.ts'), 'a domain importing the command line');
    assert.ok(found.some((v) => v.kind === 'bypass' && v.file === 'src/domains/gamma/service.ts' && v.detail.includes('alpha/testing.ts')), 'production may not use a test entry');
    assert.equal(found.filter((v) => v.kind === 'testing-import' && v.file === 'src/domains/gamma/service.ts').length, 2, 'a test entry and a test oracle in production');
    assert.ok(found.some((v) => v.kind === 'unused-export' && v.file === 'src/domains/alpha/index.ts' && /exports a, insertA,/.test(v.detail)), 'names nothing outside imports');
    for (const file of ['sdk/resources/alpha.ts', 'sdk/contract/alpha.ts', 'src/domains/alpha/routes.ts']) {
      assert.ok(found.some((v) => v.kind === 'sdk-import' && v.file === file), `the SDK stays apart: ${file}`);
    }
    assert.ok(found.some((v) => v.kind === 'domain-cycle' && /cycle: alpha, beta, gamma\)/.test(v.detail)), 'a cycle through an index (gamma -> beta -> gamma) and a longer one are found');
    assert.deepEqual(domainCycles(new Map([['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a'])], ['d', new Set(['a'])]])),
      [{ members: ['a', 'b', 'c'], cycle: ['a', 'b', 'c', 'a'] }], 'a transitive cycle a -> b -> c -> a');

    const good: SourceTree = new Map([
      ['src/domains/alpha/index.ts', "export { a } from './service.ts';\nexport type { Row } from './store.ts';\n"],
      ['src/domains/alpha/service.ts', "import { insertA } from './store.ts';\nexport const a = insertA;\n"],
      ['src/domains/alpha/store.ts', "export interface Row { id: string }\nexport async function insertA(q) { await q.query(`INSERT INTO alpha_things (id) VALUES ($1)`, []); }\n"],
      ['src/domains/beta/index.ts', "export { b } from './service.ts';\n"],
      ['src/domains/beta/service.ts', "import { a, type Row } from '../alpha/index.ts';\nimport type { AppContext } from '../../platform/context.ts';\nexport const b = a;\n"],
      ['src/domains/alpha/testing.ts', "export { helper } from './service.ts';\n"],
      ['test/alpha.test.ts', "import { helper } from '../src/domains/alpha/testing.ts';\nimport { a } from '../src/domains/alpha/index.ts';\n"],
      ['src/app.ts', "import { b } from './domains/beta/index.ts';\n"],
      ['src/cli/admin.ts', "import { AdminClient } from '../../sdk/index.ts';\n"],
      ['sdk/contract/alpha.ts', "import { Type } from 'typebox';\nimport type { LosslessNumber } from 'lossless-json';\nimport { Money } from './wire.ts';\n"],
      ['sdk/resources/alpha.ts', "import type { Static } from 'typebox';\nimport type { Alpha } from '../contract/alpha.ts';\n"],
      ['src/domains/alpha/routes.ts', "import { Alpha } from '../../../sdk/contract/alpha.ts';\n"],
      ['test/beta.test.ts', "const { b } = await import('../src/domains/beta/index.ts');\n"],
      ['src/platform/db/migrations/001-x.sql', 'CREATE TABLE alpha_things (id text);\nCREATE TABLE beta_things (id text);\n'],
      ['src/platform/db/migrations/002-y.sql', '-- old_rule is retired.\nDROP TRIGGER IF EXISTS t ON alpha_things;\nDROP FUNCTION IF EXISTS old_rule();\n'],
      ['src/domains/alpha/sql/alpha_fn.sql', 'CREATE OR REPLACE FUNCTION alpha_fn() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  INSERT INTO alpha_things (id) VALUES (1);\n  RETURN NULL;\nEND $$;\nCREATE OR REPLACE TRIGGER t AFTER INSERT ON alpha_things FOR EACH ROW EXECUTE FUNCTION alpha_fn();\nCREATE OR REPLACE FUNCTION alpha_total() RETURNS bigint LANGUAGE sql AS $$ SELECT count(*) FROM alpha_things $$;\n'],
      ['src/domains/beta/sql/beta_fn.sql', 'CREATE OR REPLACE FUNCTION beta_fn() RETURNS bigint LANGUAGE plpgsql AS $$\nBEGIN\n  PERFORM alpha_total();\n  RETURN (SELECT count(*) FROM alpha_things a JOIN beta_things b ON b.id = a.id);\nEND $$;\n'],
      ['src/domains/beta/store.ts', "export const x = (q) => q.query('SELECT beta_fn()', []);\n"],
      ['src/migrate.ts', "export const DATABASE_FUNCTIONS: readonly string[] = [\n  'alpha/sql/alpha_fn.sql',\n  'beta/sql/beta_fn.sql',\n];\n"],
    ]);
    assert.deepEqual(checkBoundaries(good, layers, { alpha_things: 'alpha', beta_things: 'beta' }, [{ fn: 'beta_fn', use: 'reads', table: 'alpha_things' }]), []);
  });

  it('the name parsers see aliases, type-only names, declarations and destructured dynamic imports', () => {
    assert.deepEqual(exportedNames("export { a, type B, c as d } from './x.ts';\nexport type {\n  E,\n} from './y.ts';\nexport const f = 1;\n// export { no } from './z.ts';"),
      ['a', 'B', 'd', 'E', 'f']);
    assert.deepEqual(importedNames("import { a, type B, c as d } from './x.ts';\nimport * as ns from './n.ts';\nconst { e, f: g } = await import('./y.ts');\nconst m = await import('./m.ts');"),
      [{ specifier: './x.ts', names: ['a', 'B', 'c'] }, { specifier: './n.ts', names: ['*'] }, { specifier: './y.ts', names: ['e', 'f'] }, { specifier: './m.ts', names: ['*'] }]);
  });

  it('the import parser sees multi-line, type-only, re-export and dynamic imports, and ignores comments and strings', () => {
    const refs = importsOf([
      "import {\n  a,\n  type B,\n} from './x.ts';",
      "import type { C } from './y.ts';",
      "export { type D } from './z.ts';",
      "export * from './w.ts';",
      "const m = await import('./v.ts');",
      "// import { no } from './commented.ts';",
      " * import { no } from './doc-example.ts';",
      "const url = 'http://example.com/from';",
    ].join('\n'));
    assert.deepEqual(refs.map((r) => [r.specifier, r.reexport, r.typeOnly]), [
      ['./x.ts', false, false], ['./y.ts', false, true], ['./z.ts', true, true], ['./w.ts', true, false], ['./v.ts', false, false],
    ]);
  });
});
