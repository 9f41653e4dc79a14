/**
 * The OpenTelemetry Node SDK, loaded only by startTracing (src/platform/tracing.ts) when an OTLP
 * endpoint is configured. The exporter follows the standard OTEL_* variables (endpoint, protocol
 * http/protobuf by default or http/json, headers, service name, sampler, OTEL_BSP_*); over OTLP/HTTP
 * the spans go through `WorkerSpanProcessor` below to the export worker (tracing-export-worker.ts: the
 * SDK's serializer and transport on a thread of its own). The
 * propagator is the SDK's default (W3C trace context and baggage).
 *
 * No instrumentation is registered: the service makes its own SERVER, business-step, CLIENT and
 * SQL spans (tracing.ts), because the http, Fastify and pg instrumentations cost 60-70 % of the
 * throughput of a signed request (issue 27 bench, docs/observability.md "Cost").
 */
import { diag, ROOT_CONTEXT, TraceFlags, type Context, type ContextManager, type SpanContext } from '@opentelemetry/api';
import { NodeSDK, type tracing } from '@opentelemetry/sdk-node';
import { Worker } from 'node:worker_threads';
import type { TracingHandle } from './tracing.ts';
import { joinableFormat, positiveInteger, WIRE_REMOTE_PARENT, type JoinableFormat } from './tracing-export.ts';
import type { ExportWorkerData, WireRest, WireScope, WireSpan, WorkerAnswer, WorkerMessage } from './tracing-export-worker.ts';

/**
 * A context manager without async hooks: a context is active while a function runs synchronously
 * inside `with` (and in functions bound to it), never across an `await`. The SDK's default, an
 * AsyncLocalStorage, turns on promise hooks for every promise of the process on Node 20, which
 * alone cost 10-13 % of the throughput in the issue 27 bench; the service carries its trace
 * position across awaits itself (tracing.ts, `traceHere`).
 */
export class SynchronousContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;

  active(): Context {
    return this.current;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const previous = this.current;
    this.current = context;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    const manager = this;
    return function bound(this: unknown, ...args: unknown[]) {
      return manager.with(context, fn, this, ...args);
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.current = ROOT_CONTEXT;
    return this;
  }
}


/**
 * The span processor of the OTLP/HTTP export (protobuf or JSON): the data of each ended, sampled span
 * is posted to the export worker (tracing-export-worker.ts says why there), which serializes, batches
 * and sends. Spans are posted by `chunkSize` or after at most `POST_DELAY_MS`, so they die young here.
 * The worker keeps the process alive only while a flush is under way.
 */
export class WorkerSpanProcessor implements tracing.SpanProcessor {
  private readonly worker: Worker;
  private pending: WireSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Posts wait here while a new resource's attributes settle (the host id is read asynchronously). */
  private settling: Promise<void> | null = null;
  private readonly resourceIds = new WeakMap<object, number>();
  private newResources: { id: number; resource: tracing.ReadableSpan['resource'] }[] = [];
  /** Instrumentation scopes by id, like resources: one object each in the worker, so its serializer groups their spans. */
  private readonly scopeIds = new WeakMap<object, number>();
  private newScopes: WireScope[] = [];
  private readonly flushes = new Map<number, () => void>();
  private nextId = 1;

  private readonly chunkSize: number;

