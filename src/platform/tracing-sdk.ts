/**
 * The OpenTelemetry trace SDK, loaded only by startTracing (src/platform/tracing.ts) when an OTLP
 * endpoint is configured. Over OTLP/HTTP (protobuf by default, or http/json), the common case, the
 * setup is trace-only and lean (`startSdk`): the SDK's tracer provider (@opentelemetry/sdk-trace-base's
 * `BasicTracerProvider`, which reads the sampler and span limits from OTEL_TRACES_SAMPLER(_ARG) and
 * OTEL_SPAN_* / OTEL_ATTRIBUTE_*), the resource of the standard detectors, the propagators of
 * OTEL_PROPAGATORS, OTEL_SDK_DISABLED and OTEL_LOG_LEVEL, as `NodeSDK` (@opentelemetry/sdk-node) reads
 * them, without loading it: NodeSDK loads every exporter and the metrics and logs SDKs (issue 27,
 * docs/observability.md "Cost"). The spans go through `WorkerSpanProcessor` below to the export worker
 * (tracing-export-worker.ts: the SDK's serializer and transport on a thread of its own). Another
 * exporter or protocol (OTEL_TRACES_EXPORTER=console/zipkin, several exporters, grpc) starts `NodeSDK`,
 * loaded only then, with its own processors and exporters.
 *
 * No instrumentation is registered: the service makes its own SERVER, business-step, CLIENT and
 * SQL spans (tracing.ts), because the http, Fastify and pg instrumentations cost 60-70 % of the
 * throughput of a signed request (issue 27 bench, docs/observability.md "Cost").
 */
import { context, diag, DiagConsoleLogger, propagation, ROOT_CONTEXT, trace, TraceFlags, type Context, type ContextManager, type TextMapPropagator } from '@opentelemetry/api';
import { CompositePropagator, diagLogLevelFromString, getBooleanFromEnv, getStringFromEnv, getStringListFromEnv, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, detectResources, envDetector, hostDetector, osDetector, processDetector, resourceFromAttributes, serviceInstanceIdDetector, type Resource, type ResourceDetector } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Worker } from 'node:worker_threads';
import type { TracingHandle } from './tracing.ts';
import { httpProtocol, positiveInteger, SpanChunkWriter } from './tracing-export.ts';
import type { ExportWorkerData, WorkerAnswer, WorkerMessage } from './tracing-export-worker.ts';

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
 * The span processor of the OTLP/HTTP protobuf export: each ended, sampled span is written at once as
 * its OTLP bytes into a chunk (tracing-export.ts, `SpanChunkWriter`), and a chunk of `chunkSpans`
 * spans (or `CHUNK_BYTES`, or whatever ended in `POST_DELAY_MS`) is transferred to the export worker
 * (tracing-export-worker.ts), which batches and sends. Nothing of a span outlives `onEnd` on this
 * thread but its bytes, outside the JavaScript heap. The worker keeps the process alive only while a
 * flush is under way.
 */
export class WorkerSpanProcessor implements SpanProcessor {
  private readonly worker: Worker;
  private readonly chunk = new SpanChunkWriter(CHUNK_BYTES + 16 * 1024);
  private timer: NodeJS.Timeout | undefined;
  /** Posts wait here while a new resource's attributes settle (the host id is read asynchronously). */
  private settling: Promise<void> | null = null;
  private readonly resourceIds = new WeakMap<object, number>();
  private newResources: { id: number; resource: ReadableSpan['resource'] }[] = [];
  /** Instrumentation scopes by id, like resources: the worker groups spans by scope. */
  private readonly scopeIds = new WeakMap<object, number>();
  private newScopes: NonNullable<WorkerMessage['scopes']> = [];
  private readonly flushes = new Map<number, () => void>();
  private nextId = 1;

