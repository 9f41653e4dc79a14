/**
 * The serializing batch of the OTLP/HTTP span export (issue 27 bench, docs/observability.md "Export"):
 * spans serialized with the SDK's own OTLP serializer a chunk at a time, the serialized requests joined
 * into one export request. It runs on the export worker thread (tracing-export-worker.ts); this module
 * loads no more of OpenTelemetry than the API and the OTLP serializers.
 */
import { diag, TraceFlags } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { tracing } from '@opentelemetry/sdk-node';

/** A wire format of OTLP/HTTP whose requests can be joined: several serialized requests make one. */
export interface JoinableFormat {
  contentType: string;
  serialize(spans: tracing.ReadableSpan[]): Uint8Array;
  /** One ExportTraceServiceRequest holding every ResourceSpans of `parts` (each a serialized request). */
  join(parts: Uint8Array[]): Uint8Array;
  /** The collector's answer. */
  deserializeResponse(data: Uint8Array): unknown;
}

/**
 * Protobuf: an ExportTraceServiceRequest has one field, the repeated `resource_spans`, and two
 * serialized messages one after the other parse as one message with both lists (the protobuf
 * encoding's rule for repeated fields), so joining is concatenating.
 */
export const PROTOBUF: JoinableFormat = {
  contentType: 'application/x-protobuf',
  serialize: (spans) => ProtobufTraceSerializer.serializeRequest(spans)!,
  deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
  join: (parts) => (parts.length === 1 ? parts[0] : Buffer.concat(parts)),
};

/** JSON: each part is `{"resourceSpans":[...]}`; the joined request lists every part's array items. */
const JSON_HEAD = Buffer.from('{"resourceSpans":[');
const JSON_TAIL = Buffer.from(']}');
export const JSON_FORMAT: JoinableFormat = {
  contentType: 'application/json',
  serialize: (spans) => JsonTraceSerializer.serializeRequest(spans)!,
  deserializeResponse: (data) => JsonTraceSerializer.deserializeResponse(data),
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

export interface SerializedBatch {
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
  }
}

/** The wire format OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL asks for, when it is one this processor joins (OTLP/HTTP). */
export function joinableFormat(env: NodeJS.ProcessEnv): JoinableFormat | null {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  if (protocol === 'http/protobuf') return PROTOBUF;
  if (protocol === 'http/json') return JSON_FORMAT;
  return null;
}

/** In a posted span's flags (WireSpan): its parent came from another process (a caller's traceparent). */
export const WIRE_REMOTE_PARENT = 0x100;

export function positiveInteger(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}
