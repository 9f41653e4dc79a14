/**
 * The OpenTelemetry Node SDK, loaded only by startTracing (src/platform/tracing.ts) when an OTLP
 * endpoint is configured. The exporter follows the standard OTEL_* variables (endpoint, protocol
 * http/protobuf by default or http/json, headers, service name, sampler); the propagator is the
 * SDK's default (W3C trace context and baggage).
 *
 * No instrumentation is registered: the service makes its own SERVER, business-step, CLIENT and
 * SQL spans (tracing.ts), because the http, Fastify and pg instrumentations cost 60-70 % of the
 * throughput of a signed request (issue 27 bench, docs/observability.md "Cost").
 */
import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { TracingHandle } from './tracing.ts';

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

export async function startSdk(env: NodeJS.ProcessEnv): Promise<TracingHandle> {
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || 'card-issuing-service',
    contextManager: new SynchronousContextManager(),
    instrumentations: [],
    // Traces only: the metrics are Prometheus's (GET /metrics) and the logs go to stdout, so the
    // SDK's default OTLP metrics and logs exporters are not started.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
