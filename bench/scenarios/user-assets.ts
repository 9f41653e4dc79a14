/**
 * npm run bench -- --scenario=user-assets (issue 11)
 *
 * Signed POST /user-asset/v1/credit at 8 connections through the full HTTP path on PostgreSQL, each
 * request a distinct externalTranId, round-robin over 1,000 users of one partner (USDT). Alternating
 * rounds with pgbench TPC-B (`-i -s 10`, `-M prepared -c 8 -j 2`) on the same PostgreSQL; prints
 * credits/s, p50, p99, CPU per request, the ratio to pgbench (median of the rounds), then the
 * embedded database's figure (its own service, after the PostgreSQL rounds).
 * Target: credits/s >= 0.50 x pgbench TPC-B, p99 < 30 ms.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AdminClient } from '../../sdk/index.ts';
import {
  costRound, costRounds, printCostSummary, freshDatabase, laneCalls, loadAt, perCall, median, pgbench, pgbenchTps, startService, stopService, type Service,
} from '../lib/authorizations.ts';
import { signedHeaders } from '../lib/signing.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const CONNECTIONS = 8;
const USERS = 1000;
const CREDIT = '/user-asset/v1/credit';
const ADMIN_TOKEN = 'bench-admin-token-0123456789';

interface Partner {
  partnerId: string;
  apiKey: string;
  secretKey: string;
}

interface Sample {
  creditsPerS: number;
  p50: number;
  p99: number;
  refused: number;
  non2xx: number;
  errors: number;
  serviceCpuMsPerRequest: number;
  postgresCpuMsPerRequest: number;
  machineCpuMsPerRequest: number;
}

let sequence = 0;

async function loadCredits(service: Service, partner: Partner, durationS: number): Promise<Sample> {
  let refused = 0;
  let ok = 0;
  const run = `${Date.now().toString(36)}`;
  const { result, cpu } = await loadAt(service, durationS, {
    method: 'POST',
    path: CREDIT,
    setupRequest: (req: Record<string, unknown>) => {
      const n = sequence++;
      const body = `{"externalTranId":"b-${run}-${n}","asset":"USDT","amount":1.000000000000000001,"externalUserId":"bench-user-${n % USERS}"}`;
      return { ...req, body, headers: { 'content-type': 'application/json', ...signedHeaders(partner, body) } };
    },
    onResponse: (_status: number, body: string) => {
      if (body.includes('"code":"SYS_SUCCESS"')) ok++;
      else refused++;
    },
  });
  return {
    creditsPerS: ok / durationS,
    p50: result.latency.p50,
    p99: result.latency.p99,
    refused,
    non2xx: result.non2xx,
    errors: result.errors,
    serviceCpuMsPerRequest: cpu.service,
    postgresCpuMsPerRequest: cpu.postgres,
    machineCpuMsPerRequest: cpu.machine,
  };
}

async function newPartner(service: Service): Promise<Partner> {
  const admin = new AdminClient(service.base, ADMIN_TOKEN);
  const p = await admin.createPartner({ name: `bench-assets-${service.name}` });
  return { partnerId: p.partnerId, apiKey: p.apiKey!, secretKey: p.secretKey! };
}

/**
 * The booking function alone, without HTTP and Node: pgbench calls user_asset_move (a credit of
 * one of the 1,000 users, fresh ids) at the same 8 clients. Shows how much of the end-to-end gap to
 * TPC-B is the database work and how much the HTTP path sharing the same CPU.
 */
function databaseCallAlone(dbName: string, partnerId: string, durationS: number, dir: string): { tps: number; postgresCpuMsPerTx: number; machineCpuMsPerTx: number } {
  const script = path.join(dir, 'user-asset-move.sql');
  writeFileSync(script, [
    '\\set u random(0, 999)',
    '\\set r random(1, 999999999999999)',
    `SELECT outcome FROM user_asset_move(:partner, 'bench-user-' || :u, 'pbu' || :r, 'pb-' || :client_id || '-' || :r, 'DEPOSIT', 'CREDIT', 'USDT', 1.000000000000000001, NULL, '{ACCOUNT_FROZEN,CASH_IN_FROZEN}'::text[], now(), 'pbm' || :r, 'pbp' || :r, 'pba' || :r, 'pbc' || :r);`,
    '',
  ].join('\n'));
  return pgbenchTps(durationS, ['-f', script, '-D', `partner=${partnerId}`], dbName);
}

