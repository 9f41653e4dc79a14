// test-database: once (the published signing vectors through the SDK, the verifier and the JDK example; request authentication and the signature self-check are asserted on both databases by: auth, sandbox-signature-check)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CardServiceClient, encodeQuery, signatureOf, stringifyJsonLossless } from '../sdk/index.ts';
import { verifySignedRequest } from '../src/platform/http/signed-request.ts';
import { missingTool } from './helpers/tools.ts';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { ROOT } from './helpers/compiled-service.ts';

/**
 * Issue 31, section 1: the published signing vectors (sdk/test-vectors/signing.json, shipped in the
 * SDK package) are what the SDK, the service's verifier (5.3, D6), the signature self-check, the
 * JDK-only example (examples/java/DapiSigner.java) and docs/api-guide.md all say.
 */
const execFileAsync = promisify(execFile);
interface Vector {
  name: string; method: 'GET' | 'POST'; path: string; timestamp: string; nonce: string; payload: string;
  stringToSign: string; stringToSignUtf8Length: number; stringToSignSha256: string; signature: string;
}
const file = JSON.parse(readFileSync(path.join(ROOT, 'sdk/test-vectors/signing.json'), 'utf8')) as { apiKey: string; secretKey: string; vectors: Vector[] };
const { apiKey, secretKey, vectors } = file;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const byName = (name: string) => vectors.find((v) => v.name === name)!;

describe('published signing vectors (issue 31)', () => {
  it('cover GET with and without a query, POST with unicode, whitespace and both key orders; each is self-consistent', () => {
    for (const name of ['get-without-query', 'get-with-query', 'get-query-encoded-unsorted', 'post-unicode', 'post-whitespace', 'post-key-order-a', 'post-key-order-b']) {
      assert.ok(byName(name), name);
    }
    assert.equal(byName('get-without-query').payload, '');
    assert.match(byName('post-unicode').payload, /[^\u0000-\u007f]/);
    assert.match(byName('post-unicode').payload, /[\ud800-\udbff][\udc00-\udfff]/, 'a character outside the BMP (UTF-16 pair, 4 UTF-8 bytes)');
    assert.match(byName('post-whitespace').payload, /\n {2}/);
    assert.notEqual(byName('post-key-order-a').signature, byName('post-key-order-b').signature);
    for (const v of vectors) {
      const bytes = Buffer.from(apiKey + v.timestamp + v.nonce + v.payload, 'utf8');
      assert.equal(v.stringToSign, apiKey + v.timestamp + v.nonce + v.payload, v.name);
      assert.equal(v.stringToSignUtf8Length, bytes.length, v.name);
      assert.equal(v.stringToSignSha256, sha256(bytes), v.name);
      assert.match(v.signature, /^[0-9a-f]{64}$/, v.name);
    }
  });

  it('the SDK signs every vector (signatureOf and the client\'s signer), and builds the vectors\' query strings and bodies itself', () => {
    const client = new CardServiceClient({ baseUrl: 'http://127.0.0.1:1', apiKey, secretKey });
    for (const v of vectors) {
      assert.equal(signatureOf({ apiKey, secretKey, timestamp: v.timestamp, nonce: v.nonce, payload: v.payload }), v.signature, v.name);
      assert.equal(client.http.sign(v.timestamp, v.nonce, v.payload), v.signature, v.name);
    }
    assert.equal(encodeQuery({ customerId: 'cusmwxdk8zr9bf0f6582' }), byName('get-with-query').payload);
    assert.equal(encodeQuery({ status: 'FAILED', pageSize: 50, startTime: '2026-11-01T00:00:00.000Z', page: 2 }), byName('get-query-encoded-unsorted').payload);
    assert.equal(stringifyJsonLossless({ cardId: 'cdmwxdk8zr3fa53eaf45', remark: 'lost' }), byName('post-key-order-a').payload);
    assert.equal(stringifyJsonLossless({ remark: 'lost', cardId: 'cdmwxdk8zr3fa53eaf45' }), byName('post-key-order-b').payload);
  });

  it('the service\'s verifier accepts every vector and refuses it with another vector\'s signature (negative control)', () => {
    for (const [i, v] of vectors.entries()) {
      const req = { apiKey, timestamp: v.timestamp, nonce: v.nonce, sign: v.signature, payload: Buffer.from(v.payload, 'utf8'), ip: '127.0.0.1' };
      assert.deepEqual(verifySignedRequest(req, secretKey, Number(v.timestamp), 5000), { apiKey, timestampMs: Number(v.timestamp), nonce: Number(v.nonce) }, v.name);
      const other = vectors[(i + 1) % vectors.length];
      assert.throws(() => verifySignedRequest({ ...req, sign: other.signature }, secretKey, Number(v.timestamp), 5000), /DAPI_SIGN_INVALID|signature/i, v.name);
    }
  });

  it('docs/api-guide.md shows the test key pair and every vector\'s signature; the SDK package ships the file', () => {
    const guide = readFileSync(path.join(ROOT, 'docs/api-guide.md'), 'utf8');
    assert.ok(guide.includes(apiKey) && guide.includes(secretKey));
    for (const v of vectors) assert.ok(guide.includes(v.signature), `${v.name} in docs/api-guide.md`);
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'sdk/package.json'), 'utf8'));
    assert.ok(pkg.files.includes('test-vectors'));
    assert.equal(pkg.exports['./test-vectors/signing.json'], './test-vectors/signing.json');
  });
});