  constructor(env: NodeJS.ProcessEnv, data: ExportWorkerData, private readonly chunkSpans: number) {
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

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
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
    try {
      this.chunk.add(span, resource, scopeId);
    } catch (err) {
      diag.error('span serialization failed', err);
      return;
    }
    if (this.chunk.spans >= this.chunkSpans || this.chunk.bytes >= CHUNK_BYTES) this.post();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.post(), POST_DELAY_MS);
      this.timer.unref();
    }
  }

  /** Transfers the chunk (and `flush`), after the attributes of a new resource have settled. */
  private post(flush?: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const chunk = this.chunk.spans > 0 ? this.chunk.take() : undefined;
    const defined = this.newResources;
    this.newResources = [];
    const scopes = this.newScopes;
    this.newScopes = [];
    const send = () => {
      const message: WorkerMessage = { chunk, flush };
      if (scopes.length > 0) message.scopes = scopes;
      if (defined.length > 0) message.resources = defined.map(({ id, resource }) => ({ id, attributes: resource.attributes, schemaUrl: resource.schemaUrl }));
      this.worker.postMessage(message, chunk ? [chunk.buffer as ArrayBuffer] : []);
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

/** Longest wait of an ended span on the main thread before its chunk goes to the export worker. */
const POST_DELAY_MS = 100;
/** A chunk goes to the worker once it holds this many bytes (a SERVER span is about 150-300). */
const CHUNK_BYTES = 48 * 1024;

/** The OTLP/HTTP protobuf export of spans: the SDK's encoding and transport for the OTEL_* variables, sent by the export worker. */
function workerProcessor(env: NodeJS.ProcessEnv): WorkerSpanProcessor {
  const maxExportBatchSize = positiveInteger(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512);
  return new WorkerSpanProcessor(env, {
    maxExportBatchSize,
    scheduledDelayMs: positiveInteger(env.OTEL_BSP_SCHEDULE_DELAY, 5000),
    maxQueueSize: Math.max(positiveInteger(env.OTEL_BSP_MAX_QUEUE_SIZE, 2048), maxExportBatchSize),
  }, Math.min(256, maxExportBatchSize));
}

/**
 * OTLP/HTTP JSON (a protocol for reading exports by eye, not for volume): the SDK's own batch
 * processor and JSON exporter on the main thread, both reading the OTEL_BSP_* and OTEL_EXPORTER_OTLP_*
 * variables themselves.
 */
async function jsonProcessor(): Promise<SpanProcessor> {
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  return new BatchSpanProcessor(new OTLPTraceExporter());
}

/** The service's name when neither OTEL_SERVICE_NAME nor the detected resource (OTEL_RESOURCE_ATTRIBUTES) names it. */
const SERVICE_NAME = 'card-issuing-service';

/**
 * Starts the trace SDK for the OTEL_* variables; see the top of this file. Like NodeSDK, the SDK's
 * own variables are read from `process.env` (`env` is the service's environment, the same object
 * when the service runs).
 */
export async function startSdk(env: NodeJS.ProcessEnv): Promise<TracingHandle> {
  const traces = env.OTEL_TRACES_EXPORTER?.trim();
  const protocol = !traces || traces === 'otlp' ? httpProtocol(env) : null;
  if (!protocol && traces !== 'none') return startNodeSdk(env);
  // NodeSDK's order: the diagnostic logger first, then nothing at all when the SDK is disabled.
  const logLevel = getStringFromEnv('OTEL_LOG_LEVEL');
  if (logLevel != null) diag.setLogger(new DiagConsoleLogger(), { logLevel: diagLogLevelFromString(logLevel) });
  if (getBooleanFromEnv('OTEL_SDK_DISABLED')) return { shutdown: async () => {} };
  context.setGlobalContextManager(new SynchronousContextManager().enable());
  const propagator = await propagatorFromEnv();
  if (propagator) propagation.setGlobalPropagator(propagator);
  // OTEL_TRACES_EXPORTER=none: no tracer provider (spans are the API's no-op ones), as NodeSDK.
  if (!protocol) return { shutdown: async () => {} };
  // The sampler and span limits: BasicTracerProvider reads OTEL_TRACES_SAMPLER(_ARG), OTEL_SPAN_* and OTEL_ATTRIBUTE_*.
  const provider = new BasicTracerProvider({ resource: resourceFromEnv(env), spanProcessors: [protocol === 'http/json' ? await jsonProcessor() : workerProcessor(env)] });
  trace.setGlobalTracerProvider(provider);
  return { shutdown: () => provider.shutdown() };
}

/**
 * NodeSDK for the exporters and protocols the export worker does not serve (console, zipkin, several
 * exporters, grpc): its processors and exporters from the OTEL_* variables, the same resource, and the
 * service's context manager; no metrics or logs (the metrics are GET /metrics, the logs stdout).
 */
async function startNodeSdk(env: NodeJS.ProcessEnv): Promise<TracingHandle> {
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const sdk = new NodeSDK({
    resource: resourceFromEnv(env),
    autoDetectResources: false,
    contextManager: new SynchronousContextManager(),
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}

/**
 * The resource NodeSDK makes: the SDK's default (service name, telemetry.sdk.*) merged with the
 * detectors' (OTEL_NODE_RESOURCE_DETECTORS, default env, process, host), then the service's name:
 * OTEL_SERVICE_NAME, else the one of OTEL_RESOURCE_ATTRIBUTES, else card-issuing-service.
 */
function resourceFromEnv(env: NodeJS.ProcessEnv): Resource {
  const detectors = detectorsFromEnv();
  const named = detectors.includes(envDetector) ? envDetector.detect().attributes?.['service.name'] : undefined;
  const serviceName = env.OTEL_SERVICE_NAME || (typeof named === 'string' && named ? named : SERVICE_NAME);
  return defaultResource().merge(detectResources({ detectors })).merge(resourceFromAttributes({ 'service.name': serviceName }));
}

/** NodeSDK's detectors: env, process and host unless OTEL_NODE_RESOURCE_DETECTORS names others (or all, or none). */
function detectorsFromEnv(): ResourceDetector[] {
  const names = getStringListFromEnv('OTEL_NODE_RESOURCE_DETECTORS');
  if (!names) return [envDetector, processDetector, hostDetector];
  const known = new Map<string, ResourceDetector>([
    ['host', hostDetector], ['os', osDetector], ['serviceinstance', serviceInstanceIdDetector], ['process', processDetector], ['env', envDetector],
  ]);
  if (names.includes('all')) return [...known.values()];
  if (names.includes('none')) return [];
  return names.flatMap((name) => {
    const detector = known.get(name);
    if (!detector) diag.warn(`Invalid resource detector "${name}" specified in the environment variable OTEL_NODE_RESOURCE_DETECTORS`);
    return detector ?? [];
  });
}

/**
 * NodeSDK's propagator: W3C trace context and baggage by default; OTEL_PROPAGATORS names others
 * (tracecontext, baggage, b3, b3multi, jaeger; none: no propagator). The B3 and Jaeger packages load
 * only when named.
 */
async function propagatorFromEnv(): Promise<TextMapPropagator | null> {
  const names = getStringListFromEnv('OTEL_PROPAGATORS');
  if (names == null) return new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] });
  if (names.includes('none')) return null;
  const unique = [...new Set(names)];
  const propagators: TextMapPropagator[] = [];
  for (const name of unique) {
    const made = await propagatorNamed(name);
    if (made) propagators.push(made);
    else diag.warn(`Propagator "${name}" requested through environment variable is unavailable.`);
  }
  if (propagators.length === 0) return null;
  return unique.length === 1 ? propagators[0] : new CompositePropagator({ propagators });
}

async function propagatorNamed(name: string): Promise<TextMapPropagator | null> {
  switch (name) {
    case 'tracecontext': return new W3CTraceContextPropagator();
    case 'baggage': return new W3CBaggagePropagator();
    case 'b3': return new (await import('@opentelemetry/propagator-b3')).B3Propagator();
    case 'b3multi': {
      const { B3InjectEncoding, B3Propagator } = await import('@opentelemetry/propagator-b3');
      return new B3Propagator({ injectEncoding: B3InjectEncoding.MULTI_HEADER });
    }
    case 'jaeger':
      diag.warn('The Jaeger propagator is deprecated and will be removed in a future release. Use the W3C TraceContext propagator ("tracecontext") instead.');
      return new (await import('@opentelemetry/propagator-jaeger')).JaegerPropagator();
    default: return null;
  }
}
