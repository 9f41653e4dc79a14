/**
 * Issue 26, sections 1 and 2: after the hold is committed a forwarded authorization always ends in
 * one definite decision, recorded once and never a 5xx; a decline or a stand-in decline gives the
 * hold and the velocity usage back in the decision's transaction; every byte of the partner's answer
 * is cleaned before it is stored or echoed; copies of a network message get the one recorded answer.
 *
 * Faults are injected through the seams production uses: the partner-decision stage (the real
 * AuthUrlForwarder, built with a failing service key or database, or throwing after the partner
 * answered, or never settling) and the service's database handle (a statement of the decision's
 * transaction failing once or every time). The process-kill case is test/authorization-crash.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { rsaDecryptSegmented, rsaEncryptSegmented, type AuthorizationRequest, type CardTransaction, type SignedHttpClient } from '../sdk/index.ts';
import { AuthUrlForwarder, ServiceKeys, type PartnerDecisionStage } from '../src/domains/authorization/index.ts';
import { recoverDecisions, DECISION_GRACE_MS, type PartnerExchange } from '../src/domains/authorization/testing.ts';
import type { Db, Queryable } from '../src/platform/db/db.ts';
import { delta, scrape } from './helpers/metrics.ts';
import { closeTestDatabase, startService, testDatabase, type TestService } from './helpers/service.ts';
import { fundedCard, fundsOf, networkClient, purchase, text, usageOf, type SpendWorld } from './helpers/authorization.ts';
import { ref } from './helpers/cards.ts';

/** A partner's auth_url that answers, properly encrypted and signed, whatever plaintext bytes it is told to. */
class HostilePartner {
  server!: http.Server;
  readonly keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  servicePublicKey!: KeyObject;
  requests: AuthorizationRequest[] = [];
  delayMs = 0;
  answer: (r: AuthorizationRequest) => Buffer = (r) => json({ transId: r.transId, approved: true, declineReason: null });

  get publicKeyBase64(): string {
    return this.keys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  }

