/**
 * The OTLP/HTTP export of serialized spans, on a worker thread (issue 27 bench; started by
 * tracing-sdk.ts). The SDK's OTLP/HTTP transport (its retries, timeout, headers, compression,
 * concurrency limit; the OTEL_* variables of the worker's environment) sends each batch the main
 * thread posts, and answers `{ id, error? }`.
 *
 * Why a thread of its own: an export request on the main thread is a `ClientRequest`, its response
 * an `IncomingMessage` and its socket a client `Socket`, which run the same Node functions (streams,
 * `_http_outgoing`, `_http_incoming`) as the service's requests with objects of other shapes. Every
 * export deoptimized those hot functions ("wrong map"; their maps die between exports and come back
 * new) and the main thread kept recompiling them: in the bench, with 10 % of the requests sampled
 * (about one export a second) the optimizing compiler took 15 % of the service's CPU against 4 %.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';

export interface ExportRequest {
  id: number;
  body: Uint8Array;
  spans: number;
}

export interface ExportAnswer {
  id: number;
  /** The export failed (after the transport's retries): why. */
  error?: string;
}

interface SerializedBatch {
  body: Uint8Array;
  spans: number;
}

const { contentType } = workerData as { contentType: string };
const serializer = contentType === 'application/json' ? JsonTraceSerializer : ProtobufTraceSerializer;
const delegate = createOtlpHttpExportDelegate<SerializedBatch, unknown>(
  convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': contentType }),
  { serializeRequest: (batch) => batch.body, deserializeResponse: (data) => serializer.deserializeResponse(data) },
  'otlp_http_span_exporter',
  { name: 'span', countItems: (batch) => batch.spans },
  undefined,
);

parentPort!.on('message', ({ id, body, spans }: ExportRequest) => {
  delegate.export({ body, spans }, (result) => {
    const answer: ExportAnswer = result.code === 0 ? { id } : { id, error: String(result.error?.message ?? 'OTLP export failed') };
    parentPort!.postMessage(answer);
  });
});
