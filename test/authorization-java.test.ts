// test-database: once (RSA interoperability with Java's JCE and a JDK-only partner; the forwarding pipeline it answers is asserted on both databases by: authorization-forwarding, authorization-decision)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, createPublicKey, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { rsaDecryptSegmented } from '../sdk/index.ts';
import {
  decryptSegmented, encryptSegmented, parseExternalPublicKey, privateKeyFromPkcs8, signSha256, unpadPkcs1v15, verifySha256,
} from '../src/platform/crypto/rsa.ts';
import { missingTool } from './helpers/tools.ts';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { fundedCard, purchase } from './helpers/authorization.ts';
import { ROOT } from './helpers/compiled-service.ts';

/**
 * Interoperability with a Java partner using the JCE (5.6, D37, D50): vectors made by Java
 * (test/java/JceVectors.java; test-only keys) checked in as fixtures, and, when javac is on the
 * machine, a live JDK-only partner (test/java/AuthPartner.java) answering the real service.
 */
const vectors = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/rsa-java/vectors.json'), 'utf8')) as Record<string, string>;
const bytes = (b64: string) => Buffer.from(b64, 'base64');

describe('RSA interoperability with Java\'s JCE (5.6, D50)', () => {
  it('when Java encrypted RSA/ECB/PKCS1Padding in 245-byte blocks, then the service and the SDK decrypt it exactly', () => {
    const partnerKey = privateKeyFromPkcs8(bytes(vectors.partnerPrivateKey));
    assert.ok(bytes(vectors.requestData).length === 512, 'two 256-byte blocks');
    assert.deepEqual(decryptSegmented(partnerKey, vectors.requestData), bytes(vectors.requestPlaintext));
    assert.deepEqual(rsaDecryptSegmented(partnerKey, vectors.requestData), bytes(vectors.requestPlaintext));
    const serviceKey = privateKeyFromPkcs8(bytes(vectors.servicePrivateKey));
    assert.deepEqual(decryptSegmented(serviceKey, vectors.answerData), bytes(vectors.answerPlaintext));
  });

  it('when Java signed SHA256withRSA, then the service verifies it, and refuses it over another plaintext', () => {
    const partnerPublic = parseExternalPublicKey(vectors.partnerPublicKey);
    assert.ok(partnerPublic, 'X509EncodedKeySpec Base64 (getEncoded) is an accepted externalPublicKey');
    assert.equal(verifySha256(partnerPublic, bytes(vectors.answerPlaintext), vectors.answerSign), true);
    const tampered = Buffer.from(bytes(vectors.answerPlaintext).toString('utf8').replace('false', 'true '));
    assert.equal(verifySha256(partnerPublic, tampered, vectors.answerSign), false);
    const servicePublic = createPublicKey({ key: bytes(vectors.servicePublicKey), format: 'der', type: 'spki' });
    assert.equal(verifySha256(servicePublic, bytes(vectors.requestPlaintext), vectors.requestSign), true);
  });

  it('when a block is malformed, then decryption answers a deterministic synthetic message (implicit rejection), never an error', () => {
    const key = privateKeyFromPkcs8(bytes(vectors.partnerPrivateKey));
    const kdk = createHash('sha256').update('test').digest();
    const valid = Buffer.alloc(256, 7);
    valid[0] = 0;
    valid[1] = 2;
    valid[200] = 0;
    const kinds: Record<string, Buffer> = {
      firstByte: Buffer.from(valid).fill(1, 0, 1),
      secondByte: Buffer.from(valid).fill(1, 1, 2),
      noSeparator: Buffer.from(valid).fill(7, 200, 201),
      earlySeparator: Buffer.from(valid).fill(0, 5, 6),
    };
    const ciphertext = randomBytes(256);
    assert.deepEqual(unpadPkcs1v15(valid, kdk, ciphertext), valid.subarray(201));
    for (const [kind, em] of Object.entries(kinds)) {
      const first = unpadPkcs1v15(em, kdk, ciphertext);
      assert.deepEqual(unpadPkcs1v15(em, kdk, ciphertext), first, `${kind}: deterministic`);
      assert.ok(first.length <= 245, `${kind}: a message`);
    }
    // End to end: a ciphertext that is no PKCS#1 block for this key decrypts to bytes no partner signed.
    const junk = Buffer.alloc(256, 0x11);
    junk[0] = 0;
    const out = decryptSegmented(key, junk.toString('base64'));
    assert.equal(verifySha256(parseExternalPublicKey(vectors.partnerPublicKey)!, out, vectors.answerSign), false);

    // Timing figures (reported in the closing note, never asserted). The kinds are interleaved, each
    // round in a rotated order, so JIT warm-up and drift fall on all of them alike: per kind the
    // median ns per call, and Welch's t of the mean (fastest 95 %) against the valid block.
    const all = { valid, ...kinds };
    const names = Object.keys(all) as (keyof typeof all)[];
    for (let i = 0; i < 2000; i++) for (const n of names) unpadPkcs1v15(all[n], kdk, ciphertext);
    const trials = 5000;
    const ns = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<keyof typeof all, number[]>;
    for (let i = 0; i < trials; i++) {
      for (let j = 0; j < names.length; j++) {
        const n = names[(i + j) % names.length];
        const start = process.hrtime.bigint();
        unpadPkcs1v15(all[n], kdk, ciphertext);
        ns[n].push(Number(process.hrtime.bigint() - start));
      }
    }
    const summary = (a: number[]) => {
      const sorted = [...a].sort((x, y) => x - y);
      const kept = sorted.slice(0, Math.floor(sorted.length * 0.95));
      const mean = kept.reduce((x, y) => x + y, 0) / kept.length;
      const variance = kept.reduce((x, y) => x + (y - mean) ** 2, 0) / (kept.length - 1);
      return { median: sorted[Math.floor(sorted.length / 2)], mean, variance, n: kept.length };
    };
    const base = summary(ns.valid);
    const figures = names.map((n) => {
      const s = summary(ns[n]);
      const t = n === 'valid' ? 0 : (s.mean - base.mean) / Math.sqrt(s.variance / s.n + base.variance / base.n);
      return `${n} median ${s.median} ns (t ${t.toFixed(2)})`;
    });
    console.log(`unpadPkcs1v15 over ${trials} interleaved trials per kind: ${figures.join(', ')}`);
  });

  it('when TypeScript encrypts and signs, then Java\'s vectors keys read it back (round trip through the same keys)', () => {
    const servicePrivate = privateKeyFromPkcs8(bytes(vectors.servicePrivateKey));
    const partnerPublic = parseExternalPublicKey(vectors.partnerPublicKey)!;
    const plaintext = bytes(vectors.requestPlaintext);
    const data = encryptSegmented(partnerPublic, plaintext);
    assert.deepEqual(decryptSegmented(privateKeyFromPkcs8(bytes(vectors.partnerPrivateKey)), data), plaintext);
    assert.equal(verifySha256(createPublicKey(servicePrivate), plaintext, signSha256(servicePrivate, plaintext)), true);
  });
});

