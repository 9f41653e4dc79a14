import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { attemptsOf, eventState, recordTestEvent, WebhookReceiver } from './helpers/webhook-receiver.ts';
import { deliverDueEvents } from '../src/domains/events/testing.ts';
import { isForbiddenAddress } from '../src/platform/http/ssrf.ts';
import { CardServiceError } from '../sdk/index.ts';

/** Production needs these (the test helper already gives ADMIN_TOKEN and MASTER_KEY). */
const PRODUCTION_ENV = { CARDSVC_ENV: 'production', CARD_CVK: '0123456789abcdeffedcba9876543210' };

describe('SSRF rules for webhook URLs (D38)', () => {
  let sandbox: TestService;
  let production: TestService;

  before(async () => {
    sandbox = await startService();
    production = await startService({ env: PRODUCTION_ENV, clock: sandbox.clock });
  });
  after(async () => {
    await production.close();
    await sandbox.close();
    await closeTestDatabase();
  });

  it('classifies loopback, private, link-local and reserved addresses (including IPv6 forms) as forbidden', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254',
      '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', 'fc00::1', 'ff02::1',
      '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '64:ff9b::a00:1', '2002:c0a8:101::1', 'not-an-ip']) {
      assert.equal(isForbiddenAddress(address), true, address);
    }
    for (const address of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(isForbiddenAddress(address), false, address);
    }
  });

  it('in production, an operator cannot store a webhookUrl or authUrl that reaches an internal address', async () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://10.0.0.5/hook', 'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook', 'http://[::ffff:192.168.0.1]/hook', 'http://2130706433/hook']) {
      await assert.rejects(production.admin.createPartner({ name: 'ssrf', webhookUrl: url }), (err: unknown) => {
        assert.ok(err instanceof CardServiceError);
        assert.equal(err.code, 'DAPI_PARAM_INVALID', url);
        assert.match(err.message, /webhookUrl/);
        return true;
      });
    }
    await assert.rejects(production.admin.createPartner({ name: 'ssrf', authUrl: 'https://192.168.1.10/auth' }), /DAPI_PARAM_INVALID.*authUrl/);

    const created = await production.admin.createPartner({ name: 'public', webhookUrl: 'https://93.184.215.14/hook' });
    assert.equal(created.webhookUrl, 'https://93.184.215.14/hook');
    await assert.rejects(production.admin.updatePartner(created.partnerId, { webhookUrl: 'http://172.16.3.4/hook' }), /DAPI_PARAM_INVALID.*webhookUrl/);
  });

  it('in sandbox, local webhook URLs are allowed for development', async () => {
    const created = await sandbox.admin.createPartner({ name: 'local-dev', webhookUrl: 'http://127.0.0.1:9/hook' });
    assert.equal(created.webhookUrl, 'http://127.0.0.1:9/hook');
  });

  it('in production, delivery to a URL that resolves to an internal address is BLOCKED at connect time and nothing is sent', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      // Stored while it was allowed (sandbox); the production worker must still refuse it, for a
      // literal address and for a name that resolves to loopback (checked in the socket's lookup).
      const { partner: literal } = await sandbox.newPartner({ webhookUrl: receiver.url });
      const { partner: named } = await sandbox.newPartner({ webhookUrl: receiver.url.replace('127.0.0.1', 'localhost') });
      receiver.useCredentials(literal);
      const a = await recordTestEvent(sandbox, literal.partnerId);
      const b = await recordTestEvent(sandbox, named.partnerId);

      await deliverDueEvents(production.ctx);
      assert.equal(receiver.requests.length, 0, 'no request left the service');
      for (const { eventId } of [a, b]) {
        const [attempt] = await attemptsOf(production.db, eventId);
        assert.equal(attempt.outcome, 'BLOCKED', eventId);
        assert.match(attempt.error ?? '', eventId === a.eventId ? /non-public address/ : /names this machine/);
        assert.equal((await eventState(production.db, eventId)).status, 'PENDING');
      }

      // The same events from a sandbox worker reach the local receiver.
      sandbox.clock.advance(60_000);
      await deliverDueEvents(sandbox.ctx);
      assert.equal(receiver.requestsFor(a.eventId).length, 1);
      assert.equal(receiver.requestsFor(a.eventId)[0].signatureValid, true);
      assert.equal(receiver.requestsFor(b.eventId).length, 1);
    } finally {
      await receiver.close();
    }
  });
  it('D56: the dialled address must be on the webhook IP whitelist; refused attempts are BLOCKED, retried, and the event list says why', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      // A literal address and a name (resolved in the socket's lookup), both off a non-empty list.
      const literal = await sandbox.newPartner({ webhookUrl: receiver.url, ipWhitelist: { webhook: ['10.9.8.7'] } });
      const named = await sandbox.newPartner({ webhookUrl: receiver.url.replace('127.0.0.1', 'localhost'), ipWhitelist: { webhook: ['10.9.8.0/24'] } });
      receiver.useCredentials(literal.partner);
      const a = await recordTestEvent(sandbox, literal.partner.partnerId);
      const b = await recordTestEvent(sandbox, named.partner.partnerId);
      await deliverDueEvents(sandbox.ctx);
      assert.equal(receiver.requests.length, 0, 'nothing was sent');
      for (const [{ eventId }, client] of [[a, literal.client], [b, named.client]] as const) {
        const [attempt] = await attemptsOf(sandbox.db, eventId);
        assert.equal(attempt.outcome, 'BLOCKED');
        assert.match(attempt.error ?? '', /127\.0\.0\.1.*is not on the webhook IP whitelist \(ipWhitelist\.webhook\)/);
        // Retried on the D38 schedule, within the window.
        const state = await eventState(sandbox.db, eventId);
        assert.equal(state.status, 'PENDING');
        assert.ok(state.nextAttemptAt && state.nextAttemptAt.getTime() - sandbox.clock.now() < 60_000, 'the next attempt is on the backoff schedule');
        const [listed] = (await client.events.listEvents({ businessId: (await client.events.eventDetail(eventId)).businessId })).result;
        assert.equal(listed.status, 'PENDING');
        assert.match(listed.lastError ?? '', /not on the webhook IP whitelist/, 'the partner sees why');
      }
      // Listing the address lets the retry through, to the listed address only.
      await sandbox.admin.updatePartner(literal.partner.partnerId, { ipWhitelist: { webhook: ['127.0.0.1'] } });
      await sandbox.admin.updatePartner(named.partner.partnerId, { ipWhitelist: { webhook: ['127.0.0.0/8'] } });
      sandbox.clock.advance(60_000);
      await deliverDueEvents(sandbox.ctx);
      assert.equal(receiver.requestsFor(a.eventId).length, 1);
      assert.equal(receiver.requestsFor(b.eventId).length, 1);
      assert.equal((await eventState(sandbox.db, a.eventId)).status, 'DELIVERED');
      assert.equal((await eventState(sandbox.db, b.eventId)).status, 'DELIVERED');
    } finally {
      await receiver.close();
    }
  });

  it('D56: in sandbox an empty webhook whitelist admits any address; in production none, and a public address off the list is refused', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const open = await sandbox.newPartner({ webhookUrl: receiver.url });
      receiver.useCredentials(open.partner);
      const e = await recordTestEvent(sandbox, open.partner.partnerId);
      await deliverDueEvents(sandbox.ctx);
      assert.equal(receiver.requestsFor(e.eventId).length, 1, 'sandbox: empty list, any address');
    } finally {
      await receiver.close();
    }
    // A production worker, public literal addresses (refused before any connection is made); the
    // partners are made in sandbox, where they get credentials at once (production sends them by link).
    const { partner: empty } = await sandbox.newPartner({ webhookUrl: 'https://93.184.215.14/hook' });
    const { partner: other } = await sandbox.newPartner({ webhookUrl: 'https://93.184.215.14/hook', ipWhitelist: { webhook: ['93.184.216.0/24'] } });
    const x = await recordTestEvent(production, empty.partnerId);
    const y = await recordTestEvent(production, other.partnerId);
    await deliverDueEvents(production.ctx);
    const [ax] = await attemptsOf(production.db, x.eventId);
    assert.equal(ax.outcome, 'BLOCKED');
    assert.match(ax.error ?? '', /93\.184\.215\.14 is not on the webhook IP whitelist .*the list is empty, and production delivers to no address/);
    const [ay] = await attemptsOf(production.db, y.eventId);
    assert.equal(ay.outcome, 'BLOCKED');
    assert.match(ay.error ?? '', /93\.184\.215\.14 is not on the webhook IP whitelist \(ipWhitelist\.webhook\)$/);
    assert.equal((await eventState(production.db, y.eventId)).status, 'PENDING', 'retried within the window');
  });
});