describe('the vectors through the real server and the Java example (issue 31)', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService();
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('the signature self-check builds each vector\'s string to sign (same UTF-8 length and SHA-256); the test key is known nowhere', async () => {
    for (const v of vectors) {
      const res = await fetch(`${svc.baseUrl}/open-api/sandbox/v1/signature-check`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey, timestamp: v.timestamp, nonce: v.nonce, method: v.method, payload: v.payload, signature: v.signature }),
      });
      const { code, data } = await res.json() as { code: string; data: any };
      assert.equal(code, 'SYS_SUCCESS', v.name);
      assert.equal(data.stringToSign.length, v.stringToSignUtf8Length, v.name);
      assert.equal(data.stringToSign.sha256, v.stringToSignSha256, v.name);
      assert.deepEqual([data.apiKey.known, data.signature.formatOk, data.signature.matches], [false, true, false], v.name);
    }
  });

  const javac = spawnSync('javac', ['-version']).status === 0;
  it('examples/java/DapiSigner.java (JDK only) verifies every vector, and its signed call passes the real service', { skip: missingTool(javac ? null : 'javac is not on this machine') }, async () => {
    const classes = mkdtempSync(path.join(tmpdir(), 'dapi-signer-'));
    try {
      const compiled = spawnSync('javac', ['-d', classes, path.join(ROOT, 'examples/java/DapiSigner.java')], { encoding: 'utf8' });
      assert.equal(compiled.status, 0, compiled.stderr);
      const run = spawnSync('java', ['-cp', classes, 'DapiSigner', path.join(ROOT, 'sdk/test-vectors/signing.json')], { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stdout + run.stderr);
      assert.match(run.stdout, new RegExp(`${vectors.length}/${vectors.length} vectors match`));
      for (const v of vectors) assert.ok(run.stdout.includes(`ok   ${v.name} ${v.signature}`), v.name);
      // The same signer against the service (a fresh service: its clock is the real one, as Java's).
      const { partner } = await svc.newPartner();
      const call = await execFileAsync('java', ['-cp', classes, 'DapiSigner', 'call', svc.baseUrl, partner.apiKey!, partner.secretKey!], { encoding: 'utf8' });
      assert.match(call.stdout, /^200 .*"code":"SYS_SUCCESS"/, call.stdout);
      assert.ok(call.stdout.includes(partner.apiKey!));
    } finally {
      rmSync(classes, { recursive: true, force: true });
    }
  });
});
