/**
 * Issue 31 section 3: a backtest of a draft velocity rule over 1,000,000 recorded authorizations
 * in under a minute, streamed, in bounded memory. Seeds 50 employee cards (10 employees, through the
 * API) with one real approved authorization each, copies them by SQL into BACKTEST_BENCH_ROWS
 * authorizations (default 1,000,000; clones of rows the API made, spread over 89 days, amounts 1 to
 * 97 USD, one in 50 at a casino MCC), then times one backtest through the API: POST backtest, the
 * job's steps until COMPLETED (as a worker runs them), and backtest-detail. Prints the time, the
 * rate and the process's peak RSS (the embedded database runs inside this process; on PostgreSQL
 * the replay runs in the server). Run: npm run bench -- --scenario=velocity-backtest
 * (TEST_DATABASE_URL=postgres://... for PostgreSQL).
 */
import { performance } from 'node:perf_hooks';
import { closeTestDatabase, startService } from '../../test/helpers/service.ts';
import { fundedCard, purchase } from '../../test/helpers/authorization.ts';
import { issueCard } from '../../test/helpers/cards.ts';
import { approvedEmployee } from '../../test/helpers/companies.ts';
import { decimal } from '../../sdk/index.ts';
import { stepBacktests } from '../../src/domains/authorization/testing.ts';

const DAY_MS = 86_400_000;

export async function velocityBacktestScenario(): Promise<boolean> {
  const rows = Number(process.env.BACKTEST_BENCH_ROWS ?? 1_000_000);
  const svc = await startService();
  try {
    const world = await fundedCard(svc, { funds: '100000.00' });
    const cards = [world.card];
    const employees = [world.employee];
    for (let e = 1; e < 10; e++) employees.push(await approvedEmployee(world.client, world.org.organizationId));
    for (let c = 1; c < 50; c++) cards.push(await issueCard(svc, { ...world, employee: employees[c % 10]! }));
    const templates: string[] = [];
    for (const card of cards) templates.push((await world.client.sandbox.authorize(purchase(card.cardId, '1.00'))).transId);

    let t0 = performance.now();
    const end = new Date(svc.clock.now());
    const perCard = Math.ceil(rows / templates.length);
    // Copies of the real rows, new ids, spread evenly over 89 days before `end` (jsonb_populate_record keeps every column),
    // in transactions of 100,000 rows without their foreign-key and trigger checks (session_replication_role
    // replica: the copies reference the same card, account and partner rows as the originals, already checked).
    const CHUNK = Math.max(1, Math.floor(100_000 / templates.length));
    for (let from = 0; from < perCard; from += CHUNK) {
      await svc.db.tx(async (q) => {
        await q.query('SET LOCAL session_replication_role = replica');
        await q.query(
          `INSERT INTO card_transactions
           SELECT r.*
           FROM (SELECT c.*, row_number() OVER (ORDER BY c.trans_id) AS k FROM card_transactions c WHERE c.trans_id = ANY ($1::text[])) t,
                generate_series($6::int, $2::int - 1) g, LATERAL (SELECT g * $5::int + t.k::int AS i) n,
                -- In FROM, not (f(...)).* in the select list, which would call it once per column.
                LATERAL jsonb_populate_record(NULL::card_transactions, to_jsonb(t) || jsonb_build_object(
                  'trans_id', 'tb' || n.i, 'network_transaction_id', 'nb' || n.i, 'outstanding_transaction_id', NULL, 'posting_id', NULL,
                  'expiry_due_at', NULL, 'amount', (n.i % 97) + 1, 'billing_amount', (n.i % 97) + 1, 'hold_amount', (n.i % 97) + 1,
                  'mcc', CASE WHEN n.i % 50 = 0 THEN '7995' ELSE '5814' END,
                  'created_at', $3::timestamptz - make_interval(secs => (n.i * 89 * 86400.0 / $4::int)),
                  'transaction_time', $3::timestamptz - make_interval(secs => (n.i * 89 * 86400.0 / $4::int)))) r
           WHERE n.i <= $4::int`,
          [templates, Math.min(perCard, from + CHUNK), end, rows, templates.length, from],
        );
      });
    }
    await svc.db.query('ANALYZE card_transactions');
    console.log(`seeded ${rows} recorded authorizations on ${cards.length} cards in ${Math.round(performance.now() - t0)} ms (${svc.db.kind})`);

    svc.clock.advance(60_000);
    t0 = performance.now();
    const started = await world.client.velocity.backtest({
      rule: {
        organizationId: world.org.organizationId, ruleRef: 'bench-draft', ruleName: 'Bench draft',
        purchaseControl: { amountLimits: [{ currency: 'USD', perTransaction: decimal('90.00'), daily: decimal('400.00'), monthly: decimal('9000.00') }], countLimits: { daily: 8 } },
        mccControl: { filterType: 'BLACKLIST', values: ['7995'] },
      },
      bindings: [{ subjectType: 'CARD', subjectIds: cards.map((c) => c.cardId) }, { subjectType: 'CUSTOMER', subjectIds: employees.map((e) => e.customerId) }],
      startTime: new Date(end.getTime() + 1 - 90 * DAY_MS).toISOString(), endTime: new Date(end.getTime() + 1).toISOString(),
    });
    let detail = started;
    let steps = 0;
    while (detail.status === 'PENDING' || detail.status === 'RUNNING') {
      await stepBacktests({ db: svc.db, clock: svc.ctx.clock });
      steps++;
      detail = await world.client.velocity.backtestDetail({ backtestId: started.backtestId });
    }
    const ms = performance.now() - t0;
    const r = detail.result;
    const peakRssMb = process.resourceUsage().maxRSS / 1024;
    console.log(`velocity-backtest  ${svc.db.kind}  ${detail.progress.processed} authorizations in ${(ms / 1000).toFixed(1)} s `
      + `(${Math.round(detail.progress.processed / (ms / 1000))}/s, ${steps} steps)  declined ${r?.declined ?? '?'} of ${r?.evaluated ?? '?'}  `
      + `peak RSS ${peakRssMb.toFixed(0)} MB  status ${detail.status}`);
    // The copies and the 50 authorizations they were copied from.
    return detail.status === 'COMPLETED' && detail.progress.processed === rows + templates.length;
  } finally {
    await svc.close();
    await closeTestDatabase();
  }
}