const javac = spawnSync('javac', ['-version']).status === 0;

describe('a live JDK-only partner answering the real service (D37)', { skip: missingTool(javac ? null : 'javac is not on this machine') }, () => {
  let svc: TestService;
  let java: ChildProcess | null = null;
  let classes = '';

  before(async () => {
    svc = await startService();
    classes = mkdtempSync(path.join(tmpdir(), 'auth-partner-'));
    const compiled = spawnSync('javac', ['-d', classes, path.join(ROOT, 'test/java/AuthPartner.java')], { encoding: 'utf8' });
    assert.equal(compiled.status, 0, compiled.stderr);
  });
  after(async () => {
    java?.kill('SIGKILL');
    rmSync(classes, { recursive: true, force: true });
    await svc.close();
    await closeTestDatabase();
  });

  it('when the Java partner decides, then approvals stand, declines are PARTNER_DECLINED, and the sandbox test verifies its answer', async () => {
    const w = await fundedCard(svc, { funds: '500.00' });
    const servicePublicKey = (await w.client.partner.servicePublicKey()).publicKey;
    java = spawn('java', ['-cp', classes, 'AuthPartner'], {
      env: { ...process.env, PARTNER_PRIVATE_KEY: vectors.partnerPrivateKey, SERVICE_PUBLIC_KEY: servicePublicKey },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      java!.stdout!.once('data', (chunk: Buffer) => resolve(Number(String(chunk).trim())));
      java!.once('exit', (code) => reject(new Error(`java exited ${code}`)));
    });
    await svc.admin.updatePartner(w.partner.partnerId, { authUrl: `http://127.0.0.1:${port}/auth`, externalPublicKey: vectors.partnerPublicKey });
    await svc.admin.call('POST', '/internal/admin/v1/auth-forwarding/settings', { body: { partnerId: w.partner.partnerId, deadlineMs: 5000, standIn: 'DECLINE' } });

    const approved = await w.client.sandbox.authorize(purchase(w.card.cardId, '42.00'));
    assert.equal(approved.approved, true, `declined: ${approved.declineReason} ${approved.declineDetail}`);
    assert.equal(approved.partnerDecision?.outcome, 'APPROVED');
    const declined = await w.client.sandbox.authorize(purchase(w.card.cardId, '150.00'));
    assert.equal(declined.approved, false);
    assert.equal(declined.declineReason, 'PARTNER_DECLINED');
    assert.equal(declined.declineDetail, 'OVER_LIMIT');
    const report = await w.client.sandbox.testAuthUrl();
    assert.equal(report.delivered, true);
    assert.equal(report.answerVerified, true);
    assert.equal(report.approved, true);
  });
});
