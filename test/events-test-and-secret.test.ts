import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { downUrl, WebhookReceiver } from './helpers/webhook-receiver.ts';
import { deliverDueEvents } from '../src/domains/events/testing.ts';
import {
  CardServiceError, verifyWebhook, WebhookVerificationError, type CardServiceClient, type CreatedPartner,
} from '../sdk/index.ts';

/**
 * Issue 14, item 5: a test webhook on demand (and its attempt), and a webhook signing secret
 * separate from the API secret, rotatable with an overlap, verified by the SDK helper.
 */
const hmac = (key: string, text: string) => createHmac('sha256', Buffer.from(key, 'utf8')).update(text, 'utf8').digest('hex');

describe('test webhook and webhook signing secret (issue 14)', () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  let partner: CreatedPartner;
  let client: CardServiceClient;

  before(async () => {
    svc = await startService();
    receiver = await WebhookReceiver.start();
    ({ partner, client } = await svc.newPartner({ webhookUrl: receiver.url }));
    receiver.useCredentials(partner);
  });
  after(async () => {
    await receiver.close();
    await svc.close();
    await closeTestDatabase();
  });

  it('sends a signed WEBHOOK_TEST to the webhook_url at once and answers its attempt; the log keeps it', async () => {
    receiver.answerNext({ status: 204 });
    const test = await client.events.sendTest({ message: 'hello from the docs' });
    assert.equal(test.eventType, 'WEBHOOK_TEST');
    assert.equal(test.businessId, partner.partnerId);
    assert.equal(test.status, 'DELIVERED');
    assert.equal(test.attemptLog.length, 1);
    assert.equal(test.attemptLog[0].outcome, 'SUCCESS');
    assert.equal(test.attemptLog[0].httpStatus, 204);
    const received = receiver.requestsFor(test.eventId);
    assert.equal(received.length, 1);
    assert.equal(received[0].signatureValid, true, 'signed with the API secret as D38 says');
    assert.deepEqual((received[0].json.data as any).message, 'hello from the docs');
    assert.equal(received[0].headers['x-dapi-webhook-sign'], undefined, 'no webhook secret yet');
    const event = verifyWebhook({ apiKey: partner.apiKey!, secretKey: partner.secretKey!, headers: received[0].headers, body: received[0].body });
    assert.equal(event.eventId, test.eventId);
    const detail = await client.events.eventDetail(test.eventId);
    assert.equal(detail.status, 'DELIVERED');
  });

  it('a failing endpoint is reported in the answer and the test event is not retried', async () => {
    receiver.answerNext({ status: 500 });
    const test = await client.events.sendTest();
    assert.equal(test.status, 'FAILED');
    assert.equal(test.attemptLog[0].outcome, 'HTTP_ERROR');
    assert.equal(test.attemptLog[0].httpStatus, 500);
    svc.clock.advance(60_000);
    try {
      await deliverDueEvents(svc.ctx);
    } finally {
      svc.clock.advance(-60_000);
    }
    assert.equal(receiver.requestsFor(test.eventId).length, 1, 'attempted once');

    const { client: unreachable } = await svc.newPartner({ webhookUrl: await downUrl() });
    const down = await unreachable.events.sendTest();
    assert.equal(down.status, 'FAILED');
    assert.equal(down.attemptLog[0].outcome, 'NETWORK_ERROR');
  });

  it('without a webhook_url the test send is WEBHOOK_NOT_CONFIGURED', async () => {
    const { client: bare } = await svc.newPartner();
    await assert.rejects(bare.events.sendTest(), (err: unknown) => err instanceof CardServiceError && err.code === 'WEBHOOK_NOT_CONFIGURED');
  });

  it('a webhook secret adds X-DAPI-WEBHOOK-SIGN; rotation signs with both during the overlap, then only the new one', async () => {
    assert.deepEqual(await client.events.secretStatus(), { configured: false, secrets: [] });
    const first = await client.events.rotateSecret();
    assert.match(first.webhookSecret, /^whsec_[A-Za-z0-9]{32}$/);
    assert.equal(first.previousSecretExpireTime, null);
    assert.notEqual(first.webhookSecret, partner.secretKey);

    const one = await client.events.sendTest();
    const r1 = receiver.requestsFor(one.eventId)[0];
    const message = partner.apiKey! + r1.headers['x-dapi-timestamp'] + r1.headers['x-dapi-nonce'] + r1.body;
    assert.equal(r1.headers['x-dapi-webhook-sign'], `v1=${hmac(first.webhookSecret, message)}`);
    assert.equal(r1.signatureValid, true, 'X-DAPI-SIGN (D38) stays');
    // A receiver that knows only the webhook secret verifies with the SDK helper.
    assert.equal(verifyWebhook({ apiKey: partner.apiKey!, webhookSecrets: [first.webhookSecret], headers: r1.headers, body: r1.body }).eventId, one.eventId);
    assert.throws(() => verifyWebhook({ apiKey: partner.apiKey!, webhookSecrets: ['whsec_wrong'], headers: r1.headers, body: r1.body }), WebhookVerificationError);

    const second = await client.events.rotateSecret({ overlapSeconds: 3600 });
    assert.ok(second.previousSecretExpireTime);
    assert.equal(Date.parse(second.previousSecretExpireTime!) - Date.parse(second.createTime), 3_600_000);
    const status = await client.events.secretStatus();
    assert.equal(status.secrets.length, 2);
    assert.equal(status.secrets[0].expireTime, null);
    assert.doesNotMatch(JSON.stringify(status), /whsec_/, 'no secret material in the status');

    const two = await client.events.sendTest();
    const r2 = receiver.requestsFor(two.eventId)[0];
    const message2 = partner.apiKey! + r2.headers['x-dapi-timestamp'] + r2.headers['x-dapi-nonce'] + r2.body;
    assert.equal(r2.headers['x-dapi-webhook-sign'], `v1=${hmac(second.webhookSecret, message2)},v1=${hmac(first.webhookSecret, message2)}`);
    for (const secret of [first.webhookSecret, second.webhookSecret]) {
      assert.equal(verifyWebhook({ apiKey: partner.apiKey!, webhookSecrets: [secret], headers: r2.headers, body: r2.body }).eventId, two.eventId);
    }

    svc.clock.advance(3_600_000 + 1000);
    try {
      const three = await client.events.sendTest();
      const r3 = receiver.requestsFor(three.eventId)[0];
      const message3 = partner.apiKey! + r3.headers['x-dapi-timestamp'] + r3.headers['x-dapi-nonce'] + r3.body;
      assert.equal(r3.headers['x-dapi-webhook-sign'], `v1=${hmac(second.webhookSecret, message3)}`, 'the old secret no longer signs');
      assert.throws(() => verifyWebhook({
        apiKey: partner.apiKey!, webhookSecrets: [first.webhookSecret], headers: r3.headers, body: r3.body, now: svc.clock.now(),
      }), /matches none/);
    } finally {
      svc.clock.advance(-(3_600_000 + 1000));
    }
  });

  it('webhook secrets are sealed at rest: the table holds no secret in the clear', async () => {
    const { client: c } = await svc.newPartner({ webhookUrl: receiver.url });
    const { webhookSecret } = await c.events.rotateSecret();
    const rows = await svc.db.query<{ secretEnc: string }>('SELECT secret_enc AS "secretEnc" FROM partner_webhook_secrets');
    assert.ok(rows.length > 0);
    for (const row of rows) assert.ok(!row.secretEnc.includes(webhookSecret.slice(6)));
  });

  it("the SDK README's raw-body recipes verify real deliveries: Fastify with a Buffer parser, a fetch Request handler (Next.js); a parsed body is RAW_BODY_REQUIRED (issue 32)", async () => {
    const verified: string[] = [];
    const refusals: string[] = [];
    // Fastify, as in sdk/README.md "Receiving webhooks": the default JSON parser outside, a Buffer parser in the webhook's scope.
    const fastify = Fastify();
    let fastifyPartner = { apiKey: '', secretKey: '' };
    fastify.register(async (scope) => {
      scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
      scope.post('/webhooks/cards', async (req) => {
        const event = verifyWebhook({ ...fastifyPartner, headers: req.headers, body: req.body as Buffer });
        verified.push(`fastify ${event.eventId}`);
        return { ok: true };
      });
    });
    // The usual mistake: the body the framework already parsed.
    fastify.post('/webhooks/parsed', async (req, reply) => {
      try {
        verifyWebhook({ ...fastifyPartner, headers: req.headers, body: req.body as unknown as string });
      } catch (err) {
        if (err instanceof WebhookVerificationError) refusals.push(`${err.code}: ${err.message}`);
      }
      return reply.code(400).send({ ok: false });
    });
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    const fastifyBase = `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}`;

    // Next.js app router: a route handler gets a fetch Request; node:http stands in for the framework.
    let nextPartner = { apiKey: '', secretKey: '' };
    async function POST(request: Request): Promise<Response> {
      const event = verifyWebhook({ ...nextPartner, headers: request.headers, body: await request.text() });
      verified.push(`next ${event.eventId}`);
      return new Response(null, { status: 200 });
    }
    const next = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = new Headers(Object.entries(req.headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v] as [string, string]] : [])));
      const answer = await POST(new Request(`http://127.0.0.1${req.url}`, { method: 'POST', headers, body: Buffer.concat(chunks) })).catch(() => new Response(null, { status: 500 }));
      res.writeHead(answer.status).end();
    });
    await new Promise<void>((resolve) => next.listen(0, '127.0.0.1', resolve));
    try {
      const viaFastify = await svc.newPartner({ webhookUrl: `${fastifyBase}/webhooks/cards` });
      fastifyPartner = { apiKey: viaFastify.partner.apiKey!, secretKey: viaFastify.partner.secretKey! };
      const one = await viaFastify.client.events.sendTest();
      assert.equal(one.status, 'DELIVERED', JSON.stringify(one.attemptLog));

      const viaNext = await svc.newPartner({ webhookUrl: `http://127.0.0.1:${(next.address() as AddressInfo).port}/api/webhooks` });
      nextPartner = { apiKey: viaNext.partner.apiKey!, secretKey: viaNext.partner.secretKey! };
      const two = await viaNext.client.events.sendTest();
      assert.equal(two.status, 'DELIVERED', JSON.stringify(two.attemptLog));
      assert.deepEqual(verified, [`fastify ${one.eventId}`, `next ${two.eventId}`]);

      const parsed = await svc.newPartner({ webhookUrl: `${fastifyBase}/webhooks/parsed` });
      fastifyPartner = { apiKey: parsed.partner.apiKey!, secretKey: parsed.partner.secretKey! };
      const three = await parsed.client.events.sendTest();
      assert.notEqual(three.status, 'DELIVERED');
      assert.equal(refusals.length, 1);
      assert.match(refusals[0], /^RAW_BODY_REQUIRED: body is a parsed object: pass the raw body/);
    } finally {
      await fastify.close();
      next.close();
    }
  });
});
