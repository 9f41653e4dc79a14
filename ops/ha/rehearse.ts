/**
 * npm run rehearse:ha — the high-availability rehearsal of issue 28, with real parts (see
 * docs/operations.md "High availability"): three PostgreSQL members under Patroni over etcd with
 * synchronous replication, HAProxy in front of the primary and of two service instances, and a
 * checker that drives network authorizations (retrying the same network transaction id as a card
 * network does), clearings and user-asset credits while it
 *   1. kills -9 the primary database host (Patroni and PostgreSQL together): a failover,
 *   2. kills -9 one service instance,
 *   3. restarts every service instance in turn (drained in HAProxy first).
 * Afterwards every acknowledged approval, clearing and credit must be in the ledger, nothing booked
 * twice, every retried message answered as the first time, and the ledger audit clean. It prints
 * the seconds without service and the failed requests of each fault. Exit 0 when every check holds.
 * Installs patroni, etcd-server and haproxy from Debian when missing; cleans up after itself.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AdminClient, CardServiceClient, CardServiceError, decimal, decimalText, SignedHttpClient } from '../../sdk/index.ts';
import { startArgs, waitReady } from '../runtime.ts';
import { ensureTools, PORTS, ROOT, Topology } from './topology.ts';

const ADMIN_TOKEN = 'rehearsal-admin-token-0123456789';
const MASTER_KEY = 'ef'.repeat(32);
const LANES = 4;
/** A network (or a partner) gives up an attempt after this and sends the same message again. */
const ATTEMPT_TIMEOUT_MS = 3000;
const RETRY_PAUSE_MS = 200;
const SETTLE_S = 8;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const elapsed = (() => { const t0 = Date.now(); return () => ((Date.now() - t0) / 1000).toFixed(1); })();
const say = (line: string) => console.log(`[${elapsed().padStart(6)} s] ${line}`);

// ---------------------------------------------------------------------------------------------
// Service instances

interface Instance { port: number; child: ChildProcess | null }

/** Instances that exited without being told to (a crash is a failure of the rehearsal). */
const crashes: string[] = [];

function startInstance(work: string, inst: Instance, databaseUrl: string): void {
  const log = openSync(path.join(work, `service-${inst.port}.log`), 'a');
  const child = spawn(process.execPath, startArgs(), {
    cwd: ROOT, stdio: ['ignore', log, log],
    env: {
      ...process.env, DATABASE_URL: databaseUrl, PORT: String(inst.port), HOST: '127.0.0.1', ADMIN_TOKEN, MASTER_KEY, WORKERS: 'true',
      RATE_LIMIT_MAX: '10000000', PREAUTH_RATE_LIMIT_MAX: '10000000', ADMIN_RATE_LIMIT_MAX: '10000000', DB_POOL_SIZE: '5',
    },
  });
  child.once('exit', (code, signal) => {
    if (inst.child === child) crashes.push(`the instance on port ${inst.port} exited by itself (code ${code}, signal ${signal}); see ${work}/service-${inst.port}.log`);
  });
  inst.child = child;
}

/** Stops an instance on purpose (SIGTERM: graceful; SIGKILL: a crash we cause) and waits for its exit. */
async function stopInstance(inst: Instance, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  const child = inst.child;
  inst.child = null;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

function haproxy(work: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path.join(work, 'haproxy.sock'));
    let out = '';
    socket.on('data', (c) => (out += c));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
    socket.end(`${command}\n`);
  });
}

// ---------------------------------------------------------------------------------------------
// The checker

interface Attempt { at: number; ok: boolean; kind: string; code: string }
interface Definite { code: string; transId?: string; approved?: boolean; declineReason?: string | null }

const attempts: Attempt[] = [];
/** Every definite answer per message (network id or externalTranId), in order. */
const answers = new Map<string, Definite[]>();
const approvals: { networkId: string; transId: string; amount: string }[] = [];
const clearings: { networkId: string; original: string }[] = [];
const credits: string[] = [];

/**
 * Sends one message until a definite answer, as a card network retries an authorization: the same
 * id and body again after a transport failure, a timeout or a 5xx. A business envelope (any code
 * but SYS_*) is definite.
 */
