// test-database: once (the SDK as a package: packed, installed, used from JavaScript and TypeScript; the service calls it makes are asserted on both databases by: auth, organizations-onboarding, customers-profile, funding-pools, idempotency)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { internalReferences } from './helpers/internal-references.ts';
import { ROOT } from './helpers/compiled-service.ts';

/**
 * Issue 14, item 2: the SDK is a package. It is compiled, packed with `npm pack`, installed into an
 * empty project (offline: its dependencies come from this checkout's installed copies), and used
 * from plain JavaScript against the running service, and from TypeScript through its declarations.
 */
const run = promisify(execFile);
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The partner script, for both module systems: `load` is its first line (import or require). */
const partnerScript = (load: string) => `${load}
const net = netModule;

(async () => {
const { BASE_URL, API_KEY, SECRET_KEY, CLOSED_PORT } = process.env;
const client = new CardServiceClient({ baseUrl: BASE_URL, apiKey: API_KEY, secretKey: SECRET_KEY });
const out = {};
const settings = await client.partner.settings();
out.partnerId = settings.partnerId;
const org = await client.organizations.create({
  organizationRef: 'pkg-org', organizationName: 'Packaged Ltd', companyRegistrationNumber: 'C-9', countryCode: 'HK', fundingCurrencies: ['USD'],
});
out.orgStatus = org.status;
const deposit = await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: org.organizationId, currency: 'USD', amount: decimal('1234.56') });
const balance = await client.funding.balance(org.organizationId);
out.available = decimalText(balance.pools[0].available);
out.balanceJson = JSON.stringify(balance.pools[0]);
for (let i = 0; i < 4; i++) {
  await client.customers.create({ organizationId: org.organizationId, customerRef: 'emp-' + i, firstName: 'Emp', lastName: 'No' + i,
    phoneCountryCode: 'HK', phoneNumber: '9123456' + i, email: 'e' + i + '@example.com' });
}
out.iterated = [];
for await (const c of client.customers.listAll({ organizationId: org.organizationId, pageSize: 3 })) out.iterated.push(c.customerRef);
try {
  await client.organizations.create({ organizationRef: 'pkg-org', organizationName: 'Again', companyRegistrationNumber: 'C-9', countryCode: 'HK', fundingCurrencies: ['USD'] });
} catch (err) {
  out.duplicate = { isSdkError: err instanceof CardServiceError, code: err.code, httpStatus: err.httpStatus, requestId: err.requestId };
}
try { await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: org.organizationId, currency: 'USD', amount: 0.1 + 0.2 }); } catch (err) {
  out.float = { code: err.code, message: err.message };
}
try { new CardServiceClient({ baseUrl: BASE_URL, apiKey: undefined, secretKey: SECRET_KEY }); } catch (err) {
  out.noKey = { isSdkError: err instanceof CardServiceError, code: err.code, message: err.message };
}
try { new CardServiceClient({ apiKey: API_KEY, secretKey: SECRET_KEY }); } catch (err) { out.noUrl = { code: err.code, message: err.message }; }
try { new CardServiceClient({ baseUrl: BASE_URL, apiKey: API_KEY, secretKey: '' }); } catch (err) { out.noSecret = { code: err.code, message: err.message }; }
try { verifyWebhook({ apiKey: API_KEY, secretKey: SECRET_KEY, headers: {}, body: { eventId: 'x' } }); } catch (err) {
  out.parsedBody = { isWebhookError: err instanceof WebhookVerificationError, code: err.code, message: err.message };
}
const down = new CardServiceClient({ baseUrl: 'http://127.0.0.1:' + CLOSED_PORT, apiKey: API_KEY, secretKey: SECRET_KEY, maxRetries: 1, retryBaseDelayMs: 10 });
try { await down.partner.settings(); } catch (err) {
  out.down = { isSdkError: err instanceof CardServiceError, code: err.code, httpStatus: err.httpStatus, attempts: err.attempts };
}
const silent = net.createServer(() => {}).listen(0, '127.0.0.1');
await new Promise((r) => silent.once('listening', r));
const slow = new CardServiceClient({ baseUrl: 'http://127.0.0.1:' + silent.address().port, apiKey: API_KEY, secretKey: SECRET_KEY, maxRetries: 0 });
try { await slow.partner.settings({ timeoutMs: 200 }); } catch (err) { out.slow = { code: err.code, isSdkError: err instanceof CardServiceError, message: err.message }; }
silent.close();
out.depositOk = deposit !== undefined;
console.log(JSON.stringify(out));
process.exit(0);
})().catch((err) => { console.error(err); process.exit(1); });
`;
const ESM_LOAD = "import { CardServiceClient, CardServiceError, WebhookVerificationError, decimal, decimalText, verifyWebhook } from 'card-issuing-sdk';\nimport * as netModule from 'node:net';";
const CJS_LOAD = "const { CardServiceClient, CardServiceError, WebhookVerificationError, decimal, decimalText, verifyWebhook } = require('card-issuing-sdk');\nconst netModule = require('node:net');";

