/**
 * OpenTelemetry traces (issue 27, docs/observability.md). Off unless OTEL_EXPORTER_OTLP_ENDPOINT
 * (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set: then `startTracing` loads the Node SDK
 * (src/platform/tracing-sdk.ts) and exports spans over OTLP. While it is off not one OpenTelemetry
 * module is loaded: this file imports only types, and every function here is a no-op that
 * allocates nothing.
 *
 * The spans are the service's own, made with the OpenTelemetry API and named and attributed by
 * its semantic conventions: one SERVER span per request (`startServerSpan` / `endServerSpan`,
 * from the Fastify app), the business steps (`inSpan`), a CLIENT span with `traceparent` for every
 * outgoing request to a partner (`outgoingRequest`), and one span per SQL statement on PostgreSQL
 * (`statementSpan`, from the Db). Why not the http, Fastify and pg instrumentations: measured, they
 * cost 60-70 % of the throughput of a signed request (issue 27 bench, docs/observability.md "Cost").
 *
 * Context without async hooks: the SDK runs with a synchronous context manager (tracing-sdk.ts),
 * so a context is active only while a function runs synchronously inside `context.with` (an
 * AsyncLocalStorage would turn on promise hooks for every promise of the process on Node 20: 10-13 %
 * of the throughput alone). Where a business step continues after an `await`, the code carries its
 * position explicitly: `const here = traceHere(); ...; await here.run(() => nextStep())`.
 */
import type * as OtelApi from '@opentelemetry/api';
import type { IncomingMessage } from 'node:http';
import { ApiError } from './errors.ts';

type Api = typeof OtelApi;

let api: Api | null = null;
let tracer: OtelApi.Tracer | null = null;
/** The options of every SERVER span (one object: the SDK only reads them). */
let serverSpanOptions: OtelApi.SpanOptions = {};

export interface TracingHandle {
  /** Exports the spans still buffered and stops. */
  shutdown(): Promise<void>;
}

/** Whether the environment asks for traces (an OTLP endpoint is configured). */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Starts tracing when the environment asks for it; null (and nothing loaded) otherwise. Call it
 * before the app is built.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<TracingHandle | null> {
  if (!tracingRequested(env)) return null;
  if (api) throw new Error('tracing is already started in this process');
  const { startSdk } = await import('./tracing-sdk.ts');
  const handle = await startSdk(env);
  api = await import('@opentelemetry/api');
  tracer = api.trace.getTracer('card-issuing-service');
  serverSpanOptions = { kind: api.SpanKind.SERVER };
  spanKey = spanContextKey(api);
  propagationFields = api.propagation.fields().map((field) => field.toLowerCase());
  return handle;
}

/** The API's context key of the active span (it does not export it): read off a `getSpan` call. */
function spanContextKey(otel: Api): symbol {
  let key: symbol | undefined;
  otel.trace.getSpan({ getValue: (k: symbol) => { key = k; }, setValue: () => otel.ROOT_CONTEXT, deleteValue: () => otel.ROOT_CONTEXT });
  if (!key) throw new Error('OpenTelemetry API: no span context key');
  return key;
}

let spanKey: symbol | null = null;

/**
 * A request's context: its parent's values and its SERVER span, as `trace.setSpan(parent, span)` makes
 * it, without the copy of the parent's values the API's context makes at once (a Map and three
 * closures per request, issue 27 bench); derived contexts are the API's own.
 */
class RequestContext implements OtelApi.Context {
  constructor(private readonly parent: OtelApi.Context, private readonly span: OtelApi.Span) {}

  getValue(key: symbol): unknown {
    return key === spanKey ? this.span : this.parent.getValue(key);
  }

  setValue(key: symbol, value: unknown): OtelApi.Context {
    return this.parent.setValue(spanKey!, this.span).setValue(key, value);
  }

  deleteValue(key: symbol): OtelApi.Context {
    return this.parent.setValue(spanKey!, this.span).deleteValue(key);
  }
}

/** What a business step may note on its span: outcomes and codes, never card data or amounts. */
export interface SpanNotes {
  setAttribute(key: string, value: string | number | boolean): void;
}

const NO_SPAN: SpanNotes = { setAttribute() {} };

