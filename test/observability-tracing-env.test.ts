// test-database: none (never opens the test database: `npm test` runs it in the embedded pass only; test/run.ts)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildService, startCompiled } from './helpers/compiled-service.ts';
import { freePort } from './helpers/own-postgres.ts';
import { seedDataDir } from './helpers/template.ts';

/**
 * Issue 27: the service starts the trace SDK without NodeSDK (src/platform/tracing-sdk.ts) and must
 * honour the standard OTEL_* variables as NodeSDK did: the resource (OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_NODE_RESOURCE_DETECTORS), the sampler, the span limits, the
 * propagators, OTEL_SDK_DISABLED, OTEL_LOG_LEVEL, and the exporters it hands to NodeSDK. Each case
 * runs the compiled service as `npm start` does, with its variables, sends one admin request and
 * stops it (SIGTERM flushes the spans), then reads what a JSON OTLP receiver got.
 */

const ADMIN_TOKEN = 'tracing-env-admin-token-0123456789';
const MASTER_KEY = 'ab'.repeat(32);
const ROUTE = '/internal/admin/v1/partners';

type AnyValue = Record<string, unknown>;
interface KeyValue { key: string; value: AnyValue }
interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: KeyValue[]; droppedAttributesCount?: number }
interface Exported { resource: Record<string, unknown>; span: OtlpSpan }

const values = (attributes: KeyValue[] | undefined): Record<string, unknown> =>
  Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, Object.values(value)[0]]));

let receiver: http.Server;
let endpoint: string;
let exported: Exported[] = [];

before(async () => {
  buildService();
  receiver = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { resource?: { attributes?: KeyValue[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] };
    for (const rs of body.resourceSpans) {
      const resource = values(rs.resource?.attributes);
      for (const ss of rs.scopeSpans) for (const span of ss.spans) exported.push({ resource, span });
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
after(() => {
  receiver.closeAllConnections();
  receiver.close();
});

/**
 * Runs the compiled service with `otel` (and no other OTEL_* variable), sends the admin request with
 * `headers`, stops the service and returns its output, its pid and the spans the receiver got.
 */
async function serviceRun(otel: Record<string, string>, headers: Record<string, string>[] = [{}]): Promise<{ output: string; pid: number; spans: Exported[] }> {
  exported = [];
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-otel-env-'));
  seedDataDir(dataDir);
  try {
    const service = await startCompiled({
      DATA_DIR: dataDir, ADMIN_TOKEN, MASTER_KEY,
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50', ...otel,
    }, await freePort(), { dropInherited: /^OTEL_/ });
    try {
      for (const h of headers) {
        const res = await fetch(`${service.base}${ROUTE}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...h } });
        assert.equal(res.status, 200, await res.text());
      }
      service.child.kill('SIGTERM');
      assert.equal(await service.exited, 0, service.output());
      return { output: service.output(), pid: service.child.pid!, spans: exported.filter(({ span }) => span.name === `GET ${ROUTE}`) };
    } finally {
      service.child.kill('SIGKILL');
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const traceparent = (traceId: string, spanId: string, flags = '01') => `00-${traceId}-${spanId}-${flags}`;
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

describe('OTEL_* variables without NodeSDK (issue 27)', () => {
  it('defaults: the env, process and host detectors, OTEL_RESOURCE_ATTRIBUTES, the service\'s name, W3C trace context', async () => {
    const [traceId, parent] = [hex(16), hex(8)];
    const { pid, spans } = await serviceRun(
      { OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=parity,service.namespace=cards' },
      [{ traceparent: traceparent(traceId, parent), baggage: 'app.k=v' }],
    );
    assert.equal(spans.length, 1);
    const [{ resource, span }] = spans;
    assert.equal(span.traceId, traceId, 'the caller\'s traceparent is read');
    assert.equal(span.parentSpanId, parent);
    assert.equal(resource['service.name'], 'card-issuing-service');
    assert.equal(resource['deployment.environment.name'], 'parity');
    assert.equal(resource['service.namespace'], 'cards');
    assert.equal(resource['telemetry.sdk.language'], 'nodejs');
    assert.equal(Number(resource['process.pid']), pid, 'process detector');
    assert.ok(resource['host.name'], 'host detector');
    assert.equal(resource['os.type'], undefined, 'the os detector is not a default');
  });

  it('OTEL_NODE_RESOURCE_DETECTORS, a service name from OTEL_RESOURCE_ATTRIBUTES, OTEL_PROPAGATORS=b3, span limits, OTEL_LOG_LEVEL', async () => {
    const [b3Trace, b3Span] = [hex(16), hex(8)];
    const { output, spans } = await serviceRun({
      OTEL_NODE_RESOURCE_DETECTORS: 'env,os',
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=cards-eu',
      OTEL_PROPAGATORS: 'b3,nonesuch',
      OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '2',
      OTEL_LOG_LEVEL: 'warn',
    }, [{ b3: `${b3Trace}-${b3Span}-1`, traceparent: traceparent(hex(16), hex(8)) }]);
    assert.equal(spans.length, 1);
    const [{ resource, span }] = spans;
    assert.equal(span.traceId, b3Trace, 'the b3 header is read, traceparent is not');
    assert.equal(span.parentSpanId, b3Span);
    assert.equal(resource['service.name'], 'cards-eu');
    assert.ok(resource['os.type'], 'os detector');
    assert.equal(resource['process.pid'], undefined, 'no process detector');
    assert.equal(resource['host.name'], undefined, 'no host detector');
    assert.equal(span.attributes?.length, 2, 'OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT');
    assert.ok((span.droppedAttributesCount ?? 0) > 0);
    assert.match(output, /Propagator "nonesuch" requested through environment variable is unavailable/, 'the diag logger at warn');
  });

  it('OTEL_TRACES_SAMPLER=parentbased_traceidratio with OTEL_TRACES_SAMPLER_ARG=0: only the caller\'s sampled traces', async () => {
    const traceId = hex(16);
    const { spans } = await serviceRun(
      { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0', OTEL_SERVICE_NAME: 'cards-ratio' },
      [{}, { traceparent: traceparent(traceId, hex(8)) }, {}],
    );
    assert.deepEqual(spans.map(({ span }) => span.traceId), [traceId]);
    assert.equal(spans[0].resource['service.name'], 'cards-ratio');
  });

  it('OTEL_TRACES_SAMPLER=always_off: nothing is exported, not even a sampled caller\'s trace', async () => {
    const { spans } = await serviceRun({ OTEL_TRACES_SAMPLER: 'always_off' }, [{}, { traceparent: traceparent(hex(16), hex(8)) }]);
    assert.equal(spans.length, 0);
  });

  it('OTEL_SDK_DISABLED=true: no spans', async () => {
    const { spans } = await serviceRun({ OTEL_SDK_DISABLED: 'true' }, [{}, { traceparent: traceparent(hex(16), hex(8)) }]);
    assert.equal(spans.length, 0);
  });

  it('OTEL_TRACES_EXPORTER=console: NodeSDK\'s console exporter prints the spans, nothing goes to the OTLP endpoint', async () => {
    const traceId = hex(16);
    const { output, spans } = await serviceRun({ OTEL_TRACES_EXPORTER: 'console' }, [{ traceparent: traceparent(traceId, hex(8)) }]);
    assert.equal(spans.length, 0);
    assert.match(output, new RegExp(`traceId: '${traceId}'`));
    assert.match(output, new RegExp(`name: 'GET ${ROUTE.replaceAll('/', '\\/')}'`));
    assert.match(output, /'service.name': 'card-issuing-service'/);
  });
});
