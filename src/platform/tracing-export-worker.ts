/**
 * The OTLP/HTTP span export on a worker thread (issue 27 bench; started by tracing-sdk.ts,
 * `WorkerSpanProcessor`). The main thread posts the data of ended spans; here they are serialized
 * with the SDK's OTLP serializer in chunks and sent in export requests by the SDK's OTLP/HTTP transport
 * (`SerializingSpanProcessor`, tracing-export.ts; its retries, timeout, headers, compression and
 * concurrency limit follow the OTEL_* variables of the worker's environment).
 *
 * Why a thread of its own, measured in the bench (docs/observability.md "Cost"):
 * - an export request on the main thread is a `ClientRequest`, its response an `IncomingMessage` and
 *   its socket a client `Socket`, running the same Node functions (streams, `_http_outgoing`,
 *   `_http_incoming`) as the service's requests with objects of other shapes: every export
 *   deoptimized those hot functions ("wrong map") and the main thread recompiled them;
 * - the serializer's optimized code was thrown away at every major collection ("weak objects": the
 *   service then ran with --optimize-for-size, whose collections drop unused maps) and recompiled, and its
 *   garbage and the spans waiting for their chunk were promoted in the main thread's heap.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { HrTime, Link, SpanContext, SpanStatus, TraceState } from '@opentelemetry/api';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import type { tracing } from '@opentelemetry/sdk-node';
import { JSON_FORMAT, PROTOBUF, SerializingSpanProcessor, type SerializedBatch, type SerializingProcessorOptions } from './tracing-export.ts';

/** What the main thread posts of an ended span: its data, structured-clonable. */
export interface WireSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState: string | undefined;
  parentSpanId: string | undefined;
  parentIsRemote: boolean | undefined;
  startTime: HrTime;
  endTime: HrTime;
  attributes: tracing.ReadableSpan['attributes'];
  droppedAttributesCount: number;
  events: tracing.ReadableSpan['events'];
  droppedEventsCount: number;
  links: WireLink[];
  droppedLinksCount: number;
  status: SpanStatus;
  scope: tracing.ReadableSpan['instrumentationScope'];
  /** The id of its resource, defined in this message or an earlier one. */
  resource: number;
}

export interface WireLink {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote: boolean | undefined;
  traceState: string | undefined;
  attributes: Link['attributes'];
  droppedAttributesCount: number | undefined;
}

/** A resource the main thread's spans refer to by id (its attributes settled). */
export interface WireResource {
  id: number;
  attributes: tracing.ReadableSpan['resource']['attributes'];
  schemaUrl: string | undefined;
}

export interface WorkerMessage {
  resources?: WireResource[];
  spans: WireSpan[];
  /** Export everything now and answer `{ flushed }` with this id. */
  flush?: number;
}

export interface WorkerAnswer {
  flushed: number;
}

export interface ExportWorkerData extends SerializingProcessorOptions {
  contentType: string;
}

/** A trace state known by its serialized form: the serializers only call `serialize`. */
class SerializedTraceState {
  constructor(private readonly text: string) {}
  serialize(): string {
    return this.text;
  }
}

const traceState = (text: string | undefined) => (text === undefined ? undefined : (new SerializedTraceState(text) as unknown as TraceState));

/** A span as the OTLP serializers read it (the fields of `ReadableSpan` they use). */
class ExportedSpan {
  readonly name: string;
  readonly kind: number;
  readonly parentSpanContext: { spanId: string; isRemote: boolean | undefined } | undefined;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly attributes: WireSpan['attributes'];
  readonly droppedAttributesCount: number;
  readonly events: WireSpan['events'];
  readonly droppedEventsCount: number;
  readonly links: Link[];
  readonly droppedLinksCount: number;
  readonly status: SpanStatus;
  readonly instrumentationScope: WireSpan['scope'];
  private readonly context: SpanContext;

  constructor(span: WireSpan, readonly resource: unknown) {
    this.name = span.name;
    this.kind = span.kind;
    this.context = { traceId: span.traceId, spanId: span.spanId, traceFlags: span.traceFlags, traceState: traceState(span.traceState) };
    this.parentSpanContext = span.parentSpanId === undefined ? undefined : { spanId: span.parentSpanId, isRemote: span.parentIsRemote };
    this.startTime = span.startTime;
    this.endTime = span.endTime;
    this.attributes = span.attributes;
    this.droppedAttributesCount = span.droppedAttributesCount;
    this.events = span.events;
    this.droppedEventsCount = span.droppedEventsCount;
    this.links = span.links.map((link) => ({
      context: { traceId: link.traceId, spanId: link.spanId, traceFlags: link.traceFlags, isRemote: link.isRemote, traceState: traceState(link.traceState) },
      attributes: link.attributes,
      droppedAttributesCount: link.droppedAttributesCount,
    }));
    this.droppedLinksCount = span.droppedLinksCount;
    this.status = span.status;
    this.instrumentationScope = span.scope;
  }

  spanContext(): SpanContext {
    return this.context;
  }
}

if (parentPort) {
  const port = parentPort;
  const { contentType, ...options } = workerData as ExportWorkerData;
  const format = contentType === JSON_FORMAT.contentType ? JSON_FORMAT : PROTOBUF;
  const delegate = createOtlpHttpExportDelegate<SerializedBatch, unknown>(
    convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': format.contentType }),
    { serializeRequest: (batch) => batch.body, deserializeResponse: (data) => format.deserializeResponse(data) },
    'otlp_http_span_exporter',
    { name: 'span', countItems: (batch) => batch.spans },
    undefined,
  );
  const processor = new SerializingSpanProcessor(format, (batch) => new Promise<void>((resolve, reject) => {
    delegate.export(batch, (result) => (result.code === 0 ? resolve() : reject(result.error ?? new Error('OTLP export failed'))));
  }), options);
  /** Resources by id; one object each, as the serializers group spans by resource identity. */
  const resources = new Map<number, { attributes: WireResource['attributes']; schemaUrl: string | undefined }>();
  port.on('message', (message: WorkerMessage) => {
    for (const r of message.resources ?? []) resources.set(r.id, { attributes: r.attributes, schemaUrl: r.schemaUrl });
    for (const span of message.spans) processor.onEnd(new ExportedSpan(span, resources.get(span.resource)) as unknown as tracing.ReadableSpan);
    if (message.flush !== undefined) {
      const flushed = message.flush;
      void processor.forceFlush().finally(() => port.postMessage({ flushed } satisfies WorkerAnswer));
    }
  });
}
