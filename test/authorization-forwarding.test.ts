import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createAuthUrlHandler, rsaEncryptSegmented, type AuthorizationAnswer, type AuthorizationRequest, type CardTransaction } from '../sdk/index.ts';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { fundedCard, fundsOf, networkClient, purchase, usageOf, type SpendWorld } from './helpers/authorization.ts';
import { ref } from './helpers/cards.ts';
import { expectCode } from './helpers/companies.ts';

type Behaviour = 'approve' | 'decline' | 'late' | 'wrong-key' | 'garbage' | 'other-trans-id' | 'http-500' | 'bad-padding'
  // A valid approval sent as a redirect (D38: never followed, its body never read as an answer), padded past 64 KiB, or trickled past the deadline.
  | 'redirect' | 'huge' | 'slow-body'
  // Resets the connection without answering: on a connection that already served a request, or always.
  | 'drop-reused' | 'drop-all';

/** A partner's auth_url on 127.0.0.1, answering through the SDK handler unless told to misbehave. */
class PartnerEndpoint {
  server!: http.Server;
  behaviour: Behaviour = 'approve';
  seen: AuthorizationRequest[] = [];
  serviceKeyIds: string[] = [];
  readonly keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  readonly stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
  servicePublicKey!: KeyObject | string;
  /** Requests served per connection, and requests answered by a reset. */
  private readonly served = new WeakMap<object, number>();
  dropped = 0;

  get publicKeyBase64(): string {
    return this.keys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  }

  async start(): Promise<string> {
    this.server = http.createServer(async (req, res) => {
      const served = this.served.get(req.socket) ?? 0;
      this.served.set(req.socket, served + 1);
      if (this.behaviour === 'drop-all' || (this.behaviour === 'drop-reused' && served > 0)) {
        this.dropped++;
        req.socket.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      this.serviceKeyIds.push(String(req.headers['x-dapi-service-key-id']));
      const body = Buffer.concat(chunks).toString('utf8');
      const decide = async (r: AuthorizationRequest): Promise<AuthorizationAnswer> => {
        this.seen.push(r);
        if (this.behaviour === 'late') await new Promise((ok) => setTimeout(ok, 700));
        return this.behaviour === 'decline' ? { approved: false, declineReason: 'OVER_BUDGET' } : { approved: true };
      };
      if (this.behaviour === 'http-500') {
        res.writeHead(500).end('{}');
        return;
      }
      if (this.behaviour === 'garbage') {
        await createAuthUrlHandler({ partnerPrivateKey: this.keys.privateKey, servicePublicKey: this.servicePublicKey, decide })(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":"not base64 at all!","sign":"x"}');
        return;
      }
      if (this.behaviour === 'bad-padding') {
        await createAuthUrlHandler({ partnerPrivateKey: this.keys.privateKey, servicePublicKey: this.servicePublicKey, decide })(body);
        // 256 bytes below the modulus that are no PKCS#1 v1.5 block: implicit rejection, then no valid signature.
        const block = Buffer.alloc(256, 0x11);
        block[0] = 0;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: block.toString('base64'), sign: 'AAAA' }));
        return;
      }
      const handler = createAuthUrlHandler({ partnerPrivateKey: this.keys.privateKey, servicePublicKey: this.servicePublicKey, decide });
      const answer = await handler(body);
      if (this.behaviour === 'redirect') {
        res.writeHead(302, { location: `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/auth`, 'content-type': 'application/json' }).end(answer.body);
        return;
      }
      if (this.behaviour === 'huge') {
        // Still valid JSON of a valid approval: only the size refuses it.
        res.writeHead(200, { 'content-type': 'application/json' }).end(answer.body + ' '.repeat(100 * 1024));
        return;
      }
      if (this.behaviour === 'slow-body') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(answer.body.slice(0, 10));
        setTimeout(() => { if (!res.destroyed) res.end(answer.body.slice(10)); }, 700);
        return;
      }
      if (this.behaviour === 'wrong-key') {
        // The right encrypted answer, signed by a key the service does not know.
        const { data } = JSON.parse(answer.body) as { data: string };
        const plaintext = Buffer.from(JSON.stringify({ transId: this.seen.at(-1)?.transId, approved: true, declineReason: null }));
        res.writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ data, sign: sign('sha256', plaintext, this.stranger.privateKey).toString('base64') }));
        return;
      }
      if (this.behaviour === 'other-trans-id') {
        const serviceKey = typeof this.servicePublicKey === 'string'
          ? createPublicKey({ key: Buffer.from(this.servicePublicKey, 'base64'), format: 'der', type: 'spki' })
          : this.servicePublicKey;
        const plaintext = Buffer.from(JSON.stringify({ transId: 'tx-someone-else', approved: true, declineReason: null }));
        res.writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ data: rsaEncryptSegmented(serviceKey, plaintext), sign: sign('sha256', plaintext, this.keys.privateKey).toString('base64') }));
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
    await new Promise<void>((ok) => this.server.listen(0, '127.0.0.1', ok));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/auth`;
  }

  async url(): Promise<string> {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/auth`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((ok) => this.server.close(() => ok()));
  }
}

