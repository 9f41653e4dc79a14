/**
 * Issue 29: every operator console page under 1 s with 100,000 transactions. Seeds one card with
 * 100,000 card transactions and their 100,000 CARD_TRANSACTION events (copies of a real declined
 * authorization, by SQL), 100,000 postings on its company's pool (one per copy), 100,000 audit-trail entries, then times each page as a logged-in support
 * operator: the median of 5 requests after one warm-up. Run once, by hand:
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/scenarios/console-pages.ts
 * (without TEST_DATABASE_URL it runs on the embedded database). Not part of `npm run bench`.
 */
import { performance } from 'node:perf_hooks';
import { closeTestDatabase, startService } from '../../test/helpers/service.ts';
import { fundedCard, purchase } from '../../test/helpers/authorization.ts';
import { eventsOf, newEmployee } from '../../test/helpers/companies.ts';
import { consoleLogin, createOperatorViaApi } from '../../test/helpers/console.ts';

const N = Number(process.env.CONSOLE_BENCH_ROWS ?? 100_000);
const svc = await startService();
const world = await fundedCard(svc, { funds: '1.00' });
const { transId } = await world.client.sandbox.authorize(purchase(world.card.cardId, '2.00'));
for (let i = 0; i < 20; i++) await newEmployee(world.client, world.org.organizationId);

let t0 = performance.now();
// Copies of the real rows with new ids and spread times (jsonb_populate_record keeps every column).
await svc.db.query(
  `INSERT INTO card_transactions
   SELECT (jsonb_populate_record(NULL::card_transactions, to_jsonb(t) || jsonb_build_object(
     'trans_id', 'txb' || g, 'network_transaction_id', 'ntb' || g,
     'created_at', t.created_at - make_interval(secs => g), 'transaction_time', t.transaction_time - make_interval(secs => g)))).*
   FROM card_transactions t, generate_series(1, $2::int) g WHERE t.trans_id = $1`,
  [transId, N],
);
// The real event to copy, found through the partner API (the copies are made in bulk by SQL: 100,000
// authorizations through the API would take hours; the copies are exact clones of rows the API made).
const [event] = await eventsOf(world.client, { eventType: 'CARD_TRANSACTION', businessId: world.card.cardId });
await svc.db.query(
  `INSERT INTO events
   SELECT (jsonb_populate_record(NULL::events, to_jsonb(e) || jsonb_build_object(
     'event_id', 'evb' || g, 'sequence', e.sequence + g, 'create_time', e.create_time - make_interval(secs => g),
     'payload', replace(e.payload, $3, 'txb' || g)))).*
   FROM events e, generate_series(1, $2::int) g WHERE e.event_id = $1`,
  [event.eventId, N, transId],
);
await svc.db.query(
  `INSERT INTO event_deliveries
   SELECT (jsonb_populate_record(NULL::event_deliveries, to_jsonb(d) || jsonb_build_object('event_id', 'evb' || g))).*
   FROM event_deliveries d, generate_series(1, $2::int) g WHERE d.event_id = $1`,
  [event.eventId, N],
);
await svc.db.query(
  `INSERT INTO audit_trail (seq, recorded_at, actor, operator_id, role, channel, action, target, summary, outcome, source_ip, request_id, prev_hash, hash)
   SELECT h.seq + g, now() - make_interval(secs => $1::int - g), 'bench.' || (g % 50), NULL, 'support', 'console', 'card.block', 'c' || g, '{}', 'DONE',
     '127.0.0.1', 'r' || g, repeat('0', 64), repeat('0', 64)
   FROM audit_trail_head h, generate_series(1, $1::int) g`,
  [N],
);
// 100,000 ledger postings on the company's pool, through ledger_post (the one writer), each
// referencing one copied transaction: the statement pages and a timeline's postings by reference.
const [pool] = await svc.db.query<{ account_id: string }>(
  `SELECT account_id FROM ledger_accounts WHERE owner_type = 'ORGANIZATION_POOL' AND owner_id = $1 AND currency = 'USD'`, [world.org.organizationId]);
