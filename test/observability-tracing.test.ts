import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { SignedHttpClient, type CardTransaction } from '../sdk/index.ts';
import { deliverDueEvents } from '../src/domains/events/testing.ts';
import { endServerSpan, inRequestTrace, startServerSpan, startTracing, traceIdOf, type TracingHandle } from '../src/platform/tracing.ts';
import { WorkerSpanProcessor } from '../src/platform/tracing-sdk.ts';
import { ExportBatcher, SpanChunkWriter } from '../src/platform/tracing-export.ts';
import { context, createContextKey, createTraceState, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resources, tracing } from '@opentelemetry/sdk-node';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { fundedCard, purchase, type SpendWorld } from './helpers/authorization.ts';
import { WebhookReceiver } from './helpers/webhook-receiver.ts';
import { PartnerAuthUrl } from './helpers/partner-auth-url.ts';

/** One exported span as OTLP/HTTP JSON carries it (ids in hex). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
}

/** One span of an OTLP/HTTP protobuf request as the JSON encoding would show it (ids in hex; values as their AnyValue field). */
function spanOfProtobuf(span: Buffer): OtlpSpan {
  const bytes = (field: number) => sub(span, field)[0];
  // KeyValue: key (1), value (2): AnyValue string (1), bool (2), int (3), double (4; read as its 8 bytes).
  const attributes = sub(span, 9).map((kv) => {
    const [field, value] = protobufFields(sub(kv, 2)[0])[0];
    const decoded = field === 1 ? { stringValue: (value as Buffer).toString('utf8') }
      : field === 2 ? { boolValue: value === 1 } : field === 3 ? { intValue: value } : { other: value };
    return { key: sub(kv, 1)[0].toString('utf8'), value: decoded as Record<string, unknown> };
  });
  return {
    traceId: bytes(1).toString('hex'), spanId: bytes(2).toString('hex'),
    parentSpanId: sub(span, 4).length > 0 ? bytes(4).toString('hex') : undefined, name: bytes(5).toString('utf8'), attributes,
  };
}

/** An OTLP/HTTP receiver (protobuf, the service's default encoding, or JSON): every span POSTed to /v1/traces. */
class OtlpReceiver {
  readonly spans: OtlpSpan[] = [];
  private constructor(private readonly server: http.Server, readonly endpoint: string) {}

  static async start(): Promise<OtlpReceiver> {
    let self: OtlpReceiver | null = null;
    const server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      assert.equal(req.url, '/v1/traces');
      if (req.headers['content-type'] === 'application/x-protobuf') {
        // ExportTraceServiceRequest.resource_spans (1) > ResourceSpans.scope_spans (2) > ScopeSpans.spans (2)
        for (const rs of sub(Buffer.concat(chunks), 1)) for (const ss of sub(rs, 2)) self!.spans.push(...sub(ss, 2).map(spanOfProtobuf));
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        return;
      }
      assert.match(req.headers['content-type'] ?? '', /application\/json/);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) self!.spans.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    self = new OtlpReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return self;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((ok) => this.server.close(() => ok()));
  }
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};

/**
 * Issue 27: with OTEL_EXPORTER_OTLP_ENDPOINT set, one signed authorization with forwarding is one
 * trace at the OTLP receiver, continuing the caller's traceparent, with its business steps as
 * spans, the partner's auth_url request carrying traceparent, and the trace id on its log lines.
 */
