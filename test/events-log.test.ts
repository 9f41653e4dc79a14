import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { expectCode } from './helpers/expect-code.ts';
import { eventState, recordTestEvent, WebhookReceiver } from './helpers/webhook-receiver.ts';
import { deliverDueEvents } from '../src/domains/events/testing.ts';
import { toWire } from '../src/platform/money.ts'; // the service's own amounts, as its producers record them
import { decimal, decimalText, type CardServiceClient, type CreatedPartner } from '../sdk/index.ts';

const EGRESS = '203.0.113.10,198.51.100.0/28';

describe('event log, redelivery and egress addresses (D38, D9, 5.5)', () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  let partner: CreatedPartner;
  let client: CardServiceClient;
  let other: CardServiceClient;

  before(async () => {
    svc = await startService({ env: { WEBHOOK_EGRESS_IPS: EGRESS } });
    receiver = await WebhookReceiver.start();
    ({ partner, client } = await svc.newPartner({ webhookUrl: receiver.url }));
    receiver.useCredentials(partner);
    ({ client: other } = await svc.newPartner({ webhookUrl: receiver.url }));
  });
  after(async () => {
    await receiver.close();
    await svc.close();
    await closeTestDatabase();
  });

  it('lists the partner\'s events newest first, with filters on type, status, businessId and time, and D9 paging', async () => {
    const t0 = svc.clock.now();
    const kyc = await recordTestEvent(svc, partner.partnerId, { eventType: 'CUSTOMER_KYC_CHANGED', businessId: 'cu-log-1' });
    svc.clock.advance(1000);
    const low = await recordTestEvent(svc, partner.partnerId, {
      eventType: 'LOW_BALANCE', businessId: 'or-log-1',
      data: { organizationId: 'or-log-1', currency: 'USD', available: toWire('10.05'), threshold: toWire('100.00') },
    });
    svc.clock.advance(1000);
    receiver.answerNext({ status: 503 });
    await deliverDueEvents(svc.ctx); // kyc and low delivered: 503 goes to whichever is first
    const failedOnce = (await eventState(svc.db, kyc.eventId)).status === 'PENDING' ? kyc : low;
    const t1 = svc.clock.now();
    const card = await recordTestEvent(svc, partner.partnerId, { eventType: 'CARD_CREATED', businessId: 'ca-log-1' });

    const all = await client.events.listEvents({ startTime: new Date(t0).toISOString() });
    assert.equal(all.total, 3);
    assert.equal(typeof all.total, 'number');
    assert.deepEqual(all.result.map((e) => e.eventId), [card.eventId, low.eventId, kyc.eventId], 'newest first');
    assert.equal(all.page, 1);
    assert.equal(all.pageSize, 20);

    const lowItem = all.result[1];
    assert.equal(lowItem.eventType, 'LOW_BALANCE');
    assert.equal(lowItem.businessId, 'or-log-1');
    assert.equal(lowItem.sequence, 1);
    assert.equal(decimalText((lowItem.data as { threshold: unknown }).threshold), '100.00', 'data is lossless');
    assert.match(lowItem.createTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const byType = await client.events.listEvents({ eventType: 'LOW_BALANCE', startTime: new Date(t0).toISOString() });
    assert.deepEqual(byType.result.map((e) => e.eventId), [low.eventId]);
    const pending = await client.events.listEvents({ status: 'PENDING', startTime: new Date(t0).toISOString() });
    assert.deepEqual(pending.result.map((e) => e.eventId).sort(), [failedOnce.eventId, card.eventId].sort());
    const failedItem = pending.result.find((e) => e.eventId === failedOnce.eventId)!;
    assert.equal(failedItem.lastHttpStatus, 503);
    assert.equal(failedItem.attempts, 1);
    assert.ok(failedItem.nextAttemptTime);
    const delivered = await client.events.listEvents({ status: 'DELIVERED', startTime: new Date(t0).toISOString() });
    assert.equal(delivered.total, 1);
    assert.equal(delivered.result[0].deliveredTime !== null, true);
    const byBusiness = await client.events.listEvents({ businessId: 'cu-log-1' });
    assert.deepEqual(byBusiness.result.map((e) => e.eventId), [kyc.eventId]);
    const window = await client.events.listEvents({ startTime: new Date(t0).toISOString(), endTime: new Date(t1).toISOString() });
    assert.deepEqual(window.result.map((e) => e.eventId), [low.eventId, kyc.eventId], 'endTime is exclusive');

    const page1 = await client.events.listEvents({ startTime: new Date(t0).toISOString(), pageSize: 2 });
    const page2 = await client.events.listEvents({ startTime: new Date(t0).toISOString(), pageSize: 2, page: 2 });
    assert.deepEqual([...page1.result, ...page2.result].map((e) => e.eventId), all.result.map((e) => e.eventId));
    assert.equal(page2.total, 3);

    await expectCode(client.events.listEvents({ pageSize: 101 }), 'DAPI_PARAM_INVALID');
    await expectCode(client.events.listEvents({ page: 0 }), 'DAPI_PARAM_INVALID');
    await expectCode(client.events.listEvents({ status: 'LOST' as never }), 'DAPI_PARAM_INVALID');
    await expectCode(client.events.listEvents({ startTime: 'yesterday' }), 'DAPI_PARAM_INVALID');
    await expectCode(client.events.listEvents({ startTime: new Date(t1).toISOString(), endTime: new Date(t0).toISOString() }), 'DAPI_PARAM_INVALID');
    await deliverDueEvents(svc.ctx);
  });

  it('when the partner asks for a resend, then the same event (eventId, body) is POSTed again', async () => {
    const { eventId } = await recordTestEvent(svc, partner.partnerId, { eventType: 'CARD_CREATED', businessId: 'ca-resend' });
    await deliverDueEvents(svc.ctx);
    assert.equal((await client.events.eventDetail(eventId)).status, 'DELIVERED');

    const resent = await client.events.resend(eventId);
    assert.equal(resent.eventId, eventId);
    assert.equal(resent.status, 'PENDING');
    assert.ok(new Date(resent.nextAttemptTime).getTime() <= svc.clock.now());
    await deliverDueEvents(svc.ctx);

    const got = receiver.requestsFor(eventId);
    assert.equal(got.length, 2);
    assert.equal(got[1].body, got[0].body);
    assert.equal(got[1].signatureValid, true);
    const detail = await client.events.eventDetail(eventId);
    assert.equal(detail.status, 'DELIVERED');
    assert.equal(detail.attempts, 2);
    assert.deepEqual(detail.attemptLog.map((a) => [a.attemptNo, a.outcome]), [[2, 'SUCCESS'], [1, 'SUCCESS']], 'latest first');
  });

  it('when an event FAILED, then a resend starts a fresh delivery cycle', async () => {
    const { eventId } = await recordTestEvent(svc, partner.partnerId);
    await svc.db.query(`UPDATE event_deliveries SET status = 'FAILED', next_attempt_at = NULL, failed_at = now() WHERE event_id = $1`, [eventId]);
    await client.events.resend(eventId);
    await deliverDueEvents(svc.ctx);
    const detail = await client.events.eventDetail(eventId);
    assert.equal(detail.status, 'DELIVERED');
    assert.equal(detail.failedTime, null);
  });

  it('when another partner lists, reads or resends these events, then it sees nothing and gets EVENT_NOT_FOUND', async () => {
    const { eventId } = await recordTestEvent(svc, partner.partnerId, { businessId: 'cu-private' });
    await deliverDueEvents(svc.ctx);
    const before = await eventState(svc.db, eventId);

    const theirs = await other.events.listEvents({ businessId: 'cu-private' });
    assert.equal(theirs.total, 0);
    const everything = await other.events.listEvents({ pageSize: 100 });
    assert.ok(everything.result.every((e) => e.eventId !== eventId));
    await expectCode(other.events.resend(eventId), 'EVENT_NOT_FOUND');
    await expectCode(other.events.eventDetail(eventId), 'EVENT_NOT_FOUND');
    await expectCode(client.events.resend('ev-does-not-exist'), 'EVENT_NOT_FOUND');

    const afterwards = await eventState(svc.db, eventId);
    assert.deepEqual(afterwards, before, 'the refused resend changed nothing');
    await deliverDueEvents(svc.ctx);
    assert.equal(receiver.requestsFor(eventId).length, 1);
  });

  it('publishes the webhook egress addresses from configuration (5.5)', async () => {
    const egress = await client.events.egressIps();
    assert.deepEqual(egress, { environment: 'sandbox', egressIps: EGRESS.split(',') });
  });

  it('when the partner has no webhook_url, then one NOT_CONFIGURED attempt parks the event; setting the URL delivers it at once', async () => {
    const { partner: bare, client: bareClient } = await svc.newPartner();
    const { eventId } = await recordTestEvent(svc, bare.partnerId);
    const startedAt = svc.clock.now();
    await deliverDueEvents(svc.ctx);
    const first = await bareClient.events.eventDetail(eventId);
    assert.equal(first.status, 'PENDING');
    assert.equal(first.attemptLog.length, 1);
    assert.equal(first.attemptLog[0].outcome, 'NOT_CONFIGURED');
    assert.match(first.lastError ?? '', /no webhook_url/);
    // Parked until the end of its 24-hour window, not retried on the backoff schedule.
    const parkedUntil = new Date(first.nextAttemptTime!).getTime() - 24 * 3_600_000;
    assert.ok(parkedUntil >= startedAt && parkedUntil <= startedAt + 5_000, 'next attempt at the first attempt plus 24 hours');
    svc.clock.advance(3_600_000);
    await deliverDueEvents(svc.ctx);
    assert.equal((await bareClient.events.eventDetail(eventId)).attemptLog.length, 1, 'no attempt while parked');
    await svc.admin.updatePartner(bare.partnerId, { name: 'renamed while parked' });
    await deliverDueEvents(svc.ctx);
    assert.equal((await bareClient.events.eventDetail(eventId)).attemptLog.length, 1, 'a change that does not touch delivery wakes nothing');

    const late = await WebhookReceiver.start();
    try {
      late.useCredentials(bare);
      await svc.admin.updatePartner(bare.partnerId, { webhookUrl: late.url });
      await deliverDueEvents(svc.ctx); // the settings change made it due: no clock advance
      assert.equal(late.requestsFor(eventId).length, 1);
      assert.equal(late.requestsFor(eventId)[0].signatureValid, true);
      assert.equal((await bareClient.events.eventDetail(eventId)).status, 'DELIVERED');
    } finally {
      await late.close();
    }
  });

  it('when a partner without a webhook_url has many events, then the NOT_CONFIGURED warning is logged once for it, the rest at debug (issue 32)', async () => {
    const lines: { level: string; line: Record<string, unknown> }[] = [];
    const log = {
      error: (line: object) => lines.push({ level: 'error', line: line as Record<string, unknown> }),
      warn: (line: object) => lines.push({ level: 'warn', line: line as Record<string, unknown> }),
      info: (line: object) => lines.push({ level: 'info', line: line as Record<string, unknown> }),
      debug: (line: object) => lines.push({ level: 'debug', line: line as Record<string, unknown> }),
    };
    const { partner: quiet } = await svc.newPartner();
    const { partner: other } = await svc.newPartner();
    for (let i = 0; i < 3; i++) await recordTestEvent(svc, quiet.partnerId);
    await recordTestEvent(svc, other.partnerId);
    await deliverDueEvents(svc.ctx, { log });
    await recordTestEvent(svc, quiet.partnerId);
    await deliverDueEvents(svc.ctx, { log }); // a later run: still no second warning for the same partner
    const of = (partnerId: string) => lines.filter((l) => l.line.partnerId === partnerId && l.line.outcome === 'NOT_CONFIGURED');
    assert.equal(of(quiet.partnerId).length, 4, 'every attempt is still logged');
    assert.deepEqual(of(quiet.partnerId).map((l) => l.level), ['warn', 'debug', 'debug', 'debug']);
    assert.match(String(of(quiet.partnerId)[0].line.reason), /no webhook_url/);
    assert.deepEqual(of(other.partnerId).map((l) => l.level), ['warn'], 'once per partner, not once overall');
  });

  it('when a DISABLED partner with a webhook_url is enabled again, then its parked event goes out at once', async () => {
    const { partner: paused, client: pausedClient } = await svc.newPartner();
    const receiver = await WebhookReceiver.start();
    try {
      receiver.useCredentials(paused);
      await svc.admin.updatePartner(paused.partnerId, { webhookUrl: receiver.url, status: 'DISABLED' });
      const { eventId } = await recordTestEvent(svc, paused.partnerId);
      await deliverDueEvents(svc.ctx);
      assert.equal(receiver.requestsFor(eventId).length, 0);
      const state = await eventState(svc.db, eventId);
      assert.equal(state.status, 'PENDING');
      assert.match(state.lastError ?? '', /disabled/);
      assert.ok(new Date(state.nextAttemptAt!).getTime() > svc.clock.now() + 23 * 3_600_000, 'parked until the end of the window');
      await svc.admin.updatePartner(paused.partnerId, { status: 'ACTIVE' });
      await deliverDueEvents(svc.ctx);
      assert.equal(receiver.requestsFor(eventId).length, 1);
      assert.equal((await pausedClient.events.eventDetail(eventId)).status, 'DELIVERED');
    } finally {
      await receiver.close();
    }
  });

  it('when the partner never sets a webhook_url, then its parked event is FAILED at the end of the window after its second attempt', async () => {
    const { partner: bare, client: bareClient } = await svc.newPartner();
    const { eventId } = await recordTestEvent(svc, bare.partnerId);
    await deliverDueEvents(svc.ctx);
    const parked = await bareClient.events.eventDetail(eventId);
    svc.clock.advance(new Date(parked.nextAttemptTime!).getTime() - svc.clock.now());
    await deliverDueEvents(svc.ctx);
    const failed = await bareClient.events.eventDetail(eventId);
    assert.equal(failed.status, 'FAILED');
    assert.deepEqual(failed.attemptLog.map((a) => a.outcome), ['NOT_CONFIGURED', 'NOT_CONFIGURED']);
    // Nothing is lost: the FAILED event can still be resent (and waits again while nothing can receive it).
    assert.equal((await bareClient.events.resend(eventId)).status, 'PENDING');
    await deliverDueEvents(svc.ctx);
    const again = await bareClient.events.eventDetail(eventId);
    assert.equal(again.status, 'PENDING');
    assert.equal(again.attemptLog.length, 3);
  });
});
