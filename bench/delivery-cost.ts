/**
 * Focused bench of the webhook delivery job (issue 34): what delivering one outbox event costs.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/delivery-cost.ts
 *
 * Records EVENTS events (100 per transaction, not measured) for a partner without a webhook_url (the
 * authorization bench's case: every event is attempted once and parked as NOT_CONFIGURED), or with
 * DELIVER=1 for a partner whose local receiver answers 200, then drains them with full runs of the
 * delivery job (deliverDueEvents, batches of 50) and prints the statements and round trips sent per
 * event and per run (BEGIN/COMMIT counted), the round trips of one idle poll, and the machine CPU
 * (/proc/stat, all cores: Node, PostgreSQL and the kernel's loopback work) and this process's CPU
 * per event. ROOT=<checkout> runs another checkout's code with this same driver (same-run A/B:
 * alternate two checkouts' runs).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { machineCpuMs, processCpuMs } from './lib/cpu.ts';

const ROOT = path.resolve(process.env.ROOT ?? path.join(import.meta.dirname, '..'));
const EVENTS = Number(process.env.EVENTS ?? 3000);
const DELIVER = process.env.DELIVER === '1';
const load = (p: string) => import(pathToFileURL(path.join(ROOT, p)).href);

const { startService, closeTestDatabase } = await load('test/helpers/service.ts');
const { recordTestEvent, WebhookReceiver } = await load('test/helpers/webhook-receiver.ts');
const { deliverDueEvents } = await load('src/domains/events/testing.ts');

type Q = { query(sql: string, params?: unknown[]): Promise<unknown[]>; exec(sql: string): Promise<void> };

/** The service's Db with every statement counted (a transaction adds its BEGIN and COMMIT). */
function counting<D extends Q & { tx<T>(fn: (q: Q) => Promise<T>): Promise<T> }>(db: D, count: { statements: number; roundTrips: number }): D {
  const wrap = (q: Q): Q => ({
    query: (sql, params) => { count.statements++; count.roundTrips++; return q.query(sql, params); },
    exec: (sql) => { count.statements++; count.roundTrips++; return q.exec(sql); },
  });
  return Object.assign(Object.create(db), wrap(db), {
    tx: <T>(fn: (q: Q) => Promise<T>) => { count.roundTrips += 2; return db.tx((q) => fn(wrap(q))); },
  });
}

const svc = await startService();
const receiver = DELIVER ? await WebhookReceiver.start() : null;
try {
  const { partner } = await svc.newPartner(receiver ? { webhookUrl: receiver.url } : {});
  receiver?.useCredentials(partner);
  for (let i = 0; i < EVENTS; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, EVENTS - i) }, () => recordTestEvent(svc, partner.partnerId)));
  }
  const count = { statements: 0, roundTrips: 0 };
  const deps = { ...svc.ctx, db: counting(svc.ctx.db, count) };
  let runs = 0;
  let drained = 0;
  const cpu0 = machineCpuMs();
  const own0 = processCpuMs(process.pid);
  const t0 = performance.now();
  for (;;) {
    const summary = await deliverDueEvents(deps, { limit: 50 });
    if (summary.leased === 0) break;
    runs++;
    drained += summary.leased;
  }
  const wallMs = performance.now() - t0;
  const machineMs = machineCpuMs() - cpu0;
  const ownMs = processCpuMs(process.pid) - own0;
  const busy = { ...count };
  count.statements = 0;
  count.roundTrips = 0;
  await deliverDueEvents(deps, { limit: 50 });
  const idle = { ...count };
  console.log(JSON.stringify({
    root: ROOT, mode: DELIVER ? 'delivered' : 'parked', events: drained, runs,
    statementsPerEvent: +((busy.statements - idle.statements) / drained).toFixed(3),
    roundTripsPerEvent: +((busy.roundTrips - idle.roundTrips) / drained).toFixed(3),
    roundTripsPerRun: +((busy.roundTrips - idle.roundTrips) / runs).toFixed(2),
    idlePollRoundTrips: idle.roundTrips,
    machineCpuUsPerEvent: Math.round((machineMs * 1000) / drained),
    nodeCpuUsPerEvent: Math.round((ownMs * 1000) / drained),
    eventsPerS: Math.round(drained / (wallMs / 1000)),
  }));
} finally {
  await receiver?.close();
  await svc.close();
  await closeTestDatabase();
}
