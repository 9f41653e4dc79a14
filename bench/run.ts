/**
 * npm run bench [-- --scenario=NAME|all] (default all; --help): one file per scenario in
 * bench/scenarios/, their shared infrastructure in bench/lib/. Results and what they mean on the
 * machines measured: docs/benchmarks.md.
 */
import { authorizationScenario } from './scenarios/authorization.ts';
import { forwardingScenario } from './scenarios/forwarding.ts';
import { observabilityScenario } from './scenarios/observability.ts';
import { signedGetScenario } from './scenarios/signed-get.ts';
import { userAssetScenario } from './scenarios/user-assets.ts';
import { velocityBacktestScenario } from './scenarios/velocity-backtest.ts';

const SCENARIOS: Record<string, () => Promise<boolean>> = {
  'signed-get': signedGetScenario,
  authorization: authorizationScenario,
  forwarding: forwardingScenario,
  'user-assets': userAssetScenario,
  observability: observabilityScenario,
  'velocity-backtest': velocityBacktestScenario,
};
const USAGE = `usage: npm run bench [-- --scenario=${Object.keys(SCENARIOS).join('|')}|all]
  signed-get     signed GET vs plain node:http (issue 2)
  authorization  simulate/authorization vs pgbench TPC-B on PostgreSQL, embedded beside it (issue 10)
  forwarding     auth_url forwarding overhead with a local partner (issue 12)
  user-assets    signed /user-asset/v1/credit (1,000 users) vs pgbench TPC-B, embedded beside it (issue 11)
  observability  signed GET with metrics and OTLP traces on vs off (issue 27)
  velocity-backtest  one backtest of a draft rule over 1,000,000 recorded authorizations (issue 31; BACKTEST_BENCH_ROWS)
environment: BENCH_ROUNDS (3), BENCH_DURATION_S (8), BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/test)`;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return;
  }
  const chosen = args.find((a) => a.startsWith('--scenario='))?.slice('--scenario='.length) ?? 'all';
  const unknown = args.find((a) => !a.startsWith('--scenario='));
  if (unknown !== undefined || (chosen !== 'all' && !SCENARIOS[chosen])) {
    console.error(`bench: unknown ${unknown !== undefined ? `option ${unknown}` : `scenario ${chosen}`}\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  let ok = true;
  for (const [name, run] of Object.entries(SCENARIOS)) {
    if (chosen !== 'all' && chosen !== name) continue;
    console.log(`\n=== ${name} ===`);
    ok = (await run()) && ok;
  }
  if (!ok) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
