// test-database: none (never opens the test database: `npm test` runs it in the embedded pass only; test/run.ts)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CardServiceClient, CardServiceError } from '../sdk/index.ts';

/**
 * Issue 14, item 2: the SDK's transport — timeout, retries with backoff for network errors, 429 and
 * 5xx on idempotent calls (the same Idempotency-Key on every attempt of a POST), and every failure a
 * CardServiceError with code, message, HTTP status and request id. Against a scripted HTTP server.
 */
interface Seen { method: string; url: string; idempotencyKey: string | undefined; nonce: string | undefined }

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
        seen.push({ method: req.method!, url: req.url!, idempotencyKey: req.headers['idempotency-key'] as string | undefined, nonce: req.headers['x-dapi-nonce'] as string | undefined });
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
});
