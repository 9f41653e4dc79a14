// test-database: none (never opens the test database: `npm test` runs it in the embedded pass only; test/run.ts)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { CardServiceClient, CardServiceError, nextNonce } from '../sdk/index.ts';
import { ROOT } from './helpers/compiled-service.ts';

/**
 * Issue 14, item 2: the SDK's transport — timeout, retries with backoff for network errors, 429 and
 * 5xx on idempotent calls (the same Idempotency-Key on every attempt of a POST), and every failure a
 * CardServiceError with code, message, HTTP status and request id. Against a scripted HTTP server.
 */
interface Seen { method: string; url: string; idempotencyKey: string | undefined; nonce: string | undefined; probe: string | undefined }

// The sources, also when this file runs compiled from dist/test/ (test/run.ts).
const RESOURCES = path.join(ROOT, 'sdk', 'resources');

/** A public method of a resource class as declared: its parameters' names, type texts and optionality. */
interface DeclaredMethod { className: string; name: string; params: { name: string; type: string; optional: boolean }[] }

/** Every public method of every resource class in sdk/resources/, read from the source (syntax only). */
function declaredResourceMethods(): DeclaredMethod[] {
  const methods: DeclaredMethod[] = [];
  for (const file of readdirSync(RESOURCES).filter((f) => f.endsWith('.ts'))) {
    const source = ts.createSourceFile(file, readFileSync(path.join(RESOURCES, file), 'utf8'), ts.ScriptTarget.ES2022, true);
    for (const node of source.statements) {
      if (!ts.isClassDeclaration(node) || !node.name || !/Resource$/.test(node.name.text)) continue;
      for (const member of node.members) {
        if (!ts.isMethodDeclaration(member) || !ts.isIdentifier(member.name)) continue;
        const modifiers = ts.getModifiers(member) ?? [];
        if (modifiers.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.StaticKeyword)) continue;
        methods.push({
          className: node.name.text,
          name: member.name.text,
          params: member.parameters.map((p) => ({
            name: p.name.getText(source), type: p.type?.getText(source) ?? '', optional: p.questionToken !== undefined || p.initializer !== undefined,
          })),
        });
      }
    }
  }
  return methods;
}

/** The one method that is not a request: a long-lived WebSocket subscription with options of its own. */
const NOT_A_REQUEST = new Set(['PushResource.subscribe']);

