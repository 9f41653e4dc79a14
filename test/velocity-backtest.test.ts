import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, testDatabase, type TestService } from './helpers/service.ts';
import { fundedCard, purchase, type SpendWorld } from './helpers/authorization.ts';
import { issueCard } from './helpers/cards.ts';
import { dec, expectCode, uniq } from './helpers/velocity-fixtures.ts';
import { decimalText, type Backtest, type CardServiceClient, type CreateRuleParams } from '../sdk/index.ts';
import { stepBacktests } from '../src/domains/authorization/testing.ts';

/**
 * Issue 31 section 3: backtests of a draft velocity rule, end to end through the HTTP API. The
 * central check: what a backtest says the draft would have declined is what the live engine
 * declines once the draft is a real rule, for the same authorizations (same amounts, merchants and
 * times of day). The replay decides with velocity_refusal, the code of live authorizations.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The authorizations recorded, in order: [hours after the first day's midnight, amount, overrides]. */
const SEQUENCE: [number, string, Record<string, unknown>][] = [
  [1, '30.00', {}],                 // approved: 30 / 1
  [2, '45.00', {}],                 // perTransaction 40
  [3, '30.00', { mcc: '7995' }],    // MCC blacklist
  [4, '30.00', {}],                 // 60 / 2
  [5, '30.00', {}],                 // 90 / 3
  [6, '5.00', {}],                  // daily count 3
  [7, '20.00', { channel: 'ATM' }], // cash advance: the draft has no cash group
  [25, '35.00', {}],                // day 2: 35 / 1
  [26, '35.00', {}],                // 70 / 2
  [27, '35.00', {}],                // 105 > 100: daily amount
  [28, '10.00', {}],                // 80 / 3
  [49, '39.99', {}],                // day 3: 39.99 / 1
];