describe('OpenTelemetry traces (issue 27)', () => {
  let receiver: OtlpReceiver;
  let tracing: TracingHandle | null;
  let svc: TestService;
  let partner: PartnerAuthUrl;
  let w: SpendWorld;

  before(async () => {
    receiver = await OtlpReceiver.start();
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      // The default protocol (http/protobuf): the export worker's path, as the service runs it.
      OTEL_SERVICE_NAME: 'card-issuing-test',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
    });
    tracing = await startTracing(process.env);
    assert.ok(tracing, 'tracing started');
    svc = await startService();
    partner = await PartnerAuthUrl.start();
    w = await fundedCard(svc, { funds: '100.00' });
    partner.servicePublicKey = (await w.client.partner.servicePublicKey()).publicKey;
    await svc.admin.updatePartner(w.partner.partnerId, { authUrl: partner.url, externalPublicKey: partner.publicKeyBase64 });
  });
  after(async () => {
    await partner.close();
    await svc.close();
    await tracing?.shutdown();
    await receiver.close();
    await closeTestDatabase();
  });

  it('a request\'s context: the caller\'s trace or a new one, its baggage, its SERVER span active in the handler', () => {
    const key = createContextKey('issue 27 test');
    const caller = randomBytes(16).toString('hex');
    const requests = [
      { headers: {} },
      { headers: { baggage: 'app.test=yes' } },
      { headers: { traceparent: `00-${caller}-${randomBytes(8).toString('hex')}-01` } },
    ].map(({ headers }) => ({ url: '/open-api/test', method: 'GET', headers }) as unknown as IncomingMessage);
    const ids = requests.map((req) => {
      startServerSpan(req);
      const traceId = traceIdOf(req);
      assert.match(traceId ?? '', /^[0-9a-f]{32}$/);
      inRequestTrace(req, () => {
        const active = context.active();
        const server = trace.getSpan(active);
        assert.equal(server?.spanContext().traceId, traceId);
        // Values set on the request's context keep its span; other keys are read through to its parent.
        const derived = active.setValue(key, 1);
        assert.equal(derived.getValue(key), 1);
        assert.equal(trace.getSpan(derived), server);
        assert.equal(trace.getSpan(derived.deleteValue(key)), server);
        assert.equal(active.getValue(key), undefined);
        assert.equal(propagation.getBaggage(active)?.getEntry('app.test')?.value, req.headers.baggage ? 'yes' : undefined);
      });
      endServerSpan(req, '/open-api/test', 200);
      return traceId;
    });
    assert.equal(ids[2], caller, 'the caller\'s trace is continued');
    assert.notEqual(ids[0], ids[1]);
    assert.ok(!ids.slice(0, 2).includes(caller));
  });

  it('every webhook POST carries traceparent: one the delivery job sends, and a test send a partner asks for', async () => {
    const hooks = (await WebhookReceiver.start()).useCredentials(w.partner);
    try {
      await svc.admin.updatePartner(w.partner.partnerId, { webhookUrl: hooks.url });
      const traceparent = /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/;
      // A test send, inside the partner's request: the POST is a step of that request's trace.
      const traceId = randomBytes(16).toString('hex');
      const client = new SignedHttpClient({ baseUrl: svc.baseUrl, apiKey: w.partner.apiKey!, secretKey: w.partner.secretKey!, now: svc.clock.now });
      const sent = await client.call<{ eventId: string }>('POST', '/open-api/webhook/v1/test', {
        body: { message: 'traced' }, headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
      });
      const testEvent = sent.eventId;
      const [testHook] = hooks.requestsFor(testEvent);
      assert.match(String(testHook.headers.traceparent ?? ''), traceparent, 'the test send carries traceparent');
      assert.equal(String(testHook.headers.traceparent).split('-')[1], traceId, 'in the trace of the request that asked for it');
      // The delivery job's POSTs: a trace of their own.
      await deliverDueEvents(svc.ctx);
      const delivered = hooks.requests.filter((r) => r.json.eventId !== testEvent);
      assert.ok(delivered.length > 0, 'the card\'s events were delivered');
      for (const r of delivered) assert.match(String(r.headers.traceparent ?? ''), traceparent);
    } finally {
      await hooks.close();
    }
  });

  it('one signed authorization with forwarding is one trace continuing the caller\'s, and the partner request carries traceparent', async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const client = new SignedHttpClient({ baseUrl: svc.baseUrl, apiKey: w.partner.apiKey!, secretKey: w.partner.secretKey!, now: svc.clock.now });
    const t = await client.call<CardTransaction>('POST', '/open-api/sandbox/v1/simulate/authorization', {
      body: purchase(w.card.cardId, '4.00'), headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    assert.equal(t.approved, true);
    assert.equal(t.partnerDecision?.outcome, 'APPROVED');
    // Shutting down flushes every span of the trace to the receiver.
    await tracing!.shutdown();
    tracing = null;
    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    const names = spans.map((s) => s.name);
    for (const step of ['authorization.authorize', 'authorization.checks', 'authorization.partner_decision']) {
      assert.ok(names.includes(step), `span ${step} in ${names.join(', ')}`);
    }
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const root = spans.filter((s) => !byId.has(s.parentSpanId ?? ''));
    assert.deepEqual(root.map((s) => s.parentSpanId), [callerSpanId], 'one root: the server span, child of the caller\'s span');
    const authorize = spans.find((s) => s.name === 'authorization.authorize')!;
    assert.equal(attribute(authorize, 'app.approved'), true);
    const decision = spans.find((s) => s.name === 'authorization.partner_decision')!;
    assert.equal(attribute(decision, 'app.forwarding.approved'), true);
    assert.equal(decision.parentSpanId, authorize.spanId);
    // The partner's request carried the trace: its parent is the client span of the POST, under the decision.
    const header = partner.traceparents.at(-1) ?? '';
    const [, partnerTraceId, partnerParent] = header.split('-');
    assert.equal(partnerTraceId, traceId);
    const clientSpan = byId.get(partnerParent);
    assert.ok(clientSpan, 'the partner\'s parent span was exported');
    let ancestor: OtlpSpan | undefined = clientSpan;
    while (ancestor && ancestor.spanId !== decision.spanId) ancestor = byId.get(ancestor.parentSpanId ?? '');
    assert.ok(ancestor, 'the auth_url request is under authorization.partner_decision');
    // The request's SERVER span is the root, named by the route template.
    const server = root[0];
    assert.equal(server.name, 'POST /open-api/sandbox/v1/simulate/authorization');
    assert.equal(attribute(server, 'http.route'), '/open-api/sandbox/v1/simulate/authorization');
    assert.equal(String(attribute(server, 'http.response.status_code')), '200');
    assert.equal(authorize.parentSpanId, server.spanId);
    if (svc.db.kind === 'postgres') {
      const statements = spans.filter((s) => attribute(s, 'db.system') === 'postgresql' || attribute(s, 'db.system.name') === 'postgresql');
      assert.ok(statements.length > 0, 'pg spans');
      // The checks' statement (card_authorize) is under authorization.checks; texts only, never the parameters.
      const checks = spans.find((s) => s.name === 'authorization.checks')!;
      assert.ok(statements.some((s) => s.parentSpanId === checks.spanId), 'a statement span under authorization.checks');
      for (const s of statements) assert.doesNotMatch(String(attribute(s, 'db.query.text')), new RegExp(w.card.cardId));
    }
    // Every log line of the request carries its trace id.
    const completed = svc.logs.map((l) => JSON.parse(l) as { reqId?: string; url?: string; traceId?: string })
      .find((l) => l.url === '/open-api/sandbox/v1/simulate/authorization');
    assert.ok(completed?.reqId);
    const lines = svc.logs.map((l) => JSON.parse(l) as { reqId?: string; traceId?: string }).filter((l) => l.reqId === completed.reqId);
    assert.ok(lines.length >= 1);
    for (const line of lines) assert.equal(line.traceId, traceId);
  });

});