  async start(): Promise<string> {
    this.server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const { data } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: string };
      const request = JSON.parse(rsaDecryptSegmented(this.keys.privateKey, data).toString('utf8')) as AuthorizationRequest;
      this.requests.push(request);
      if (this.delayMs > 0) await new Promise((ok) => setTimeout(ok, this.delayMs));
      const plaintext = this.answer(request);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        data: rsaEncryptSegmented(this.servicePublicKey, plaintext), sign: sign('sha256', plaintext, this.keys.privateKey).toString('base64'),
      }));
    });
    await new Promise<void>((ok) => this.server.listen(0, '127.0.0.1', ok));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/auth`;
  }

  seenFor(networkTransactionId: string): number {
    return this.requests.filter((r) => r.networkTransactionId === networkTransactionId).length;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((ok) => this.server.close(() => ok()));
  }
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');

/** The service's database handle with statements made to fail: once, or every time until cleared. */
class FaultyDb implements Db {
  private faults: { pattern: RegExp; remaining: number }[] = [];
  failures = 0;
  constructor(private readonly inner: Db) {}
  get kind() {
    return this.inner.kind;
  }
  fail(pattern: RegExp, times = 1): void {
    this.faults.push({ pattern, remaining: times });
  }
  clear(): void {
    this.faults = [];
  }
  private check(sql: string): void {
    const fault = this.faults.find((f) => f.remaining > 0 && f.pattern.test(sql));
    if (!fault) return;
    fault.remaining--;
    this.failures++;
    throw new Error(`injected fault on ${fault.pattern}`);
  }
  private wrap(q: Queryable): Queryable {
    return {
      query: async (sql, params) => {
        this.check(sql);
        return q.query(sql, params);
      },
      exec: async (sql) => {
        this.check(sql);
        return q.exec(sql);
      },
    };
  }
  query<T>(sql: string, params?: unknown[]): Promise<T[]> {
    return this.wrap(this.inner).query<T>(sql, params);
  }
  exec(sql: string): Promise<void> {
    return this.wrap(this.inner).exec(sql);
  }
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return this.inner.tx((q) => fn(this.wrap(q)));
  }
  atomic<T>(fn: () => Promise<T>): Promise<T> {
    return this.inner.atomic(fn);
  }
  listen(channel: string, onNotify: () => void) {
    return this.inner.listen(channel, onNotify);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

type StageFault = 'none' | 'target-lookup' | 'service-key' | 'throw-after-answer' | 'never-settles';

/** The production forwarder, or one of its awaits failing (built with a failing database or service key). */
class FaultStage implements PartnerDecisionStage {
  fault: StageFault = 'none';
  forwarders!: Record<'real' | 'noTarget' | 'noKey', AuthUrlForwarder>;
  async forward(input: Parameters<PartnerDecisionStage['forward']>[0]): Promise<PartnerExchange | null> {
    switch (this.fault) {
      case 'target-lookup': return this.forwarders.noTarget.forward(input);
      case 'service-key': return this.forwarders.noKey.forward(input);
      case 'never-settles': return new Promise(() => {});
      case 'throw-after-answer':
        await this.forwarders.real.forward(input);
        throw new Error('injected fault after the partner answered');
      default: return this.forwarders.real.forward(input);
    }
  }
  decided(outcome: Parameters<NonNullable<PartnerDecisionStage['decided']>>[0]): void {
    this.forwarders.real.decided(outcome);
  }
}

const AUTHORIZE = '/internal/network/v1/authorization';
// Generous: a loaded test machine must not turn a partner answer into a TIMEOUT stand-in.
const DEADLINE_MS = 2000;

describe('issue 26: a forwarded authorization always ends in one recorded decision', () => {
  let svc: TestService;
  let db: FaultyDb;
  let stage: FaultStage;
  let partner: HostilePartner;
  let network: SignedHttpClient;
  let authUrl: string;

  before(async () => {
    db = new FaultyDb((await testDatabase()).db);
    stage = new FaultStage();
    svc = await startService({ db, partnerDecision: stage });
    const failingDb = new FaultyDb((await testDatabase()).db);
    failingDb.fail(/./, Infinity);
    const keys = new ServiceKeys(svc.ctx);
    stage.forwarders = {
      real: new AuthUrlForwarder({ ...svc.ctx, keys }),
      noTarget: new AuthUrlForwarder({ ...svc.ctx, db: failingDb, keys }),
      noKey: new AuthUrlForwarder({ ...svc.ctx, keys: { activeKey: async () => { throw new Error('injected fault: no service key'); } } as unknown as ServiceKeys }),
    };
    partner = new HostilePartner();
    authUrl = await partner.start();
    network = await networkClient(svc);
  });
  after(async () => {
    await partner.close();
    await svc.close();
    await closeTestDatabase();
  });

  /** A fresh card of a fresh partner forwarding to the hostile endpoint. */
  async function forwardingWorld(standIn: 'APPROVE' | 'DECLINE' = 'DECLINE', deadlineMs = DEADLINE_MS): Promise<SpendWorld> {
    const w = await fundedCard(svc, { funds: '10.00' });
    partner.servicePublicKey = createPublicKey({ key: Buffer.from((await w.client.partner.servicePublicKey()).publicKey, 'base64'), format: 'der', type: 'spki' });
    await svc.admin.updatePartner(w.partner.partnerId, { authUrl, externalPublicKey: partner.publicKeyBase64 });
    await svc.admin.call('POST', '/internal/admin/v1/auth-forwarding/settings', { body: { partnerId: w.partner.partnerId, deadlineMs, standIn } });
    return w;
  }

  /** One network authorization message, sent raw: the HTTP status and the exact answer text. */
  async function send(body: Record<string, unknown>): Promise<{ status: number; text: string; t: CardTransaction }> {
    const res = await network.raw<CardTransaction>('POST', AUTHORIZE, { body });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.envelope.code, 'SYS_SUCCESS', res.text);
    return { status: res.status, text: res.text, t: res.envelope.data! };
  }

  /** `send` while the database refuses statements matching `pattern` `times` times (then no more). */
  async function sendWhileRefusing(body: Record<string, unknown>, pattern: RegExp, times: number): Promise<Awaited<ReturnType<typeof send>>> {
    db.fail(pattern, times);
    try {
      return await send(body);
    } finally {
      db.clear();
    }
  }

  async function forwardingsOf(transId: string): Promise<number> {
    return (await svc.admin.call<{ total: number }>('GET', '/internal/admin/v1/auth-forwardings', { query: { transId } })).total;
  }

  /** Everything as before the authorization: free, held, usage; the authorization DECLINED; one record. */
  async function assertGivenBack(w: SpendWorld, t: CardTransaction, before: { funds: unknown; usage: unknown }): Promise<void> {
    assert.equal(t.approved, false);
    assert.equal(t.status, 'DECLINED');
    assert.equal(text(t.holdAmount), '0.00');
    assert.equal(t.outstandingTransactionId, null);
    assert.deepEqual(await fundsOf(w), before.funds);
    assert.deepEqual(await usageOf(w), before.usage);
    const stored = await w.client.transactions.query(t.transId);
    assert.equal(stored.status, 'DECLINED');
    assert.equal(await forwardingsOf(t.transId), 1, 'the decision is recorded once');
  }

  async function snapshot(w: SpendWorld) {
    return { funds: await fundsOf(w), usage: await usageOf(w) };
  }

  describe('the partner answers hostile bytes, properly signed and encrypted', () => {
    it('a decline whose reason holds a NUL is PARTNER_DECLINED, cleaned, money back; the retry gets the same bytes and is not forwarded', async () => {
      const w = await forwardingWorld();
      const before = await snapshot(w);
      partner.answer = (r) => json({ transId: r.transId, approved: false, declineReason: 'NO\u0000PE' });
      const body = { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '1.00') };
      const first = await send(body);
      assert.equal(first.t.declineReason, 'PARTNER_DECLINED');
      assert.equal(first.t.declineDetail, null, 'a reason outside [A-Z0-9_]{1,40} is not shown as the detail');
      assert.equal(first.t.partnerDecision?.outcome, 'DECLINED');
      assert.equal(first.t.partnerDecision?.partnerDeclineReason, 'NO\ufffdPE', 'the control byte is shown as U+FFFD, never stored');
      await assertGivenBack(w, first.t, before);
      const retry = await send(body);
      assert.equal(retry.text, first.text, 'the retry is answered byte for byte as the first time');
      assert.equal(partner.seenFor(body.networkTransactionId), 1);
      // The sandbox route takes the same path.
      const sandbox = await w.client.sandbox.authorize(purchase(w.card.cardId, '1.00'));
      assert.equal(sandbox.declineReason, 'PARTNER_DECLINED');
      assert.deepEqual(await fundsOf(w), before.funds);
    });

    it('a 10 KB reason, invalid UTF-8 and control bytes are bounded and cleaned; a well-formed reason is the detail', async () => {
      const w = await forwardingWorld();
      const before = await snapshot(w);
      const cases: { bytes: (transId: string) => Buffer; check: (t: CardTransaction) => void }[] = [
        {
          bytes: (transId) => json({ transId, approved: false, declineReason: 'X'.repeat(10 * 1024) }),
          check: (t) => {
            assert.equal(t.declineDetail, null);
            assert.ok([...t.partnerDecision!.partnerDeclineReason!].length <= 64, 'bounded');
          },
        },
        {
          // 0xC3 0x28 and 0xFF are not UTF-8.
          bytes: (transId) => Buffer.concat([Buffer.from(`{"transId":"${transId}","approved":false,"declineReason":"BAD`), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]),
          check: (t) => {
            assert.equal(t.declineDetail, null);
            assert.match(t.partnerDecision!.partnerDeclineReason!, /^BAD\ufffd\(\ufffd$/);
          },
        },
        {
          bytes: (transId) => json({ transId, approved: false, declineReason: '\u001b[31mRED\u202e\u0007\u0085' }),
          check: (t) => assert.equal(t.partnerDecision!.partnerDeclineReason, '\ufffd[31mRED\ufffd\ufffd\ufffd'),
        },
        {
          bytes: (transId) => json({ transId, approved: false, declineReason: 'OVER_BUDGET' }),
          check: (t) => assert.equal(t.declineDetail, 'OVER_BUDGET'),
        },
      ];
      for (const c of cases) {
        partner.answer = (r) => c.bytes(r.transId);
        const { t } = await send({ networkTransactionId: ref('net'), ...purchase(w.card.cardId, '1.00') });
        assert.equal(t.declineReason, 'PARTNER_DECLINED');
        c.check(t);
        await assertGivenBack(w, t, before);
      }
    });

    it('JSON of the wrong types is a stand-in or a decline without reason, never a 5xx, and money is right', async () => {
      const w = await forwardingWorld();
      const before = await snapshot(w);
      const cases: [string, (transId: string) => Buffer, string, string | null][] = [
        ['approved as a string', (transId) => json({ transId, approved: 'false' }), 'PARTNER_TIMEOUT', 'MALFORMED_ANSWER'],
        ['an array', () => json([false]), 'PARTNER_TIMEOUT', 'MALFORMED_ANSWER'],
        ['null', () => json(null), 'PARTNER_TIMEOUT', 'MALFORMED_ANSWER'],
        ['not JSON at all', () => Buffer.from([0x00, 0xff, 0x7b]), 'PARTNER_TIMEOUT', 'MALFORMED_ANSWER'],
        ['transId as an object with a NUL', () => json({ transId: { x: '\u0000' }, approved: false }), 'PARTNER_TIMEOUT', 'TRANS_ID_MISMATCH'],
        ['a transId string with a NUL', (transId) => json({ transId: `${transId}\u0000`, approved: false }), 'PARTNER_TIMEOUT', 'TRANS_ID_MISMATCH'],
        ['declineReason as a number', (transId) => json({ transId, approved: false, declineReason: 12345 }), 'PARTNER_DECLINED', null],
        ['declineReason as an object', (transId) => json({ transId, approved: false, declineReason: { code: 'NO' } }), 'PARTNER_DECLINED', null],
        ['an answer body over 64 KiB (a 100 KB reason)', (transId) => json({ transId, approved: false, declineReason: 'X'.repeat(100 * 1024) }), 'PARTNER_TIMEOUT', 'TRANSPORT_ERROR'],
      ];
      for (const [name, bytes, reason, detail] of cases) {
        partner.answer = (r) => bytes(r.transId);
        const { t } = await send({ networkTransactionId: ref('net'), ...purchase(w.card.cardId, '1.00') });
        assert.equal(t.declineReason, reason, name);
        assert.equal(t.declineDetail, detail, name);
        if (reason === 'PARTNER_DECLINED') assert.equal(t.partnerDecision?.partnerDeclineReason, null, name);
        await assertGivenBack(w, t, before);
      }
      // An approval with junk beside it stands.
      partner.answer = (r) => json({ transId: r.transId, approved: true, declineReason: '\u0000'.repeat(200), extra: [1, { a: null }] });
      const { t } = await send({ networkTransactionId: ref('net'), ...purchase(w.card.cardId, '1.00') });
      assert.equal(t.approved, true);
      assert.equal(t.partnerDecision?.outcome, 'APPROVED');
      assert.equal((await fundsOf(w)).pending, '1.00');
    });

    it('the sandbox auth-url test echoes the partner\'s reason cleaned and bounded', async () => {
      const w = await forwardingWorld();
      partner.answer = (r) => json({ transId: r.transId, approved: false, declineReason: `NO\u0000PE${'!'.repeat(5000)}` });
      const report = await w.client.sandbox.testAuthUrl();
      assert.equal(report.answerVerified, true);
      assert.equal(report.approved, false);
      assert.ok(report.declineReason!.startsWith('NO\ufffdPE'));
      assert.ok([...report.declineReason!].length <= 64);
    });
  });

  describe('a fault at each await of the partner-decision stage', () => {
    const faults: StageFault[] = ['target-lookup', 'service-key', 'throw-after-answer', 'never-settles'];
    for (const fault of faults) {
      it(`${fault}: the stand-in (SERVICE_ERROR) is recorded once with the hold and usage given back; the retry gets the same bytes`, async () => {
        const w = await forwardingWorld();
        const before = await snapshot(w);
        partner.answer = (r) => json({ transId: r.transId, approved: true, declineReason: null });
        const body = { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '1.00') };
        stage.fault = fault;
        let first;
        try {
          first = await send(body);
        } finally {
          stage.fault = 'none';
        }
        assert.equal(first.t.declineReason, 'PARTNER_TIMEOUT');
        assert.equal(first.t.declineDetail, 'SERVICE_ERROR');
        assert.equal(first.t.partnerDecision?.outcome, 'STAND_IN_DECLINED');
        assert.equal(first.t.partnerDecision?.standInReason, 'SERVICE_ERROR');
        await assertGivenBack(w, first.t, before);
        const seen = partner.seenFor(body.networkTransactionId);
        assert.equal(seen, fault === 'throw-after-answer' ? 1 : 0);
        const retry = await send(body);
        assert.equal(retry.text, first.text);
        assert.equal(partner.seenFor(body.networkTransactionId), seen, 'never forwarded again');
      });
    }

    it('with the partner\'s stand-in APPROVE a failing stage approves: the hold stays, recorded once', async () => {
      const w = await forwardingWorld('APPROVE');
      stage.fault = 'service-key';
      let first;
      const body = { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '2.00') };
      try {
        first = await send(body);
      } finally {
        stage.fault = 'none';
      }
      assert.equal(first.t.approved, true);
      assert.equal(first.t.status, 'PENDING');
      assert.equal(first.t.partnerDecision?.outcome, 'STAND_IN_APPROVED');
      assert.equal(first.t.partnerDecision?.standInReason, 'SERVICE_ERROR');
      assert.deepEqual(await fundsOf(w), { available: '8.00', pending: '2.00', total: '10.00' });
      assert.equal(await forwardingsOf(first.t.transId), 1);
      assert.equal((await send(body)).text, first.text);
    });
  });

  describe('a statement of the decision\'s transaction fails', () => {
    const steps: [string, RegExp][] = [
      ['the claim on the awaited decision', /DELETE FROM auth_decisions/],
      ['the forwarding record insert', /INSERT INTO auth_forwardings/],
      ['the authorization\'s lock', /message_type = 'AUTHORIZATION' FOR UPDATE/],
      ['the hold release posting', /ledger_post\(/],
      ['the usage given back', /velocity_usage_give_back\(/],
      ['the DECLINED record', /UPDATE card_transactions SET status/],
      ['the CARD_TRANSACTION event', /card_transaction_event\(/],
    ];
    for (const [step, pattern] of steps) {
      it(`once at ${step}: the partner's decline is recorded without its text, money back, the retry gets the same bytes`, async () => {
        const w = await forwardingWorld();
        const before = await snapshot(w);
        partner.answer = (r) => json({ transId: r.transId, approved: false, declineReason: 'OVER_BUDGET' });
        const body = { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '1.00') };
        const failures = db.failures;
        const first = await sendWhileRefusing(body, pattern, 1);
        assert.equal(db.failures, failures + 1, 'the fault fired');
        assert.equal(first.t.declineReason, 'PARTNER_DECLINED');
        assert.equal(first.t.partnerDecision?.outcome, 'DECLINED');
        assert.equal(first.t.partnerDecision?.partnerDeclineReason, null, 'recorded without what the partner relayed');
        await assertGivenBack(w, first.t, before);
        assert.equal((await send(body)).text, first.text);
        assert.equal(partner.seenFor(body.networkTransactionId), 1);
      });
    }

    it('once at the approval\'s one statement (claim and record): the partner\'s approval is recorded without its text, the hold stays, the retry gets the same bytes', async () => {
      const w = await forwardingWorld();
      partner.answer = (r) => json({ transId: r.transId, approved: true, declineReason: null });
      const body = { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '1.00') };
      const failures = db.failures;
      const first = await sendWhileRefusing(body, /WITH claimed AS \(\s*DELETE FROM auth_decisions/, 1);
      assert.equal(db.failures, failures + 1, 'the fault fired');
      assert.equal(first.t.approved, true);
      assert.equal(first.t.status, 'PENDING');
      assert.equal(first.t.partnerDecision?.outcome, 'APPROVED');
      assert.equal(first.t.partnerDecision?.httpStatus, null, 'recorded without what the partner relayed');
      assert.deepEqual(await fundsOf(w), { available: '9.00', pending: '1.00', total: '10.00' });
      assert.equal(await forwardingsOf(first.t.transId), 1, 'the decision is recorded once');
      assert.equal((await send(body)).text, first.text, 'a copy answers from the recorded decision');
      assert.equal(partner.seenFor(body.networkTransactionId), 1);
    });

    it('the forwarding record refused every time: answered with the stand-in, recorded by a copy that comes after the due time', async () => {
      const w = await forwardingWorld();
      const before = await snapshot(w);
      partner.answer = (r) => json({ transId: r.transId, approved: true, declineReason: null });
      const body = { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '1.00') };
      const first = await sendWhileRefusing(body, /INSERT INTO auth_forwardings/, Infinity);
      // Nothing could be recorded: the answer is the stand-in that will be.
      assert.equal(first.t.declineReason, 'PARTNER_TIMEOUT');
      assert.equal(first.t.declineDetail, 'SERVICE_ERROR');
      assert.equal((await w.client.transactions.query(first.t.transId)).status, 'PENDING', 'still held until the decision is recorded');
      svc.clock.advance(DEADLINE_MS + DECISION_GRACE_MS + 1);
      const countedBefore = await scrape(svc.baseUrl);
      const retry = await send(body);
      const countedAfter = await scrape(svc.baseUrl);
      // Review rvG: the stand-in the copy recorded is counted like every recorded forwarding decision.
      assert.equal(delta(countedBefore, countedAfter, 'authorization_forwardings_total', { outcome: 'STAND_IN_DECLINED' }), 1);
      assert.equal(delta(countedBefore, countedAfter, 'authorization_forwarding_stand_ins_total', { stand_in_reason: 'SERVICE_ERROR' }), 1);
      assert.equal(retry.t.declineReason, 'PARTNER_TIMEOUT');
      assert.equal(retry.t.declineDetail, 'SERVICE_ERROR');
      await assertGivenBack(w, retry.t, before);
      assert.equal(await recoverDecisions(svc.ctx), 0, 'nothing left for the job');
      assert.equal((await send(body)).text, retry.text);
      assert.equal(partner.seenFor(body.networkTransactionId), 1);
    });

    it('the forwarding record refused every time: the recovery job records the stand-in once it is due, not before', async () => {
      const w = await forwardingWorld();
      const before = await snapshot(w);
      partner.answer = (r) => json({ transId: r.transId, approved: false, declineReason: 'OVER_BUDGET' });
      const body = { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '1.00') };
      const first = await sendWhileRefusing(body, /INSERT INTO auth_forwardings/, Infinity);
      assert.equal(first.t.declineDetail, 'SERVICE_ERROR');
      assert.equal((await fundsOf(w)).pending, '1.00');
      const countedBefore = await scrape(svc.baseUrl);
      assert.equal(await recoverDecisions(svc.ctx), 0, 'not due yet: the request may still record it');
      const recovery = { job: 'auth-decision-recovery' };
      assert.equal((await scrape(svc.baseUrl)).value('job_pending_items', recovery), 0, 'not in the backlog before it is due');
      svc.clock.advance(DEADLINE_MS + DECISION_GRACE_MS + 1);
      // Issue 27: the recovery job's backlog and lag are exported like every leased job's.
      const due = await scrape(svc.baseUrl);
      assert.equal(due.value('job_pending_items', recovery), 1);
      assert.ok(due.value('job_lag_seconds', recovery) > 0);
      assert.equal(await recoverDecisions(svc.ctx), 1);
      const countedAfter = await scrape(svc.baseUrl);
      assert.equal(countedAfter.value('job_pending_items', recovery), 0);
      // Review rvG: the recorded stand-in is counted like every recorded forwarding decision.
      assert.equal(delta(countedBefore, countedAfter, 'authorization_forwardings_total', { outcome: 'STAND_IN_DECLINED' }), 1);
      assert.equal(delta(countedBefore, countedAfter, 'authorization_forwarding_stand_ins_total', { stand_in_reason: 'SERVICE_ERROR' }), 1);
      const stored = await w.client.transactions.query(first.t.transId);
      assert.equal(stored.declineReason, 'PARTNER_TIMEOUT');
      assert.equal(stored.declineDetail, 'SERVICE_ERROR');
      await assertGivenBack(w, stored, before);
      const retry = await send(body);
      assert.equal(retry.t.status, 'DECLINED');
      assert.equal(retry.t.declineDetail, 'SERVICE_ERROR');
      assert.equal(partner.seenFor(body.networkTransactionId), 1);
    });
  });

  describe('copies of one network message (section 2)', () => {
    it('a copy of an authorization cleared or partly reversed since answers the record as it is now', async () => {
      const w = await fundedCard(svc, { funds: '10.00' });
      const cleared = { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '2.00') };
      const reversed = { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '3.00') };
      await send(cleared);
      await send(reversed);
      await network.call('POST', '/internal/network/v1/clearing', { body: { networkTransactionId: ref('net'), originalNetworkTransactionId: cleared.networkTransactionId, amount: 2 } });
      await network.call('POST', '/internal/network/v1/reversal', { body: { networkTransactionId: ref('net'), originalNetworkTransactionId: reversed.networkTransactionId, amount: 1 } });
      assert.equal((await send(cleared)).t.status, 'CLEARED');
      const partly = (await send(reversed)).t;
      assert.equal(partly.status, 'PENDING');
      assert.equal(text(partly.holdAmount), '2.00');
    });

    it('10 concurrent copies against a slow partner, on two instances: one forwarding, 10 byte-identical answers, booked once', async () => {
      const other = await startService({ db: await (await testDatabase()).openAnother(), clock: svc.clock });
      try {
        // A slow partner well within its deadline.
        const w = await forwardingWorld('DECLINE', 5000);
        const before = await snapshot(w);
        partner.answer = (r) => json({ transId: r.transId, approved: true, declineReason: null });
        partner.delayMs = 300;
        const otherNetwork = await networkClient(other);
        const body = { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '1.00') };
        const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? network : otherNetwork)
          .raw<CardTransaction>('POST', AUTHORIZE, { body })));
        partner.delayMs = 0;
        assert.deepEqual(answers.map((a) => a.status), Array(10).fill(200));
        assert.equal(partner.seenFor(body.networkTransactionId), 1, 'the partner was asked once');
        assert.deepEqual([...new Set(answers.map((a) => a.text))], [answers[0].text], 'every copy answers the same bytes');
        const t = answers[0].envelope.data!;
        assert.equal(t.approved, true);
        assert.equal(t.partnerDecision?.outcome, 'APPROVED');
        assert.deepEqual(await fundsOf(w), { available: '9.00', pending: '1.00', total: '10.00' });
        const usage = await usageOf(w);
        assert.equal(Number(usage.amount), Number(before.usage.amount) + 1);
        assert.equal(usage.count, before.usage.count + 1);
        assert.equal(await forwardingsOf(t.transId), 1);
      } finally {
        partner.delayMs = 0;
        await other.close();
      }
    });

    it('10 concurrent copies while the partner declines slowly: one forwarding, identical answers, the hold given back once', async () => {
      const w = await forwardingWorld('DECLINE', 5000);
      const before = await snapshot(w);
      partner.answer = (r) => json({ transId: r.transId, approved: false, declineReason: 'SLOW_NO' });
      partner.delayMs = 200;
      const body = { networkTransactionId: ref('net'), ...purchase(w.card.cardId, '3.00') };
      try {
        const answers = await Promise.all(Array.from({ length: 10 }, () => network.raw<CardTransaction>('POST', AUTHORIZE, { body })));
        assert.equal(partner.seenFor(body.networkTransactionId), 1);
        assert.equal(new Set(answers.map((a) => a.text)).size, 1);
        const t = answers[0].envelope.data!;
        assert.equal(t.declineDetail, 'SLOW_NO');
        await assertGivenBack(w, t, before);
      } finally {
        partner.delayMs = 0;
      }
    });
  });
});