const line = (label: string, s: Sample) =>
  `${label.padEnd(26)} ${s.creditsPerS.toFixed(0).padStart(6)} credits/s  p50 ${String(s.p50).padStart(3)} ms  p99 ${String(s.p99).padStart(3)} ms  refused ${s.refused}  non-2xx ${s.non2xx}  errors ${s.errors}` +
  `  cpu/request: service ${s.serviceCpuMsPerRequest.toFixed(2)} ms, postgres ${s.postgresCpuMsPerRequest.toFixed(2)} ms, machine ${s.machineCpuMsPerRequest.toFixed(2)} ms`;

export async function userAssetScenario(): Promise<boolean> {
  const pgUrl = await freshDatabase('cardsvc_bench_assets');
  await freshDatabase('pgbench_bench');
  pgbench(['-i', '-q', '-s', '10', 'pgbench_bench']);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-bench-assets-'));
  const services: Service[] = [];
  try {
    const pgService = await startService('postgres', 18383, { DATABASE_URL: pgUrl, DATA_DIR: dataDir });
    services.push(pgService);
    const partner = await newPartner(pgService);
    await loadCredits(pgService, partner, 3); // warm-up: creates the 1,000 users and their accounts
    const samples: Sample[] = [];
    const cost = costRounds();
    for (let round = 1; round <= ROUNDS; round++) {
      const lane0 = await laneCalls(pgService, 'user_asset');
      const s = await loadCredits(pgService, partner, DURATION_S);
      const lane1 = await laneCalls(pgService, 'user_asset');
      samples.push(s);
      console.log(`${line(`round ${round} PostgreSQL`, s)}  credits per database call ${perCall(lane0, lane1)}`);
      await costRound(cost, round, 'user_asset_move alone', () => databaseCallAlone('cardsvc_bench_assets', partner.partnerId, DURATION_S, dataDir), pgService, partner, DURATION_S);
    }
    await stopService(pgService);

    const embedded = await startService('embedded', 18384, { DATA_DIR: dataDir });
    services.push(embedded);
    const ePartner = await newPartner(embedded);
    await loadCredits(embedded, ePartner, 3);
    const emb: Sample[] = [];
    for (let round = 1; round <= 2; round++) {
      const e = await loadCredits(embedded, ePartner, DURATION_S);
      emb.push(e);
      console.log(line(`round ${round} embedded (PGlite)`, e));
    }
    const credits = median(samples.map((s) => s.creditsPerS));
    const p50 = median(samples.map((s) => s.p50));
    const p99 = median(samples.map((s) => s.p99));
    console.log(`\nmedian of ${ROUNDS} rounds, ${CONNECTIONS} connections, ${DURATION_S} s each, ${USERS} users:`);
    const ratio = printCostSummary(cost, {
      unit: 'credits', one: 'credit', aOne: 'a credit', callKind: 'booking', perS: credits, p50, p99,
      machineCpuMsPerRequest: median(samples.map((s) => s.machineCpuMsPerRequest)), target: 0.3,
    });
    console.log(`  embedded (PGlite)   ${median(emb.map((s) => s.creditsPerS)).toFixed(0)} credits/s  p99 ${median(emb.map((s) => s.p99))} ms`);
    // Issue 34's target.
    const ok = ratio >= 0.3 && p99 < 30 && samples.every((s) => s.refused === 0 && s.non2xx === 0 && s.errors === 0);
    console.log(`target credits/s >= 0.30 x pgbench TPC-B and p99 < 30 ms: ${ok ? 'MET' : 'NOT MET'}`);
    return ok;
  } finally {
    for (const s of services) await stopService(s);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
