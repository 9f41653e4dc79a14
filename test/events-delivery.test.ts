import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers/compiled-service.ts';
import { closeTestDatabase, startService, testDatabase, type TestService } from './helpers/service.ts';
import { attemptsOf, eventState, recordTestEvent, WebhookReceiver } from './helpers/webhook-receiver.ts';
import { toWire } from '../src/platform/money.ts'; // the service's own amounts, as its producers record them
import { startWorkers } from '../src/workers.ts';
import type { Db } from '../src/platform/db/db.ts';
import {
  deliverDueEvents, FIRST_RETRY_DELAY_MS, RETRY_JITTER_RATIO, webhookBody, webhookHeaders,
} from '../src/domains/events/testing.ts';
import { decimal, decimalText, verifyWebhook, WebhookVerificationError, type CardServiceClient, type CreatedPartner } from '../sdk/index.ts';

/** Small so the slow-receiver test need not wait 5 s; the receiver's delay is well beyond it. */
const TEST_WEBHOOK_TIMEOUT_MS = 2000;
const SLOW_RECEIVER_DELAY_MS = 8000;

describe('webhook delivery (D38, D49): signed POSTs from the outbox, retries', () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  let partner: CreatedPartner;
  let client: CardServiceClient;

  before(async () => {
    svc = await startService({ env: { WEBHOOK_TIMEOUT_MS: String(TEST_WEBHOOK_TIMEOUT_MS) } });
    receiver = await WebhookReceiver.start();
    ({ partner, client } = await svc.newPartner({ webhookUrl: receiver.url }));
    receiver.useCredentials(partner);
  });
  after(async () => {
    await receiver.close();
    await svc.close();
    await closeTestDatabase();
  });

  /** Moves the service clock to just past the event's next attempt time. */
  async function advanceToNextAttempt(eventId: string): Promise<void> {
    const state = await eventState(svc.db, eventId);
    assert.ok(state.nextAttemptAt, 'a next attempt is scheduled');
    const gap = state.nextAttemptAt.getTime() - svc.clock.now();
    if (gap >= 0) svc.clock.advance(gap + 1);
  }

  it('when an event is recorded, then one POST with the D38 body and a valid signature reaches the webhook_url', async () => {
    const data = { customerId: 'cu123', kycStatus: 'APPROVED', reason: null, amount: toWire('0.123456789012345678') };
    const { eventId, sequence } = await recordTestEvent(svc, partner.partnerId, { eventType: 'CUSTOMER_KYC_CHANGED', businessId: 'cu123', data });

    const summary = await deliverDueEvents(svc.ctx);
    assert.ok(summary.results.some((r) => r.eventId === eventId && r.status === 'DELIVERED'));

    const got = receiver.requestsFor(eventId);
    assert.equal(got.length, 1);
    const [hook] = got;
    assert.equal(hook.signatureValid, true, 'HmacSHA256(apiKey + timestamp + nonce + body) with the partner secret');
    assert.equal(hook.headers['x-dapi-api-key'], partner.apiKey);
    assert.match(String(hook.headers['x-dapi-timestamp']), /^\d{13}$/);
    assert.match(String(hook.headers['x-dapi-nonce']), /^[1-9]\d{4}$/);
    assert.match(String(hook.headers['x-dapi-sign']), /^[0-9a-f]{64}$/);
    assert.equal(hook.headers['x-dapi-event-id'], eventId);
    assert.match(String(hook.headers['content-type']), /^application\/json/);
    assert.deepEqual(Object.keys(hook.json), ['eventId', 'eventType', 'businessId', 'sequence', 'createTime', 'data']);
    assert.equal(hook.json.eventId, eventId);
    assert.equal(hook.json.eventType, 'CUSTOMER_KYC_CHANGED');
    assert.equal(hook.json.businessId, 'cu123');
    assert.equal(hook.json.sequence, sequence);
    assert.match(hook.json.createTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // D4: the amount keeps all its digits on the wire.
    assert.ok(hook.body.includes('"amount":0.123456789012345678'), hook.body);

    // The partner's side, with the SDK helper: accepts the genuine request, refuses a tampered one.
    const event = verifyWebhook({ apiKey: partner.apiKey!, secretKey: partner.secretKey!, headers: hook.headers, body: hook.body, now: svc.clock.now() });
    assert.equal(event.eventId, eventId);
    assert.equal(decimalText((event.data as { amount: unknown }).amount), '0.123456789012345678');
    assert.throws(() => verifyWebhook({ apiKey: partner.apiKey!, secretKey: partner.secretKey!, headers: hook.headers, body: hook.body.replace('APPROVED', 'REJECTED'), now: svc.clock.now() }), WebhookVerificationError);
    assert.throws(() => verifyWebhook({ apiKey: partner.apiKey!, secretKey: 'x'.repeat(32), headers: hook.headers, body: hook.body, now: svc.clock.now() }), WebhookVerificationError);

    const detail = await client.events.eventDetail(eventId);
    assert.equal(detail.status, 'DELIVERED');
    assert.equal(detail.attempts, 1);
    assert.equal(detail.lastHttpStatus, 200);
    assert.equal(detail.nextAttemptTime, null);
    assert.ok(detail.deliveredTime);
    assert.equal(detail.attemptLog.length, 1);
    assert.equal(detail.attemptLog[0].outcome, 'SUCCESS');
    assert.equal(detail.attemptLog[0].httpStatus, 200);
    assert.equal(typeof detail.attemptLog[0].latencyMs, 'number');

    // Delivered events are not sent again.
    await deliverDueEvents(svc.ctx);
    assert.equal(receiver.requestsFor(eventId).length, 1);
  });

  it('when the receiver answers 500 then 200, then exactly one more attempt carries the same eventId and body', async () => {
    receiver.answerNext({ status: 500, body: 'database is down' });
    const { eventId } = await recordTestEvent(svc, partner.partnerId);

    await deliverDueEvents(svc.ctx);
    const afterFailure = await eventState(svc.db, eventId);
    assert.equal(afterFailure.status, 'PENDING');
    assert.equal(afterFailure.attempts, 1);
    assert.match(afterFailure.lastError ?? '', /HTTP 500: database is down/);
    // D49: the first retry is due within 10 s of the failed attempt.
    const wait = afterFailure.nextAttemptAt!.getTime() - afterFailure.lastAttemptAt!.getTime();
    assert.ok(wait > 0 && wait <= 10_000, `first retry after ${wait} ms`);
    assert.ok(wait >= FIRST_RETRY_DELAY_MS * (1 - RETRY_JITTER_RATIO) && wait <= FIRST_RETRY_DELAY_MS * (1 + RETRY_JITTER_RATIO));

    // Not due yet: nothing is sent.
    await deliverDueEvents(svc.ctx);
    assert.equal(receiver.requestsFor(eventId).length, 1);

    await advanceToNextAttempt(eventId);
    await deliverDueEvents(svc.ctx);
    await deliverDueEvents(svc.ctx);

    const got = receiver.requestsFor(eventId);
    assert.equal(got.length, 2, 'exactly one more attempt');
    assert.deepEqual(got.map((r) => r.answeredStatus), [500, 200]);
    assert.deepEqual(got.map((r) => r.headers['x-dapi-event-id']), [eventId, eventId]);
    assert.equal(got[0].body, got[1].body, 'the body is the same bytes on every attempt');
    assert.ok(got.every((r) => r.signatureValid));
    assert.equal((await eventState(svc.db, eventId)).status, 'DELIVERED');
    assert.deepEqual((await attemptsOf(svc.db, eventId)).map((a) => [a.attemptNo, a.outcome, a.httpStatus]), [[1, 'HTTP_ERROR', 500], [2, 'SUCCESS', 200]]);
  });

  it('when the receiver does not answer within the timeout, then the attempt is a TIMEOUT and is retried', async () => {
    receiver.answerNext({ status: 200, delayMs: SLOW_RECEIVER_DELAY_MS });
    const { eventId } = await recordTestEvent(svc, partner.partnerId);

    await deliverDueEvents(svc.ctx);
    const [first] = await attemptsOf(svc.db, eventId);
    assert.equal(first.outcome, 'TIMEOUT');
    assert.equal(first.httpStatus, null);
    assert.match(first.error ?? '', new RegExp(`no answer within ${TEST_WEBHOOK_TIMEOUT_MS} ms`));
    assert.equal((await eventState(svc.db, eventId)).status, 'PENDING');

    await advanceToNextAttempt(eventId);
    await deliverDueEvents(svc.ctx);
    const got = receiver.requestsFor(eventId);
    assert.equal(got.length, 2);
    assert.deepEqual(got.map((r) => r.json.eventId), [eventId, eventId]);
    assert.deepEqual((await attemptsOf(svc.db, eventId)).map((a) => a.outcome), ['TIMEOUT', 'SUCCESS']);
    assert.equal((await eventState(svc.db, eventId)).status, 'DELIVERED');
  });

  it('when a 2xx answer is cut short before its body ends, then the attempt failed and is retried (an answer counts only when complete)', async () => {
    receiver.answerNext({ status: 200, cutBodyShort: true });
    const { eventId } = await recordTestEvent(svc, partner.partnerId);

    await deliverDueEvents(svc.ctx);
    const [first] = await attemptsOf(svc.db, eventId);
    assert.equal(first.outcome, 'NETWORK_ERROR');
    assert.match(first.error ?? '', /cut short/);
    assert.equal((await eventState(svc.db, eventId)).status, 'PENDING');

    await advanceToNextAttempt(eventId);
    await deliverDueEvents(svc.ctx);
    assert.equal(receiver.requestsFor(eventId).length, 2);
    assert.deepEqual((await attemptsOf(svc.db, eventId)).map((a) => a.outcome), ['NETWORK_ERROR', 'SUCCESS']);
    assert.equal((await eventState(svc.db, eventId)).status, 'DELIVERED');
  });

  it('when the receiver answers with a redirect, then it is not followed and the attempt is retried', async () => {
    const elsewhere = await WebhookReceiver.start('/elsewhere');
    try {
      receiver.answerNext({ status: 302, headers: { location: elsewhere.url } });
      const { eventId } = await recordTestEvent(svc, partner.partnerId);
      await deliverDueEvents(svc.ctx);
      const [first] = await attemptsOf(svc.db, eventId);
      assert.equal(first.outcome, 'HTTP_ERROR');
      assert.equal(first.httpStatus, 302);
      assert.match(first.error ?? '', /redirect not followed/);
      assert.equal(elsewhere.requests.length, 0, 'the Location was not called');
      assert.equal((await eventState(svc.db, eventId)).status, 'PENDING');
      await advanceToNextAttempt(eventId);
      await deliverDueEvents(svc.ctx);
      assert.equal((await eventState(svc.db, eventId)).status, 'DELIVERED');
    } finally {
      await elsewhere.close();
    }
  });

  it('sequence increases per businessId; eventIds differ per event', async () => {
    const businessId = 'or-sequence-test';
    const recorded = [];
    for (let i = 0; i < 3; i++) recorded.push(await recordTestEvent(svc, partner.partnerId, { eventType: 'ORGANIZATION_STATUS_CHANGED', businessId }));
    const other = await recordTestEvent(svc, partner.partnerId, { eventType: 'ORGANIZATION_STATUS_CHANGED', businessId: 'or-another' });
    await deliverDueEvents(svc.ctx);
    const sequences = recorded.map((r) => receiver.requestsFor(r.eventId)[0].json.sequence);
    assert.deepEqual(sequences, [1, 2, 3]);
    assert.equal(receiver.requestsFor(other.eventId)[0].json.sequence, 1);
    assert.equal(new Set(recorded.map((r) => r.eventId)).size, 3);
  });

  it('when one partner has a backlog, another partner\'s event goes in the next delivery run, not after the backlog (partners take turns)', async () => {
    // Review of 2026-11-27: events were leased oldest first overall, so a partner whose endpoint hangs
    // (every attempt waits out the timeout) with 400 events queued held another partner's event back 39 s.
    const backlogReceiver = await WebhookReceiver.start();
    const { partner: busy } = await svc.newPartner({ webhookUrl: backlogReceiver.url });
    backlogReceiver.useCredentials(busy);
    try {
      const backlog: string[] = [];
      // One millisecond apart, so that "oldest" is their order: ids minted within one millisecond of the
      // real clock order at random, and events due at the same instant are taken in id order.
      for (let i = 0; i < 12; i++) {
        backlog.push((await recordTestEvent(svc, busy.partnerId)).eventId);
        svc.clock.advance(1);
      }
      const { eventId: other } = await recordTestEvent(svc, partner.partnerId);
      const first = await deliverDueEvents(svc.ctx, { limit: 4 });
      assert.equal(first.leased, 4);
      assert.ok(first.results.some((r) => r.eventId === other && r.status === 'DELIVERED'), 'the other partner\'s event is in the first run');
      // Within one partner, oldest first.
      assert.deepEqual(first.results.filter((r) => r.eventId !== other).map((r) => r.eventId), backlog.slice(0, 3));
      while ((await deliverDueEvents(svc.ctx, { limit: 4 })).leased > 0);
      assert.deepEqual(backlog.map((id) => backlogReceiver.requestsFor(id).length), backlog.map(() => 1), 'the backlog is delivered too, each event once');
    } finally {
      await backlogReceiver.close();
    }
  });

  it('when two instances deliver at the same time, then every event is POSTed exactly once (leases, SKIP LOCKED)', async () => {
    const database = await testDatabase();
    const second = await startService({ db: await database.openAnother(), clock: svc.clock, env: { WEBHOOK_TIMEOUT_MS: String(TEST_WEBHOOK_TIMEOUT_MS) } });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push((await recordTestEvent(svc, partner.partnerId)).eventId);
      const [a, b] = await Promise.all([
        deliverDueEvents(svc.ctx, { limit: 7 }),
        deliverDueEvents(second.ctx, { limit: 7 }),
      ]);
      await Promise.all([deliverDueEvents(svc.ctx), deliverDueEvents(second.ctx)]);
      const fromA = new Set(a.results.map((r) => r.eventId));
      assert.ok(b.results.every((r) => !fromA.has(r.eventId)), 'no event leased by both instances');
      for (const id of ids) assert.equal(receiver.requestsFor(id).length, 1, `event ${id} delivered once`);
    } finally {
      await second.close();
    }
  });

  it('a delivery run sends three round trips whatever its batch size (lease with its attempts, webhook settings, settlement), an idle poll one (issue 34)', async () => {
    const { partner: other } = await svc.newPartner({ webhookUrl: receiver.url });
    receiver.useCredentials(other);
    await deliverDueEvents(svc.ctx); // nothing else due
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await recordTestEvent(svc, (i % 2 ? other : partner).partnerId)).eventId);
    const sent: string[] = [];
    const db = svc.ctx.db;
    const counting = Object.assign(Object.create(db) as Db, {
      query: (sql: string, params?: unknown[]) => { sent.push(sql.trim().split(/\s+/)[0]); return db.query(sql, params); },
      tx: () => { throw new Error('the delivery run opens no transaction'); },
    });
    const run = await deliverDueEvents({ ...svc.ctx, db: counting });
    assert.equal(run.delivered, 6);
    assert.deepEqual(sent, ['WITH', 'SELECT', 'WITH'], 'lease with attempts, partners\' webhook settings, settlement');
    for (const [i, id] of ids.entries()) {
      const [request] = receiver.requestsFor(id);
      assert.equal(receiver.requestsFor(id).length, 1);
      // Each event carries its own partner's settings; the receiver holds the second partner's secret.
      assert.equal(request.headers['x-dapi-api-key'], (i % 2 ? other : partner).apiKey);
      assert.equal(request.signatureValid, i % 2 === 1);
      assert.deepEqual((await attemptsOf(svc.db, id)).map((a) => [a.attemptNo, a.outcome]), [[1, 'SUCCESS']]);
    }
    receiver.useCredentials(partner);
    sent.length = 0;
    assert.equal((await deliverDueEvents({ ...svc.ctx, db: counting })).leased, 0);
    assert.equal(sent.length, 1, 'an idle poll is one statement');
  });

  it('when the background workers run, then a recorded event is delivered without anyone calling the delivery function', async () => {
    const workers = startWorkers(svc.ctx, { error: () => {} });
    try {
      const { eventId } = await recordTestEvent(svc, partner.partnerId);
      const deadline = Date.now() + 15_000;
      while (receiver.requestsFor(eventId).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(receiver.requestsFor(eventId).length, 1);
    } finally {
      await workers.stop();
    }
  });

  it('the worked signature example of docs/webhooks.md matches the service signer and the SDK verifier', () => {
    const apiKey = '0123456789abcdef0123456789abcdef';
    const secretKey = 'AbCdEfGhIjKlMnOpQrStUvWxYz012345';
    const body = webhookBody({
      eventId: 'evmwxdk8zra34118636d', eventType: 'CUSTOMER_KYC_CHANGED', businessId: 'cusmwxdk8zr9bf0f6582', sequence: '2',
      createTime: new Date('2026-11-22T06:30:20.512Z'), payload: '{"customerId":"cusmwxdk8zr9bf0f6582","kycStatus":"APPROVED","reason":null}',
    });
    const headers = webhookHeaders({ apiKey, secretKey, eventId: 'evmwxdk8zra34118636d', body, nowMs: 1795329021000, nonce: '48213' });
    const doc = readFileSync(path.join(ROOT, 'docs', 'webhooks.md'), 'utf8');
    assert.ok(doc.includes(body), 'documented body');
    assert.equal(headers['x-dapi-sign'], '73f2dc10e64d0a3b4edea13e369f961729629f684568e16bd3fa2d0bb436b715');
    assert.ok(doc.includes(`X-DAPI-SIGN: ${headers['x-dapi-sign']}`), 'documented signature');
    const event = verifyWebhook({ apiKey, secretKey, headers, body, now: 1795329021000 });
    assert.equal(event.sequence, 2);
  });

  it('the body is built from the stored row alone, so every attempt sends identical bytes', () => {
    const body = webhookBody({
      eventId: 'ev1', eventType: 'LOW_BALANCE', businessId: 'or1', sequence: '7',
      createTime: new Date('2026-11-22T06:30:21.000Z'), payload: '{"available":10.005,"threshold":100.00}',
    });
    assert.equal(body, '{"eventId":"ev1","eventType":"LOW_BALANCE","businessId":"or1","sequence":7,"createTime":"2026-11-22T06:30:21.000Z","data":{"available":10.005,"threshold":100.00}}');
  });
});
