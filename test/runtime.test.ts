// test-database: none (never opens the test database: `npm test` runs it in the embedded pass only; test/run.ts)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Decimal } from 'decimal.js';
import { AdminClient, CardServiceClient, CardServiceError, decimal, decimalText } from '../sdk/index.ts';
import { seedDataDir } from './helpers/template.ts';
import { buildService, cleanEnv, ROOT, startCompiled, waitReady, type RunningService } from './helpers/compiled-service.ts';
import { freePort, ownPostgres, type OwnPostgres } from './helpers/own-postgres.ts';
import { isDatabaseUnavailable, openPostgres } from '../src/platform/db/db.ts';

/**
 * Issue 28: the production runtime (compiled JavaScript, signals through `npm start`) and the
 * service's behaviour while its PostgreSQL goes away and comes back. Both spawn the compiled
 * service exactly as `npm start` runs it.
 */

const ADMIN_TOKEN = 'runtime-admin-token-0123456789';
const MASTER_KEY = 'cd'.repeat(32);
/** How long the test keeps PostgreSQL down (the issue's operators stop it for 30 s; the behaviour is the same). */
const OUTAGE_MS = 8_000;
/** A request that has not answered within this is a hang: the issue wants every answer within 1 s. */
const HANG_MS = 5_000;

before(() => buildService());

/** A POST whose body arrives in two parts, `gapMs` apart: it is in flight for that long. */
function slowPost(base: string, urlPath: string, body: string, headers: Record<string, string>, gapMs: number, onFirstPart: () => void): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(urlPath, base);
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    const half = Math.floor(body.length / 2);
    req.write(body.slice(0, half));
    req.flushHeaders();
    setTimeout(onFirstPart, 50);
    setTimeout(() => req.end(body.slice(half)), gapMs);
  });
}

