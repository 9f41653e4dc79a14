/**
 * The OTLP/HTTP protobuf span export on a worker thread (issue 27 bench; started by tracing-sdk.ts,
 * `WorkerSpanProcessor`). The main thread writes each ended span's OTLP bytes into a chunk and
 * transfers the chunk here (tracing-export.ts); here the spans are queued, grouped into export
 * requests (`ExportBatcher`) and sent by the SDK's OTLP/HTTP transport (its retries, timeout,
 * headers, compression and concurrency limit follow the OTEL_* variables of the worker's environment).
 *
 * Why a thread of its own, measured in the bench (docs/observability.md "Cost"):
 * - an export request on the main thread is a `ClientRequest`, its response an `IncomingMessage` and
 *   its socket a client `Socket`, running the same Node functions (streams, `_http_outgoing`,
 *   `_http_incoming`) as the service's requests with objects of other shapes: every export
 *   deoptimized those hot functions ("wrong map") and the main thread recompiled them;
 * - the requests waiting for their batch were promoted in the main thread's heap.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { diag } from '@opentelemetry/api';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { ExportBatcher, type ChunkResource, type ChunkScope } from './tracing-export.ts';

export interface WorkerMessage {
  /** Resources and scopes the chunk's spans (and later ones) refer to by id. */
  resources?: ({ id: number } & ChunkResource)[];
  scopes?: ({ id: number } & ChunkScope)[];
  /** Spans as written by `SpanChunkWriter` (transferred). */
  chunk?: Uint8Array;
  /** Export everything now and answer `{ flushed }` with this id. */
  flush?: number;
}

export interface WorkerAnswer {
  flushed: number;
}

export interface ExportWorkerData {
  /** Spans per export request (OTEL_BSP_MAX_EXPORT_BATCH_SIZE). */
  maxExportBatchSize: number;
  /** Longest wait of a queued span before its export (OTEL_BSP_SCHEDULE_DELAY). */
  scheduledDelayMs: number;
  /** Spans kept waiting at most; beyond, spans are dropped (OTEL_BSP_MAX_QUEUE_SIZE). */
  maxQueueSize: number;
}

interface Batch {
  body: Uint8Array;
  spans: number;
}

if (parentPort) {
  const port = parentPort;
  const options = workerData as ExportWorkerData;
  const delegate = createOtlpHttpExportDelegate<Batch, unknown>(
    convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
    { serializeRequest: (batch) => batch.body, deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data) },
    'otlp_http_span_exporter',
    { name: 'span', countItems: (batch) => batch.spans },
    undefined,
  );
  const batcher = new ExportBatcher(options);
  const exports = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  const send = (full: boolean) => {
    for (let batch = batcher.next(full); batch; batch = batcher.next(full)) {
      const spans = batch.spans;
      const sent = new Promise<void>((resolve) => {
        delegate.export(batch!, (result) => {
          if (result.code !== 0) diag.error(`span export failed: ${spans} spans dropped`, result.error);
          resolve();
        });
      }).finally(() => exports.delete(sent));
      exports.add(sent);
    }
    if (batcher.queued === 0 && timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    } else if (batcher.queued > 0 && timer === undefined) {
      timer = setTimeout(() => {
        timer = undefined;
        send(false);
      }, options.scheduledDelayMs);
    }
  };
  port.on('message', (message: WorkerMessage) => {
    for (const { id, ...resource } of message.resources ?? []) batcher.defineResource(id, resource);
    for (const { id, ...scope } of message.scopes ?? []) batcher.defineScope(id, scope);
    try {
      if (message.chunk && !batcher.add(message.chunk)) diag.warn('span export queue full (OTEL_BSP_MAX_QUEUE_SIZE): spans dropped');
    } catch (err) {
      // A chunk this thread cannot read is dropped whole; the export goes on with the next one.
      diag.error('span chunk unreadable: its spans are dropped', err);
    }
    send(message.flush === undefined);
    if (message.flush !== undefined) {
      const flushed = message.flush;
      void Promise.all([...exports]).finally(() => port.postMessage({ flushed } satisfies WorkerAnswer));
    }
  });
}
