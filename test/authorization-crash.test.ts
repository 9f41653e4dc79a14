/**
 * Issue 26, section 1: the service process killed (SIGKILL) while a forwarded authorization waits
 * for its partner. The hold is committed and nothing decided it; a restarted service's decision-
 * recovery job applies the stand-in (D37: DECLINE by default, reason SERVICE_ERROR) within a
 * minute, giving the hold and the usage back; the network's retry is answered from that record and
 * never forwarded again. Runs on the embedded database (a data folder) or on TEST_DATABASE_URL (a
 * fresh schema), like every test.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { CardServiceClient, SignedHttpClient, type CardTransaction } from '../sdk/index.ts';
import { openEmbedded, openPostgres, type Db } from '../src/platform/db/db.ts';
import { migrate } from '../src/migrate.ts';
import { ADMIN_TOKEN, closeTestDatabase, MASTER_KEY, startService } from './helpers/service.ts';
import { ROOT, MAIN_JS } from './helpers/compiled-service.ts';
import { seedDataDir } from './helpers/template.ts';
import { fundedCard, fundsOf, purchase, usageOf, type SpendWorld } from './helpers/authorization.ts';
import { ref } from './helpers/cards.ts';

const MAIN = [process.execPath, [MAIN_JS]] as const;
const PG_URL = process.env.TEST_DATABASE_URL;

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['DATABASE_URL', 'ADMIN_TOKEN', 'MASTER_KEY', 'CARDSVC_ENV', 'PORT', 'DATA_DIR', 'WORKERS', 'TEST_DATABASE_URL']) delete env[name];
  return { ...env, CARDSVC_ENV: 'sandbox', ADMIN_TOKEN, MASTER_KEY, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...extra };
}

/** An auth_url that takes the request and never answers. */
class SilentPartner {
  server!: http.Server;
  received = 0;
  private onRequest: (() => void) | null = null;
  readonly keys = generateKeyPairSync('rsa', { modulusLength: 2048 });