function failed(span: OtelApi.Span, err: unknown): void {
  if (err instanceof ApiError && err.httpStatus < 500) {
    span.setAttribute('app.error_code', err.code);
  } else {
    if (err instanceof Error) span.recordException(err);
    span.setStatus({ code: api!.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  }
}

/**
 * Runs `fn` in a span named after the business step, child of the active context (or a trace of
 * its own when there is none, as for a job item). The span's context is active while `fn` runs
 * synchronously; code of `fn` that continues after an `await` and starts a nested step carries
 * the position with `traceHere()`. An ApiError below 500 is an answer (a refusal), not a failure
 * of the step: the span notes its code and stays OK.
 */
export function inSpan<T>(name: string, fn: (span: SpanNotes) => Promise<T>): Promise<T> {
  if (!tracer) return fn(NO_SPAN);
  const otel = api!;
  const parent = otel.context.active();
  const span = tracer.startSpan(name, undefined, parent);
  let result: Promise<T>;
  try {
    result = otel.context.with(otel.trace.setSpan(parent, span), fn, undefined, span);
  } catch (err) {
    failed(span, err);
    span.end();
    throw err;
  }
  return result.then((value) => {
    span.end();
    return value;
  }, (err: unknown) => {
    failed(span, err);
    span.end();
    throw err;
  });
}

/** A position in a trace, carried across an `await`. */
export interface TracePosition {
  /** Runs `fn` with this position active (while it runs synchronously): its spans are children of it. */
  run<T>(fn: () => T): T;
}

const NOWHERE: TracePosition = { run: (fn) => fn() };

/** The active position in the trace (NOWHERE while tracing is off or outside any trace), to resume after an `await`. */
export function traceHere(): TracePosition {
  if (!api) return NOWHERE;
  const otel = api;
  const here = otel.context.active();
  if (!otel.trace.getSpan(here)) return NOWHERE;
  return { run: (fn) => otel.context.with(here, fn) };
}

// ---- The SERVER span of a request ----

/** Probes and scrapes make no traces (one every few seconds from every prober is noise). */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);
const SERVER_TRACE = Symbol('serverTrace');

interface ServerTrace {
  span: OtelApi.Span;
  parent: OtelApi.Context;
  /** The span's context, made at its first use (a request whose handler starts no step needs none). */
  context?: OtelApi.Context;
}

type TracedRequest = IncomingMessage & { [SERVER_TRACE]?: ServerTrace };

/** The headers the configured propagators read (OTEL_PROPAGATORS; W3C trace context and baggage by default), lower case. */
let propagationFields: readonly string[] = [];

function carriesPropagation(headers: IncomingMessage['headers']): boolean {
  for (const field of propagationFields) if (headers[field] !== undefined) return true;
  return false;
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Starts the SERVER span of a request as it arrives, child of the caller's `traceparent` when it
 * sent a valid one (W3C propagator; the caller's sampling decision is kept). Named `METHOD` until
 * the route is known (`endServerSpan` renames it `METHOD /route/template`).
 */
export function startServerSpan(req: IncomingMessage): void {
  if (!tracer) return;
  const path = pathOf(req.url ?? '/');
  if (UNTRACED_PATHS.has(path)) return;
  const otel = api!;
  const method = req.method ?? 'GET';
  // A request without any header the propagators read (`traceparent`, `baggage` by default) starts a trace.
  const { headers } = req;
  const parent = carriesPropagation(headers) ? otel.propagation.extract(otel.ROOT_CONTEXT, headers) : otel.ROOT_CONTEXT;
  // The request attributes are set once the sampler has decided, on a recorded span only: the SDK
  // copies and checks start attributes before its sampler runs, for every request (issue 27 bench).
  // The samplers the OTEL_* variables configure do not read attributes.
  const span = tracer.startSpan(method, serverSpanOptions, parent);
  if (span.isRecording()) span.setAttributes({ 'http.request.method': method, 'url.path': path, 'url.scheme': 'http' });
  (req as TracedRequest)[SERVER_TRACE] = { span, parent };
}

/**
 * Ends the request's SERVER span with its route template and status (an error from 500 up).
 * `path`: replaces the `url.path` recorded at the start, for a path that carries a secret.
 */
export function endServerSpan(req: IncomingMessage, route: string | undefined, status: number, path?: string): void {
  const trace = (req as TracedRequest)[SERVER_TRACE];
  if (!trace) return;
  (req as TracedRequest)[SERVER_TRACE] = undefined;
  const { span } = trace;
  if (path !== undefined && span.isRecording()) span.setAttribute('url.path', path);
  if (route) {
    span.updateName(`${req.method} ${route}`);
    span.setAttribute('http.route', route);
  }
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) {
    span.setAttribute('error.type', String(status));
    span.setStatus({ code: api!.SpanStatusCode.ERROR });
  }
  span.end();
}

/** Runs `fn` (a route handler) in the request's trace: its business steps are children of the SERVER span. */
export function inRequestTrace<T>(req: IncomingMessage, fn: () => T): T {
  const trace = (req as TracedRequest)[SERVER_TRACE];
  if (!trace || !api) return fn();
  trace.context ??= new RequestContext(trace.parent, trace.span);
  return api.context.with(trace.context, fn);
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The trace id for a request's log lines: its SERVER span's while tracing is on (the caller's
 * trace when it sent a valid `traceparent`, else a new one); while tracing is off, the trace id
 * of a valid caller `traceparent`, so the caller can still find our lines. Undefined otherwise.
 * Call `startServerSpan` first.
 */
export function traceIdOf(req: IncomingMessage): string | undefined {
  const trace = (req as TracedRequest)[SERVER_TRACE];
  if (trace) return trace.span.spanContext().traceId;
  const header = req.headers.traceparent;
  const match = typeof header === 'string' ? TRACEPARENT.exec(header.trim()) : null;
  return match && !/^0+$/.test(match[1]) ? match[1] : undefined;
}

// ---- CLIENT spans: outgoing requests and SQL statements ----

/** The end of a CLIENT span; a no-op outside a recorded trace. */
export interface ClientSpan {
  /** False for the no-op span (tracing off, or outside a recorded trace). */
  readonly recording: boolean;
  end(outcome: { status?: number | null; error?: string }): void;
}

const NO_CLIENT_SPAN: ClientSpan = { recording: false, end() {} };

/**
 * An outgoing HTTP request to a partner (auth_url, webhook_url) at position `here` (default: the
 * active context): a CLIENT span under it, whose `traceparent` is set on `headers`. Outside any
 * trace nothing is recorded and no header is added.
 */
export function outgoingRequest(method: string, url: URL, headers: Record<string, string>, here?: TracePosition): ClientSpan {
  if (!tracer) return NO_CLIENT_SPAN;
  const otel = api!;
  const parent = here ? here.run(() => otel.context.active()) : otel.context.active();
  if (!otel.trace.getSpan(parent)) return NO_CLIENT_SPAN;
  const span = tracer.startSpan(method, {
    kind: otel.SpanKind.CLIENT,
    attributes: {
      'http.request.method': method,
      'server.address': url.hostname,
      'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
      // The path only: a query string could carry a partner's token.
      'url.full': `${url.protocol}//${url.host}${url.pathname}`,
    },
  }, parent);
  otel.propagation.inject(otel.trace.setSpan(parent, span), headers);
  return {
    recording: true,
    end({ status, error }) {
      if (status) span.setAttribute('http.response.status_code', status);
      if (error !== undefined || (status ?? 0) >= 400) {
        span.setAttribute('error.type', status ? String(status) : 'transport');
        span.setStatus({ code: otel.SpanStatusCode.ERROR, message: error });
      }
      span.end();
    },
  };
}

/** Where SQL statements go, for their spans. */
export interface DatabaseTarget {
  namespace: string;
  address: string;
  port: number;
}

const SQL_OPERATION = /^\s*([A-Za-z]+)/;

/**
 * One SQL statement on PostgreSQL: a CLIENT span under the active context (or `here`) when that
 * span is recording; statement text only, parameters are never recorded (they can be card data).
 * Statements outside a recorded trace (jobs' polls, shared batched reads) make none.
 */
export function statementSpan(sql: string, target: DatabaseTarget, here?: TracePosition): ClientSpan {
  if (!tracer) return NO_CLIENT_SPAN;
  const otel = api!;
  const parent = here ? here.run(() => otel.context.active()) : otel.context.active();
  if (!otel.trace.getSpan(parent)?.isRecording()) return NO_CLIENT_SPAN;
  const operation = (SQL_OPERATION.exec(sql)?.[1] ?? 'SQL').toUpperCase();
  const span = tracer.startSpan(`${operation} ${target.namespace}`, {
    kind: otel.SpanKind.CLIENT,
    attributes: {
      'db.system.name': 'postgresql',
      'db.namespace': target.namespace,
      'db.operation.name': operation,
      'db.query.text': sql,
      'server.address': target.address,
      'server.port': target.port,
    },
  }, parent);
  return {
    recording: true,
    end({ error }) {
      if (error !== undefined) {
        span.setAttribute('error.type', 'db_error');
        span.setStatus({ code: otel.SpanStatusCode.ERROR, message: error });
      }
      span.end();
    },
  };
}
