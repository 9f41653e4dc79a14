/**
 * OTLP/HTTP protobuf export in two halves (issue 27, docs/observability.md "Export"):
 *
 * - on the main thread, each ended span is written once, as the bytes of its OTLP `Span` message,
 *   into a chunk (`SpanChunkWriter`): no object outlives the call, and a chunk of many spans is one
 *   ArrayBuffer handed (transferred, not copied) to the export worker;
 * - on the export worker, the chunks' spans are grouped by resource and instrumentation scope and
 *   the export request is assembled around their bytes (`ExportBatcher`), then sent by the SDK's
 *   OTLP/HTTP transport.
 *
 * The bytes are the SDK's: the span is written field by field as the SDK's protobuf serializer
 * (`@opentelemetry/otlp-transformer`, trace-serializer.js `serializeSpan`, which it does not export)
 * writes it, with the SDK's own `ProtobufWriter` and attribute, time, resource and scope writers, and
 * the request groups spans as its `serializeTraceExportRequest` does; test/observability-tracing.test.ts
 * compares the requests byte for byte with `ProtobufTraceSerializer.serializeRequest` of the same spans,
 * so an SDK upgrade that changes its encoding fails there.
 */
import type { HrTime, SpanContext } from '@opentelemetry/api';
import { ProtobufWriter } from '@opentelemetry/otlp-transformer/build/src/common/protobuf/protobuf-writer.js';
import { writeAttributes, writeHrTimeAsFixed64, writeInstrumentationScope, writeResource } from '@opentelemetry/otlp-transformer/build/src/common/protobuf/common-serializer.js';
import { hexToBinary } from '@opentelemetry/otlp-transformer/build/src/common/hex-to-binary.js';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

/** Span.flags as the SDK writes them: the trace flags, and whether the parent (or linked) context is remote. */
function spanFlags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0);
}

/** Span.Status: message (2) when set, code (3). */
function writeStatus(w: ProtobufWriter, status: ReadableSpan['status']): void {
  const start = w.startLengthDelimited();
  const from = w.pos;
  if (status.message) {
    w.writeTag(2, 2);
    w.writeString(status.message);
  }
  w.writeTag(3, 0);
  w.writeVarint(status.code);
  w.finishLengthDelimited(start, w.pos - from);
}

/** trace_id (1), span_id (2) and trace_state (3) when set: the first fields of a Span and of a Span.Link alike. */
function writeContext(w: ProtobufWriter, ctx: SpanContext): void {
  w.writeTag(1, 2);
  w.writeBytes(hexToBinary(ctx.traceId));
  w.writeTag(2, 2);
  w.writeBytes(hexToBinary(ctx.spanId));
  const state = ctx.traceState?.serialize();
  if (state) {
    w.writeTag(3, 2);
    w.writeString(state);
  }
}

function writeEvent(w: ProtobufWriter, event: ReadableSpan['events'][number]): void {
  const start = w.startLengthDelimited();
  const from = w.pos;
  w.writeTag(1, 1);
  writeHrTimeAsFixed64(w, event.time);
  w.writeTag(2, 2);
  w.writeString(event.name);
  if (event.attributes) writeAttributes(w, event.attributes, 3);
  w.writeTag(4, 0);
  w.writeVarint(event.droppedAttributesCount || 0);
  w.finishLengthDelimited(start, w.pos - from);
}

function writeLink(w: ProtobufWriter, link: ReadableSpan['links'][number]): void {
  const start = w.startLengthDelimited();
  const from = w.pos;
  const linked = link.context;
  writeContext(w, linked);
  if (link.attributes) writeAttributes(w, link.attributes, 4);
  w.writeTag(5, 0);
  w.writeVarint(link.droppedAttributesCount || 0);
  w.writeTag(6, 5);
  w.writeFixed32(spanFlags(linked.traceFlags, linked.isRemote));
  w.finishLengthDelimited(start, w.pos - from);
}

