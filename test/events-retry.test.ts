import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, testDatabase, TestClock, type TestService } from './helpers/service.ts';
import { attemptsOf, downUrl, eventState, recordTestEvent, WebhookReceiver } from './helpers/webhook-receiver.ts';
import {
  deliverDueEvents, deliverLeased, FIRST_RETRY_DELAY_MS, leaseDueEvents, leaseDurationMs, MAX_RETRY_DELAY_MS,
  RETRY_BACKOFF_FACTOR, RETRY_JITTER_RATIO, RETRY_WINDOW_MS,
} from '../src/domains/events/testing.ts';
import type { CardServiceClient, CreatedPartner } from '../sdk/index.ts';
import { recordEvent } from '../src/domains/events/index.ts';

const HOUR_MS = 3_600_000;

describe('webhook retries and crash safety (D38, D49)', () => {
  let svc: TestService;

  before(async () => {
    svc = await startService();
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('when the receiver is down, then attempts follow the exponential backoff with jitter and the event is FAILED after 24 h', async () => {
    const { partner } = await svc.newPartner({ webhookUrl: await downUrl() });
    const { eventId } = await recordTestEvent(svc, partner.partnerId);
    let firstAttemptAt = 0; // the 24-hour window counts from the cycle's first attempt

    const gaps: number[] = [];
    let state = await eventState(svc.db, eventId);
    for (let attempt = 1; attempt <= 200 && state.status === 'PENDING'; attempt++) {
      if (state.nextAttemptAt!.getTime() > svc.clock.now()) svc.clock.advance(state.nextAttemptAt!.getTime() - svc.clock.now() + 1);
      await deliverDueEvents(svc.ctx);
      state = await eventState(svc.db, eventId);
      assert.equal(state.attempts, attempt);
      if (attempt === 1) firstAttemptAt = state.lastAttemptAt!.getTime();
      const elapsed = state.lastAttemptAt!.getTime() - firstAttemptAt;
      if (state.status === 'PENDING') {
        assert.ok(elapsed < RETRY_WINDOW_MS, `still retrying only inside the window (attempt ${attempt})`);
        const gap = state.nextAttemptAt!.getTime() - state.lastAttemptAt!.getTime();
        const nominal = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * RETRY_BACKOFF_FACTOR ** (attempt - 1));
        assert.ok(gap >= nominal * (1 - RETRY_JITTER_RATIO) - 1 && gap <= nominal * (1 + RETRY_JITTER_RATIO) + 1,
          `attempt ${attempt}: waited ${gap} ms, nominal ${nominal} ms`);
        gaps.push(gap);
      } else {
        assert.equal(state.status, 'FAILED');
        assert.ok(elapsed >= RETRY_WINDOW_MS, `FAILED only after 24 h of retries (after ${elapsed} ms)`);
      }
    }
    assert.equal(state.status, 'FAILED');
    assert.ok(gaps[0] <= 10_000, 'D49: first retry within 10 s');
    // Jitter: the capped waits are not all the same number.
    const capped = gaps.filter((g) => g > MAX_RETRY_DELAY_MS * (1 - RETRY_JITTER_RATIO) - 1);
    assert.ok(capped.length > 5 && new Set(capped).size > 1, 'capped waits carry jitter');
    const attempts = await attemptsOf(svc.db, eventId);
    assert.equal(attempts.length, state.attempts);
    assert.ok(attempts.every((a) => a.outcome === 'NETWORK_ERROR' && /ECONNREFUSED/.test(a.error ?? '')), 'connection refused each time');
    assert.ok(attempts.length > 20 && attempts.length < 60, `${attempts.length} attempts in about 24 h`);
    const lastAttemptAt = attempts.at(-1)!.startedAt.getTime();
    const span = lastAttemptAt - attempts[0].startedAt.getTime();
    assert.ok(span >= RETRY_WINDOW_MS - 1000 && span <= RETRY_WINDOW_MS + 1.5 * HOUR_MS, `attempts span ${span} ms`);

    // A FAILED event is never attempted again on its own.
    svc.clock.advance(48 * HOUR_MS);
    await deliverDueEvents(svc.ctx);
    assert.equal((await eventState(svc.db, eventId)).attempts, state.attempts);
  });

  it('when an event is recorded with a createTime in the past, then its retry window still starts at its first attempt', async () => {
    const { partner } = await svc.newPartner({ webhookUrl: await downUrl() });
    const { eventId } = await svc.db.tx((q) => recordEvent(q, {
      partnerId: partner.partnerId, eventType: 'LOW_BALANCE', businessId: 'or-old',
      data: { organizationId: 'or-old' }, createTime: new Date(svc.clock.now() - 48 * HOUR_MS),
    }));
    await deliverDueEvents(svc.ctx);
    const state = await eventState(svc.db, eventId);
    assert.equal(state.attempts, 1);
    assert.equal(state.status, 'PENDING');
  });

  it('when the service is killed after the commit and before any delivery, then a new instance delivers the event', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const database = await testDatabase();
      const clock = new TestClock();
      const first = await startService({ db: await database.openAnother(), clock });
      const { partner } = await first.newPartner({ webhookUrl: receiver.url });
      receiver.useCredentials(partner);
      const { eventId } = await recordTestEvent(first, partner.partnerId);
      await first.close(); // killed: nothing ran after the commit

      const restarted = await startService({ db: await database.openAnother(), clock });
      try {
        await deliverDueEvents(restarted.ctx);
        assert.equal(receiver.requestsFor(eventId).length, 1);
        assert.equal(receiver.requestsFor(eventId)[0].signatureValid, true);
        assert.equal((await eventState(restarted.db, eventId)).status, 'DELIVERED');
      } finally {
        await restarted.close();
      }
    } finally {
      await receiver.close();
    }
  });

  it('when a worker dies holding the lease (between lease commit and delivery), then after the lease expires another instance delivers it once', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const database = await testDatabase();
      const clock = new TestClock();
      const crashed = await startService({ db: await database.openAnother(), clock });
      const { partner } = await crashed.newPartner({ webhookUrl: receiver.url });
      receiver.useCredentials(partner);
      const { eventId } = await recordTestEvent(crashed, partner.partnerId);
      // The worker takes the lease and dies before the POST: nothing answers for the attempt.
      const leased = await leaseDueEvents(crashed.ctx);
      assert.ok(leased.some((e) => e.eventId === eventId));
      await crashed.close();

      const restarted = await startService({ db: await database.openAnother(), clock });
      try {
        // While the dead worker's lease runs, no one else takes the event (no concurrent attempt).
        await deliverDueEvents(restarted.ctx);
        assert.equal(receiver.requestsFor(eventId).length, 0);
        assert.equal((await eventState(restarted.db, eventId)).status, 'PENDING');

        clock.advance(leaseDurationMs(restarted.config) + 1);
        await deliverDueEvents(restarted.ctx);
        await deliverDueEvents(restarted.ctx);
        assert.equal(receiver.requestsFor(eventId).length, 1);
        assert.equal((await eventState(restarted.db, eventId)).status, 'DELIVERED');
        assert.deepEqual((await attemptsOf(restarted.db, eventId)).map((a) => [a.attemptNo, a.outcome]), [[1, 'LEASE_EXPIRED'], [2, 'SUCCESS']]);
      } finally {
        await restarted.close();
      }
    } finally {
      await receiver.close();
    }
  });

  it('when a slow attempt outlives its lease and another worker delivered meanwhile, then the late answer does not overwrite the state', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const { partner } = await svc.newPartner({ webhookUrl: receiver.url });
      receiver.useCredentials(partner);
      const { eventId } = await recordTestEvent(svc, partner.partnerId);
      const [late] = (await leaseDueEvents(svc.ctx)).filter((e) => e.eventId === eventId);
      assert.ok(late);
      svc.clock.advance(leaseDurationMs(svc.config) + 1);
      receiver.answerNext({ status: 200 });
      await deliverDueEvents(svc.ctx); // another worker, after the lease expired
      assert.equal((await eventState(svc.db, eventId)).status, 'DELIVERED');
      receiver.answerNext({ status: 500 });
      const result = await deliverLeased(svc.ctx, late); // the first worker wakes up; its partner answers 500
      assert.equal(result.settled, false);
      assert.equal((await eventState(svc.db, eventId)).status, 'DELIVERED', 'the stale answer is logged, not applied');
      assert.deepEqual((await attemptsOf(svc.db, eventId)).map((a) => a.outcome), ['HTTP_ERROR', 'SUCCESS']);
    } finally {
      await receiver.close();
    }
  });

  describe('resend of an event in flight', () => {
    let receiver: WebhookReceiver;
    let partner: CreatedPartner;
    let client: CardServiceClient;
    before(async () => {
      receiver = await WebhookReceiver.start();
      ({ partner, client } = await svc.newPartner({ webhookUrl: receiver.url }));
      receiver.useCredentials(partner);
    });
    after(() => receiver.close());

    it('when resend arrives while an attempt is in flight, then the new delivery waits for that lease and still happens', async () => {
      const { eventId } = await recordTestEvent(svc, partner.partnerId);
      const [inFlight] = (await leaseDueEvents(svc.ctx)).filter((e) => e.eventId === eventId);
      const resent = await client.events.resend(eventId);
      // Not two attempts at once: the redelivery is due when the running attempt's lease ends.
      assert.equal(new Date(resent.nextAttemptTime).getTime(), (await eventState(svc.db, eventId)).nextAttemptAt!.getTime());
      assert.ok(new Date(resent.nextAttemptTime).getTime() > svc.clock.now());
      const first = await deliverLeased(svc.ctx, inFlight);
      assert.equal(first.outcome, 'SUCCESS');
      assert.equal(first.settled, false, 'the resend superseded it');
      assert.equal((await eventState(svc.db, eventId)).status, 'PENDING');
      svc.clock.advance(new Date(resent.nextAttemptTime).getTime() - svc.clock.now() + 1);
      await deliverDueEvents(svc.ctx);
      assert.equal(receiver.requestsFor(eventId).length, 2);
      assert.equal((await eventState(svc.db, eventId)).status, 'DELIVERED');
    });

    it('when resend is asked twice, or the webhook settings change, while an attempt is in flight, then no second attempt starts before its lease ends', async () => {
      const { eventId } = await recordTestEvent(svc, partner.partnerId);
      const [inFlight] = (await leaseDueEvents(svc.ctx)).filter((e) => e.eventId === eventId);
      const leaseEnd = (await eventState(svc.db, eventId)).nextAttemptAt!.getTime();
      await client.events.resend(eventId);
      // A second click on resend: still waits for the running attempt (D38, docs/webhooks.md "never two attempts of one event at once").
      const again = await client.events.resend(eventId);
      assert.equal(new Date(again.nextAttemptTime).getTime(), leaseEnd);
      // The partner's webhook_url changes (its waiting events are due at once): not this one, its attempt still runs.
      await svc.admin.updatePartner(partner.partnerId, { webhookUrl: `${receiver.url}/moved` });
      assert.equal((await eventState(svc.db, eventId)).nextAttemptAt!.getTime(), leaseEnd);
      assert.deepEqual((await leaseDueEvents(svc.ctx)).filter((e) => e.eventId === eventId), [], 'no second attempt while the first is in flight');

      const first = await deliverLeased(svc.ctx, inFlight);
      assert.equal(first.settled, false, 'the resend superseded it');
      svc.clock.advance(leaseEnd - svc.clock.now() + 1);
      await deliverDueEvents(svc.ctx);
      assert.equal(receiver.requestsFor(eventId).length, 2);
      assert.equal((await eventState(svc.db, eventId)).status, 'DELIVERED');
    });
  });
});