const [external] = await svc.db.query<{ account_id: string }>(
  `SELECT account_id FROM ledger_accounts WHERE partner_id = $1 AND owner_type = 'EXTERNAL' AND currency = 'USD'`, [world.partner.partnerId]);
// In batches: one statement updating the same account rows 100,000 times in one transaction walks
// ever longer version chains.
const BATCH = 1000;
for (let from = 1; from <= N; from += BATCH) {
  await svc.db.query(
    `SELECT count(*) FROM generate_series($5::int, $6::int) g, LATERAL ledger_post('lpb' || g, $1, 'DEPOSIT', false, 'txb' || g, 'bench',
       now() - make_interval(secs => $4::int - g), ARRAY[$2, $3], ARRAY['USD', 'USD'], ARRAY['AVAILABLE', 'AVAILABLE'], ARRAY[0.01, -0.01]::numeric[])`,
    [world.partner.partnerId, pool.account_id, external.account_id, N, from, Math.min(N, from + BATCH - 1)],
  );
}
// Filler entries (their hashes do not chain): the bench times pages, it does not verify.
await svc.db.query(`UPDATE audit_trail_head SET seq = seq + $1::bigint`, [N]);
await svc.db.query('ANALYZE');
console.log(`seeded ${N} transactions, ${N} events, ${N} pool postings and ${N} audit entries in ${Math.round(performance.now() - t0)} ms (${svc.db.kind})`);

// The keyset of the statement's oldest page: the line of the 21st oldest posting (its time and id).
const [line] = await svc.db.query<{ ms: string; entry_id: string }>(
  `SELECT (extract(epoch FROM created_at) * 1000)::bigint::text AS ms, entry_id::text FROM ledger_entries WHERE posting_id = 'lpb21' AND account_id = $1`,
  [pool.account_id]);
const oldLine = `${line.ms}.st${line.entry_id}`;

const op = await createOperatorViaApi(svc, 'bench.support', 'support');
const session = await consoleLogin(svc, 'bench.support', op.credentials.password, op.credentials.totpSecret);
const pages: [string, string][] = [
  ['search by last four', `/console?q=${world.card.panLast4}`],
  ['search by transaction id', `/console?q=txb50000`],
  ['search by network transaction id', `/console?q=ntb50000`],
  ['card, first page', `/console/cards/${world.card.cardId}`],
  ['card, oldest page', `/console/cards/${world.card.cardId}?before=txb${N - 20}`],
  ['transaction timeline', `/console/transactions/${transId}`],
  ['transaction timeline (old)', `/console/transactions/txb90000`],
  ['partner, first page', `/console/partners/${world.partner.partnerId}`],
  ['partner, last page', `/console/partners/${world.partner.partnerId}?page=${Math.ceil((N + 3) / 20)}`],
  ['KYC queue', '/console/kyc'],
  ['restrictions', `/console/restrictions?subjectType=ORGANIZATION&subjectId=${world.org.organizationId}`],
  ['ledger: pools and statement', `/console/ledger?organizationId=${world.org.organizationId}`],
  ['ledger: statement, oldest page', `/console/ledger?organizationId=${world.org.organizationId}&older=${oldLine}`],
  ['ledger (audit run)', '/console/ledger?audit=1'],
  ['audit trail', '/console/audit'],
  ['audit trail by actor', '/console/audit?actor=bench.7'],
  ['audit trail, deep page', '/console/audit?before=200'],
];
for (const [name, url] of pages) {
  const times: number[] = [];
  let status = 0;
  for (let i = 0; i < 6; i++) {
    t0 = performance.now();
    const res = await fetch(svc.baseUrl + url, { headers: { cookie: session.cookie } });
    await res.text();
    status = res.status;
    if (i > 0) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(`${name.padEnd(34)} ${String(status)}  median ${times[2].toFixed(1).padStart(7)} ms  max ${times[4].toFixed(1).padStart(7)} ms`);
}
await svc.close();
await closeTestDatabase();