async function untilDefinite<T>(kind: string, id: string, send: () => Promise<T>, read: (t: T) => Definite): Promise<Definite> {
  for (;;) {
    try {
      const result = read(await send());
      attempts.push({ at: Date.now(), ok: true, kind, code: result.code });
      answers.set(id, [...(answers.get(id) ?? []), result]);
      return result;
    } catch (err) {
      const e = err instanceof CardServiceError ? err : null;
      // DAPI_NONCE_REPLAYED: a copy of this very attempt (same signature) was already accepted, by an
      // instance that may have booked it before it died: the outcome is unknown, so send it again
      // with a fresh signature and the same id, as a partner or network would.
      const transient = !e || e.httpStatus === 0 || e.httpStatus >= 500 || e.httpStatus === 429 || e.httpStatus === 409 || e.code === 'DAPI_NONCE_REPLAYED';
      attempts.push({ at: Date.now(), ok: false, kind, code: e ? `${e.code}/${e.httpStatus}` : String(err) });
      if (!transient) {
        const definite = { code: e!.code };
        answers.set(id, [...(answers.get(id) ?? []), definite]);
        return definite;
      }
      await sleep(RETRY_PAUSE_MS);
    }
  }
}

interface TransactionOut { transId: string; approved: boolean; declineReason: string | null; status: string; amount: unknown }

async function lane(lane: number, network: SignedHttpClient, client: CardServiceClient, cards: string[], running: () => boolean): Promise<void> {
  for (let i = 0; running(); i++) {
    const cardId = cards[(lane + i) % cards.length];
    const networkId = `rh-${lane}-${i}-auth`;
    const body = { networkTransactionId: networkId, cardId, amount: decimal('2.00'), currency: 'USD', merchantName: 'Rehearsal Cafe', mcc: '5814', merchantCountry: 'HK', channel: 'POS' };
    const auth = await untilDefinite('authorization', networkId, () => network.call<TransactionOut>('POST', '/internal/network/v1/authorization', { body }),
      (t) => ({ code: 'SYS_SUCCESS', transId: t.transId, approved: t.approved, declineReason: t.declineReason }));
    if (auth.approved) {
      approvals.push({ networkId, transId: auth.transId!, amount: '2.00' });
      if (i % 2 === 0) {
        const clearingId = `rh-${lane}-${i}-clear`;
        const cleared = await untilDefinite('clearing', clearingId, () => network.call<TransactionOut>('POST', '/internal/network/v1/clearing', { body: { networkTransactionId: clearingId, originalNetworkTransactionId: networkId, amount: decimal('2.00') } }),
          (t) => ({ code: 'SYS_SUCCESS', transId: t.transId }));
        if (cleared.code === 'SYS_SUCCESS') clearings.push({ networkId: clearingId, original: networkId });
      }
    }
    const tranId = `rh-${lane}-${i}-credit`;
    const credit = await untilDefinite('credit', tranId, () => client.userAssets.credit({ externalTranId: tranId, asset: 'USDT', amount: decimal('0.25'), externalUserId: `rh-user-${lane}` }, ),
      () => ({ code: 'SYS_SUCCESS' }));
    // A retry of a credit whose first answer was lost finds it booked: acknowledged all the same.
    if (credit.code === 'SYS_SUCCESS' || credit.code === 'EXTERNAL_TRAN_ID_DUPLICATE') credits.push(tranId);
  }
}

