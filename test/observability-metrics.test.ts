import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { decimal } from '../sdk/index.ts';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { deliverDueEvents } from '../src/domains/events/testing.ts';
import { processCardApplications } from '../src/domains/cards/testing.ts';
import { auditLedger } from '../src/domains/ledger/index.ts';
import { closeTestDatabase, startService, testDatabase, ADMIN_TOKEN, MASTER_KEY, type TestService } from './helpers/service.ts';
import { fundedCard, purchase, type SpendWorld } from './helpers/authorization.ts';
import { cardWorld, ref } from './helpers/cards.ts';
import { uniqueRef } from './helpers/companies.ts';
import { WebhookReceiver } from './helpers/webhook-receiver.ts';
import { delta, parseExposition, scrape } from './helpers/metrics.ts';
import { PartnerAuthUrl } from './helpers/partner-auth-url.ts';

/**
 * Issue 27: GET /metrics after a known sequence shows exactly the counts of that sequence, its
 * labels are bounded (ids and raw paths never become series), and it is served behind the admin
 * token or on its own port (METRICS_PORT).
 */
describe('Prometheus metrics (issue 27)', () => {
  let svc: TestService;
  before(async () => { svc = await startService(); });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  const AUTHORIZE_ROUTE = { http_request_method: 'POST', http_route: '/open-api/sandbox/v1/simulate/authorization', http_response_status_code: '200' };
  const decision = (outcome: string, reason: string) => ({ source: 'sandbox', outcome, reason });
  /**
   * The service's own families: prom-client's runtime families (nodejs_*, process_*) gain series
   * as the runtime meets a new GC kind or handle type, a small set that no request chooses.
   */
  const SERVICE_FAMILIES = (name: string) => !name.startsWith('nodejs_') && !name.startsWith('process_');

  it('after approvals, one decline of each reason, forwardings, a failed webhook and job runs, the counters moved by exactly that', async () => {
    // Worlds first: their set-up (card applications, deposits) is not part of the counted sequence.
    const w = await fundedCard(svc, { funds: '100.00' });
    const blocked = await fundedCard(svc, { world: w, funds: '0' });
    const cancelled = await fundedCard(svc, { world: w, funds: '0' });
    const poor = await fundedCard(svc, { funds: '1.00' });
    const frozen = await fundedCard(svc);
    const limited = await fundedCard(svc);
    const rule = await limited.client.velocity.createRule({
      organizationId: limited.org.organizationId, ruleRef: uniqueRef('rule'), ruleName: 'metrics',
      purchaseControl: { amountLimits: [{ currency: 'USD', perTransaction: decimal('10.00') }] },
      mccControl: { filterType: 'BLACKLIST', values: ['7995'] },
      geographicControl: { filterType: 'WHITELIST', values: ['HK'] },
      currencyControl: { filterType: 'WHITELIST', values: ['USD'] },
      cashAdvanceControl: { allowed: false },
    });
    await limited.client.velocity.bindRule({ organizationId: limited.org.organizationId, ruleId: rule.ruleId, subjectType: 'CARD', subjectIds: [limited.card.cardId] });
    await blocked.client.cards.block(blocked.card.cardId);
    await cancelled.client.cards.cancel(cancelled.card.cardId);
    await frozen.client.customers.updateRestrictions(frozen.employee.customerId, { addRestrictions: ['PAYMENT_FROZEN'] });
    const partner = await PartnerAuthUrl.start();
    const forwarded = await fundedCard(svc, { funds: '100.00' });
    partner.servicePublicKey = (await forwarded.client.partner.servicePublicKey()).publicKey;
    await svc.admin.updatePartner(forwarded.partner.partnerId, { authUrl: partner.url, externalPublicKey: partner.publicKeyBase64 });
    await svc.admin.call('POST', '/internal/admin/v1/auth-forwarding/settings', { body: { partnerId: forwarded.partner.partnerId, deadlineMs: 300, standIn: 'DECLINE' } });
    // Events of these worlds (card and transaction events, no webhook_url) are parked before counting.
    await deliverDueEvents(svc.ctx, { limit: 1000 });
    const failing = await WebhookReceiver.start('/hooks/failing');
    failing.answerNext(...Array.from({ length: 20 }, () => ({ status: 500 })));
    const hooked = await cardWorld(svc);
    await svc.admin.updatePartner(hooked.partner.partnerId, { webhookUrl: failing.url });
    await deliverDueEvents(svc.ctx, { limit: 1000 });
    const application = await hooked.client.cards.apply({
      cardApplyRef: ref(), organizationId: hooked.org.organizationId, cardProfileId: 'sbx-visa-shared', subjectType: 'CUSTOMER', subjectId: hooked.employee.customerId,
    });

    const before = await scrape(svc.baseUrl);
    let authorizeCalls = 0;
    const authorize = async (world: SpendWorld, amount: string, overrides: Record<string, unknown> = {}) => {
      authorizeCalls++;
      return world.client.sandbox.authorize(purchase(world.card.cardId, amount, overrides));
    };
    const approved = await authorize(w, '2.00');
    await authorize(w, '3.00');
    const declines: [SpendWorld, string, Record<string, unknown>, string][] = [
      [blocked, '1.00', {}, 'CARD_BLOCKED'],
      [cancelled, '1.00', {}, 'CARD_CANCELLED'],
      [frozen, '1.00', {}, 'CAPABILITY_FROZEN'],
      [limited, '10.01', {}, 'VELOCITY_LIMIT_EXCEEDED'],
      [limited, '1.00', { mcc: '7995' }, 'MCC_NOT_ALLOWED'],
      [limited, '1.00', { merchantCountry: 'US' }, 'COUNTRY_NOT_ALLOWED'],
      [limited, '1.00', { currency: 'EUR', billingAmount: decimal('1.10'), billingCurrency: 'USD' }, 'CURRENCY_NOT_ALLOWED'],
      [limited, '1.00', { channel: 'ATM' }, 'CASH_ADVANCE_NOT_ALLOWED'],
      [poor, '1.01', {}, 'INSUFFICIENT_BALANCE'],
    ];
    for (const [world, amount, overrides, reason] of declines) {
      const t = await authorize(world, amount, overrides);
      assert.equal(t.declineReason, reason);
    }
    partner.behaviour = 'approve';
    assert.equal((await authorize(forwarded, '1.00')).approved, true);
    partner.behaviour = 'decline';
    assert.equal((await authorize(forwarded, '1.00')).declineReason, 'PARTNER_DECLINED');
    partner.behaviour = 'late';
    assert.equal((await authorize(forwarded, '1.00')).declineReason, 'PARTNER_TIMEOUT');
    await w.client.sandbox.clear({ transId: approved.transId, amount: decimal('2.00') });
    await assert.rejects(w.client.sandbox.clear({ transId: 'tx-unknown', amount: decimal('1.00') }), /TRANSACTION_NOT_FOUND/);
    await assert.rejects(svc.clientFor({ apiKey: w.partner.apiKey, secretKey: 'not-the-secret' }).sandbox.authorize(purchase(w.card.cardId, '1.00')), /DAPI_SIGN_INVALID/);
    await w.client.userAssets.credit({ externalTranId: ref('credit'), asset: 'USDT', amount: decimal('5'), externalUserId: ref('user') });
    const cards = await processCardApplications(svc.ctx);
    assert.equal(cards.succeeded, 1);
    assert.equal((await hooked.client.cards.queryApply(application.cardApplyId)).status, 'SUCCESS');
    const webhooks = await deliverDueEvents(svc.ctx, { limit: 1000 });
    const after = await scrape(svc.baseUrl);

    assert.equal(delta(before, after, 'authorization_decisions_total', decision('approved', 'none')), 3, 'two approvals and one forwarded approval');
    for (const [, , , reason] of declines) {
      assert.equal(delta(before, after, 'authorization_decisions_total', decision('declined', reason)), 1, reason);
    }
    assert.equal(delta(before, after, 'authorization_decisions_total', decision('declined', 'PARTNER_DECLINED')), 1);
    assert.equal(delta(before, after, 'authorization_decisions_total', decision('declined', 'PARTNER_TIMEOUT')), 1);
    assert.equal(delta(before, after, 'authorization_decision_duration_seconds', { source: 'sandbox' }), authorizeCalls);
    assert.equal(delta(before, after, 'authorization_forwardings_total', { outcome: 'APPROVED' }), 1);
    assert.equal(delta(before, after, 'authorization_forwardings_total', { outcome: 'DECLINED' }), 1);
    assert.equal(delta(before, after, 'authorization_forwardings_total', { outcome: 'STAND_IN_DECLINED' }), 1);
    assert.equal(delta(before, after, 'authorization_forwarding_stand_ins_total', { stand_in_reason: 'TIMEOUT' }), 1);
    assert.equal(delta(before, after, 'authorization_forwarding_duration_seconds'), 3);
    assert.equal(delta(before, after, 'authorization_settlement_messages_total', { type: 'clearing', source: 'sandbox', result: 'ok' }), 1);
    assert.equal(delta(before, after, 'authorization_settlement_messages_total', { type: 'clearing', source: 'sandbox', result: 'TRANSACTION_NOT_FOUND' }), 1);
    // Every signed call of the sequence answered 200 (envelope errors are HTTP 200, D2), the bad signature 401.
    assert.equal(delta(before, after, 'http_server_request_duration_seconds', AUTHORIZE_ROUTE), authorizeCalls);
    assert.equal(delta(before, after, 'http_server_request_duration_seconds', { ...AUTHORIZE_ROUTE, http_response_status_code: '401' }), 1);
    assert.equal(delta(before, after, 'http_authentication_failures_total', { kind: 'signed', reason: 'DAPI_SIGN_INVALID' }), 1);
    assert.equal(delta(before, after, 'user_asset_movements_total', { type: 'DEPOSIT', direction: 'CREDIT' }), 1);
    assert.equal(delta(before, after, 'job_runs_total', { job: 'card-applications', result: 'ok' }), 1);
    assert.equal(delta(before, after, 'job_items_total', { job: 'card-applications', result: 'SUCCESS' }), 1);
    assert.equal(delta(before, after, 'job_runs_total', { job: 'webhook-delivery', result: 'ok' }), 1);
    // The hooked partner's card event went to its failing endpoint: one failed answer, retried later.
    const hookedAttempts = webhooks.results.filter((r) => r.outcome === 'HTTP_ERROR');
    assert.ok(hookedAttempts.length >= 1, 'the failing endpoint was called');
    assert.equal(delta(before, after, 'webhook_deliveries_total', { outcome: 'HTTP_ERROR' }), hookedAttempts.length);
    assert.equal(delta(before, after, 'job_items_total', { job: 'webhook-delivery', result: 'PENDING' }), webhooks.retrying);
    assert.ok(after.value('webhook_undelivered_events') >= hookedAttempts.length, 'the failed events are still undelivered');
    assert.equal(after.value('ledger_audit_last_run_timestamp_seconds') >= 0, true);
    await failing.close();
    await partner.close();
  });

  it('label cardinality: 1,000 distinct card ids and 1,000 distinct paths leave the series count unchanged', async () => {
    const { client } = await svc.newPartner();
    const unknownCard = (i: number) => client.sandbox.authorize(purchase(`card-${i}-${ref('x')}`, '1.00')).then(() => assert.fail('no such card'), (err: { code?: string }) => assert.equal(err.code, 'CARD_INVALID'));
    const unknownPath = (i: number) => fetch(`${svc.baseUrl}/open-api/no-such-route/${i}/${ref('p')}?cardId=${i}`).then((r) => assert.equal(r.status, 404));
    // Each kind once, and a scrape (GET /metrics is a route too), so every series the loop can
    // touch exists before the count.
    await unknownCard(-1);
    await unknownPath(-1);
    await scrape(svc.baseUrl);
    const before = (await scrape(svc.baseUrl)).seriesCount(SERVICE_FAMILIES);
    for (let start = 0; start < 1000; start += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, k) => Promise.all([unknownCard(start + k), unknownPath(start + k)])));
    }
    const after = await scrape(svc.baseUrl);
    assert.equal(after.seriesCount(SERVICE_FAMILIES), before);
    assert.ok(after.value('http_server_request_duration_seconds', { http_request_method: 'GET', http_route: 'unmatched', http_response_status_code: '404' }) >= 1001);
    assert.ok(after.value('authorization_decisions_total', { source: 'sandbox', outcome: 'error', reason: 'CARD_INVALID' }) >= 1001);
  });

  it('GET /metrics needs the admin token on the main port; a wrong token is refused and counted', async () => {
    const before = await scrape(svc.baseUrl);
    assert.equal((await fetch(`${svc.baseUrl}/metrics`)).status, 401);
    assert.equal((await fetch(`${svc.baseUrl}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status, 401);
    const after = await scrape(svc.baseUrl);
    assert.equal(delta(before, after, 'http_authentication_failures_total', { kind: 'admin', reason: 'SYS_UNAUTHORIZED' }), 2);
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds', 'db_client_connections',
      'job_pending_items', 'job_lag_seconds', 'webhook_oldest_undelivered_age_seconds', 'http_rate_limited_total']) {
      assert.ok(after.families.has(name), `${name} is exported`);
    }
    if (svc.db.kind === 'postgres') {
      assert.equal(after.value('db_client_connection_max'), 5, 'the test pool size');
      assert.equal(after.value('db_client_connection_pending_requests'), 0);
    }
  });

  it('with METRICS_PORT, GET /metrics is served there without a token and not on the main port', async () => {
    const { db } = await testDatabase();
    const { config } = loadConfig({
      CARDSVC_ENV: 'sandbox', ADMIN_TOKEN, MASTER_KEY, DATA_DIR: '/nonexistent-test-data-dir', DATABASE_URL: 'postgres://unused-by-tests',
      PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent',
    });
    const { app, metricsServer } = await buildApp({ config, db });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      assert.ok(metricsServer?.listening);
      const metricsUrl = `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}`;
      const res = await fetch(`${metricsUrl}/metrics`);
      assert.equal(res.status, 200);
      assert.ok(parseExposition(await res.text()).families.has('http_server_request_duration_seconds'));
      assert.equal((await fetch(`${metricsUrl}/other`)).status, 404);
      const main = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      assert.equal((await fetch(`${main}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 404);
    } finally {
      await app.close();
    }
    assert.equal(metricsServer.listening, false, 'closed with the app');
  });

  it('/readyz reports the database and each job\'s freshness; a stale job degrades the report, not readiness', async () => {
    const ready = await (await fetch(`${svc.baseUrl}/readyz`)).json() as { status: string; database: { status: string }; jobs: { job: string; status: string }[] };
    assert.equal(ready.database.status, 'up');
    assert.deepEqual(ready.jobs.map((j) => j.job).sort(), ['auth-decision-recovery', 'card-applications', 'hold-expiry', 'idempotency-sweep', 'ledger-audit', 'low-balance-scan', 'push-stream-prune', 'replay-sweep', 'rule-backtest', 'webhook-delivery']);
    assert.equal(ready.jobs.find((j) => j.job === 'card-applications')?.status, 'fresh', 'it ran in the first test');
    svc.clock.advance(2 * 3_600_000);
    try {
      const res = await fetch(`${svc.baseUrl}/readyz`);
      assert.equal(res.status, 200);
      const stale = await res.json() as typeof ready;
      assert.equal(stale.status, 'degraded');
      assert.equal(stale.jobs.find((j) => j.job === 'card-applications')?.status, 'stale');
      await processCardApplications(svc.ctx);
      const again = await (await fetch(`${svc.baseUrl}/readyz`)).json() as typeof ready;
      assert.equal(again.jobs.find((j) => j.job === 'card-applications')?.status, 'fresh');
    } finally {
      svc.clock.advance(-2 * 3_600_000);
    }
  });

  it('ledger_audit_last_ok and _findings are absent before the first whole-ledger audit, not 0 (review rvG: 0 paged LedgerAuditFailed)', async () => {
    const text = async () => (await fetch(`${svc.baseUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    const before = await text();
    assert.match(before, /^ledger_audit_last_run_timestamp_seconds 0$/m, 'no audit has run in this database');
    assert.doesNotMatch(before, /^ledger_audit_last_ok /m);
    assert.doesNotMatch(before, /^ledger_audit_last_findings /m);
    const report = await auditLedger(svc.db, {});
    const after = await text();
    assert.match(after, new RegExp(`^ledger_audit_last_ok ${report.ok ? 1 : 0}$`, 'm'));
    assert.match(after, new RegExp(`^ledger_audit_last_findings ${report.findings.length}$`, 'm'));
    assert.doesNotMatch(after, /^ledger_audit_last_run_timestamp_seconds 0$/m);
  });

  it('job_stale_after_seconds is each job\'s /readyz bound (review rvG: JobStale paged the hourly ledger-audit after 15 minutes)', async () => {
    const s = await scrape(svc.baseUrl);
    const ready = await (await fetch(`${svc.baseUrl}/readyz`)).json() as { jobs: { job: string; boundSeconds: number }[] };
    assert.ok(ready.jobs.length >= 10);
    for (const j of ready.jobs) assert.equal(Math.round(s.value('job_stale_after_seconds', { job: j.job })), j.boundSeconds, j.job);
    assert.equal(s.value('job_stale_after_seconds', { job: 'ledger-audit' }), 2 * 3600 + 60, 'hourly check: twice its interval and a minute');
  });
});
