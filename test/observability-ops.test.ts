import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { scrape, type Scrape } from './helpers/metrics.ts';
import { ROOT } from './helpers/compiled-service.ts';

const OPS = path.join(ROOT, 'ops');
const RULES_FILE = path.join(OPS, 'prometheus', 'alerts.yml');
const DASHBOARD_FILE = path.join(OPS, 'grafana', 'card-issuing-service.json');
const RULES_TEST_FILE = path.join(OPS, 'prometheus', 'alerts.test.yml');

/** PromQL words that are not metric names (functions, aggregations, keywords, label names in by/on lists are removed first). */
const PROMQL_WORDS = new Set(['sum', 'rate', 'increase', 'max', 'min', 'avg', 'count', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right',
  'offset', 'and', 'or', 'unless', 'bool', 'histogram_quantile', 'time', 'abs', 'absent', 'irate', 'delta', 'deriv', 'topk', 'bottomk', 'clamp_min', 'clamp_max']);

/** The metric names a PromQL expression reads: label matchers, grouping lists and strings removed first. */
function metricNamesOf(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '$1')
    .replace(/\[[^\]]*\]/g, '');
  const names = new Set<string>();
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    if (!PROMQL_WORDS.has(m[0]) && !/^\d/.test(m[0]) && m[0].includes('_')) names.add(m[0]);
  }
  return [...names];
}

function rulesExpressions(): { where: string; expr: string }[] {
  const doc = parseYaml(readFileSync(RULES_FILE, 'utf8')) as { groups: { rules: { alert?: string; expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })));
}

function dashboardExpressions(): { where: string; expr: string }[] {
  const doc = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
  return doc.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr })));
}

/** Whether the exposition has this family (a histogram's _bucket/_sum/_count name its base family). */
function exported(s: Scrape, name: string): boolean {
  if (s.families.has(name)) return true;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return base !== name && s.families.get(base)?.type === 'UNTYPED' && s.families.has(base);
}

function promtool(args: string[], input?: string) {
  const run = spawnSync('promtool', args, { input, encoding: 'utf8' });
  assert.ok(!run.error, `promtool is not installed (Debian package prometheus: apt-get install -y prometheus; .ci/run installs it): ${run.error?.message}`);
  return run;
}

/** Issue 27: dashboards and alert rules as code, checked against what the service exports. */
describe('dashboards and alert rules (issue 27)', () => {
  let svc: TestService;
  before(async () => { svc = await startService(); });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('every metric named in the dashboard and the alert rules is exported by the service', async () => {
    const s = await scrape(svc.baseUrl);
    const uses = [...rulesExpressions(), ...dashboardExpressions()];
    assert.ok(uses.length > 30, 'the files were read');
    const missing = uses.flatMap(({ where, expr }) => metricNamesOf(expr).filter((n) => !exported(s, n)).map((n) => `${n} (${where})`));
    assert.deepEqual(missing, []);
    // The check itself sees a name that is not exported.
    assert.deepEqual(metricNamesOf('sum by (le) (rate(no_such_metric_seconds_bucket{a="b"}[5m]))'), ['no_such_metric_seconds_bucket']);
    assert.equal(exported(s, 'no_such_metric_seconds_bucket'), false);
  });

  it('every alert has a summary and a runbook', () => {
    const doc = parseYaml(readFileSync(RULES_FILE, 'utf8')) as { groups: { rules: { alert: string; annotations?: Record<string, string> }[] }[] };
    const alerts = doc.groups.flatMap((g) => g.rules);
    assert.deepEqual(alerts.map((a) => a.alert).sort(), ['ApprovalRateDrop', 'AuthUrlLatencyNearDeadline', 'AuthUrlStandIns', 'DatabaseBatchRetries', 'DatabasePoolSaturated', 'DeclineReasonSpike',
      'JobLag', 'JobStale', 'LedgerAuditFailed', 'LedgerAuditStale', 'WebhookBacklogAge']);
    for (const a of alerts) {
      assert.ok((a.annotations?.summary ?? '').length > 10, `${a.alert} has a summary`);
      assert.ok((a.annotations?.runbook ?? '').length > 100, `${a.alert} has a runbook`);
    }
  });

  it('promtool test rules: the alerts fire on the series the service exports, and only then (review rvG)', () => {
    // promtool compares annotations exactly: the rules are tested without them (the runbooks are checked above).
    const doc = parseYaml(readFileSync(RULES_FILE, 'utf8')) as { groups: { rules: { annotations?: unknown }[] }[] };
    for (const g of doc.groups) for (const r of g.rules) delete r.annotations;
    const dir = mkdtempSync(path.join(tmpdir(), 'alerts-'));
    try {
      writeFileSync(path.join(dir, 'alerts.yml'), stringifyYaml(doc));
      writeFileSync(path.join(dir, 'alerts.test.yml'), readFileSync(RULES_TEST_FILE, 'utf8'));
      const run = promtool(['test', 'rules', path.join(dir, 'alerts.test.yml')]);
      assert.equal(run.status, 0, run.stdout + run.stderr);
      assert.match(run.stdout, /SUCCESS/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('promtool check rules passes, and promtool finds nothing to lint in the service\'s own metrics', async () => {
    const rules = promtool(['check', 'rules', RULES_FILE]);
    assert.equal(rules.status, 0, rules.stdout + rules.stderr);
    assert.match(rules.stdout, /SUCCESS: 11 rules found/);
    const text = await (await fetch(`${svc.baseUrl}/metrics`, { headers: { authorization: `Bearer ${svc.config.adminToken}` } })).text();
    const lint = promtool(['check', 'metrics'], text);
    // prom-client's runtime gauges nodejs_active_*_total break the _total rule (its names, not ours).
    const findings = (lint.stdout + lint.stderr).split('\n').filter((l) => l.trim() && !/^nodejs_active_(handles|requests|resources)_total /.test(l));
    assert.deepEqual(findings, []);
  });
});