/** One `Span` message, length-delimited (its length, then its fields), as the SDK's serializer writes it. */
function writeSpan(w: ProtobufWriter, span: ReadableSpan): void {
  const start = w.startLengthDelimited();
  const from = w.pos;
  const ctx = span.spanContext();
  writeContext(w, ctx);
  const parent = span.parentSpanContext;
  if (parent?.spanId) {
    w.writeTag(4, 2);
    w.writeBytes(hexToBinary(parent.spanId));
  }
  w.writeTag(5, 2);
  w.writeString(span.name);
  // OTLP's SpanKind is the API's plus one (0 is "unspecified").
  const kind = span.kind == null ? 0 : span.kind + 1;
  if (kind !== 0) {
    w.writeTag(6, 0);
    w.writeVarint(kind);
  }
  w.writeTag(7, 1);
  writeHrTimeAsFixed64(w, span.startTime as HrTime);
  w.writeTag(8, 1);
  writeHrTimeAsFixed64(w, span.endTime as HrTime);
  if (span.attributes) writeAttributes(w, span.attributes, 9);
  w.writeTag(10, 0);
  w.writeVarint(span.droppedAttributesCount);
  for (const event of span.events) {
    w.writeTag(11, 2);
    writeEvent(w, event);
  }
  w.writeTag(12, 0);
  w.writeVarint(span.droppedEventsCount);
  for (const link of span.links) {
    w.writeTag(13, 2);
    writeLink(w, link);
  }
  w.writeTag(14, 0);
  w.writeVarint(span.droppedLinksCount);
  w.writeTag(15, 2);
  writeStatus(w, span.status);
  w.writeTag(16, 5);
  w.writeFixed32(spanFlags(ctx.traceFlags, parent?.isRemote));
  w.finishLengthDelimited(start, w.pos - from);
}

/**
 * A chunk of ended spans on the main thread: per span, the ids of its resource and scope (varints)
 * and its `ScopeSpans.spans` entry (tag 2, length, `Span`). `take` hands the bytes over and starts
 * a new chunk.
 */
export class SpanChunkWriter {
  private writer: ProtobufWriter;
  spans = 0;

  constructor(private readonly initialBytes: number) {
    this.writer = new ProtobufWriter(initialBytes);
  }

  get bytes(): number {
    return this.writer.pos;
  }

  add(span: ReadableSpan, resource: number, scope: number): void {
    const w = this.writer;
    w.writeVarint(resource);
    w.writeVarint(scope);
    w.writeTag(2, 2);
    writeSpan(w, span);
    this.spans++;
  }

  /** The chunk's bytes (their own ArrayBuffer, to transfer); the writer starts a new chunk. */
  take(): Uint8Array {
    const bytes = this.writer.finish();
    this.writer = new ProtobufWriter(this.initialBytes);
    this.spans = 0;
    return bytes;
  }
}

/** A resource as the worker gets it: its attributes (settled) and schema URL. */
export interface ChunkResource {
  attributes: ReadableSpan['resource']['attributes'];
  schemaUrl: string | undefined;
}

/** An instrumentation scope as the worker gets it. */
export interface ChunkScope {
  name: string;
  version: string | undefined;
  schemaUrl: string | undefined;
}

/** A length-delimited field's tag and length, as protobuf writes them. */
function fieldHead(field: number, length: number): Buffer {
  const w = new ProtobufWriter(16);
  w.writeTag(field, 2);
  w.writeVarint(length);
  return Buffer.from(w.finish());
}

/** The string field `field` (a schema URL), or nothing when empty, as the SDK writes it. */
function stringField(field: number, value: string | undefined): Buffer | null {
  if (!value) return null;
  const w = new ProtobufWriter(value.length * 3 + 8);
  w.writeTag(field, 2);
  w.writeString(value);
  return Buffer.from(w.finish());
}

/** One span of a chunk: the ids of its resource and scope and its `ScopeSpans.spans` entry. */
interface ChunkSpan {
  resource: number;
  scope: number;
  entry: Uint8Array;
}

function readVarint(bytes: Uint8Array, at: { pos: number }): number {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (at.pos >= bytes.length) throw new Error('span chunk: truncated varint');
    const b = bytes[at.pos++];
    value += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return value;
    shift += 7;
    if (shift > 49) throw new Error('span chunk: varint too long');
  }
}

/** The spans of a chunk, in order (their entries are views of the chunk's bytes). */
function readChunk(bytes: Uint8Array): ChunkSpan[] {
  const spans: ChunkSpan[] = [];
  const at = { pos: 0 };
  while (at.pos < bytes.length) {
    const resource = readVarint(bytes, at);
    const scope = readVarint(bytes, at);
    const entryStart = at.pos;
    if (bytes[at.pos++] !== 0x12) throw new Error('span chunk: expected a ScopeSpans.spans entry');
    const length = readVarint(bytes, at);
    at.pos += length;
    if (at.pos > bytes.length) throw new Error('span chunk: truncated span');
    spans.push({ resource, scope, entry: bytes.subarray(entryStart, at.pos) });
  }
  return spans;
}

