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
import { JSON_FORMAT, PROTOBUF, SerializingSpanProcessor, WIRE_REMOTE_PARENT, type SerializedBatch, type SerializingProcessorOptions } from './tracing-export.ts';

/**
 * What the main thread posts of an ended span: its data in a compact record, structured-clonable
 * (an array: the structured copy writes no field names; times as numbers; the scope and resource by
 * id; the parts a span of this service rarely has in `rest`, absent when none is set).
 */
export type WireSpan = [
  name: string,
  kind: number,
  traceId: string,
  spanId: string,
  parentSpanId: string | undefined,
  /** The trace flags, with WIRE_REMOTE_PARENT when the parent is remote. */
  flags: number,
  startSeconds: number,
  startNanos: number,
  endSeconds: number,
  endNanos: number,
  statusCode: number,
  statusMessage: string | undefined,
  attributes: tracing.ReadableSpan['attributes'],
  /** The ids of its scope and its resource, defined in this message or an earlier one. */
  scope: number,
  resource: number,
  rest: WireRest | undefined,
];

export interface WireRest {
  traceState: string | undefined;
  droppedAttributesCount: number;
  events: tracing.ReadableSpan['events'];
  droppedEventsCount: number;
  links: WireLink[];
  droppedLinksCount: number;
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

/** An instrumentation scope the main thread's spans refer to by id. */
export interface WireScope {
  id: number;
  name: string;
  version: string | undefined;
  schemaUrl: string | undefined;
}

/** A resource the main thread's spans refer to by id (its attributes settled). */
export interface WireResource {
  id: number;
  attributes: tracing.ReadableSpan['resource']['attributes'];
  schemaUrl: string | undefined;
}

export interface WorkerMessage {
  resources?: WireResource[];
  scopes?: WireScope[];
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

const NO_EVENTS: tracing.ReadableSpan['events'] = [];
const NO_LINKS: Link[] = [];

/** A span as the OTLP serializers read it (the fields of `ReadableSpan` they use). */
class ExportedSpan {
  readonly name: string;
  readonly kind: number;
  readonly parentSpanContext: { spanId: string; isRemote: boolean } | undefined;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly attributes: tracing.ReadableSpan['attributes'];
  readonly droppedAttributesCount: number;
  readonly events: tracing.ReadableSpan['events'];
  readonly droppedEventsCount: number;
  readonly links: Link[];
  readonly droppedLinksCount: number;
  readonly status: SpanStatus;
  private readonly context: SpanContext;

  constructor(span: WireSpan, readonly instrumentationScope: unknown, readonly resource: unknown) {
    const flags = span[5];
    const rest = span[15];
    this.name = span[0];
    this.kind = span[1];
    this.context = { traceId: span[2], spanId: span[3], traceFlags: flags & 0xff, traceState: traceState(rest?.traceState) };
    this.parentSpanContext = span[4] === undefined ? undefined : { spanId: span[4], isRemote: (flags & WIRE_REMOTE_PARENT) !== 0 };
    this.startTime = [span[6], span[7]];
    this.endTime = [span[8], span[9]];
    this.status = span[11] === undefined ? { code: span[10] } : { code: span[10], message: span[11] };
    this.attributes = span[12];
    if (rest === undefined) {
      this.droppedAttributesCount = 0;
      this.events = NO_EVENTS;
      this.droppedEventsCount = 0;
      this.links = NO_LINKS;
      this.droppedLinksCount = 0;
    } else {
      this.droppedAttributesCount = rest.droppedAttributesCount;
      this.events = rest.events;
      this.droppedEventsCount = rest.droppedEventsCount;
      this.links = rest.links.map((link) => ({
        context: { traceId: link.traceId, spanId: link.spanId, traceFlags: link.traceFlags, isRemote: link.isRemote, traceState: traceState(link.traceState) },
        attributes: link.attributes,
        droppedAttributesCount: link.droppedAttributesCount,
      }));
      this.droppedLinksCount = rest.droppedLinksCount;
    }
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
  /** Scopes by id, likewise (the serializers group a resource's spans by scope identity). */
  const scopes = new Map<number, { name: string; version: string | undefined; schemaUrl: string | undefined }>();
  port.on('message', (message: WorkerMessage) => {
    for (const r of message.resources ?? []) resources.set(r.id, { attributes: r.attributes, schemaUrl: r.schemaUrl });
    for (const s of message.scopes ?? []) scopes.set(s.id, { name: s.name, version: s.version, schemaUrl: s.schemaUrl });
    for (const span of message.spans) processor.onEnd(new ExportedSpan(span, scopes.get(span[13]), resources.get(span[14])) as unknown as tracing.ReadableSpan);
    if (message.flush !== undefined) {
      const flushed = message.flush;
      void processor.forceFlush().finally(() => port.postMessage({ flushed } satisfies WorkerAnswer));
    }
  });
}