describe('SDK transport: timeout, retries, errors (issue 14)', () => {
  let server: http.Server;
  let baseUrl: string;
  let seen: Seen[] = [];
  /** Answers per request number (0-based); the last one repeats. */
  let script: { status: number; body: string; headers?: Record<string, string> }[] = [];

  const ok = (data: unknown) => ({ status: 200, body: JSON.stringify({ code: 'SYS_SUCCESS', message: null, messageDetail: null, data }) });
  const fail = (status: number, code: string, headers: Record<string, string> = {}) =>
    ({ status, body: JSON.stringify({ code, message: `${code} message`, messageDetail: null, data: null }), headers });
  const client = (options: Partial<ConstructorParameters<typeof CardServiceClient>[0]> = {}) =>
    new CardServiceClient({ baseUrl, apiKey: '0123456789abcdef0123456789abcdef', secretKey: 'S'.repeat(32), retryBaseDelayMs: 5, ...options });

  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const n = seen.length;
        seen.push({
          method: req.method!, url: req.url!, idempotencyKey: req.headers['idempotency-key'] as string | undefined,
          nonce: req.headers['x-dapi-nonce'] as string | undefined, probe: req.headers['x-probe'] as string | undefined,
        });
        const answer = script[Math.min(n, script.length - 1)];
        if (answer.status === 0) return; // never answers (a timeout)
        res.writeHead(answer.status, { 'content-type': 'application/json', 'x-request-id': `req-${n}`, ...answer.headers });
        res.end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const reset = (answers: typeof script) => {
    seen = [];
    script = answers;
  };

  it('retries a GET after 5xx and 429 and answers the data', async () => {
    reset([fail(503, 'SYS_INTERNAL_ERROR'), fail(429, 'SYS_RATE_LIMITED', { 'retry-after': '0' }), ok({ name: 'x' })]);
    const data = await client().http.call<{ name: string }>('GET', '/open-api/partner/v1/settings');
    assert.deepEqual(data, { name: 'x' });
    assert.equal(seen.length, 3);
    assert.equal(new Set(seen.map((s) => s.nonce)).size, 3, 'each attempt is signed afresh');
  });

  it('retries a POST with one Idempotency-Key on every attempt; without a key a POST is not retried', async () => {
    reset([fail(502, 'SYS_INTERNAL_ERROR'), ok({ organizationId: 'og1' })]);
    await client().http.call('POST', '/open-api-corp/organization/v1/create', { body: { a: 1 } });
    assert.equal(seen.length, 2);
    assert.ok(seen[0].idempotencyKey && /^[0-9a-f-]{36}$/.test(seen[0].idempotencyKey));
    assert.equal(seen[1].idempotencyKey, seen[0].idempotencyKey);

    reset([fail(500, 'SYS_INTERNAL_ERROR'), ok({})]);
    const err = await client().http.call('POST', '/x', { body: {}, idempotencyKey: false }).catch((e) => e);
    assert.ok(err instanceof CardServiceError);
    assert.equal(seen.length, 1, 'not retried: it may have been executed');
    assert.equal(seen[0].idempotencyKey, undefined);
  });

  it('gives up after maxRetries with the last failure, carrying code, message, status, request id and attempts', async () => {
    reset([fail(503, 'SYS_INTERNAL_ERROR')]);
    const err = await client({ maxRetries: 2 }).http.call('GET', '/y').catch((e) => e);
    assert.ok(err instanceof CardServiceError);
    assert.equal(err.code, 'SYS_INTERNAL_ERROR');
    assert.equal(err.serviceMessage, 'SYS_INTERNAL_ERROR message');
    assert.equal(err.httpStatus, 503);
    assert.equal(err.requestId, 'req-2');
    assert.equal(err.attempts, 3);
    assert.equal(seen.length, 3);
  });

  it('does not retry business errors, nor a Retry-After beyond the longest wait', async () => {
    reset([fail(200, 'CUSTOMER_INVALID')]);
    const business = await client().http.call<never>('GET', '/z').catch((e: CardServiceError) => e);
    assert.equal(business.code, 'CUSTOMER_INVALID');
    assert.equal(business.requestId, 'req-0');
    assert.equal(seen.length, 1);
    reset([fail(429, 'SYS_RATE_LIMITED', { 'retry-after': '60' })]);
    const limited = await client({ maxRetryDelayMs: 1000 }).http.call<never>('GET', '/z').catch((e: CardServiceError) => e);
    assert.equal(limited.code, 'SYS_RATE_LIMITED');
    assert.equal(seen.length, 1);
  });

  it('turns a non-JSON answer, a timeout and a refused connection into CardServiceErrors', async () => {
    reset([{ status: 502, body: '<html>Bad gateway</html>' }]);
    const html = await client({ maxRetries: 0 }).http.call('GET', '/z').catch((e) => e);
    assert.ok(html instanceof CardServiceError);
    assert.equal(html.code, 'INVALID_RESPONSE');
    assert.equal(html.httpStatus, 502);
    assert.equal(html.requestId, 'req-0');

    reset([{ status: 0, body: '' }, ok({ late: false })]);
    const slow = await client({ timeoutMs: 100, maxRetries: 0 }).http.call('GET', '/z').catch((e) => e);
    assert.ok(slow instanceof CardServiceError);
    assert.equal(slow.code, 'TIMEOUT');
    assert.equal(slow.httpStatus, 0);
    // With a retry, the second attempt answers.
    reset([{ status: 0, body: '' }, ok({ late: false })]);
    assert.deepEqual(await client({ timeoutMs: 100, maxRetries: 1 }).http.call('GET', '/z'), { late: false });

    const refused = new CardServiceClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', secretKey: 's', maxRetries: 0 });
    const down = await refused.partner.settings().catch((e) => e);
    assert.ok(down instanceof CardServiceError, String(down));
    assert.ok(['NETWORK_ERROR'].includes(down.code));
    assert.equal(down.requestId, null);
  });

  it('every resource method takes per-call options as its last parameter, and they reach the request (issue 32)', async () => {
    const declared = declaredResourceMethods();
    assert.ok(declared.length > 90, `resource methods found: ${declared.length}`);
    const withoutOptions = declared
      .filter((m) => !NOT_A_REQUEST.has(`${m.className}.${m.name}`))
      .filter((m) => { const last = m.params.at(-1); return !(last && last.name === 'options' && last.type === 'CallOptions' && last.optional); })
      .map((m) => `${m.className}.${m.name}(${m.params.map((p) => `${p.name}: ${p.type}`).join(', ')})`);
    assert.deepEqual(withoutOptions, [], 'the last parameter must be `options?: CallOptions`');

    // Each method called with its options last: the unsigned header and the POST's Idempotency-Key arrive.
    const sdk = client({ maxRetries: 0 });
    const resources = new Map(Object.values(sdk).filter((r) => r !== sdk.http).map((r) => [(r as object).constructor.name, r as Record<string, (...args: unknown[]) => unknown>]));
    const missing: string[] = [];
    let called = 0;
    for (const m of declared.filter((d) => !NOT_A_REQUEST.has(`${d.className}.${d.name}`))) {
      const resource = resources.get(m.className);
      assert.ok(resource, `client has no ${m.className}`);
      const id = `${m.className}.${m.name}`;
      // Plausible arguments by declared type: a string, the first literal of a union, else an object.
      const args = m.params.slice(0, -1).map((p) => p.type === 'string' ? 'probe' : /^'[^']*'/.test(p.type) ? /^'([^']*)'/.exec(p.type)![1] : p.type === 'string[]' ? ['probe'] : {});
      reset([ok({ page: 1, pageSize: 100, total: 0, result: [] })]);
      const result = resource[m.name](...args, { headers: { 'x-probe': id }, idempotencyKey: `key-${id}`, maxRetries: 0 });
      if (result && typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') await (result as AsyncIterator<unknown>).next();
      else await result;
      called++;
      const request = seen[0];
      if (request?.probe !== id) missing.push(`${id}: header not sent`);
      else if (request.method === 'POST' && request.idempotencyKey !== `key-${id}`) missing.push(`${id}: Idempotency-Key ${request.idempotencyKey}`);
    }
    assert.equal(called, declared.length - NOT_A_REQUEST.size);
    assert.deepEqual(missing, [], 'per-call options must reach the request');
  });

  it("the SDK README's table of methods lists every resource method with the parameters it declares (issue 32)", () => {
    const readme = readFileSync(path.resolve(RESOURCES, '..', 'README.md'), 'utf8');
    const table = readme.split('## Methods and routes')[1];
    assert.ok(table, 'the README has its table of methods');
    const rows = table.split('\n').filter((l) => l.startsWith('| `'));
    const sdk = client();
    const propertyOf = new Map(Object.entries(sdk).filter(([, r]) => r !== sdk.http).map(([name, r]) => [(r as object).constructor.name, name]));
    const declared = new Map(declaredResourceMethods().map((m) => [`${propertyOf.get(m.className)}.${m.name}`,
      m.params.filter((p, i) => !(i === m.params.length - 1 && p.type === 'CallOptions')).map((p) => p.name)]));
    // `cards.block(cardId)` / `unblock` / `cancel`: a full mention, then names of the same resource.
    const mentioned = new Map<string, string[] | null>();
    for (const row of rows) {
      const cell = row.split(' | ')[0];
      let resource = '';
      for (const [, name, args] of cell.matchAll(/`([a-zA-Z.]+)(?:\(([^)]*)\))?`/g)) {
        const full = name.includes('.') ? name : `${resource}.${name}`;
        resource = full.split('.')[0];
        mentioned.set(full, args === undefined ? null : args.split(',').map((a) => a.trim()).filter(Boolean).map((a) => (a.startsWith('{') ? 'params' : a.replace(/\?$/, ''))));
      }
    }
    const wrong: string[] = [];
    for (const [name, args] of mentioned) {
      if (name.startsWith('AdminClient.') || name === '.createAuthUrlHandler' || name.startsWith('createAuthUrlHandler')) continue;
      if (!declared.has(name)) wrong.push(`${name}: no such method`);
      else if (args && args.join(', ') !== declared.get(name)!.join(', ')) wrong.push(`${name}(${args.join(', ')}) is declared (${declared.get(name)!.join(', ')})`);
    }
    // The iterators (listAll, ...) are listed under "Lists" instead.
    const iterators = new Set([...readme.matchAll(/`([a-zA-Z]+\.[a-zA-Z]+)\(\)`/g)].map((m) => m[1]));
    for (const name of declared.keys()) if (!mentioned.has(name) && !iterators.has(name)) wrong.push(`${name}: not in the README`);
    assert.deepEqual(wrong, []);
  });
});

describe('SDK nonces (5.2, D7)', () => {
  it('no two of 90,000 consecutive requests share a nonce, each in [10000, 99999] (a burst in one millisecond never replays itself)', () => {
    // Review of 2026-11-27: 50 concurrent calls drew random nonces and one was refused DAPI_NONCE_REPLAYED.
    const seen = new Set<string>();
    for (let i = 0; i < 90_000; i++) {
      const nonce = nextNonce();
      assert.match(nonce, /^[1-9][0-9]{4}$/);
      seen.add(nonce);
    }
    assert.equal(seen.size, 90_000);
  });
});