/**
 * The TypeScript partner: type-checked with tsc against the package's declarations (the ESM or the
 * CommonJS ones, by the file's module system: .mts or .cts), then compiled and run against the service.
 */
const TYPED_SCRIPT = `
import { CardServiceClient, CardServiceError, decimal, type Organization, type PageOf, type DepositParams } from 'card-issuing-sdk';

export function describeError(err: unknown): string {
  return err instanceof CardServiceError ? \`\${err.code} \${err.httpStatus} \${err.requestId ?? '-'}\` : 'other';
}

// Never called: the types refuse a JS number where the API takes an exact decimal (issue 32).
export function refusedAtCompileTime(client: CardServiceClient, organizationId: string): void {
  // @ts-expect-error a float amount does not type-check
  const bad: DepositParams = { subjectType: 'ORGANIZATION', subjectId: organizationId, currency: 'USD', amount: 12.5 };
  void bad;
  // @ts-expect-error per-call options are typed
  void client.partner.settings({ timeoutMs: 'soon' });
}

async function main(): Promise<void> {
  const client = new CardServiceClient({ baseUrl: process.env.BASE_URL!, apiKey: process.env.API_KEY!, secretKey: process.env.SECRET_KEY!, maxRetries: 1 });
  const body = { organizationRef: 'typed-org', organizationName: 'Typed Ltd', companyRegistrationNumber: 'T-1', countryCode: 'HK', fundingCurrencies: ['USD' as const] };
  // Per-call options: the caller's own Idempotency-Key; the second call answers the first one's response.
  const first: Organization = await client.organizations.create(body, { idempotencyKey: 'typed-key-1', timeoutMs: 10_000 });
  const again: Organization = await client.organizations.create(body, { idempotencyKey: 'typed-key-1' });
  await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: first.organizationId, currency: 'USD', amount: decimal('10.25') });
  const names: string[] = [];
  for await (const org of client.organizations.listAll({}, { timeoutMs: 5_000 })) names.push(org.organizationName);
  const page: PageOf<string> = { page: 1, pageSize: 1, total: 0, result: [] };
  const balance = await client.funding.balance(first.organizationId);
  console.log(JSON.stringify({ sameOrg: first.organizationId === again.organizationId, names, empty: page.result.length, pool: balance.pools[0] }));
}
main().catch((err) => { console.error(describeError(err), err); process.exit(1); });
`;

