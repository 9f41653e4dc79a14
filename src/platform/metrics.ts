/**
 * The process's Prometheus metrics (issue 27, docs/observability.md): one prom-client registry per
 * process (one scrape target), the text exposition at GET /metrics.
 *
 * Domains register their own metrics here (`counter`, `gauge`, `histogram`) and, for figures read
 * from the database at scrape time (backlogs, the last ledger audit), a `beforeScrape` hook. The
 * platform knows no domain: it only keeps the registry, the HTTP, database-pool and process metrics.
 *
 * Rules for every metric (the reason the helpers exist): Prometheus names with their unit
 * (`_seconds`, `_bytes`, `_total` for counters) and label values from a closed set (a route
 * template, an outcome, a code of the error catalog), never an id, a raw path or an amount: a
 * label value per card would grow the series without bound.
 */
import http from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from './db/db.ts';

export const metricsRegistry = new Registry();

/**
 * METRICS_ENABLED=false turns every metric into a no-op and GET /metrics off (the bench's
 * baseline, issue 27). Read at module load: metrics are declared at module level.
 */
export const metricsEnabled = process.env.METRICS_ENABLED !== 'false';
const NOOP = { inc() {}, dec() {}, set() {}, observe() {}, reset() {}, remove() {}, labels() { return NOOP; } };

export const EXPOSITION_CONTENT_TYPE = metricsRegistry.contentType;

/** Buckets for request and decision durations: 1 ms to 10 s (an auth_url deadline is at most 10 s). */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 10];

/**
 * Registration is idempotent by name (a second app in one process, e.g. tests starting two
 * instances, gets the same metric back), so a metric can be declared at module level.
 */
export function counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
  if (!metricsEnabled) return NOOP as unknown as Counter<L>;
  const existing = metricsRegistry.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter<L>({ name, help, labelNames: [...labelNames], registers: [metricsRegistry] });
}

export function gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
  if (!metricsEnabled) return NOOP as unknown as Gauge<L>;
  const existing = metricsRegistry.getSingleMetric(name);
  if (existing) return existing as Gauge<L>;
  return new Gauge<L>({ name, help, labelNames: [...labelNames], registers: [metricsRegistry] });
}

export function histogram<L extends string = never>(name: string, help: string, labelNames: readonly L[] = [], buckets: number[] = LATENCY_BUCKETS): Histogram<L> {
  if (!metricsEnabled) return NOOP as unknown as Histogram<L>;
  const existing = metricsRegistry.getSingleMetric(name);
  if (existing) return existing as Histogram<L>;
  return new Histogram<L>({ name, help, labelNames: [...labelNames], buckets, registers: [metricsRegistry] });
}

/** How long one scrape hook may take: a scrape must answer even while the database pool is exhausted. */
const SCRAPE_HOOK_DEADLINE_MS = 2_000;
const scrapeHooks = new Map<string, () => Promise<void>>();
const scrapeFailures = counter('metrics_scrape_hook_failures_total', 'Scrape-time collectors (database reads) that failed or overran their deadline; their gauges keep the last value', ['collector']);

/**
 * Work run before every scrape (gauges read from the database), one per key: a later
 * registration under the same key replaces the earlier one (the newest app of the process).
 */
export function beforeScrape(key: string, hook: () => Promise<void>): void {
  if (!metricsEnabled) return;
  scrapeHooks.set(key, hook);
  scrapeFailures.inc({ collector: key }, 0);
}

let defaultsStarted = false;

/** The text exposition format: every scrape hook first (in parallel, each within its deadline). */
export async function exposition(): Promise<string> {
  if (!defaultsStarted) startProcessMetrics();
  await Promise.all([...scrapeHooks].map(async ([key, hook]) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([hook(), new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('deadline')), SCRAPE_HOOK_DEADLINE_MS); })]);
    } catch {
      scrapeFailures.inc({ collector: key });
    } finally {
      clearTimeout(timer);
    }
  }));
  return metricsRegistry.metrics();
}

/** Process metrics of prom-client: CPU, memory, heap, event-loop delay, GC, handles. */
export function startProcessMetrics(): void {
  if (defaultsStarted || !metricsEnabled) return;
  defaultsStarted = true;
  collectDefaultMetrics({ register: metricsRegistry, eventLoopMonitoringPrecision: 10 });
}

// ---- HTTP server ----

const KNOWN_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const METHOD_INDEX = new Map(KNOWN_METHODS.map((m, i) => [m, i]));
const OTHER_METHOD = KNOWN_METHODS.length;
/** The route label of a request that matched no route (404): never its raw path. */
export const UNMATCHED_ROUTE = 'unmatched';

/** One series of the request histogram: plain numbers, bumped in place. */
interface HttpSeries {
  labels: { http_request_method: string; http_route: string; http_response_status_code: string };
  /** Observations per bucket (not cumulative); the last slot counts those above every bound. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * `http_server_request_duration_seconds`, pre-aggregated (issue 27 bench: the metrics cost must stay
 * within 5 % of a signed request). Every request observes it, so its path allocates nothing: the
 * series of a (route, method, status) is found by two map lookups (the route template, then a
 * number), its bucket by a scan of the bounds, and the numbers are bumped in place. prom-client's
 * own histogram would build a label object, validate it and hash it into a string per observation.
 * The registry reads the series at scrape time in prom-client's histogram format (cumulative
 * `_bucket` lines with `le`, `_sum`, `_count`). Series are a closed set: routes x known methods x
 * statuses.
 */
class HttpDurationHistogram {
  readonly name = 'http_server_request_duration_seconds';
  readonly help = 'Duration of HTTP requests answered, by method, route template and status code (its _count is the request count)';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly byRoute = new Map<string, Map<number, HttpSeries>>();