  constructor(env: NodeJS.ProcessEnv, data: ExportWorkerData) {
    this.chunkSize = data.chunkSize;
    // Compiled (dist/) the worker is JavaScript; from the sources (tsx) TypeScript, loaded by the same loader.
    const file = new URL(`./tracing-export-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
    this.worker = new Worker(file, { env: { ...env }, workerData: data });
    this.worker.unref();
    this.worker.on('message', ({ flushed }: WorkerAnswer) => {
      this.flushes.get(flushed)?.();
      this.flushes.delete(flushed);
      if (this.flushes.size === 0) this.worker.unref();
    });
    this.worker.on('error', (err) => {
      diag.error('span export worker failed', err);
      for (const done of this.flushes.values()) done();
      this.flushes.clear();
    });
  }

  onStart(): void {}

  onEnd(span: tracing.ReadableSpan): void {
    const context = span.spanContext();
    if ((context.traceFlags & TraceFlags.SAMPLED) === 0) return;
    let resource = this.resourceIds.get(span.resource);
    if (resource === undefined) {
      resource = this.nextId++;
      this.resourceIds.set(span.resource, resource);
      this.newResources.push({ id: resource, resource: span.resource });
    }
    const scope = span.instrumentationScope;
    let scopeId = this.scopeIds.get(scope);
    if (scopeId === undefined) {
      scopeId = this.nextId++;
      this.scopeIds.set(scope, scopeId);
      this.newScopes.push({ id: scopeId, name: scope.name, version: scope.version, schemaUrl: scope.schemaUrl });
    }
    const parent = span.parentSpanContext;
    const { startTime, endTime, status } = span;
    this.pending.push([
      span.name,
      span.kind,
      context.traceId,
      context.spanId,
      parent?.spanId,
      parent?.isRemote ? context.traceFlags | WIRE_REMOTE_PARENT : context.traceFlags,
      startTime[0], startTime[1], endTime[0], endTime[1],
      status.code,
      status.message,
      span.attributes,
      scopeId,
      resource,
      wireRest(span, context),
    ]);
    if (this.pending.length >= this.chunkSize) this.post();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.post(), POST_DELAY_MS);
      this.timer.unref();
    }
  }

  /** Posts the pending spans (and `flush`), after the attributes of a new resource have settled. */
  private post(flush?: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const spans = this.pending;
    this.pending = [];
    const defined = this.newResources;
    this.newResources = [];
    const scopes = this.newScopes;
    this.newScopes = [];
    const send = () => {
      const message: WorkerMessage = { spans, flush };
      if (scopes.length > 0) message.scopes = scopes;
      if (defined.length > 0) message.resources = defined.map(({ id, resource }) => ({ id, attributes: resource.attributes, schemaUrl: resource.schemaUrl }));
      this.worker.postMessage(message);
    };
    const unsettled = defined.filter(({ resource }) => resource.asyncAttributesPending);
    if (unsettled.length > 0 || this.settling) {
      const settled = (this.settling ?? Promise.resolve())
        .then(() => Promise.all(unsettled.map(({ resource }) => resource.waitForAsyncAttributes?.())))
        .then(send, (err: unknown) => diag.error('span export: resource attributes failed', err));
      this.settling = settled;
      void settled.then(() => {
        if (this.settling === settled) this.settling = null;
      });
    } else send();
  }

  forceFlush(): Promise<void> {
    const id = this.nextId++;
    return new Promise<void>((resolve) => {
      if (this.flushes.size === 0) this.worker.ref();
      this.flushes.set(id, resolve);
      this.post(id);
    });
  }

  async shutdown(): Promise<void> {
    await this.forceFlush();
    await this.worker.terminate();
  }
}

/**
 * The rarely set parts of a span (trace state, events, links, dropped counts), posted only when one is
 * set: a SERVER or SQL span of this service has none.
 */
function wireRest(span: tracing.ReadableSpan, context: SpanContext): WireRest | undefined {
  const traceState = context.traceState?.serialize();
  if (!traceState && span.events.length === 0 && span.links.length === 0 && span.droppedAttributesCount === 0
    && span.droppedEventsCount === 0 && span.droppedLinksCount === 0) return undefined;
  return {
    traceState,
    droppedAttributesCount: span.droppedAttributesCount,
    events: span.events,
    droppedEventsCount: span.droppedEventsCount,
    links: span.links.map((link) => ({
      traceId: link.context.traceId,
      spanId: link.context.spanId,
      traceFlags: link.context.traceFlags,
      isRemote: link.context.isRemote,
      traceState: link.context.traceState?.serialize(),
      attributes: link.attributes,
      droppedAttributesCount: link.droppedAttributesCount,
    })),
    droppedLinksCount: span.droppedLinksCount,
  };
}

/** Longest wait of an ended span on the main thread before it is posted to the export worker. */
const POST_DELAY_MS = 100;

/** The OTLP/HTTP export of spans: the SDK's serializer and transport for the OTEL_* variables, on the export worker. */
function workerProcessor(env: NodeJS.ProcessEnv, format: JoinableFormat): WorkerSpanProcessor {
  const maxExportBatchSize = positiveInteger(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512);
  const chunkSize = Math.min(32, maxExportBatchSize);
  return new WorkerSpanProcessor(env, {
    contentType: format.contentType,
    chunkSize,
    maxExportBatchSize,
    scheduledDelayMs: positiveInteger(env.OTEL_BSP_SCHEDULE_DELAY, 5000),
    maxQueueSize: Math.max(positiveInteger(env.OTEL_BSP_MAX_QUEUE_SIZE, 2048), maxExportBatchSize),
  });
}

export async function startSdk(env: NodeJS.ProcessEnv): Promise<TracingHandle> {
  const traces = env.OTEL_TRACES_EXPORTER?.trim();
  const format = !traces || traces === 'otlp' ? joinableFormat(env) : null;
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || 'card-issuing-service',
    contextManager: new SynchronousContextManager(),
    instrumentations: [],
    // OTLP/HTTP (protobuf or JSON): the serializing batch processor; another exporter or protocol
    // (grpc, console, none): the SDK's own from the OTEL_* variables.
    ...(format ? { spanProcessors: [workerProcessor(env, format)] } : {}),
    // Traces only: the metrics are Prometheus's (GET /metrics) and the logs go to stdout, so the
    // SDK's default OTLP metrics and logs exporters are not started.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