  async start(): Promise<string> {
    this.server = http.createServer((req) => {
      req.resume();
      this.received++;
      this.onRequest?.();
    });
    await new Promise<void>((ok) => this.server.listen(0, '127.0.0.1', ok));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/auth`;
  }

  nextRequest(): Promise<void> {
    return new Promise((ok) => (this.onRequest = ok));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((ok) => this.server.close(() => ok()));
  }
}

async function waitReady(base: string, child: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) assert.fail(`the service exited: ${output()}`);
    if (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.fail(`the service did not become ready: ${output()}`);
}

describe('issue 26: a service killed between the hold and the partner decision', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-crash-'));
  if (!PG_URL) seedDataDir(dataDir);
  const schema = `crash_${process.pid}_${randomBytes(3).toString('hex')}`;
  const port = 20000 + Math.floor(Math.random() * 20000);
  const base = `http://127.0.0.1:${port}`;
  const dbEnv: Record<string, string> = PG_URL ? { DATABASE_URL: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`, DATA_DIR: dataDir } : { DATA_DIR: dataDir };
  let child: ChildProcess | null = null;
  let output = '';
  const partner = new SilentPartner();
  let world: SpendWorld;
  let networkKey: { apiKey: string; secretKey: string };

  function startChild(): ChildProcess {
    output = '';
    const c = spawn(MAIN[0], [...MAIN[1], 'serve'], { cwd: ROOT, env: childEnv({ ...dbEnv, PORT: String(port) }) });
    c.stdout!.on('data', (d) => (output += d));
    c.stderr!.on('data', (d) => (output += d));
    return c;
  }

  async function stopChild(signal: NodeJS.Signals): Promise<void> {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((ok) => c.once('exit', ok));
    c.kill(signal);
    await exited;
  }

  before(async () => {
    // The world is built by an in-process service on the database the child will open.
    let db: Db;
    if (PG_URL) {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      await admin.end();
      db = await openPostgres({ connectionString: PG_URL, poolSize: 3, schema });
    } else {
      db = await openEmbedded(path.join(dataDir, 'pgdata'));
    }
    await migrate(db);
    const svc = await startService({ db });
    try {
      world = await fundedCard(svc, { funds: '10.00' });
      await svc.admin.updatePartner(world.partner.partnerId, {
        authUrl: await partner.start(),
        externalPublicKey: partner.keys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
      });
      // A long deadline: the kill comes while the service waits for the answer.
      await svc.admin.call('POST', '/internal/admin/v1/auth-forwarding/settings', { body: { partnerId: world.partner.partnerId, deadlineMs: 5000, standIn: 'DECLINE' } });
      networkKey = await svc.admin.createNetworkKey({ name: 'crash test network' });
    } finally {
      await svc.close();
      await db.close();
    }
  });

  after(async () => {
    await stopChild('SIGKILL');
    await partner.close();
    await closeTestDatabase();
    if (PG_URL) {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('SIGKILL mid-forwarding leaves the hold; the restarted service\'s recovery job declines it (stand-in), gives money and usage back, and the retry answers from that record', async (t) => {
    child = startChild();
    await waitReady(base, child, () => output);
    const network = new SignedHttpClient({ baseUrl: base, apiKey: networkKey.apiKey, secretKey: networkKey.secretKey, maxRetries: 0 });
    const partnerClient = new CardServiceClient({ baseUrl: base, apiKey: world.partner.apiKey!, secretKey: world.partner.secretKey! });
    const w: SpendWorld = { ...world, client: partnerClient };
    const before = { funds: await fundsOf(w), usage: await usageOf(w) };
    assert.deepEqual(before.funds, { available: '10.00', pending: '0.00', total: '10.00' });

    const body = { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '1.00') };
    const forwarded = partner.nextRequest();
    const inFlight = network.raw<CardTransaction>('POST', '/internal/network/v1/authorization', { body }).catch((err: Error) => err);
    await forwarded;
    // The hold is committed and the partner has the request: the process dies.
    await stopChild('SIGKILL');
    assert.ok((await inFlight) instanceof Error, 'the network got no answer');

    child = startChild();
    await waitReady(base, child, () => output);
    const list = await partnerClient.transactions.list({ cardId: w.card.cardId });
    const held = list.result.find((t) => t.networkTransactionId === body.networkTransactionId);
    assert.ok(held, 'the authorization booked before the kill survived it');

    // The recovery job (every 5 s) decides it once it is due (deadline 5 s + grace 5 s after the hold).
    const started = Date.now();
    let decided: CardTransaction = held;
    while (decided.status === 'PENDING') {
      assert.ok(Date.now() - started < 60_000, 'decided within a minute');
      await new Promise((r) => setTimeout(r, 500));
      decided = await partnerClient.transactions.query(held.transId);
    }
    t.diagnostic(`hold to recorded stand-in: ${Date.parse(decided.modifyTime) - Date.parse(decided.createTime)} ms (restart included)`);
    assert.equal(decided.status, 'DECLINED');
    assert.equal(decided.declineReason, 'PARTNER_TIMEOUT');
    assert.equal(decided.declineDetail, 'SERVICE_ERROR');
    assert.equal(decided.partnerDecision?.outcome, 'STAND_IN_DECLINED');
    assert.deepEqual(await fundsOf(w), before.funds);
    assert.deepEqual(await usageOf(w), before.usage);

    const retry = await network.raw<CardTransaction>('POST', '/internal/network/v1/authorization', { body });
    assert.equal(retry.status, 200);
    assert.deepEqual(retry.envelope.data, decided, 'the retry is answered from the recorded decision');
    assert.equal(partner.received, 1, 'forwarded once, never again');

    // D33: the ledger re-derives cleanly from the same database.
    await stopChild('SIGTERM');
    const audit = spawnSync(MAIN[0], [...MAIN[1], 'ledger-audit'], { cwd: ROOT, env: childEnv(dbEnv), encoding: 'utf8' });
    assert.equal(audit.status, 0, audit.stderr);
    assert.equal(JSON.parse(audit.stdout).ok, true);
  });
});
