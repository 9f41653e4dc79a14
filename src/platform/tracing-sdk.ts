/**
 * The OpenTelemetry Node SDK, loaded only by startTracing (src/platform/tracing.ts) when an OTLP
 * endpoint is configured. The exporter follows the standard OTEL_* variables (endpoint, protocol
 * http/protobuf by default or http/json, headers, service name, sampler, OTEL_BSP_*); over OTLP/HTTP
 * the spans go through `SerializingSpanProcessor` below (the SDK's serializer and transport). The
 * propagator is the SDK's default (W3C trace context and baggage).
 *
 * No instrumentation is registered: the service makes its own SERVER, business-step, CLIENT and
 * SQL spans (tracing.ts), because the http, Fastify and pg instrumentations cost 60-70 % of the
 * throughput of a signed request (issue 27 bench, docs/observability.md "Cost").
 */
import { diag, ROOT_CONTEXT, TraceFlags, type Context, type ContextManager } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { NodeSDK, type tracing } from '@opentelemetry/sdk-node';
import { Worker } from 'node:worker_threads';
import type { TracingHandle } from './tracing.ts';
import type { ExportAnswer, ExportRequest } from './tracing-export-worker.ts';

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

/** A wire format of OTLP/HTTP whose requests can be joined: several serialized requests make one. */
interface JoinableFormat {
  contentType: string;
  serialize(spans: tracing.ReadableSpan[]): Uint8Array;
  /** One ExportTraceServiceRequest holding every ResourceSpans of `parts` (each a serialized request). */
  join(parts: Uint8Array[]): Uint8Array;
}

/**
 * Protobuf: an ExportTraceServiceRequest has one field, the repeated `resource_spans`, and two
 * serialized messages one after the other parse as one message with both lists (the protobuf
 * encoding's rule for repeated fields), so joining is concatenating.
 */
const PROTOBUF: JoinableFormat = {
  contentType: 'application/x-protobuf',
  serialize: (spans) => ProtobufTraceSerializer.serializeRequest(spans)!,
  join: (parts) => (parts.length === 1 ? parts[0] : Buffer.concat(parts)),
};

/** JSON: each part is `{"resourceSpans":[...]}`; the joined request lists every part's array items. */
const JSON_HEAD = Buffer.from('{"resourceSpans":[');
const JSON_TAIL = Buffer.from(']}');
const JSON_FORMAT: JoinableFormat = {
  contentType: 'application/json',
  serialize: (spans) => JsonTraceSerializer.serializeRequest(spans)!,
  join(parts) {
    if (parts.length === 1) return parts[0];
    const items: Uint8Array[] = [JSON_HEAD];
    for (const part of parts) {
      const body = Buffer.from(part.buffer, part.byteOffset, part.byteLength);
      if (!body.subarray(0, JSON_HEAD.length).equals(JSON_HEAD) || !body.subarray(body.length - JSON_TAIL.length).equals(JSON_TAIL)) {
        throw new Error('unexpected OTLP/JSON request shape');
      }
      const list = body.subarray(JSON_HEAD.length, body.length - JSON_TAIL.length);
      if (list.length === 0) continue;
      if (items.length > 1) items.push(Buffer.from(','));
      items.push(list);
    }
    items.push(JSON_TAIL);
    return Buffer.concat(items);
  },
};

interface SerializedBatch {
  body: Uint8Array;
  spans: number;
}

export interface SerializingProcessorOptions {
  /** Spans serialized together as they end (a small number: they die young, see below). */
  chunkSize: number;
  /** Spans per export request (OTEL_BSP_MAX_EXPORT_BATCH_SIZE). */
  maxExportBatchSize: number;
  /** Longest wait of an ended span before its export (OTEL_BSP_SCHEDULE_DELAY). */
  scheduledDelayMs: number;
  /** Serialized spans kept waiting at most; beyond, spans are dropped (OTEL_BSP_MAX_QUEUE_SIZE). */
  maxQueueSize: number;
}

/**
 * The batch span processor of the OTLP/HTTP export, serializing as spans end (issue 27 bench).
 * The SDK's BatchSpanProcessor keeps every ended span object until its batch of 512 is exported:
 * at thousands of requests per second those objects outlive the young generation and are
 * promoted, and the garbage collector was the largest item of the traced service's profile (26 %),
 * before protobuf serialization. Here every `chunkSize` ended spans are serialized at once with
 * the SDK's own OTLP serializer (the same bytes its exporter sends), the span objects die young,
 * and the serialized requests of `maxExportBatchSize` spans are joined into one export request sent
 * by the SDK's OTLP/HTTP transport (its retries, timeout, headers, compression and concurrency
 * limit). A collector receives the same spans as from the SDK's exporter; the resource and scope
 * are repeated once per chunk in the request (a few hundred bytes per `chunkSize` spans).
 */