  constructor(private readonly bounds: readonly number[]) {}

  observe(method: string, route: string | undefined, status: number, seconds: number): void {
    const label = route ?? UNMATCHED_ROUTE;
    let series = this.byRoute.get(label);
    if (series === undefined) {
      series = new Map();
      this.byRoute.set(label, series);
    }
    const methodIndex = METHOD_INDEX.get(method) ?? OTHER_METHOD;
    const code = status >= 100 && status <= 599 ? status : 0;
    const key = code * 8 + methodIndex;
    let one = series.get(key);
    if (one === undefined) {
      one = {
        labels: {
          http_request_method: methodIndex === OTHER_METHOD ? '_OTHER' : method,
          http_route: label,
          http_response_status_code: code === 0 ? 'other' : String(code),
        },
        buckets: new Float64Array(this.bounds.length + 1),
        sum: 0,
        count: 0,
      };
      series.set(key, one);
    }
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]) i++;
    one.buckets[i]++;
    one.sum += seconds;
    one.count++;
  }

  /** The registry's read (prom-client's histogram format). */
  get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const series of this.byRoute.values()) {
      for (const one of series.values()) {
        let cumulative = 0;
        for (let i = 0; i < this.bounds.length; i++) {
          cumulative += one.buckets[i];
          values.push({ labels: { ...one.labels, le: this.bounds[i] }, value: cumulative, metricName: `${this.name}_bucket` });
        }
        values.push({ labels: { ...one.labels, le: '+Inf' }, value: one.count, metricName: `${this.name}_bucket` });
        values.push({ labels: { ...one.labels }, value: one.sum, metricName: `${this.name}_sum` });
        values.push({ labels: { ...one.labels }, value: one.count, metricName: `${this.name}_count` });
      }
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.byRoute.clear();
  }
}

const httpDuration = (() => {
  if (!metricsEnabled) return null;
  const existing = metricsRegistry.getSingleMetric('http_server_request_duration_seconds') as unknown as HttpDurationHistogram | undefined;
  if (existing) return existing;
  const created = new HttpDurationHistogram(LATENCY_BUCKETS);
  metricsRegistry.registerMetric(created as unknown as Parameters<Registry['registerMetric']>[0]);
  return created;
})();

/**
 * One answered request. `route` is the matched route's template (Fastify's routeOptions.url, e.g.
 * /open-api/card/v1/:cardId) or undefined; a method outside the known set is `_OTHER` (as the
 * OpenTelemetry HTTP conventions say), so a hostile client cannot mint label values.
 */
export function observeHttpRequest(method: string, route: string | undefined, status: number, seconds: number): void {
  httpDuration?.observe(method, route, status, seconds);
}

// ---- Database pool ----

const poolConnections = gauge('db_client_connections', 'Database connections of this process by state (idle, used)', ['db_client_connection_state']);
const poolPending = gauge('db_client_connection_pending_requests', 'Queries waiting for a database connection (the pool is exhausted while above zero)');
const poolMax = gauge('db_client_connection_max', 'Largest number of database connections this process opens (DB_POOL_SIZE)');

/** The pool figures at every scrape. The embedded database has no pool: its gauges stay unset. */
export function observeDatabasePool(db: Db): void {
  beforeScrape('db-pool', async () => {
    const stats = db.poolStats?.();
    if (!stats) return;
    poolConnections.set({ db_client_connection_state: 'idle' }, stats.idle);
    poolConnections.set({ db_client_connection_state: 'used' }, stats.total - stats.idle);
    poolPending.set(stats.waiting);
    poolMax.set(stats.max);
  });
}

// ---- Refusals before the business: rate limits and failed authentication ----

/** Requests refused with 429, by limit: partner (per-partner budget), preAuth, admin, authFailures, adminAuthFailures (by address). */
export const rateLimitRefusals = counter('http_rate_limited_total', 'Requests refused with 429, by the limit that refused them', ['kind']);
/** Failed authentications, by kind (signed: partner and network signatures; admin: the bearer token; console-login) and the error code answered. */
export const authenticationFailures = counter('http_authentication_failures_total', 'Failed authentications by kind (signed, admin, console-login) and the code answered (DAPI_SIGN_INVALID, SYS_UNAUTHORIZED, ...)', ['kind', 'reason']);

// ---- The scrape endpoint on its own port ----

/** GET /metrics on METRICS_PORT: nothing else is served there. */
export function createMetricsServer(): http.Server {
  return http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Only GET /metrics is served on this port\n');
      return;
    }
    exposition().then(
      (text) => res.writeHead(200, { 'content-type': EXPOSITION_CONTENT_TYPE }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n'),
    );
  });
}