describe('authorization forwarding to the partner auth_url over RSA (5.6, D37, D50)', () => {
  let svc: TestService;
  let partnerEndpoint: PartnerEndpoint;
  let w: SpendWorld;

  before(async () => {
    svc = await startService();
    partnerEndpoint = new PartnerEndpoint();
    const url = await partnerEndpoint.start();
    w = await fundedCard(svc, { funds: '100.00' });
    partnerEndpoint.servicePublicKey = (await w.client.partner.servicePublicKey()).publicKey;
    await svc.admin.updatePartner(w.partner.partnerId, { authUrl: url, externalPublicKey: partnerEndpoint.publicKeyBase64 });
    await svc.admin.call('POST', '/internal/admin/v1/auth-forwarding/settings', { body: { partnerId: w.partner.partnerId, deadlineMs: 400, standIn: 'DECLINE' } });
  });
  after(async () => {
    await partnerEndpoint.close();
    await svc.close();
    await closeTestDatabase();
  });

  async function authorizeWith(behaviour: Behaviour, amount = '1.00'): Promise<CardTransaction> {
    partnerEndpoint.behaviour = behaviour;
    return w.client.sandbox.authorize(purchase(w.card.cardId, amount));
  }

  it('the partner receives the D50 fields, decrypted and verified by the SDK handler, and its approval stands', async () => {
    const before = await fundsOf(w);
    const t = await authorizeWith('approve', '2.50');
    assert.equal(t.approved, true);
    assert.equal(t.status, 'PENDING');
    const seen = partnerEndpoint.seen.at(-1)!;
    assert.deepEqual(Object.keys(seen).sort(), ['amount', 'authType', 'billingAmount', 'billingCurrency', 'cardId', 'channel', 'currency', 'deadline',
      'mcc', 'merchantCountry', 'merchantName', 'networkTransactionId', 'organizationId', 'subjectId', 'subjectType', 'transId',
      'transactionTime'].sort());
    assert.equal(seen.transId, t.transId);
    assert.equal(seen.amount, '2.50', 'amounts keep their digits');
    assert.ok(Date.parse(seen.deadline) > Date.parse(seen.transactionTime));
    assert.equal(t.partnerDecision?.outcome, 'APPROVED');
    assert.ok(typeof t.partnerDecision?.latencyMs === 'number');
    assert.equal((await fundsOf(w)).pending, (Number(before.pending) + 2.5).toFixed(2));
  });

  it('a valid decline is PARTNER_DECLINED; the hold and the usage are given back', async () => {
    const funds = await fundsOf(w);
    const usage = await usageOf(w);
    const t = await authorizeWith('decline', '3.00');
    assert.equal(t.approved, false);
    assert.equal(t.declineReason, 'PARTNER_DECLINED');
    assert.equal(t.declineDetail, 'OVER_BUDGET');
    assert.equal(t.partnerDecision?.outcome, 'DECLINED');
    assert.deepEqual(await fundsOf(w), funds);
    assert.deepEqual(await usageOf(w), usage);
  });

  for (const [behaviour, reason] of [
    ['late', 'TIMEOUT'], ['wrong-key', 'SIGNATURE_INVALID'], ['garbage', 'MALFORMED_ANSWER'], ['other-trans-id', 'TRANS_ID_MISMATCH'],
    ['http-500', 'HTTP_STATUS'], ['bad-padding', 'SIGNATURE_INVALID'],
    ['redirect', 'HTTP_STATUS'], ['huge', 'TRANSPORT_ERROR'], ['slow-body', 'TIMEOUT'],
  ] as const) {
    it(`an answer that is ${behaviour} applies the stand-in: PARTNER_TIMEOUT (${reason})`, async () => {
      const funds = await fundsOf(w);
      const asked = partnerEndpoint.seen.length;
      const t = await authorizeWith(behaviour);
      if (behaviour === 'redirect') assert.equal(partnerEndpoint.seen.length, asked + 1, 'the redirect is not followed');
      assert.equal(t.approved, false);
      assert.equal(t.declineReason, 'PARTNER_TIMEOUT');
      assert.equal(t.declineDetail, reason);
      assert.equal(t.partnerDecision?.outcome, 'STAND_IN_DECLINED');
      assert.equal(t.partnerDecision?.standInReason, reason);
      assert.deepEqual(await fundsOf(w), funds);
    });
  }

  it('a partner that is down gets the stand-in (TRANSPORT_ERROR); a stand-in APPROVE setting approves', async () => {
    const other = await fundedCard(svc, { funds: '10.00' });
    await svc.admin.updatePartner(other.partner.partnerId, { authUrl: 'http://127.0.0.1:1/auth', externalPublicKey: partnerEndpoint.publicKeyBase64 });
    const declined = await other.client.sandbox.authorize(purchase(other.card.cardId, '1.00'));
    assert.equal(declined.declineReason, 'PARTNER_TIMEOUT');
    assert.equal(declined.declineDetail, 'TRANSPORT_ERROR');
    await svc.admin.call('POST', '/internal/admin/v1/auth-forwarding/settings', { body: { partnerId: other.partner.partnerId, deadlineMs: 500, standIn: 'APPROVE' } });
    const approved = await other.client.sandbox.authorize(purchase(other.card.cardId, '1.00'));
    assert.equal(approved.approved, true);
    assert.equal(approved.partnerDecision?.outcome, 'STAND_IN_APPROVED');
  });

  it('a request reset on a reused keep-alive connection before any answer goes once more on a new connection, once', async () => {
    await authorizeWith('approve'); // leaves a kept-alive connection in the service's pool
    let dropped = partnerEndpoint.dropped;
    const retried = await authorizeWith('drop-reused');
    assert.equal(partnerEndpoint.dropped - dropped, 1, 'the reused connection was reset once');
    assert.equal(retried.approved, true);
    assert.equal(retried.partnerDecision?.outcome, 'APPROVED');
    assert.equal(partnerEndpoint.seen.at(-1)?.transId, retried.transId);

    await authorizeWith('approve');
    dropped = partnerEndpoint.dropped;
    const funds = await fundsOf(w);
    const declined = await authorizeWith('drop-all');
    assert.equal(partnerEndpoint.dropped - dropped, 2, 'the request and its one retry');
    assert.equal(declined.declineReason, 'PARTNER_TIMEOUT');
    assert.equal(declined.declineDetail, 'TRANSPORT_ERROR');
    assert.deepEqual(await fundsOf(w), funds);
  });

  it('an auth_url outside the partner\'s authorization-forwarding IP list is never dialled (BLOCKED stand-in, 5.5)', async () => {
    const fenced = await fundedCard(svc, { funds: '10.00' });
    await svc.admin.updatePartner(fenced.partner.partnerId, {
      authUrl: await partnerEndpoint.url(), externalPublicKey: partnerEndpoint.publicKeyBase64, ipWhitelist: { auth: ['203.0.113.0/24'] },
    });
    const seen = partnerEndpoint.seen.length;
    const t = await fenced.client.sandbox.authorize(purchase(fenced.card.cardId, '1.00'));
    assert.equal(t.declineReason, 'PARTNER_TIMEOUT');
    assert.equal(t.declineDetail, 'BLOCKED');
    assert.equal(partnerEndpoint.seen.length, seen, 'nothing reached the endpoint');
  });

  it('a network retry is answered from the recorded decision and never forwarded again (issue 26)', async () => {
    partnerEndpoint.behaviour = 'approve';
    const network = await networkClient(svc);
    const body = { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '1.00') };
    const first = await network.call<CardTransaction>('POST', '/internal/network/v1/authorization', { body });
    const seenBefore = partnerEndpoint.seen.length;
    const retry = await network.call<CardTransaction>('POST', '/internal/network/v1/authorization', { body });
    assert.equal(retry.transId, first.transId);
    assert.equal(partnerEndpoint.seen.length, seenBefore, 'decided: not forwarded again');
    assert.equal(partnerEndpoint.seen.filter((r) => r.networkTransactionId === body.networkTransactionId).length, 1);
  });

  it('after a key rotation requests name the new key; partners and operators read the public key', async () => {
    const before = await w.client.partner.servicePublicKey();
    const keys = await svc.admin.call<{ keyId: string; status: string }[]>('GET', '/internal/admin/v1/service-keys');
    assert.equal(keys.find((k) => k.status === 'ACTIVE')?.keyId, before.keyId);
    const rotated = await svc.admin.call<{ keyId: string; publicKey: string }>('POST', '/internal/admin/v1/service-keys/rotate');
    assert.notEqual(rotated.keyId, before.keyId);
    partnerEndpoint.servicePublicKey = rotated.publicKey;
    const t = await authorizeWith('approve');
    assert.equal(t.approved, true);
    assert.equal(partnerEndpoint.serviceKeyIds.at(-1), rotated.keyId);
    const after = await svc.admin.call<{ keyId: string; status: string }[]>('GET', '/internal/admin/v1/service-keys');
    assert.equal(after.find((k) => k.keyId === before.keyId)?.status, 'RETIRED');
  });

  it('operators read every forwarding and the counters per outcome; the sandbox test reports what happened', async () => {
    partnerEndpoint.behaviour = 'approve';
    const report = await w.client.sandbox.testAuthUrl();
    assert.equal(report.delivered, true);
    assert.equal(report.answerVerified, true);
    assert.equal(report.approved, true);
    assert.ok(report.latencyMs >= 0);
    partnerEndpoint.behaviour = 'wrong-key';
    const bad = await w.client.sandbox.testAuthUrl();
    assert.equal(bad.answerVerified, false);
    assert.equal(bad.standInReason, 'SIGNATURE_INVALID');
    const page = await svc.admin.call<{ total: number; result: { outcome: string; test: boolean }[] }>('GET', '/internal/admin/v1/auth-forwardings',
      { query: { partnerId: w.partner.partnerId } });
    assert.ok(page.total >= 10);
    assert.equal(page.result[0].test, true);
    const metrics = await svc.admin.call<{ counters: Record<string, number> }>('GET', '/internal/admin/v1/auth-forwardings/metrics');
    assert.ok(metrics.counters.APPROVED >= 2 && metrics.counters.DECLINED >= 1 && metrics.counters.STAND_IN_DECLINED >= 6);
  });

  it('a partner without auth_url is not forwarded; an invalid externalPublicKey is refused', async () => {
    const plain = await fundedCard(svc, { funds: '5.00' });
    const t = await plain.client.sandbox.authorize(purchase(plain.card.cardId, '1.00'));
    assert.equal(t.approved, true);
    assert.equal(t.partnerDecision, null);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    for (const key of [ec, small, 'bm90IGEga2V5']) {
      await expectCode(svc.admin.updatePartner(plain.partner.partnerId, { externalPublicKey: key }), 'DAPI_PARAM_INVALID', 'externalPublicKey');
    }
  });
});