/** The longest stretch without a successful answer, and the failed attempts, between two instants. */
function faultFigures(from: number, to: number): { gapS: number; failed: number; codes: string } {
  const window = attempts.filter((a) => a.at >= from && a.at <= to).sort((a, b) => a.at - b.at);
  let last = from;
  let gap = 0;
  for (const a of window) {
    if (!a.ok) continue;
    gap = Math.max(gap, a.at - last);
    last = a.at;
  }
  gap = Math.max(gap, to - last);
  const codes = new Map<string, number>();
  for (const a of window) if (!a.ok) codes.set(a.code, (codes.get(a.code) ?? 0) + 1);
  return { gapS: gap / 1000, failed: window.filter((a) => !a.ok).length, codes: [...codes].map(([c, n]) => `${c} x${n}`).join(', ') };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  ensureTools();
  say('building the service (npm run build)');
  const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
  const work = mkdtempSync(path.join(tmpdir(), 'cardsvc-ha-'));
  const topo = new Topology(work);
  const instances: Instance[] = PORTS.services.map((port) => ({ port, child: null }));
  let failures: string[] = [];
  try {
    topo.startEtcd();
    await waitReady(`http://127.0.0.1:${PORTS.etcdClient}/health`, 30_000);
    for (const m of topo.members) topo.startMember(m);
    const first = await topo.waitCluster(1, 120_000);
    say(`Patroni cluster up: primary ${first.name}, synchronous standby streaming`);
    topo.startHaproxy();
    for (const inst of instances) {
      startInstance(work, inst, topo.databaseUrl);
      await waitReady(`http://127.0.0.1:${inst.port}/readyz`, 60_000);
    }
    const base = `http://127.0.0.1:${PORTS.httpFrontend}`;
    await waitReady(`${base}/readyz`, 30_000);
    say(`${instances.length} service instances behind HAProxy at ${base}`);

    // The world: a partner, a funded company with cards, a network key.
    const admin = new AdminClient(base, ADMIN_TOKEN);
    const partner = await admin.createPartner({ name: 'HA rehearsal partner' });
    const client = new CardServiceClient({ baseUrl: base, apiKey: partner.apiKey!, secretKey: partner.secretKey!, maxRetries: 0, timeoutMs: ATTEMPT_TIMEOUT_MS });
    const setupClient = new CardServiceClient({ baseUrl: base, apiKey: partner.apiKey!, secretKey: partner.secretKey!, maxRetries: 5 });
    const key = await admin.createNetworkKey({ name: 'HA rehearsal network' });
    const network = new SignedHttpClient({ baseUrl: base, apiKey: key.apiKey, secretKey: key.secretKey, maxRetries: 0, timeoutMs: ATTEMPT_TIMEOUT_MS });
    const org = await setupClient.organizations.create({ organizationRef: 'ha-org', organizationName: 'HA Rehearsal Ltd', companyRegistrationNumber: 'HK-HA', countryCode: 'HK', fundingCurrencies: ['USD'] });
    const employee = await setupClient.customers.create({ organizationId: org.organizationId, customerRef: 'ha-emp', firstName: 'Ada', lastName: 'Lee', phoneCountryCode: 'HK', phoneNumber: '91234567', email: 'ada@example.com' });
    await setupClient.sandbox.kycDecision({ customerId: employee.customerId, decision: 'APPROVED' });
    const cards: string[] = [];
    for (let c = 0; c < LANES; c++) {
      const applied = await setupClient.cards.apply({ organizationId: org.organizationId, cardApplyRef: `ha-card-${c}`, cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER', subjectId: employee.customerId });
      for (let i = 0; ; i++) {
        const a = await setupClient.cards.queryApply(applied.cardApplyId);
        if (a.status === 'SUCCESS') { cards.push(a.cardId!); break; }
        if (i > 200 || a.status === 'REJECTED') throw new Error(`card application ${a.status}`);
        await sleep(200);
      }
    }
    await setupClient.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: org.organizationId, currency: 'USD', amount: decimal('1000000.00') });
    say(`world ready: ${cards.length} cards on a funded company pool; load starts (${LANES} lanes)`);

    let running = true;
    const load = Promise.all(Array.from({ length: LANES }, (_, l) => lane(l, network, client, cards, () => running)));
    const faults: { name: string; from: number; to: number }[] = [];
    await sleep(SETTLE_S * 1000);

    // 1. Loss of the primary database host.
    const primary = (await topo.primary())!;
    let from = Date.now();
    say(`fault 1: kill -9 of the primary database host ${primary.name} (Patroni and PostgreSQL)`);
    topo.killMember(primary);
    const promoted = await topo.waitCluster(0, 90_000);
    say(`${promoted.name} promoted; ${primary.name} rejoins as a standby`);
    topo.startMember(primary);
    await sleep(SETTLE_S * 1000);
    faults.push({ name: `kill -9 of the primary PostgreSQL (${primary.name} -> ${promoted.name})`, from, to: Date.now() });
    await topo.waitCluster(1, 90_000);

    // 2. Loss of one service instance.
    from = Date.now();
    say(`fault 2: kill -9 of the service instance on port ${instances[0].port}`);
    await stopInstance(instances[0], 'SIGKILL');
    await sleep(3000);
    startInstance(work, instances[0], topo.databaseUrl);
    await waitReady(`http://127.0.0.1:${instances[0].port}/readyz`, 60_000);
    await sleep(SETTLE_S * 1000);
    faults.push({ name: 'kill -9 of one service instance', from, to: Date.now() });

    // 3. Rolling restart: drain in HAProxy, SIGTERM (in-flight requests finish), start, ready, back in.
    from = Date.now();
    say('fault 3: rolling restart of every service instance');
    for (const [i, inst] of instances.entries()) {
      await haproxy(work, `set server cardsvc/s${i + 1} state drain`);
      await sleep(1500);
      await stopInstance(inst, 'SIGTERM');
      startInstance(work, inst, topo.databaseUrl);
      await waitReady(`http://127.0.0.1:${inst.port}/readyz`, 60_000);
      await haproxy(work, `set server cardsvc/s${i + 1} state ready`);
      await sleep(1500);
    }
    await sleep(SETTLE_S * 1000);
    faults.push({ name: 'rolling restart of all service instances', from, to: Date.now() });

    running = false;
    await load;
    say(`load stopped: ${attempts.length} attempts, ${approvals.length} approvals, ${clearings.length} clearings, ${credits.length} credits acknowledged`);

    // ---- Checks ----
    const check = (ok: boolean, what: string) => {
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
      if (!ok) failures.push(what);
    };
    const reader = setupClient;
    // Every retried message got its first answer.
    let differing = 0;
    for (const [id, list] of answers) {
      const first = JSON.stringify(list[0]);
      if (list.some((a) => JSON.stringify(a) !== first)) { differing++; console.log(`  ${id}: ${list.map((a) => JSON.stringify(a)).join(' / ')}`); }
    }
    check(differing === 0, `every message answered identically on every definite answer (${answers.size} messages)`);
    // Every acknowledged approval and clearing is in the ledger, once.
    const all: { transId: string; messageType: string; status: string; approved: boolean }[] = [];
    for await (const t of reader.transactions.listAll({})) all.push(t as never);
    const byId = new Map(all.map((t) => [t.transId, t]));
    const missing = approvals.filter((a) => !byId.has(a.transId));
    check(missing.length === 0, `every acknowledged approval is recorded (${approvals.length}; missing ${missing.length})`);
    const authorizations = all.filter((t) => t.messageType === 'AUTHORIZATION');
    const sentAuthorizations = [...answers.keys()].filter((k) => k.endsWith('-auth')).length;
    check(authorizations.length === sentAuthorizations, `each network authorization booked once (${authorizations.length} records for ${sentAuthorizations} messages)`);
    const clearingRecords = all.filter((t) => t.messageType === 'CLEARING');
    check(clearingRecords.length === clearings.length, `each acknowledged clearing booked once (${clearingRecords.length} records for ${clearings.length})`);
    const pool = (await reader.funding.balance(org.organizationId)).pools.find((p) => p.currency === 'USD')!;
    const expectedPending = (approvals.length - clearings.length) * 2;
    check(decimalText(pool.pending) === `${expectedPending}.00`, `the pool holds exactly the uncleared approvals (${decimalText(pool.pending)} = ${expectedPending}.00)`);
    // Every acknowledged credit is booked once.
    let creditTotal = 0;
    for (let l = 0; l < LANES; l++) {
      const b = (await reader.userAssets.balance(`rh-user-${l}`)).find((x) => x.asset === 'USDT');
      creditTotal += b ? Number(decimalText(b.total)) * 4 : 0; // quarters, exact in a double
    }
    check(creditTotal === credits.length, `every acknowledged credit booked once (${credits.length} credits of 0.25; balances hold ${creditTotal / 4})`);
    const audit = await admin.call<{ ok: boolean; findings: unknown[] }>('GET', '/internal/admin/v1/ledger/audit');
    check(audit.findings.length === 0, 'the ledger audit is clean');
    check(crashes.length === 0, `no service instance exited by itself${crashes.length ? `: ${crashes.join('; ')}` : ''}`);

    console.log('\nfault                                                        without service  failed requests');
    for (const f of faults) {
      const { gapS, failed, codes } = faultFigures(f.from, f.to);
      console.log(`${f.name.padEnd(60)} ${gapS.toFixed(1).padStart(10)} s  ${String(failed).padStart(10)}${codes ? `  (${codes})` : ''}`);
      if (f.name.startsWith('rolling') && failed > 0) failures.push(`the rolling restart failed ${failed} requests`);
    }
  } catch (err) {
    failures = [...failures, err instanceof Error ? err.message : String(err)];
    console.log(`rehearsal error: ${err instanceof Error ? err.stack : String(err)}`);
  } finally {
    for (const inst of instances) await stopInstance(inst, 'SIGKILL');
    topo.stopAll();
    if (failures.length === 0) rmSync(work, { recursive: true, force: true });
    else console.log(`logs kept in ${work}`);
  }
  if (failures.length) {
    console.log(`\nHA rehearsal FAILED: ${failures.join('; ')}`);
    process.exitCode = 1;
  } else {
    console.log('\nHA rehearsal passed');
  }
}

await main();