/**
 * The export worker's batch: spans queued as chunks arrive (at most `maxQueueSize`; beyond, dropped
 * and counted), cut into export requests of at most `maxExportBatchSize` spans in arrival order. A
 * request groups its spans by resource, then by scope, in the order each first appears, as the SDK's
 * serializer does; the resource and scope fields are written once per resource and scope (with the
 * SDK's writers) and reused.
 */
export class ExportBatcher {
  private readonly resources = new Map<number, { field: Buffer; schemaUrl: Buffer | null }>();
  private readonly scopes = new Map<number, { field: Buffer; schemaUrl: Buffer | null }>();
  private queue: ChunkSpan[] = [];
  /** Spans not exported because the queue was full. */
  dropped = 0;

  constructor(private readonly options: { maxExportBatchSize: number; maxQueueSize: number }) {}

  get queued(): number {
    return this.queue.length;
  }

  defineResource(id: number, resource: ChunkResource): void {
    const w = new ProtobufWriter(1024);
    writeResource(w, { attributes: resource.attributes } as Parameters<typeof writeResource>[1], 1);
    this.resources.set(id, { field: Buffer.from(w.finish()), schemaUrl: stringField(3, resource.schemaUrl) });
  }

  defineScope(id: number, scope: ChunkScope): void {
    const w = new ProtobufWriter(256);
    writeInstrumentationScope(w, { name: scope.name, version: scope.version }, 1);
    this.scopes.set(id, { field: Buffer.from(w.finish()), schemaUrl: stringField(3, scope.schemaUrl) });
  }

  /** Queues a chunk's spans; false (and the chunk dropped) when the queue has no room for it. Throws, queuing nothing, when the chunk is unreadable. */
  add(chunk: Uint8Array): boolean {
    const spans = readChunk(chunk);
    for (const span of spans) {
      if (!this.resources.has(span.resource) || !this.scopes.has(span.scope)) throw new Error(`span chunk: unknown resource ${span.resource} or scope ${span.scope}`);
    }
    if (this.queue.length + spans.length > this.options.maxQueueSize) {
      this.dropped += spans.length;
      return false;
    }
    for (const span of spans) this.queue.push(span);
    return true;
  }

  /** The next export request and its span count, or null when nothing is queued; `full` only when a whole batch is queued. */
  next(full: boolean): { body: Uint8Array; spans: number } | null {
    const max = this.options.maxExportBatchSize;
    if (this.queue.length === 0 || (full && this.queue.length < max)) return null;
    const spans = this.queue.length <= max ? this.queue : this.queue.slice(0, max);
    this.queue = this.queue.length <= max ? [] : this.queue.slice(max);
    const grouped = new Map<number, Map<number, Uint8Array[]>>();
    for (const span of spans) {
      let scopes = grouped.get(span.resource);
      if (!scopes) grouped.set(span.resource, (scopes = new Map()));
      let entries = scopes.get(span.scope);
      if (!entries) scopes.set(span.scope, (entries = []));
      entries.push(span.entry);
    }
    const parts: Uint8Array[] = [];
    for (const [resourceId, scopes] of grouped) {
      const resource = this.resources.get(resourceId)!;
      const resourceParts: Uint8Array[] = [resource.field];
      for (const [scopeId, entries] of scopes) {
        const scope = this.scopes.get(scopeId)!;
        const scopeParts: Uint8Array[] = [scope.field, ...entries];
        if (scope.schemaUrl) scopeParts.push(scope.schemaUrl);
        const length = scopeParts.reduce((n, p) => n + p.length, 0);
        resourceParts.push(fieldHead(2, length), ...scopeParts);
      }
      if (resource.schemaUrl) resourceParts.push(resource.schemaUrl);
      const length = resourceParts.reduce((n, p) => n + p.length, 0);
      parts.push(fieldHead(1, length), ...resourceParts);
    }
    return { body: Buffer.concat(parts), spans: spans.length };
  }
}

/** The OTLP/HTTP protocol OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL asks for, when it is one of HTTP's. */
export function httpProtocol(env: NodeJS.ProcessEnv): 'http/protobuf' | 'http/json' | null {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  return protocol === 'http/protobuf' || protocol === 'http/json' ? protocol : null;
}

export function positiveInteger(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}
