/**
 * The OpenTelemetry Node SDK, loaded only by startTracing (src/platform/tracing.ts) when an OTLP
 * endpoint is configured. The exporter follows the standard OTEL_* variables (endpoint, protocol
 * http/protobuf by default or http/json, headers, service name, sampler).
 */
import { createRequire } from 'node:module';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import type { TracingHandle } from './tracing.ts';

/** Probes and scrapes make no traces (one every few seconds from every prober is noise). */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export async function startSdk(env: NodeJS.ProcessEnv): Promise<TracingHandle> {
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || 'card-issuing-service',
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]),
        // Outgoing calls outside any trace (e.g. the OTLP exporter's own requests) make no spans.
        requireParentforOutgoingSpans: true,
      }),
      // Statement texts only (parameters are never recorded: they can be card data); no span per
      // connection checkout (the pool's wait shows as the gap before the statement).
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false, ignoreConnectSpans: true }),
      // One request span per route (named after the route template); a span per lifecycle hook
      // and handler would double the spans of a request for little (issue 27 bench).
      new FastifyOtelInstrumentation({
        registerOnInitialization: true, instrumentHooks: false, instrumentHandler: false, ignorePaths: (opts) => UNTRACED_PATHS.has(opts.url),
      }),
    ],
  });
  sdk.start();
  // The service imports http, https and pg as ES modules, which the instrumentations' require
  // hooks do not see; one require of each (already loaded: the same objects) lets them patch.
  const require = createRequire(import.meta.url);
  for (const name of ['http', 'https']) require(name);
  const pgPath = require.resolve('pg');
  require(pgPath);
  createRequire(pgPath)('pg-pool');
  return { shutdown: () => sdk.shutdown() };
}
