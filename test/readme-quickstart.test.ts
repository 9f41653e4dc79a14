// test-database: once (the README's commands as written; each step of its flow is asserted on both databases by: organizations-onboarding, customers-profile, cards-apply, funding-pools, authorization-pipeline)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ADMIN_TOKEN, closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { ROOT, MAIN_JS } from './helpers/compiled-service.ts';
import { startWorkers } from '../src/workers.ts';
import type { RunningJobs } from '../src/platform/jobs.ts';

/**
 * Issue 14, item 6: the README's sandbox quick start works as written: the operator command makes
 * the partner file, the example script takes a company through KYC approval to a card issued,
 * funded, spent on and read back with exact amounts. The service runs with its workers, as `npm start` does.
 */
const run = promisify(execFile);

/**
 * The lines the quick start prints, with the shapes of the ids the service mints (issue 32, item 7:
 * the README's sample output must look like the real one, `org...` and `cus...`, not `og...`).
 */
const PRINTED = [
  /^company +org[0-9a-z]{8}[0-9a-f]{9} ACTIVE$/m,
  /^employee +cus[0-9a-z]{8}[0-9a-f]{9} KYC APPROVED$/m,
  /^card +cd[0-9a-z]{8}[0-9a-f]{10} VISA \d{6}\*{6}\d{4} ACTIVE$/m,
  /^purchase +tx[0-9a-z]{8}[0-9a-f]{10} approved=true amount=12\.34 USD$/m,
  /^pool +USD available=987\.66 pending=12\.34 total=1000\.00$/m,
];

describe('README quick start (issue 14)', () => {
  let svc: TestService;
  let workers: RunningJobs;
  let dir: string;

  before(async () => {
    svc = await startService();
    workers = startWorkers(svc.ctx, svc.app.log);
    dir = mkdtempSync(path.join(os.tmpdir(), 'quickstart-'));
  });
  after(async () => {
    await workers.stop();
    rmSync(dir, { recursive: true, force: true });
    await svc.close();
    await closeTestDatabase();
  });

  it('the README starts with the two commands and shows the quick-start commands that this test runs', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const firstBlock = readme.split('```sh\n')[1].split('```')[0];
    assert.match(firstBlock, /^npm ci && npm start/m);
    assert.match(firstBlock, /^npm test/m);
    assert.ok(readme.includes('npm run -s admin -- partner-create --name "Acme Wallet" --json > partner.json'));
    assert.ok(readme.includes('npx tsx examples/quickstart.ts partner.json'));
    // The sample output the README shows is what the script prints, ids of the real shapes included.
    const shown = readme.split('examples/quickstart.ts)')[1].split('```\n')[1].split('```')[0];
    for (const line of PRINTED) assert.match(shown, line);
    assert.equal(shown.trim().split('\n').length, PRINTED.length, shown);
  });

  it('runs: partner file from the CLI, then KYC approval, card issued, pool funded, purchase, exact amounts read back', { timeout: 120_000 }, async () => {
    const env = { ...process.env, ADMIN_TOKEN, ADMIN_URL: svc.baseUrl, DATA_DIR: '/nonexistent-quickstart' };
    const created = await run(process.execPath, [MAIN_JS, 'admin', 'partner-create', '--name', 'Acme Wallet', '--json'], { cwd: ROOT, env });
    const partnerFile = path.join(dir, 'partner.json');
    writeFileSync(partnerFile, created.stdout);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'examples/quickstart.ts', partnerFile], {
      cwd: ROOT, env: { ...env, BASE_URL: svc.baseUrl }, timeout: 100_000,
    });
    for (const line of PRINTED) assert.match(stdout, line);
  });

  it('a declined purchase prints its reason and detail (issue 32: an auth_url that is down)', { timeout: 120_000 }, async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const env = { ...process.env, ADMIN_TOKEN, ADMIN_URL: svc.baseUrl, DATA_DIR: '/nonexistent-quickstart' };
    const created = await run(process.execPath, [MAIN_JS, 'admin', 'partner-create', '--name', 'Down Wallet',
      '--auth-url', `http://127.0.0.1:${closedPort}/authorize`, '--json'], { cwd: ROOT, env });
    const partnerFile = path.join(dir, 'partner-down.json');
    writeFileSync(partnerFile, created.stdout);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'examples/quickstart.ts', partnerFile], {
      cwd: ROOT, env: { ...env, BASE_URL: svc.baseUrl }, timeout: 100_000,
    });
    assert.match(stdout, /^purchase +\S+ approved=false amount=12\.34 USD$/m);
    assert.match(stdout, /^declined +reason=PARTNER_TIMEOUT detail="[^"]+"$/m, stdout);
    assert.match(stdout, /testAuthUrl\(\)/);
  });

  it('review rvF: an empty or missing partner file (the admin command failed) is one line saying how to make it, not a stack trace', async () => {
    const empty = path.join(dir, 'partner-empty.json');
    writeFileSync(empty, ''); // what `... --json > partner.json` leaves when the service is not running
    for (const file of [empty, path.join(dir, 'no-such-partner.json')]) {
      const failed = await run(process.execPath, ['--import', 'tsx', 'examples/quickstart.ts', file], { cwd: ROOT, env: { ...process.env, BASE_URL: svc.baseUrl } })
        .then(() => null, (err: { code: number; stderr: string }) => err);
      assert.ok(failed, 'exits non-zero');
      assert.equal(failed.code, 2);
      assert.equal(failed.stderr.trim().split('\n').length, 1, failed.stderr);
      assert.match(failed.stderr, /is not a partner file with apiKey and secretKey: create it with npm run -s admin -- partner-create/);
    }
  });
});
