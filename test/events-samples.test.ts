import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { WebhookReceiver } from './helpers/webhook-receiver.ts';
import { deliverDueEvents } from '../src/domains/events/testing.ts';
import { WEBHOOK_EVENTS } from '../sdk/contract/webhooks.ts';
import { CardServiceError, verifyWebhook, type CardServiceClient, type CreatedPartner } from '../sdk/index.ts';

/**
 * Issue 31, section 4: a signed example of any event type a partner can receive, on demand, marked
 * as a test (`data.test` = true, as WEBHOOK_TEST is), through the normal delivery path, with a body
 * valid against the OpenAPI document's `webhooks` schema of that type (checked with ajv).
 */
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
type Json = Record<string, any>;

describe('sample events on demand (issue 31)', () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  let partner: CreatedPartner;
  let client: CardServiceClient;
  let validatorOf: (eventType: string) => (body: unknown) => boolean;
  let errorsOf: () => string;

  before(async () => {
    svc = await startService();
    receiver = await WebhookReceiver.start();
    ({ partner, client } = await svc.newPartner({ webhookUrl: receiver.url, ipWhitelist: { api: ['127.0.0.1'], webhook: [], auth: [], retrieval: [] } }));
    receiver.useCredentials(partner);
    const doc = await (await fetch(`${svc.baseUrl}/openapi.json`)).json() as Json;
    // The published document is the schema: OpenAPI 3.1 schemas are JSON Schema 2020-12.
    const ajv = addFormats(new Ajv2020({ strict: false, validateSchema: false, allErrors: true }));
    ajv.addSchema(doc, 'openapi.json');
    let last: { errors?: unknown } | undefined;
    validatorOf = (eventType) => {
      assert.ok(doc.webhooks[eventType], `the document lists ${eventType}`);
      const validate = ajv.getSchema(`openapi.json#/webhooks/${eventType}/post/requestBody/content/application~1json/schema`)!;
      assert.ok(validate, eventType);
      return (body) => {
        last = validate;
        return validate(body) as boolean;
      };
    };
    errorsOf = () => JSON.stringify(last?.errors);
  });
  after(async () => {
    await receiver.close();
    await svc.close();
    await closeTestDatabase();
  });

  const samplable = WEBHOOK_EVENTS.map((e) => e.eventType);

  it('sends every event type a partner can receive, signed, marked test, valid against the OpenAPI webhooks schema', async () => {
    assert.ok(samplable.length >= 11);
    for (const eventType of samplable) {
      const sent = await client.events.sendSample({ eventType });
      assert.equal(sent.eventType, eventType);
      assert.equal(sent.status, 'DELIVERED', eventType);
      assert.deepEqual(sent.attemptLog.map((a) => [a.outcome, a.httpStatus]), [['SUCCESS', 200]], eventType);
      const [received, ...more] = receiver.requestsFor(sent.eventId);
      assert.equal(more.length, 0, `${eventType}: one request`);
      assert.equal(received.signatureValid, true, `${eventType}: X-DAPI-SIGN checked independently`);
      const event = verifyWebhook({ apiKey: partner.apiKey!, secretKey: partner.secretKey!, headers: received.headers, body: received.body });
      assert.equal(event.eventId, sent.eventId);
      assert.equal(received.headers['x-dapi-event-id'], sent.eventId);
      const body = JSON.parse(received.body) as Json;
      assert.equal(body.eventType, eventType);
      assert.equal(body.data.test, true, `${eventType}: marked as a test`);
      const doc = WEBHOOK_EVENTS.find((e) => e.eventType === eventType)!;
      assert.equal(body.businessId, eventType === 'WEBHOOK_TEST' ? partner.partnerId : body.data[doc.businessIdField], `${eventType}: businessId`);
      assert.equal(body.createTime, sent.createTime);
      assert.ok(!received.body.includes('2026-11-22T06:30:21.000Z'), `${eventType}: times are the time of sending`);
      const valid = validatorOf(eventType);
      assert.equal(valid(body), true, `${eventType}: ${errorsOf()}`);
    }
  });

  it('the schema check fails a broken body (negative control of the validation)', async () => {
    const sent = await client.events.sendSample({ eventType: 'LOW_BALANCE' });
    const body = JSON.parse(receiver.requestsFor(sent.eventId)[0].body) as Json;
    const valid = validatorOf('LOW_BALANCE');
    assert.equal(valid(body), true, errorsOf());
    const { currency: _currency, ...withoutCurrency } = body.data;
    assert.equal(valid({ ...body, data: withoutCurrency }), false, 'a required data field missing');
    assert.equal(valid({ ...body, data: { ...body.data, available: '950.25' } }), false, 'an amount as a string');
    assert.equal(valid({ ...body, eventType: 'CARD_CREATED' }), false, 'another event type');
    const { sequence: _sequence, ...withoutSequence } = body;
    assert.equal(valid(withoutSequence), false, 'the envelope without its sequence');
  });

  it('an amount keeps its exact digits and the webhook signing secret signs samples too', async () => {
    const { webhookSecret } = await client.events.rotateSecret({ overlapSeconds: 0 });
    const sent = await client.events.sendSample({ eventType: 'CARD_TRANSACTION' });
    const [received] = receiver.requestsFor(sent.eventId);
    assert.match(received.body, /"amount":12\.5,/);
    const event = verifyWebhook({ apiKey: partner.apiKey!, webhookSecrets: [webhookSecret], headers: received.headers, body: received.body });
    assert.equal(event.eventType, 'CARD_TRANSACTION');
  });

  it('is in the event log with data.test = true; a failing endpoint is reported and the sample is not retried', async () => {
    receiver.answerNext({ status: 503 });
    const sent = await client.events.sendSample({ eventType: 'CARD_CREATED' });
    assert.equal(sent.status, 'FAILED');
    assert.deepEqual([sent.attemptLog[0].outcome, sent.attemptLog[0].httpStatus], ['HTTP_ERROR', 503]);
    svc.clock.advance(120_000);
    await deliverDueEvents(svc.ctx, { limit: 1000 });
    assert.equal(receiver.requestsFor(sent.eventId).length, 1, 'attempted once, never retried');
    const page = await client.events.listEvents({ eventType: 'CARD_CREATED', pageSize: 100 });
    const logged = page.result.find((e) => e.eventId === sent.eventId)!;
    assert.equal(logged.status, 'FAILED');
    assert.equal((logged.data as Json).test, true);
    // A resend is one more single attempt.
    await client.events.resend(sent.eventId);
    await deliverDueEvents(svc.ctx, { limit: 1000 });
    assert.equal(receiver.requestsFor(sent.eventId).length, 2);
    assert.equal((await client.events.eventDetail(sent.eventId)).status, 'DELIVERED');
  });

  it('an unknown event type is WEBHOOK_EVENT_TYPE_INVALID naming the ones available; a malformed one is DAPI_PARAM_INVALID', async () => {
    const before = receiver.requests.length;
    await assert.rejects(client.events.sendSample({ eventType: 'CARD_EXPLODED' }), (err: CardServiceError) => {
      assert.equal(err.code, 'WEBHOOK_EVENT_TYPE_INVALID');
      assert.match(err.serviceMessage, /CARD_CREATED/);
      assert.match(err.serviceMessage, /VERIFICATION_CODE_SENT/, 'sandbox lists its sandbox-only types');
      return true;
    });
    await assert.rejects(client.events.sendSample({ eventType: 'card_created' }), (err: CardServiceError) => err.code === 'DAPI_PARAM_INVALID' && /eventType/.test(err.serviceMessage));
    assert.equal(receiver.requests.length, before, 'nothing sent');
  });

  it('without a webhook_url it is WEBHOOK_NOT_CONFIGURED', async () => {
    const { client: bare } = await svc.newPartner();
    await assert.rejects(bare.events.sendSample({ eventType: 'LOW_BALANCE' }), (err: CardServiceError) => err.code === 'WEBHOOK_NOT_CONFIGURED');
  });

  it('in production a sandbox-only type cannot be asked for; the others can', async () => {
    const prod = await startService({ env: { CARDSVC_ENV: 'production' } });
    try {
      const inProduction = prod.clientFor(partner);
      await assert.rejects(inProduction.events.sendSample({ eventType: 'VERIFICATION_CODE_SENT' }), (err: CardServiceError) => {
        assert.equal(err.code, 'WEBHOOK_EVENT_TYPE_INVALID');
        assert.doesNotMatch(err.serviceMessage, /VERIFICATION_CODE_SENT/);
        return true;
      });
      // The route exists in production (a production handler can be tried too); the webhook whitelist rules of production apply.
      const sent = await inProduction.events.sendSample({ eventType: 'LOW_BALANCE' });
      assert.equal(sent.eventType, 'LOW_BALANCE');
      assert.equal((sent.data as Json).test, true);
    } finally {
      await prod.close();
    }
  });
});