export class SerializingSpanProcessor implements tracing.SpanProcessor {
  private pending: tracing.ReadableSpan[] = [];
  private parts: Uint8Array[] = [];
  private partSpans = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly exports = new Set<Promise<void>>();
  /** Spans not exported: the queue was full, or their export failed. */
  dropped = 0;

  constructor(
    private readonly format: JoinableFormat,
    private readonly send: (batch: SerializedBatch) => Promise<void>,
    private readonly options: SerializingProcessorOptions,
    /** Called once by `shutdown`, after the last export. */
    private readonly close?: () => Promise<void>,
  ) {}

  onStart(): void {}

  onEnd(span: tracing.ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    this.pending.push(span);
    if (this.pending.length >= this.options.chunkSize) this.serializePending();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.serializePending();
        this.exportParts();
      }, this.options.scheduledDelayMs);
      this.timer.unref();
    }
  }

  private serializePending(): void {
    const spans = this.pending;
    if (spans.length === 0) return;
    this.pending = [];
    if (this.partSpans + spans.length > this.options.maxQueueSize) {
      this.dropped += spans.length;
      return;
    }
    try {
      this.parts.push(this.format.serialize(spans));
      this.partSpans += spans.length;
    } catch (err) {
      this.dropped += spans.length;
      diag.error('span serialization failed', err);
      return;
    }
    if (this.partSpans >= this.options.maxExportBatchSize) this.exportParts();
  }

  private exportParts(): void {
    if (this.parts.length === 0) return;
    const batch = { body: this.format.join(this.parts), spans: this.partSpans };
    this.parts = [];
    this.partSpans = 0;
    const sent = this.send(batch).catch((err: unknown) => {
      this.dropped += batch.spans;
      diag.error('span export failed', err);
    }).finally(() => this.exports.delete(sent));
    this.exports.add(sent);
  }

  async forceFlush(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.serializePending();
    this.exportParts();
    await Promise.all([...this.exports]);
  }

  async shutdown(): Promise<void> {
    await this.forceFlush();
    await this.close?.();
  }
}

/** The wire format OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL asks for, when it is one this processor joins (OTLP/HTTP). */
export function joinableFormat(env: NodeJS.ProcessEnv): JoinableFormat | null {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  if (protocol === 'http/protobuf') return PROTOBUF;
  if (protocol === 'http/json') return JSON_FORMAT;
  return null;
}

function positiveInteger(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/**
 * The OTLP/HTTP transport on a worker thread (tracing-export-worker.ts says why): batches are posted
 * to it, their bytes moved, not copied, when the batch owns its buffer. The worker keeps the process
 * alive only while an export is under way.
 */
class WorkerExport {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve(): void; reject(err: Error): void }>();
  private nextId = 1;

  constructor(env: NodeJS.ProcessEnv, contentType: string) {
    // Compiled (dist/) the worker is JavaScript; from the sources (tsx) TypeScript, loaded by the same loader.
    const file = new URL(`./tracing-export-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
    this.worker = new Worker(file, { env: { ...env }, workerData: { contentType }, stdout: false, stderr: false });
    this.worker.unref();
    this.worker.on('message', ({ id, error }: ExportAnswer) => {
      const waiting = this.waiting.get(id);
      if (!waiting) return;
      this.waiting.delete(id);
      if (this.waiting.size === 0) this.worker.unref();
      if (error === undefined) waiting.resolve();
      else waiting.reject(new Error(error));
    });
    this.worker.on('error', (err) => {
      diag.error('span export worker failed', err);
      for (const waiting of this.waiting.values()) waiting.reject(err);
      this.waiting.clear();
    });
  }

  send(batch: SerializedBatch): Promise<void> {
    const id = this.nextId++;
    const { body } = batch;
    const owned = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer;
    return new Promise<void>((resolve, reject) => {
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(id, { resolve, reject });
      const request: ExportRequest = { id, body, spans: batch.spans };
      this.worker.postMessage(request, owned ? [body.buffer as ArrayBuffer] : []);
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

/** The OTLP/HTTP export of spans: the SDK's transport for the endpoint and headers of the OTEL_* variables, fed serialized requests. */
function serializingProcessor(env: NodeJS.ProcessEnv, format: JoinableFormat): SerializingSpanProcessor {
  const transport = new WorkerExport(env, format.contentType);
  const maxExportBatchSize = positiveInteger(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512);
  return new SerializingSpanProcessor(format, (batch) => transport.send(batch), {
    chunkSize: Math.min(32, maxExportBatchSize),
    maxExportBatchSize,
    scheduledDelayMs: positiveInteger(env.OTEL_BSP_SCHEDULE_DELAY, 5000),
    maxQueueSize: Math.max(positiveInteger(env.OTEL_BSP_MAX_QUEUE_SIZE, 2048), maxExportBatchSize),
  }, () => transport.close());
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
    ...(format ? { spanProcessors: [serializingProcessor(env, format)] } : {}),
    // Traces only: the metrics are Prometheus's (GET /metrics) and the logs go to stdout, so the
    // SDK's default OTLP metrics and logs exporters are not started.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
