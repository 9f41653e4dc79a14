/**
 * OpenTelemetry traces (issue 27, docs/observability.md). Off unless OTEL_EXPORTER_OTLP_ENDPOINT
 * (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set: then `startTracing` loads the Node SDK with the
 * http, Fastify and pg instrumentations (src/platform/tracing-sdk.ts) and exports spans over OTLP.
 * While it is off not one OpenTelemetry module is loaded: this file imports only types, and
 * `inSpan` runs its function directly.
 *
 * Domains name their business steps with `inSpan('authorization.authorize', ...)`; the
 * instrumentations add the HTTP server and client spans (the client span puts `traceparent` on
 * the partner's auth_url and webhook_url requests) and one span per SQL statement.
 */
import type * as OtelApi from '@opentelemetry/api';
import { ApiError } from './errors.ts';

type Api = typeof OtelApi;

let api: Api | null = null;
let tracer: OtelApi.Tracer | null = null;

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
 * before the app is built: Fastify instances created afterwards are instrumented.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<TracingHandle | null> {
  if (!tracingRequested(env)) return null;
  if (api) throw new Error('tracing is already started in this process');
  const { startSdk } = await import('./tracing-sdk.ts');
  const handle = await startSdk(env);
  api = await import('@opentelemetry/api');
  tracer = api.trace.getTracer('card-issuing-service');
  return handle;
}

/** What a business step may note on its span: outcomes and codes, never card data or amounts. */
export interface SpanNotes {
  setAttribute(key: string, value: string | number | boolean): void;
}

const NO_SPAN: SpanNotes = { setAttribute() {} };

/**
 * Runs `fn` in a span named after the business step, child of the current one. An ApiError below
 * 500 is an answer (a refusal), not a failure of the step: the span notes its code and stays OK.
 */
export function inSpan<T>(name: string, fn: (span: SpanNotes) => Promise<T>): Promise<T> {
  if (!tracer) return fn(NO_SPAN);
  const otel = api!;
  return tracer.startActiveSpan(name, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      if (err instanceof ApiError && err.httpStatus < 500) {
        span.setAttribute('app.error_code', err.code);
      } else {
        span.recordException(err as Error);
        span.setStatus({ code: otel.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      }
      throw err;
    } finally {
      span.end();
    }
  });
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The trace id for a request's log lines: the active trace while tracing is on (the caller's
 * trace when it sent a valid `traceparent`, else a new one); while tracing is off, the trace id
 * of a valid caller `traceparent`, so the caller can still find our lines. Undefined otherwise.
 */
export function traceIdOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  if (api) {
    const context = api.trace.getSpanContext(api.context.active());
    if (context && api.isSpanContextValid(context)) return context.traceId;
  }
  const header = headers.traceparent;
  const match = typeof header === 'string' ? TRACEPARENT.exec(header.trim()) : null;
  return match && !/^0+$/.test(match[1]) ? match[1] : undefined;
}
