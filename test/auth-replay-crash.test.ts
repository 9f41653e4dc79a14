import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, testDatabase, type TestService } from './helpers/service.ts';
import type { CardServiceClient } from '../sdk/index.ts';

const SETTINGS = '/open-api/partner/v1/settings';
const WINDOW_MS = 5000;

/**
 * Issue 34: the replay store (D5, D7) is an unlogged table, which PostgreSQL empties when it recovers
 * from a crash. Its epoch row goes with it, and the service then refuses every timestamp not later
 * than the new epoch plus the window (503 SYS_UNAVAILABLE with Retry-After, as while the database
 * restarts): a request accepted before the crash cannot be accepted again.
 * The crash's effect on the store is simulated by emptying both unlogged tables, as recovery does.
 */
describe('replay store across a crash of the database (issue 34, D5, D7)', () => {
  let svc: TestService;
  let client: CardServiceClient;
  let partner: { apiKey: string | null; secretKey: string | null };

  before(async () => {
    svc = await startService();
    ({ client, partner } = await svc.newPartner());
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('the store and its epoch are unlogged tables (emptied together by crash recovery)', async () => {
    const rows = await svc.db.query<{ relname: string; relpersistence: string }>(
      `SELECT relname, relpersistence FROM pg_class WHERE relname IN ('replay_nonces', 'replay_store_epoch') ORDER BY relname`);
    assert.deepEqual(rows.map((r) => [r.relname, r.relpersistence]), [['replay_nonces', 'u'], ['replay_store_epoch', 'u']]);
  });

  it('a replay inside the window is refused', async () => {
    const timestamp = String(svc.clock.now());
    assert.equal((await client.http.raw('GET', SETTINGS, { timestamp, nonce: '51234' })).envelope.code, 'SYS_SUCCESS');
    const again = await client.http.raw('GET', SETTINGS, { timestamp, nonce: '51234' });
    assert.equal(again.status, 401);
    assert.equal(again.envelope.code, 'DAPI_NONCE_REPLAYED');
  });

  it('after the store is emptied, a request signed before is refused on every instance, inside the window', async () => {
    // Accepted before the crash, captured by an attacker.
    const before = svc.clock.now();
    const captured = { timestamp: String(before), nonce: '61234' };
    assert.equal((await client.http.raw('GET', SETTINGS, captured)).envelope.code, 'SYS_SUCCESS');

    // The crash: recovery empties the unlogged tables. The service restarts (a new process, the same clock).
    await svc.db.query('TRUNCATE replay_nonces, replay_store_epoch');
    await svc.close();
    svc = await startService({ clock: svc.clock });
    const database = await testDatabase();
    const second = await startService({ db: await database.openAnother(), clock: svc.clock });
    try {
      svc.clock.advance(1000); // still inside the captured request's window
      const restarted = svc.clientFor(partner);
      const replay = await restarted.http.raw('GET', SETTINGS, captured);
      assert.equal(replay.envelope.code, 'SYS_UNAVAILABLE', 'refused as during a restart of the database');
      assert.equal(replay.status, 503);
      const epoch = await svc.db.query<{ since: string }>('SELECT since_ms::text AS since FROM replay_store_epoch');
      assert.equal(epoch.length, 1);
      assert.ok(Number(epoch[0].since) > before && Number(epoch[0].since) <= svc.clock.now(), 'the new epoch starts after the crash, at the clock');
      const since = Number(epoch[0].since);
      // An honest request signed now is refused too, until the epoch plus the window: Retry-After says when.
      const early = await restarted.http.raw('GET', SETTINGS, { nonce: '61237' });
      assert.equal(early.envelope.code, 'SYS_UNAVAILABLE');
      assert.equal(early.headers.get('retry-after'), String(Math.ceil((since + WINDOW_MS + 1 - svc.clock.now()) / 1000)));
      // The other instance shares the epoch: the captured request is refused there too, and so is
      // one with the timestamp a client clock 4 s ahead could have produced before the crash.
      const other = second.clientFor(partner);
      assert.equal((await other.http.raw('GET', SETTINGS, captured)).envelope.code, 'SYS_UNAVAILABLE');
      assert.equal((await other.http.raw('GET', SETTINGS, { timestamp: String(before + 4000), nonce: '61235' })).envelope.code,
        'SYS_UNAVAILABLE');

      // Past the epoch plus the window, requests are accepted again, once.
      svc.clock.advance(WINDOW_MS + 1);
      const fresh = { timestamp: String(svc.clock.now()), nonce: '61236' };
      assert.equal((await restarted.http.raw('GET', SETTINGS, fresh)).envelope.code, 'SYS_SUCCESS');
      assert.equal((await other.http.raw('GET', SETTINGS, fresh)).envelope.code, 'DAPI_NONCE_REPLAYED');
      // The captured request is now outside the window anyway.
      assert.equal((await other.http.raw('GET', SETTINGS, captured)).envelope.code, 'DAPI_TIMESTAMP_EXPIRED');
    } finally {
      await second.close();
    }
  });
});