describe('velocity backtests of a draft rule (issue 31 section 3)', () => {
  let svc: TestService;

  before(async () => {
    svc = await startService();
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  const draftBody = (organizationId: string): CreateRuleParams => ({
    organizationId, ruleRef: uniq('draft'), ruleName: 'Coffee budget',
    purchaseControl: { amountLimits: [{ currency: 'USD', perTransaction: dec('40.00'), daily: dec('100.00') }], countLimits: { daily: 3 } },
    mccControl: { filterType: 'BLACKLIST', values: ['7995'] },
  });

  /** Moves the service clock to 00:00 UTC of the next day. */
  function toNextMidnight(): number {
    const now = svc.clock.now();
    const next = Math.ceil((now + 1) / DAY) * DAY;
    svc.clock.advance(next - now);
    return next;
  }

  /** Records SEQUENCE on the card from the next midnight on; returns each authorization's transId and decline. */
  async function record(w: SpendWorld, cardId: string): Promise<{ transId: string; declineReason: string | null; declineDetail: string | null }[]> {
    const midnight = toNextMidnight();
    const out = [];
    for (const [hours, amount, overrides] of SEQUENCE) {
      svc.clock.advance(midnight + hours * HOUR - svc.clock.now());
      const t = await w.client.sandbox.authorize(purchase(cardId, amount, overrides));
      out.push({ transId: t.transId, declineReason: t.declineReason ?? null, declineDetail: t.declineDetail ?? null });
    }
    return out;
  }

  /** Runs the backtest job until the backtest ends; checks the progress moves forward on the way. */
  async function runToEnd(client: CardServiceClient, backtestId: string, stepSize = 4): Promise<Backtest> {
    let last = -1;
    for (let i = 0; i < 100; i++) {
      const detail = await client.velocity.backtestDetail({ backtestId });
      if (detail.status === 'COMPLETED' || detail.status === 'FAILED') return detail;
      assert.ok(detail.progress.processed > last || detail.status === 'PENDING', 'progress moves forward');
      last = detail.progress.processed;
      const ran = await stepBacktests({ db: svc.db, clock: svc.ctx.clock }, { stepSize });
      assert.ok(ran.every((r) => !r.failed), `a step failed: ${ran.map((r) => r.error).join(', ')}`);
    }
    assert.fail('the backtest did not end');
  }

  /** A fingerprint of every live table a backtest could touch. */
  async function liveTables(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const table of ['card_transactions', 'velocity_usage', 'velocity_rules', 'velocity_rule_bindings', 'velocity_rule_amount_limits',
      'ledger_entries', 'ledger_accounts', 'events', 'cards']) {
      const rows = await svc.db.query<{ n: string; h: string | null }>(`SELECT count(*)::text AS n, md5(string_agg(t::text, '|' ORDER BY t::text)) AS h FROM ${table} t`);
      out[table] = `${rows[0]!.n}:${rows[0]!.h}`;
    }
    return out;
  }

  it('declines what the live engine declines once the draft is a real rule, and changes nothing', async () => {
    const w = await fundedCard(svc, { funds: '10000.00' });
    const recorded = await record(w, w.card.cardId);
    assert.ok(recorded.every((r) => r.declineReason === null), 'without rules every authorization is approved');
    svc.clock.advance(HOUR);

    const before = await liveTables();
    const start = new Date(svc.clock.now() - 4 * DAY).toISOString();
    const end = new Date(svc.clock.now()).toISOString();
    const started = await w.client.velocity.backtest({
      rule: draftBody(w.org.organizationId), bindings: [{ subjectType: 'CARD', subjectIds: [w.card.cardId] }],
      startTime: start, endTime: end, mode: 'ALONE',
    });
    assert.equal(started.status, 'PENDING');
    assert.equal(started.result, null);
    assert.deepEqual(started.progress, { processed: 0, total: null });
    const done = await runToEnd(w.client, started.backtestId);
    assert.equal(done.status, 'COMPLETED', done.error ?? '');
    assert.deepEqual(done.progress, { processed: SEQUENCE.length, total: SEQUENCE.length });
    assert.deepEqual(await liveTables(), before, 'a backtest changes no live table');

    // The same authorizations, live, on a second card of the same company bound to the draft made real.
    const cardB = await issueCard(svc, w);
    const rule = await w.client.velocity.createRule(draftBody(w.org.organizationId));
    await w.client.velocity.bindRule({ organizationId: w.org.organizationId, ruleId: rule.ruleId, subjectType: 'CARD', subjectIds: [cardB.cardId] });
    const live = await record(w, cardB.cardId);

    const liveDeclined = live.flatMap((t, i) => (t.declineReason ? [i] : []));
    assert.deepEqual(liveDeclined, [1, 2, 5, 9], 'the live engine declines the over-limit, blacklisted and over-count authorizations');
    const result = done.result!;
    assert.equal(result.evaluated, SEQUENCE.length);
    assert.equal(result.alreadyDeclined, 0);
    assert.equal(result.declined, liveDeclined.length);
    const sampled = result.sampleTransIds.map((id) => recorded.findIndex((r) => r.transId === id));
    assert.deepEqual(sampled, liveDeclined, 'the backtest declines the same authorizations');
    // Reasons and limits: the live decline detail is ruleId[:LIMIT]; the backtest's ruleId is null for the draft.
    const liveReasons = live.filter((t) => t.declineReason).map((t) => `${t.declineReason}:${t.declineDetail!.split(':').slice(1).join(':') || '-'}`).sort();
    const backtestReasons = result.byReason.flatMap((r) => Array.from({ length: r.count }, () => `${r.reason}:${r.limit ?? '-'}`)).sort();
    assert.deepEqual(backtestReasons, liveReasons);
    assert.ok(result.byReason.every((r) => r.ruleId === null), 'the draft declines: ruleId null');
    const declinedSum = liveDeclined.reduce((s, i) => s + Number(SEQUENCE[i]![1]) * 100, 0);
    assert.deepEqual(result.declinedAmounts.map((a) => [a.currency, Number(decimalText(a.amount)) * 100]), [['USD', declinedSum]]);
    assert.deepEqual(result.byDay.map((d) => d.count), [3, 1]);
    assert.deepEqual(result.topCards.map((c) => [c.subjectId, c.declinedCount]), [[w.card.cardId, 4]]);
    assert.deepEqual(result.topEmployees.map((c) => [c.subjectId, c.declinedCount]), [[w.employee.customerId, 4]]);
  });

  it('COMBINED adds the rules bound at each authorization\'s time (their current version); ALONE the draft only', async () => {
    const w = await fundedCard(svc, { funds: '10000.00' });
    const org = w.org.organizationId;
    // Bound before the authorizations: a daily cap that allowed them all; tightened afterwards.
    const bound = await w.client.velocity.createRule({
      organizationId: org, ruleRef: uniq('cap'), ruleName: 'Daily cap', purchaseControl: { amountLimits: [{ currency: 'USD', daily: dec('1000.00') }] },
    });
    await w.client.velocity.bindRule({ organizationId: org, ruleId: bound.ruleId, subjectType: 'CUSTOMER', subjectIds: [w.employee.customerId] });
    const recorded = await record(w, w.card.cardId);
    assert.ok(recorded.every((r) => r.declineReason === null));
    await w.client.velocity.updateRule({
      organizationId: org, ruleId: bound.ruleId, ruleVersion: 1, ruleName: 'Daily cap',
      purchaseControl: { amountLimits: [{ currency: 'USD', daily: dec('50.00') }] },
    });
    // Bound after every authorization: not applied by a backtest of them (it would decline them all).
    const late = await w.client.velocity.createRule({
      organizationId: org, ruleRef: uniq('late'), ruleName: 'No coffee', mccControl: { filterType: 'BLACKLIST', values: ['5814'] },
    });
    await w.client.velocity.bindRule({ organizationId: org, ruleId: late.ruleId, subjectType: 'CARD', subjectIds: [w.card.cardId] });
    svc.clock.advance(HOUR);
    const window = { startTime: new Date(svc.clock.now() - 4 * DAY).toISOString(), endTime: new Date(svc.clock.now()).toISOString() };
    const draft = { organizationId: org, ruleRef: uniq('draft'), ruleName: 'No gambling', mccControl: { filterType: 'BLACKLIST' as const, values: ['7995'] } };
    const bindings = [{ subjectType: 'CARD', subjectIds: [w.card.cardId] }];

    const alone = await runToEnd(w.client, (await w.client.velocity.backtest({ rule: draft, bindings, ...window, mode: 'ALONE' })).backtestId, 50);
    assert.deepEqual(alone.result!.byReason.map((r) => [r.reason, r.ruleId, r.limit, r.count]), [['MCC_NOT_ALLOWED', null, null, 1]]);

    const combined = await runToEnd(w.client, (await w.client.velocity.backtest({ rule: draft, bindings, ...window })).backtestId, 50);
    assert.equal(combined.mode, 'COMBINED');
    const reasons = combined.result!.byReason.map((r) => [r.reason, r.ruleId, r.limit]);
    assert.ok(reasons.some(([reason, ruleId, limit]) => reason === 'VELOCITY_LIMIT_EXCEEDED' && ruleId === bound.ruleId && limit === 'DAILY'), JSON.stringify(reasons));
    assert.ok(reasons.some(([, ruleId]) => ruleId === null), 'and the draft');
    assert.ok(!reasons.some(([, ruleId]) => ruleId === late.ruleId), 'a rule bound after the authorizations is not applied');
    assert.ok(combined.result!.declined > alone.result!.declined);
  });

  it("COMBINED counts the employee's other cards toward a bound employee rule, without reporting them", async () => {
    const w = await fundedCard(svc, { funds: '10000.00' });
    const org = w.org.organizationId;
    const other = await issueCard(svc, w);
    const cap = await w.client.velocity.createRule({
      organizationId: org, ruleRef: uniq('cap'), ruleName: 'Employee cap', purchaseControl: { amountLimits: [{ currency: 'USD', daily: dec('1000.00') }] },
    });
    await w.client.velocity.bindRule({ organizationId: org, ruleId: cap.ruleId, subjectType: 'CUSTOMER', subjectIds: [w.employee.customerId] });
    const midnight = toNextMidnight();
    svc.clock.advance(HOUR);
    await w.client.sandbox.authorize(purchase(other.cardId, '40.00'));
    svc.clock.advance(HOUR);
    const onBound = await w.client.sandbox.authorize(purchase(w.card.cardId, '20.00'));
    await w.client.velocity.updateRule({
      organizationId: org, ruleId: cap.ruleId, ruleVersion: 1, ruleName: 'Employee cap', purchaseControl: { amountLimits: [{ currency: 'USD', daily: dec('50.00') }] },
    });
    svc.clock.advance(HOUR);
    const started = await w.client.velocity.backtest({
      rule: { organizationId: org, ruleRef: uniq('draft'), ruleName: 'No gambling', mccControl: { filterType: 'BLACKLIST', values: ['7995'] } },
      bindings: [{ subjectType: 'CARD', subjectIds: [w.card.cardId] }],
      startTime: new Date(midnight).toISOString(), endTime: new Date(svc.clock.now()).toISOString(),
    });
    const done = await runToEnd(w.client, started.backtestId);
    assert.deepEqual(done.progress, { processed: 2, total: 2 }, 'both cards of the employee are replayed');
    assert.equal(done.result!.evaluated, 1, 'only the bound card is reported');
    assert.deepEqual(done.result!.byReason.map((r) => [r.reason, r.ruleId, r.limit, r.count]), [['VELOCITY_LIMIT_EXCEEDED', cap.ruleId, 'DAILY', 1]]);
    assert.deepEqual(done.result!.sampleTransIds, [onBound.transId], '40.00 on the other card + 20.00 is over the employee\'s 50.00');
    assert.deepEqual(done.result!.topCards.map((c) => c.subjectId), [w.card.cardId]);
  });

  it('validates the window, the draft as create-rule does and the subjects as bind-rule does', async () => {
    const w = await fundedCard(svc, { funds: '0' });
    const other = await fundedCard(svc, { funds: '0' });
    const org = w.org.organizationId;
    const now = svc.clock.now();
    const ok = {
      rule: draftBody(org), bindings: [{ subjectType: 'CARD', subjectIds: [w.card.cardId] }],
      startTime: new Date(now - 10 * DAY).toISOString(), endTime: new Date(now - DAY).toISOString(),
    };
    await expectCode(w.client.velocity.backtest({ ...ok, endTime: new Date(now + HOUR).toISOString() }), 'DAPI_PARAM_INVALID', 'future');
    await expectCode(w.client.velocity.backtest({ ...ok, startTime: new Date(now - 92 * DAY).toISOString() }), 'DAPI_PARAM_INVALID', '90 days');
    await expectCode(w.client.velocity.backtest({ ...ok, startTime: ok.endTime }), 'DAPI_PARAM_INVALID', 'after startTime');
    await expectCode(w.client.velocity.backtest({ ...ok, startTime: 'yesterday' }), 'DAPI_PARAM_INVALID', 'startTime');
    // The draft: exactly create-rule's checks.
    const noGroup = { organizationId: org, ruleRef: uniq('r'), ruleName: 'Nothing' };
    const [created, drafted] = await Promise.allSettled([w.client.velocity.createRule(noGroup), w.client.velocity.backtest({ ...ok, rule: noGroup })]);
    assert.equal(created.status, 'rejected');
    assert.equal(drafted.status, 'rejected');
    assert.equal((drafted as PromiseRejectedResult).reason.code, (created as PromiseRejectedResult).reason.code);
    assert.equal((drafted as PromiseRejectedResult).reason.message, (created as PromiseRejectedResult).reason.message);
    await expectCode(w.client.velocity.backtest({ ...ok, rule: { ...draftBody(org), purchaseControl: { amountLimits: [{ currency: 'USD', daily: dec('1.001') }] } } }), 'DAPI_PARAM_INVALID');
    await expectCode(w.client.velocity.backtest({ ...ok, rule: draftBody(other.org.organizationId) }), 'ORGANIZATION_INVALID');
    // The subjects: bind-rule's checks.
    await expectCode(w.client.velocity.backtest({ ...ok, bindings: [{ subjectType: 'CARD', subjectIds: [other.card.cardId] }] }), 'SUBJECT_INVALID');
    await expectCode(w.client.velocity.backtest({ ...ok, bindings: [{ subjectType: 'ORGANIZATION', subjectIds: [org] }] }), 'SUBJECT_TYPE_NOT_ALLOWED');
    await expectCode(w.client.velocity.backtest({ ...ok, bindings: [{ subjectType: 'CARD', subjectIds: [w.card.cardId, w.card.cardId] }] }), 'DAPI_PARAM_INVALID', 'duplicate');
    // Employees are accepted, and the detail is the partner's own.
    const started = await w.client.velocity.backtest({ ...ok, bindings: [{ subjectType: 'CUSTOMER', subjectIds: [w.employee.customerId] }] });
    assert.equal(started.organizationId, org);
    await expectCode(other.client.velocity.backtestDetail({ backtestId: started.backtestId }), 'VELOCITY_BACKTEST_NOT_FOUND');
    await expectCode(w.client.velocity.backtestDetail({ backtestId: 'btnope' }), 'VELOCITY_BACKTEST_NOT_FOUND');
    const done = await runToEnd(w.client, started.backtestId);
    assert.equal(done.status, 'COMPLETED');
    assert.deepEqual(done.progress, { processed: 0, total: 0 });
    assert.equal(done.result!.evaluated, 0);
  });

  /** The partner's backtests' statuses, sorted. */
  async function statuses(partnerId: string): Promise<string[]> {
    const rows = await svc.db.query<{ status: string }>('SELECT status FROM rule_backtests WHERE partner_id = $1 ORDER BY status', [partnerId]);
    return rows.map((r) => r.status);
  }

  /** A fingerprint of the backtest tables. */
  async function backtestTables(): Promise<string> {
    const out = [];
    for (const table of ['rule_backtests', 'rule_backtest_subjects']) {
      const rows = await svc.db.query<{ n: string; h: string | null }>(`SELECT count(*)::text AS n, md5(string_agg(t::text, '|' ORDER BY t::text)) AS h FROM ${table} t`);
      out.push(`${table} ${rows[0]!.n}:${rows[0]!.h}`);
    }
    return out.join(', ');
  }

  it('a partner holds at most BACKTEST_MAX_PENDING_PER_PARTNER unfinished backtests: one more is refused (429) and writes nothing, a finished one frees its slot, another partner is not affected', async () => {
    const capped = await startService({ db: await (await testDatabase()).openAnother(), clock: svc.clock, env: { BACKTEST_MAX_PENDING_PER_PARTNER: '2' } });
    try {
      const w = await fundedCard(capped, { funds: '100.00' });
      const other = await fundedCard(capped, { funds: '0' });
      for (const amount of ['1.00', '2.00']) await w.client.sandbox.authorize(purchase(w.card.cardId, amount));
      svc.clock.advance(HOUR);
      const body = (x: SpendWorld) => ({
        rule: draftBody(x.org.organizationId), bindings: [{ subjectType: 'CARD', subjectIds: [x.card.cardId] }],
        startTime: new Date(svc.clock.now() - 10 * DAY).toISOString(), endTime: new Date(svc.clock.now()).toISOString(),
      });
      assert.equal((await w.client.velocity.backtest(body(w))).status, 'PENDING');
      assert.equal((await w.client.velocity.backtest(body(w))).status, 'PENDING');

      const before = await backtestTables();
      const live = await liveTables();
      const refused = await expectCode(w.client.velocity.backtest(body(w)), 'SYS_RATE_LIMITED', 'You already have 2 backtests pending or running (at most 2)');
      assert.ok(refused.message.includes('wait for one to finish'), refused.message);
      assert.equal(await backtestTables(), before, 'a refused start writes no backtest');
      assert.deepEqual(await liveTables(), live);

      // A RUNNING backtest still holds its slot.
      await stepBacktests({ db: svc.db, clock: svc.clock }, { stepSize: 1 });
      assert.deepEqual(await statuses(w.partner.partnerId), ['PENDING', 'RUNNING']);
      await expectCode(w.client.velocity.backtest(body(w)), 'SYS_RATE_LIMITED', '2 backtests pending or running');

      // One ends (2 authorizations, steps of 4): its slot is free for exactly one more.
      await stepBacktests({ db: svc.db, clock: svc.clock }, { stepSize: 4 });
      assert.equal((await statuses(w.partner.partnerId)).filter((s) => s === 'COMPLETED').length, 1);
      assert.equal((await w.client.velocity.backtest(body(w))).status, 'PENDING');
      await expectCode(w.client.velocity.backtest(body(w)), 'SYS_RATE_LIMITED', '2 backtests pending or running');
      assert.equal((await statuses(w.partner.partnerId)).length, 3);

      // Another partner's backtests are counted apart.
      assert.equal((await other.client.velocity.backtest(body(other))).status, 'PENDING');
      assert.deepEqual(await statuses(other.partner.partnerId), ['PENDING']);
    } finally {
      await capped.close();
    }
  });

  it('concurrent starts on two instances sharing the database never pass the cap', async () => {
    const env = { BACKTEST_MAX_PENDING_PER_PARTNER: '3' };
    const a = await startService({ db: await (await testDatabase()).openAnother(), clock: svc.clock, env });
    const b = await startService({ db: await (await testDatabase()).openAnother(), clock: svc.clock, env });
    try {
      const w = await fundedCard(a, { funds: '0' });
      const onB = b.clientFor(w.partner);
      const body = {
        rule: draftBody(w.org.organizationId), bindings: [{ subjectType: 'CARD', subjectIds: [w.card.cardId] }],
        startTime: new Date(svc.clock.now() - 10 * DAY).toISOString(), endTime: new Date(svc.clock.now()).toISOString(),
      };
      const starts = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 ? onB : w.client).velocity.backtest(body)));
      assert.equal(starts.filter((s) => s.status === 'fulfilled').length, 3, 'exactly the cap is started');
      for (const s of starts) {
        if (s.status === 'rejected') assert.equal((s.reason as { code: string }).code, 'SYS_RATE_LIMITED', String(s.reason));
      }
      assert.deepEqual(await statuses(w.partner.partnerId), ['PENDING', 'PENDING', 'PENDING']);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
