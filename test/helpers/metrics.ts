import assert from 'node:assert/strict';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { ADMIN_TOKEN } from './service.ts';

/**
 * The exposition parsed by a real parser (parse-prometheus-text-format), looked up by name and
 * labels. That parser folds a labelled histogram into one sample without its labels, so histogram
 * families are handed to it as untyped: each is then read as its _bucket, _sum and _count series.
 */
export interface Scrape {
  families: Map<string, Family>;
  /** A counter's or gauge's value, a histogram's count; 0 when the series is absent. */
  value(name: string, labels?: Record<string, string>): number;
  /** Samples of every family (each histogram bucket, sum and count is one), or of the families `which` keeps: the series count. */
  seriesCount(which?: (family: string) => boolean): number;
}

interface Sample {
  labels?: Record<string, string>;
  value?: string;
}

interface Family {
  name: string;
  help: string;
  type: string;
  metrics: Sample[];
}

export function parseExposition(text: string): Scrape {
  const histograms = new Set<string>();
  const untypedHistograms = text.replace(/^# TYPE (\S+) histogram$/gm, (_line, name: string) => {
    histograms.add(name);
    return `# TYPE ${name} untyped`;
  });
  const families = new Map<string, Family>();
  // Interleaved series (a histogram's _bucket, _sum, _count per label set) come back as one family
  // per run of lines: runs of the same name are one family.
  for (const f of parsePrometheusTextFormat(untypedHistograms) as Family[]) {
    const known = families.get(f.name);
    if (known) known.metrics.push(...f.metrics);
    else families.set(f.name, f);
  }
  const matches = (sample: Sample, labels: Record<string, string>) =>
    Object.entries(labels).every(([k, v]) => (sample.labels ?? {})[k] === v);
  return {
    families,
    value(name, labels = {}) {
      const family = families.get(histograms.has(name) ? `${name}_count` : name);
      if (!family) return 0;
      const found = family.metrics.filter((m) => matches(m, labels) && Object.keys(m.labels ?? {}).length === Object.keys(labels).length);
      assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} names one series`);
      const sample = found[0];
      if (!sample) return 0;
      return Number(sample.value);
    },
    seriesCount(which = () => true) {
      let n = 0;
      for (const f of families.values()) if (which(f.name)) n += f.metrics.length;
      return n;
    },
  };
}

/** GET /metrics on the main port with the admin token, parsed. */
export async function scrape(baseUrl: string, token = ADMIN_TOKEN): Promise<Scrape> {
  const res = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

/** The change of every named series between two scrapes. */
export function delta(before: Scrape, after: Scrape, name: string, labels: Record<string, string> = {}): number {
  return after.value(name, labels) - before.value(name, labels);
}