/** The fields of one protobuf message: [field number, value] (a Buffer for length-delimited fields, else a number). */
function protobufFields(buf: Buffer): [number, Buffer | number][] {
  const out: [number, Buffer | number][] = [];
  let at = 0;
  const varint = () => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const byte = buf[at++];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
      shift += 7;
    }
  };
  while (at < buf.length) {
    const key = varint();
    const wireType = key % 8;
    const field = Math.floor(key / 8);
    if (wireType === 0) out.push([field, varint()]);
    else if (wireType === 1) { out.push([field, 0]); at += 8; }
    else if (wireType === 5) { out.push([field, 0]); at += 4; }
    else if (wireType === 2) { const length = varint(); out.push([field, buf.subarray(at, at + length)]); at += length; }
    else throw new Error(`wire type ${wireType}`);
  }
  assert.equal(at, buf.length);
  return out;
}
const sub = (buf: Buffer, field: number) => protobufFields(buf).filter(([f]) => f === field).map(([, v]) => v as Buffer);

/** A test OTLP/HTTP receiver answering 200 to every protobuf export; the request bodies as they came. */
async function protobufReceiver(): Promise<{ bodies: Buffer[]; server: http.Server; endpoint: string }> {
  const bodies: Buffer[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => { bodies.push(Buffer.concat(chunks)); res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(); });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { bodies, server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * Issue 27 bench: the OTLP/HTTP protobuf export runs on a worker thread; the spans' data is posted
 * to it (links, events, trace state and the resource included) and arrives at the collector.
 */
describe('OTLP export from the worker thread (issue 27)', () => {
  it('http/protobuf: every span reaches the receiver, with its resource, through the worker', async () => {
    const { bodies, server, endpoint } = await protobufReceiver();
    const processor = new WorkerSpanProcessor({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, {
      maxExportBatchSize: 4, scheduledDelayMs: 60_000, maxQueueSize: 100,
    }, 2);
    const provider = new tracing.BasicTracerProvider({ spanProcessors: [processor], resource: resources.resourceFromAttributes({ 'service.name': 'worker-test' }) });
    const tracer = provider.getTracer('worker');
    const first = tracer.startSpan('step-0', { attributes: { 'app.step': 0 } }, ROOT_CONTEXT);
    first.addEvent('noted', { 'app.note': 'x' });
    first.end();
    for (let i = 1; i < 5; i++) {
      tracer.startSpan(`step-${i}`, { links: [{ context: first.spanContext(), attributes: { 'app.link': i } }] }, ROOT_CONTEXT).end();
    }
    await processor.forceFlush();
    await provider.shutdown();
    server.close();
    // ExportTraceServiceRequest.resource_spans (1) > ResourceSpans.scope_spans (2) > ScopeSpans.spans (2) > Span.name (5)
    const names = bodies.flatMap((body) => sub(body, 1).flatMap((rs) => sub(rs, 2).flatMap((ss) => sub(ss, 2).map((span) => sub(span, 5)[0].toString('utf8')))));
    assert.deepEqual(names.sort(), ['step-0', 'step-1', 'step-2', 'step-3', 'step-4']);
    // ResourceSpans.resource (1) > Resource.attributes (1) > KeyValue.key (1)
    const keys = bodies.flatMap((body) => sub(body, 1).flatMap((rs) => sub(rs, 1).flatMap((r) => sub(r, 1).map((kv) => sub(kv, 1)[0].toString('utf8')))));
    assert.ok(keys.includes('service.name'), keys.join(', '));
    // Span.links (13) of step-1 .. step-4; Span.events (11) of step-0.
    const spans = bodies.flatMap((body) => sub(body, 1).flatMap((rs) => sub(rs, 2).flatMap((ss) => sub(ss, 2))));
    assert.equal(spans.filter((s) => sub(s, 13).length === 1).length, 4);
    assert.equal(spans.filter((s) => sub(s, 11).length === 1).length, 1);
  });
});

/**
 * Issue 27 bench: the main thread writes each span's OTLP bytes into a chunk (scope and resource by
 * id) and the worker assembles the export requests around them. Each request must be byte for byte
 * what the SDK's own serializer makes of the same spans: every field (trace state, remote parent,
 * events, links, status, attributes of each type) as the SDK writes it, the spans of one scope in one
 * ScopeSpans.
 */
describe('span bytes to the export worker (issue 27)', () => {
  it('http/protobuf: the worker sends the bytes the SDK serializer makes of the same spans', async () => {
    const { bodies, server, endpoint } = await protobufReceiver();
    const processor = new WorkerSpanProcessor({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, {
      maxExportBatchSize: 3, scheduledDelayMs: 60_000, maxQueueSize: 100,
    }, 2);
    const ended: tracing.ReadableSpan[] = [];
    const collector: tracing.SpanProcessor = { onStart() {}, onEnd: (span) => { ended.push(span); }, forceFlush: async () => {}, shutdown: async () => {} };
    const provider = new tracing.BasicTracerProvider({ spanProcessors: [collector, processor], resource: resources.resourceFromAttributes({ 'service.name': 'record-test' }) });
    const tracer = provider.getTracer('record', '1.2.3');
    const other = provider.getTracer('other');
    const caller = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true, traceState: createTraceState('vendor=abc'),
    });
    const server1 = tracer.startSpan('GET /x', { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'GET', 'app.n': 7, 'app.ok': true, 'app.list': ['a', 'b'] } }, caller);
    const inner = tracer.startSpan('step', undefined, trace.setSpan(caller, server1));
    inner.addEvent('noted', { 'app.note': 'x' });
    inner.setStatus({ code: SpanStatusCode.ERROR, message: 'broken' });
    inner.end();
    server1.setStatus({ code: SpanStatusCode.OK });
    server1.end();
    other.startSpan('linked', { links: [{ context: server1.spanContext(), attributes: { 'app.link': 1 } }] }, ROOT_CONTEXT).end();
    for (let i = 0; i < 3; i++) tracer.startSpan(`plain-${i}`, { kind: SpanKind.CLIENT }, ROOT_CONTEXT).end();
    await processor.forceFlush();
    await provider.shutdown();
    server.close();
    assert.equal(ended.length, 6);
    // Export requests of at most 3 spans (OTEL_BSP_MAX_EXPORT_BATCH_SIZE) from chunks of 2, each the SDK's serialization of its spans.
    const expected = Buffer.concat([ended.slice(0, 3), ended.slice(3)].map((batch) => ProtobufTraceSerializer.serializeRequest(batch)!));
    assert.equal(bodies.length, 2);
    assert.equal(Buffer.concat(bodies).toString('hex'), expected.toString('hex'));
    // The three plain spans of one scope in one ScopeSpans: ResourceSpans (1) > ScopeSpans (2) > Span (2).
    const perScope = sub(bodies.at(-1)!, 1).flatMap((rs) => sub(rs, 2).map((ss) => sub(ss, 2).length));
    assert.deepEqual(perScope.slice(-1), [3]);
  });
});

/** Issue 27: OTEL_BSP_MAX_QUEUE_SIZE on the export worker's queue; an unreadable chunk queues nothing. */
describe('export worker queue (issue 27)', () => {
  it('a chunk that does not fit the queue is dropped and counted; requests hold at most the batch size; a chunk with an unknown resource is refused whole', async () => {
    const ended: tracing.ReadableSpan[] = [];
    const collector: tracing.SpanProcessor = { onStart() {}, onEnd: (span) => { ended.push(span); }, forceFlush: async () => {}, shutdown: async () => {} };
    const provider = new tracing.BasicTracerProvider({ spanProcessors: [collector], resource: resources.resourceFromAttributes({ 'service.name': 'queue-test' }) });
    const tracer = provider.getTracer('queue');
    for (let i = 0; i < 5; i++) tracer.startSpan(`q-${i}`, undefined, ROOT_CONTEXT).end();
    const chunkOf = (spans: tracing.ReadableSpan[], resource = 1) => {
      const writer = new SpanChunkWriter(1024);
      for (const span of spans) writer.add(span, resource, 2);
      return writer.take();
    };
    const batcher = new ExportBatcher({ maxExportBatchSize: 2, maxQueueSize: 3 });
    batcher.defineResource(1, { attributes: ended[0].resource.attributes, schemaUrl: undefined });
    batcher.defineScope(2, { name: 'queue', version: undefined, schemaUrl: undefined });
    assert.throws(() => batcher.add(chunkOf(ended.slice(0, 1), 9)), /unknown resource 9/);
    assert.equal(batcher.queued, 0);
    assert.equal(batcher.add(chunkOf(ended.slice(0, 3))), true);
    assert.equal(batcher.add(chunkOf(ended.slice(3, 5))), false);
    assert.equal(batcher.dropped, 2);
    const first = batcher.next(true)!;
    assert.equal(first.spans, 2);
    assert.equal(Buffer.from(first.body).toString('hex'), Buffer.from(ProtobufTraceSerializer.serializeRequest(ended.slice(0, 2))!).toString('hex'));
    assert.equal(batcher.next(true), null, 'one span left: not a whole batch');
    assert.equal(batcher.next(false)!.spans, 1);
    await provider.shutdown();
  });
});