describe('SDK as an installable package (issues 14, 32)', () => {
  let svc: TestService;
  let dir: string;

  before(async () => {
    svc = await startService();
    dir = mkdtempSync(path.join(os.tmpdir(), 'sdk-pack-'));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await svc.close();
    await closeTestDatabase();
  });

  it('declares its package: name, version, exports for import and require with types, dependencies it imports', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'sdk', 'package.json'), 'utf8'));
    assert.equal(pkg.name, 'card-issuing-sdk');
    assert.match(pkg.version, /^\d+\.\d+\.\d+$/);
    assert.deepEqual(pkg.exports['.'], {
      import: { types: './dist/esm/index.d.ts', default: './dist/esm/index.js' },
      require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' },
    });
    assert.ok(pkg.dependencies['lossless-json'], 'lossless-json is declared');
    assert.ok(pkg.dependencies.typebox, 'typebox (types of the contract) is declared');
    assert.ok(pkg.dependencies.ws, 'ws (the push subscription on Node 20, which has no WebSocket client) is declared');
  });

  it('is built, packed, installed offline into ESM and CommonJS projects, and works from JavaScript and TypeScript in both',
    { timeout: 600_000 }, async () => {
      // A copy of sdk/ (the checkout stays clean); its node_modules link resolves typebox, lossless-json, typescript and @types/node.
      const sdk = path.join(dir, 'sdk');
      cpSync(path.join(ROOT, 'sdk'), sdk, { recursive: true, filter: (src) => !/[\\/](dist|node_modules)$/.test(src) });
      symlinkSync(path.join(ROOT, 'node_modules'), path.join(sdk, 'node_modules'));
      // `npm pack` runs prepack, the package's own build (ESM and CommonJS).
      // The packs are independent: side by side.
      await Promise.all([
        run('npm', ['pack', '--pack-destination', dir], { cwd: sdk }),
        ...['lossless-json', 'typebox', 'ws'].map((dep) => run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: path.join(ROOT, 'node_modules', dep) })),
      ]);
      const tarballs = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
      const sdkTarball = tarballs.find((f) => f.startsWith('card-issuing-sdk-'))!;
      assert.ok(sdkTarball, `packed: ${tarballs.join(', ')}`);
      const listing = (await run('tar', ['-tzf', path.join(dir, sdkTarball)])).stdout;
      for (const file of ['dist/esm/index.js', 'dist/esm/index.d.ts', 'dist/cjs/index.js', 'dist/cjs/index.d.ts', 'dist/cjs/package.json', 'test-vectors/signing.json']) {
        assert.ok(listing.includes(`package/${file}`), `${file} is in the tarball`);
      }
      assert.doesNotMatch(listing, /package\/client\.ts|node_modules/, 'only the build, no sources');

      // What a partner's editor shows (the declarations' doc comments), the README and the published
      // vectors speak the partner's language: no decision, section or issue numbers (issue 32, item 6).
      const unpacked = path.join(dir, 'unpacked');
      mkdirSync(unpacked);
      await run('tar', ['-xzf', path.join(dir, sdkTarball), '-C', unpacked]);
      const shipped = (await run('tar', ['-tzf', path.join(dir, sdkTarball)])).stdout.split('\n')
        .filter((f) => /\.d\.ts$|README\.md$|\.json$/.test(f) && !f.endsWith('package.json'));
      assert.ok(shipped.filter((f) => f.endsWith('.d.ts')).length > 40, `declarations: ${shipped.length}`);
      const cited: string[] = [];
      for (const file of shipped) {
        readFileSync(path.join(unpacked, file), 'utf8').split('\n').forEach((line, i) => {
          // Declarations: their doc comments; the README and the vectors: every line.
          if (file.endsWith('.d.ts') && !/^\s*(?:\/\*\*|\*)/.test(line)) return;
          for (const r of internalReferences(line)) cited.push(`${file}:${i + 1}: ${r}`);
        });
      }
      assert.deepEqual(cited, [], 'the package cites internal numbers; the build drops "(D9)"-style parentheses (sdk/build.mjs): rephrase the rest');

      const closedPort = await new Promise<number>((resolve) => {
        const server = net.createServer().listen(0, '127.0.0.1', () => {
          const { port } = server.address() as net.AddressInfo;
          server.close(() => resolve(port));
        });
      });

      // One partner project, installed once: an ES module (.mjs, .mts) imports the package and a CommonJS
      // one (.cjs, .cts) requires it, each resolving its own build and declarations.
      const app = path.join(dir, 'app');
      mkdirSync(app);
      writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'partner-app', version: '1.0.0', private: true }));
      await run('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', ...tarballs.map((t) => path.join(dir, t))], { cwd: app });
      const SYSTEMS = { module: { js: 'partner.mjs', ts: 'typed.mts', emitted: 'typed.mjs' }, commonjs: { js: 'partner.cjs', ts: 'typed.cts', emitted: 'typed.cjs' } };
      const envs = new Map<keyof typeof SYSTEMS, NodeJS.ProcessEnv>();

      // Plain JavaScript: import in an ES module, require() in a CommonJS one (side by side, a partner each).
      await Promise.all((['module', 'commonjs'] as const).map(async (type) => {
        const { partner } = await svc.newPartner();
        const env = { ...process.env, BASE_URL: svc.baseUrl, API_KEY: partner.apiKey!, SECRET_KEY: partner.secretKey!, CLOSED_PORT: String(closedPort) };
        envs.set(type, env);
        const script = SYSTEMS[type].js;
        writeFileSync(path.join(app, script), partnerScript(type === 'module' ? ESM_LOAD : CJS_LOAD));
        const { stdout } = await run(process.execPath, [script], { cwd: app, env }).catch((err) => assert.fail(`${type} JavaScript: ${err.stdout}${err.stderr}`));
        const out = JSON.parse(stdout.trim().split('\n').at(-1)!);
        assert.equal(out.partnerId, partner.partnerId, type);
        assert.equal(out.orgStatus, 'ACTIVE');
        assert.equal(out.available, '1234.56', 'exact amount through the packaged lossless parser');
        assert.match(out.balanceJson, /"available":"1234\.56"/, 'JSON.stringify of an amount is its exact decimal text');
        assert.doesNotMatch(out.balanceJson, /isLosslessNumber/);
        assert.deepEqual([...out.iterated].sort(), ['emp-0', 'emp-1', 'emp-2', 'emp-3'], 'the async iterator walked both pages');
        assert.equal(out.duplicate.isSdkError, true);
        assert.equal(out.duplicate.code, 'ORGANIZATION_REF_DUPLICATE');
        assert.equal(out.duplicate.httpStatus, 200);
        assert.match(out.duplicate.requestId, /^[0-9a-f-]{36}$/);
        assert.equal(out.float.code, 'INVALID_ARGUMENT', 'a JS float amount is refused before sending');
        assert.match(out.float.message, /body\.amount/, 'naming the field');
        assert.equal(out.noKey.isSdkError, true);
        assert.equal(out.noKey.code, 'INVALID_OPTIONS');
        assert.match(out.noKey.message, /option apiKey is missing/);
        assert.equal(out.noUrl.code, 'INVALID_OPTIONS');
        assert.match(out.noUrl.message, /option baseUrl is missing/);
        assert.equal(out.noSecret.code, 'INVALID_OPTIONS');
        assert.match(out.noSecret.message, /option secretKey is missing/);
        assert.equal(out.parsedBody.isWebhookError, true);
        assert.equal(out.parsedBody.code, 'RAW_BODY_REQUIRED');
        assert.match(out.parsedBody.message, /raw body/);
        assert.deepEqual(out.down, { isSdkError: true, code: 'NETWORK_ERROR', httpStatus: 0, attempts: 2 });
        assert.equal(out.slow.code, 'TIMEOUT');
        assert.equal(out.slow.isSdkError, true);
        // The client's own deadline is 30 s: only the per-call one says 200 ms.
        assert.match(out.slow.message, /within 200 ms/, 'the per-call timeoutMs applies');
      }));

      // TypeScript: one program type-checks the ES module (.mts) and the CommonJS module (.cts) against the
      // declarations each resolves, every declaration file included (skipLibCheck off), then both are run.
      // One program instead of one per module system: checking the declarations of the package's
      // dependencies is most of tsc's time, and they are the same for both.
      for (const { ts } of Object.values(SYSTEMS)) writeFileSync(path.join(app, ts), TYPED_SCRIPT);
      writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'Node16', moduleResolution: 'Node16', strict: true, skipLibCheck: false, outDir: 'out',
          types: ['node'], typeRoots: [path.join(ROOT, 'node_modules', '@types')] },
        files: Object.values(SYSTEMS).map((m) => m.ts),
      }));
      await run(process.execPath, [TSC, '-p', path.join(app, 'tsconfig.json')]).catch((err) => {
        assert.fail(`TypeScript use of the package does not compile:\n${err.stdout}${err.stderr}`);
      });
      await Promise.all((['module', 'commonjs'] as const).map(async (type) => {
        const emitted = readFileSync(path.join(app, 'out', SYSTEMS[type].emitted), 'utf8');
        assert.match(emitted, type === 'module' ? /from 'card-issuing-sdk'/ : /require\("card-issuing-sdk"\)/, `compiled as ${type}`);
        const typed = await run(process.execPath, [path.join('out', SYSTEMS[type].emitted)], { cwd: app, env: envs.get(type) }).catch((err) => assert.fail(`${type} TypeScript run: ${err.stdout}${err.stderr}`));
        const result = JSON.parse(typed.stdout.trim().split('\n').at(-1)!);
        assert.equal(result.sameOrg, true, 'the same idempotencyKey answered the first organization');
        assert.deepEqual(result.names.filter((n: string) => n === 'Typed Ltd'), ['Typed Ltd'], 'one organization, not two');
        assert.equal(result.pool.available, '10.25');
      }));
    });
});