describe('the production runtime', () => {
  it('npm start runs compiled JavaScript without a TypeScript loader, and SIGTERM to npm stops it gracefully after the in-flight request', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-runtime-'));
    seedDataDir(dataDir);
    const port = await freePort();
    const npm = spawn('npm', ['start'], { cwd: ROOT, env: cleanEnv({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', ADMIN_TOKEN, MASTER_KEY }) });
    let out = '';
    npm.stdout.on('data', (c) => (out += c));
    npm.stderr.on('data', (c) => (out += c));
    const npmExited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    let nodePid: number | null = null;
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitReady(base);
      // The process serving: a direct child of npm (no shell in between), running dist/ without tsx.
      const children = spawnSync('pgrep', ['-P', String(npm.pid)], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).map(Number);
      assert.equal(children.length, 1, `npm start has one child: ${children.join(', ')}`);
      nodePid = children[0];
      const cmdline = readFileSync(`/proc/${nodePid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      assert.equal(path.basename(cmdline[0]), 'node');
      assert.ok(cmdline.includes('dist/src/main.js'), cmdline.join(' '));
      assert.ok(!cmdline.some((a) => /tsx|ts-node|loader/.test(a)), `no TypeScript loader: ${cmdline.join(' ')}`);
      const maps = readFileSync(`/proc/${nodePid}/maps`, 'utf8');
      assert.ok(!maps.includes('esbuild'), 'no esbuild (tsx) in the serving process');

      // An operator request in flight when SIGTERM arrives is answered before the process exits.
      const inFlight = slowPost(base, '/internal/admin/v1/partners', JSON.stringify({ name: 'in-flight partner' }), { authorization: `Bearer ${ADMIN_TOKEN}` }, 700, () => npm.kill('SIGTERM'));
      const answer = await inFlight;
      assert.equal(answer.status, 200);
      assert.equal(JSON.parse(answer.text).code, 'SYS_SUCCESS');
      await npmExited;
      // The node process itself is gone (not orphaned), after logging its graceful shutdown.
      for (let i = 0; i < 100 && spawnSync('kill', ['-0', String(nodePid)]).status === 0; i++) await new Promise((r) => setTimeout(r, 100));
      assert.notEqual(spawnSync('kill', ['-0', String(nodePid)]).status, 0, 'the service process exited');
      assert.match(out, /shutting down/);
      assert.equal(await fetch(`${base}/healthz`).then(() => 'up', () => 'down'), 'down');
    } finally {
      npm.kill('SIGKILL');
      if (nodePid) spawnSync('kill', ['-9', String(nodePid)]);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

interface Answer {
  kind: 'authorize' | 'credit';
  code: string;
  httpStatus: number;
  ms: number;
  /** For an acknowledged credit: its externalTranId and amount; for an approval: its transId and amount. */
  id?: string;
  amount?: string;
}

describe('the database goes away and comes back', () => {
  let pg: OwnPostgres;
  let svc: RunningService;
  before(async () => {
    pg = await ownPostgres();
    svc = await startCompiled({ DATABASE_URL: pg.url, ADMIN_TOKEN, MASTER_KEY, WORKERS: 'true', RATE_LIMIT_MAX: '1000000' }, await freePort());
  });
  after(async () => {
    svc?.child.kill('SIGKILL');
    pg?.destroy();
  });

  it('answers every request within a second with 503 SYS_UNAVAILABLE and Retry-After, fails and recovers /readyz, resumes jobs, and loses nothing acknowledged', async () => {
    const admin = new AdminClient(svc.base, ADMIN_TOKEN);
    const partner = await admin.createPartner({ name: 'outage partner' });
    // No client retries: the test sees every answer the service gives.
    const client = new CardServiceClient({ baseUrl: svc.base, apiKey: partner.apiKey!, secretKey: partner.secretKey!, maxRetries: 0, timeoutMs: HANG_MS });
    const org = await client.organizations.create({ organizationRef: 'outage-org', organizationName: 'Outage Ltd', companyRegistrationNumber: 'HK-1', countryCode: 'HK', fundingCurrencies: ['USD'] });
    const employee = await client.customers.create({ organizationId: org.organizationId, customerRef: 'outage-emp', firstName: 'Ada', lastName: 'Lee', phoneCountryCode: 'HK', phoneNumber: '91234567', email: 'ada@example.com' });
    await client.sandbox.kycDecision({ customerId: employee.customerId, decision: 'APPROVED' });
    const issue = async (ref: string) => {
      const applied = await client.cards.apply({ organizationId: org.organizationId, cardApplyRef: ref, cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER', subjectId: employee.customerId });
      for (let i = 0; i < 200; i++) {
        const a = await client.cards.queryApply(applied.cardApplyId);
        if (a.status === 'SUCCESS') return a.cardId!;
        assert.ok(a.status === 'PENDING' || a.status === 'PROCESSING', `application ${a.status}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.fail('the card application job did not issue the card');
    };
    const cardId = await issue('outage-card-1');
    await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: org.organizationId, currency: 'USD', amount: decimal('100000.00') });

    const answers: Answer[] = [];
    const timed = async (kind: Answer['kind'], call: () => Promise<{ id: string; amount: string }>) => {
      const started = Date.now();
      try {
        const { id, amount } = await call();
        answers.push({ kind, code: 'SYS_SUCCESS', httpStatus: 200, ms: Date.now() - started, id, amount });
      } catch (err) {
        assert.ok(err instanceof CardServiceError, String(err));
        answers.push({ kind, code: err.code, httpStatus: err.httpStatus, ms: Date.now() - started });
      }
    };
    let n = 0;
    let flowing = true;
    const user = 'outage-user';
    const flow = (async () => {
      while (flowing) {
        n++;
        const tranId = `outage-credit-${n}`;
        await Promise.all([
          timed('authorize', async () => {
            const t = await client.sandbox.authorize({ cardId, amount: decimal('1.00'), currency: 'USD', merchantName: 'Blue Bottle Coffee', mcc: '5814', merchantCountry: 'HK', channel: 'POS' });
            assert.equal(t.approved, true);
            return { id: t.transId, amount: decimalText(t.amount) };
          }),
          timed('credit', async () => {
            await client.userAssets.credit({ externalTranId: tranId, asset: 'USDT', amount: decimal('0.5'), externalUserId: user });
            return { id: tranId, amount: '0.5' };
          }),
        ]);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const ready = async () => fetch(`${svc.base}/readyz`, { signal: AbortSignal.timeout(HANG_MS) }).then((r) => r.ok, () => false);
    const waitReadyz = async (want: boolean, limitMs: number) => {
      const started = Date.now();
      while (Date.now() - started < limitMs) {
        if ((await ready()) === want) return Date.now() - started;
        await new Promise((r) => setTimeout(r, 100));
      }
      return null;
    };

    await new Promise((r) => setTimeout(r, 1500));
    const before = answers.length;
    pg.stop();
    const readyzFailedAfterMs = await waitReadyz(false, 10_000);
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    const during = answers.slice(before);
    pg.start();
    const readyzBackAfterMs = await waitReadyz(true, 10_000);
    await new Promise((r) => setTimeout(r, 1500));
    flowing = false;
    await flow;

    // Every answer was definite and fast: success before and after, 503 SYS_UNAVAILABLE with Retry-After while down.
    const refused = during.filter((a) => a.code !== 'SYS_SUCCESS');
    assert.ok(refused.length > 10, `requests were refused during the outage (${refused.length})`);
    for (const a of answers) {
      assert.ok(a.code === 'SYS_SUCCESS' || (a.code === 'SYS_UNAVAILABLE' && a.httpStatus === 503), `${a.kind}: ${a.code} ${a.httpStatus}`);
      assert.ok(a.ms < HANG_MS, `${a.kind} answered within ${HANG_MS} ms (took ${a.ms})`);
    }
    const maxRefusalMs = Math.max(...refused.map((a) => a.ms));
    assert.notEqual(readyzFailedAfterMs, null, '/readyz failed while the database was down');
    assert.notEqual(readyzBackAfterMs, null, '/readyz recovered without a restart');
    assert.equal(answers.at(-1)!.code, 'SYS_SUCCESS', 'requests succeed again after the database returns');
    console.log(`# outage: ${answers.length} requests, ${refused.length} refused while down (slowest refusal ${maxRefusalMs} ms); /readyz failed after ${readyzFailedAfterMs} ms and recovered ${readyzBackAfterMs} ms after the restart`);

    // Nothing acknowledged is lost, nothing refused was applied: the user's balance is exactly the acknowledged credits.
    const acknowledgedCredits = answers.filter((a) => a.kind === 'credit' && a.code === 'SYS_SUCCESS');
    for (const a of acknowledgedCredits) assert.equal((await client.userAssets.transferQuery(a.id!)).externalTranId, a.id);
    const balance = (await client.userAssets.balance(user)).find((b) => b.asset === 'USDT')!;
    assert.ok(new Decimal(decimalText(balance.total)).eq(new Decimal('0.5').mul(acknowledgedCredits.length)), `balance ${decimalText(balance.total)} = ${acknowledgedCredits.length} acknowledged credits of 0.5`);
    const approvals = answers.filter((a) => a.kind === 'authorize' && a.code === 'SYS_SUCCESS');
    const funds = await client.funding.balance(org.organizationId);
    const pool = funds.pools.find((p) => p.currency === 'USD')!;
    assert.equal(decimalText(pool.pending), `${approvals.length}.00`, 'the pool holds exactly the acknowledged approvals');
    for (const a of approvals.slice(-5)) assert.equal((await client.transactions.query(a.id!)).status, 'PENDING');

    // Jobs resume by themselves: a card applied for after the outage is issued by the worker.
    await issue('outage-card-2');
    // The ledger re-derives cleanly from its postings.
    const audit = await admin.call<{ ok: boolean; findings: unknown[] }>('GET', '/internal/admin/v1/ledger/audit');
    assert.deepEqual(audit.findings, []);
  });

  it('a connection lost between two statements of a transaction fails that transaction, not the process', async () => {
    const db = await openPostgres({ connectionString: pg.url, poolSize: 2 });
    try {
      const failed = await db.tx(async (q) => {
        await q.query('SELECT 1');
        pg.stop(); // the backend of this open transaction is terminated while the client waits
        await new Promise((r) => setTimeout(r, 300));
        await q.query('SELECT 1');
      }).then(() => null, (err: unknown) => err);
      assert.ok(failed instanceof Error, 'the transaction failed');
      assert.ok(isDatabaseUnavailable(failed), `a connection failure: ${String(failed)}`);
      pg.start();
      // The broken client was discarded: the pool serves again.
      assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);
    } finally {
      await db.close();
    }
    // The service (same code) lived through every outage of this file.
    assert.equal(svc.child.exitCode, null, 'the service process is still running');
  });

  it('a refusal while the database is down is a 503 envelope with Retry-After', async () => {
    pg.stop();
    try {
      const started = Date.now();
      const res = await fetch(`${svc.base}/internal/admin/v1/partners`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'down' }), signal: AbortSignal.timeout(HANG_MS) });
      const ms = Date.now() - started;
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '1');
      const body = await res.json() as { code: string; message: string };
      assert.equal(body.code, 'SYS_UNAVAILABLE');
      assert.ok(ms < HANG_MS);
      assert.equal((await fetch(`${svc.base}/readyz`)).status, 503);
    } finally {
      pg.start();
    }
    await waitReady(svc.base, 10_000);
  });
});
