import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { migrate } from '../src/migrate.ts';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { recordTestEvent, WebhookReceiver } from './helpers/webhook-receiver.ts';
import { deliverDueEvents, deliverLeased, leaseDueEvents } from '../src/domains/events/testing.ts';
import { cardWorld } from './helpers/cards.ts';
import { fundedCard, purchase } from './helpers/authorization.ts';
import { decimal, type CardServiceClient } from '../sdk/index.ts';

/**
 * Issue 34, migration 157: an event's delivery state moves from the event row into event_deliveries.
 * The test makes events in every delivery state through the service (delivered, waiting for a retry,
 * parked for a partner without a webhook URL, FAILED, leased with an attempt in flight, and the
 * CARD_TRANSACTION and LOW_BALANCE events an approval writes), puts the database back into the previous
 * layout (the delivery columns on events, as migrations 010, 154 and 155 left them), migrates, and
 * checks that every event reads back exactly as before, that the attempt in flight still settles with
 * its lease, that the parked and waiting events are delivered, and that new events are delivered too.
 */
describe('event delivery state in its own rows: migration of the previous layout (issue 34, D38)', () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  before(async () => {
    svc = await startService();
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    try {
      const report = await svc.admin.call<{ ok: boolean; findings: unknown[] }>('GET', '/internal/admin/v1/ledger/audit');
      assert.deepEqual(report.findings, [], 'the ledger audit is clean after the file');
    } finally {
      await receiver.close();
      await svc.close();
      await closeTestDatabase();
    }
  });

  const DELIVERY_COLUMNS = ['status', 'attempts', 'delivery_attempts', 'delivery_started_at', 'next_attempt_at', 'lease_token',
    'last_attempt_at', 'last_http_status', 'last_error', 'delivered_at', 'failed_at'];

  /** Every event with its delivery state and attempts, as one comparable text per event. */
  async function snapshot(fromEventsRow: boolean): Promise<Map<string, string>> {
    const from = fromEventsRow ? 'events e' : 'events e JOIN event_deliveries d ON d.event_id = e.event_id';
    // The previous layout's next_attempt_at was the lease's expiry while a lease ran: lease_until now.
    const cols = DELIVERY_COLUMNS.map((c) => (fromEventsRow ? `e.${c}` : c === 'next_attempt_at' ? 'GREATEST(d.next_attempt_at, d.lease_until)' : `d.${c}`)).join(', ');
    const rows = await svc.db.query<{ eventId: string; state: string }>(
      `SELECT e.event_id AS "eventId",
              json_build_array(e.partner_id, e.event_type, e.business_id, e.sequence::text, e.payload, e.create_time, ${cols},
                (SELECT json_agg(json_build_array(a.attempt_id, a.attempt_no, a.outcome, a.http_status, a.started_at, a.finished_at, a.error)
                          ORDER BY a.attempt_no) FROM event_attempts a WHERE a.event_id = e.event_id))::text AS state
         FROM ${from}`,
    );
    return new Map(rows.map((r) => [r.eventId, r.state]));
  }

  /** The previous layout: the delivery columns back on events, filled from event_deliveries, which goes. */
  async function backToPreviousLayout(): Promise<void> {
    await svc.db.tx(async (q) => {
      await q.exec(`
        ALTER TABLE events ADD COLUMN status event_status NOT NULL DEFAULT 'PENDING', ADD COLUMN attempts integer NOT NULL DEFAULT 0,
          ADD COLUMN delivery_attempts integer NOT NULL DEFAULT 0, ADD COLUMN delivery_started_at timestamptz,
          ADD COLUMN next_attempt_at timestamptz DEFAULT now(), ADD COLUMN lease_token text, ADD COLUMN last_attempt_at timestamptz,
          ADD COLUMN last_http_status integer, ADD COLUMN last_error text, ADD COLUMN delivered_at timestamptz, ADD COLUMN failed_at timestamptz;
        ALTER TABLE events DISABLE TRIGGER events_written_once;
        UPDATE events e SET ${DELIVERY_COLUMNS.map((c) => (c === 'next_attempt_at' ? `${c} = GREATEST(d.next_attempt_at, d.lease_until)` : `${c} = d.${c}`)).join(', ')}
          FROM event_deliveries d WHERE d.event_id = e.event_id;
        ALTER TABLE events ENABLE TRIGGER events_written_once;
        ALTER TABLE events ADD CONSTRAINT events_pending_has_due_time CHECK (status <> 'PENDING' OR next_attempt_at IS NOT NULL);
        CREATE INDEX events_due ON events (partner_id, next_attempt_at, event_id) WHERE status = 'PENDING';
        ALTER TABLE event_attempts DROP CONSTRAINT event_attempts_event_id_fkey,
          ADD CONSTRAINT event_attempts_event_id_fkey FOREIGN KEY (event_id) REFERENCES events (event_id);
        DROP TABLE event_deliveries;
        DELETE FROM schema_migrations WHERE version = '157-event-deliveries';`);
    });
  }

  it('a populated database of the previous layout migrates; every event reads the same, and leases, retries and parked events carry on', async () => {
    // Delivered, waiting for a retry after a 503, and leased with the attempt still in flight: a partner with a receiver.
    const { partner, client } = await svc.newPartner({ webhookUrl: receiver.url });
    receiver.useCredentials(partner);
    const delivered = await recordTestEvent(svc, partner.partnerId);
    assert.equal((await deliverDueEvents(svc.ctx)).delivered, 1);
    const retrying = await recordTestEvent(svc, partner.partnerId);
    receiver.answerNext({ status: 503 });
    assert.equal((await deliverDueEvents(svc.ctx)).retrying, 1);
    const failed = await recordTestEvent(svc, partner.partnerId);
    await svc.db.query(`UPDATE event_deliveries SET status = 'FAILED', next_attempt_at = NULL, failed_at = now() WHERE event_id = $1`, [failed.eventId]);
    const inFlight = await recordTestEvent(svc, partner.partnerId);
    const leased = await leaseDueEvents(svc.ctx);
    assert.deepEqual(leased.map((e) => e.eventId), [inFlight.eventId], 'only the new event is due');

    // Parked: a partner without a webhook URL, whose approval writes CARD_TRANSACTION and LOW_BALANCE events.
    const world = await cardWorld(svc);
    const card = await fundedCard(svc, { world, funds: '100.00' });
    await card.client.funding.setBalanceAlert({ organizationId: world.org.organizationId, balanceSettings: [{ currency: 'USD', threshold: decimal('95.00') }] });
    const approval = await card.client.sandbox.authorize(purchase(card.card.cardId, '10.00'));
    assert.equal(approval.status, 'PENDING', 'approved: its hold is pending');
    const types = (await world.client.events.listEvents({ businessId: world.org.organizationId })).result.map((e) => e.eventType);
    assert.ok(types.includes('LOW_BALANCE'), 'the approval took the pool below its threshold');
    const parking = await deliverDueEvents(svc.ctx);
    assert.ok(parking.results.length >= 2 && parking.results.every((r) => r.outcome === 'NOT_CONFIGURED' && r.status === 'PENDING'),
      'the approval\'s events wait for a webhook URL');
    const parked = (await world.client.events.listEvents({ status: 'PENDING' })).result.map((e) => e.eventId);
    assert.ok(parked.length >= 2, 'the approval and the card set-up left events waiting for a webhook URL');

    const before = await snapshot(false);
    await backToPreviousLayout();
    assert.deepEqual(await snapshot(true), before, 'the previous layout holds the same delivery state');

    const applied = await migrate(svc.db);
    assert.deepEqual(applied.versions, ['157-event-deliveries']);
    assert.deepEqual(await snapshot(false), before, 'the migration changes no event, delivery state or attempt');
    const [{ columns }] = await svc.db.query<{ columns: string[] }>(
      `SELECT array_agg(column_name::text ORDER BY ordinal_position) AS columns FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'events'`);
    assert.deepEqual(columns, ['event_id', 'partner_id', 'event_type', 'business_id', 'sequence', 'payload', 'create_time'], 'the event keeps only what never changes');

    // The event is written once (event_written_once): a change is refused and changes nothing.
    const payloadOf = async () => (await svc.db.query<{ payload: string }>('SELECT payload FROM events WHERE event_id = $1', [delivered.eventId]))[0].payload;
    const payload = await payloadOf();
    await assert.rejects(svc.db.query(`UPDATE events SET payload = '{}' WHERE event_id = $1`, [delivered.eventId]),
      (err: { code?: string; message?: string }) => err.code === '23514' && /written once/.test(err.message ?? ''));
    assert.equal(await payloadOf(), payload);

    // Through the API, each event reads as it did.
    const detail = (c: CardServiceClient, id: string) => c.events.eventDetail(id);
    assert.equal((await detail(client, delivered.eventId)).status, 'DELIVERED');
    assert.equal((await detail(client, failed.eventId)).status, 'FAILED');
    assert.deepEqual((await detail(client, retrying.eventId)).attemptLog.map((a) => a.outcome), ['HTTP_ERROR']);
    assert.deepEqual((await detail(client, inFlight.eventId)).attemptLog.map((a) => a.outcome), ['IN_FLIGHT']);

    // The attempt in flight settles with the lease taken before the migration.
    const settled = await deliverLeased(svc.ctx, leased[0]);
    assert.deepEqual([settled.settled, settled.status], [true, 'DELIVERED']);

    // The retry is delivered when due; the FAILED event on a resend.
    svc.clock.advance(60_000);
    await client.events.resend(failed.eventId);
    const run = await deliverDueEvents(svc.ctx);
    assert.deepEqual(new Set(run.results.filter((r) => r.status === 'DELIVERED').map((r) => r.eventId)), new Set([retrying.eventId, failed.eventId]));

    // The parked events are delivered once the partner has a webhook URL; a new approval's event after them.
    await svc.admin.updatePartner(world.partner.partnerId, { webhookUrl: receiver.url });
    receiver.useCredentials(world.partner);
    await card.client.sandbox.authorize(purchase(card.card.cardId, '1.00'));
    const woken = await deliverDueEvents(svc.ctx);
    assert.equal(woken.delivered, parked.length + 1, 'every parked event and the new one delivered');
    assert.equal((await world.client.events.listEvents({ status: 'PENDING' })).total, 0);
    const cardEvents = receiver.requests.filter((r) => r.json.eventType === 'CARD_TRANSACTION' && r.json.businessId === card.card.cardId);
    // POSTed concurrently, so in any order: the sequences, sorted, are consecutive.
    const sequences = cardEvents.map((r) => Number(r.json.sequence)).sort((x, y) => x - y);
    assert.deepEqual(sequences, sequences.map((_, k) => sequences[0] + k), 'the card\'s sequence goes on');
    assert.ok(sequences.length >= 2, 'the approvals before and after the migration');
  });
});
