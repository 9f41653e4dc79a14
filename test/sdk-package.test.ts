import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';

/**
 * Issue 14, item 2: the SDK is a package. It is compiled, packed with `npm pack`, installed into an
 * empty project (offline: its dependencies come from this checkout's installed copies), and used
 * from plain JavaScript against the running service, and from TypeScript through its declarations.
 */
const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const PARTNER_SCRIPT = `
import { CardServiceClient, CardServiceError, decimal, decimalText } from 'card-issuing-sdk';
import net from 'node:net';

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
const down = new CardServiceClient({ baseUrl: 'http://127.0.0.1:' + CLOSED_PORT, apiKey: API_KEY, secretKey: SECRET_KEY, maxRetries: 1, retryBaseDelayMs: 10 });
try { await down.partner.settings(); } catch (err) {
  out.down = { isSdkError: err instanceof CardServiceError, code: err.code, httpStatus: err.httpStatus, attempts: err.attempts };
}
const silent = net.createServer(() => {}).listen(0, '127.0.0.1');
await new Promise((r) => silent.once('listening', r));
const slow = new CardServiceClient({ baseUrl: 'http://127.0.0.1:' + silent.address().port, apiKey: API_KEY, secretKey: SECRET_KEY, timeoutMs: 200, maxRetries: 0 });
try { await slow.partner.settings(); } catch (err) { out.slow = { code: err.code, isSdkError: err instanceof CardServiceError }; }
silent.close();
out.depositOk = deposit !== undefined;
console.log(JSON.stringify(out));
process.exit(0);
`;

const TYPED_SCRIPT = `
import { CardServiceClient, CardServiceError, type Organization, type PageOf } from 'card-issuing-sdk';
const client = new CardServiceClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', secretKey: 's', timeoutMs: 1000, maxRetries: 1 });
export async function names(): Promise<string[]> {
  const out: string[] = [];
  for await (const org of client.organizations.listAll()) {
    const o: Organization = org;
    out.push(o.organizationName);
  }
  const page: PageOf<string> = { page: 1, pageSize: 1, total: 0, result: [] };
  void page;
  return out;
}
export function describe(err: unknown): string {
  return err instanceof CardServiceError ? \`\${err.code} \${err.httpStatus} \${err.requestId ?? '-'}\` : 'other';
}
`;

describe('SDK as an installable package (issue 14)', () => {
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

  it('declares its package: name, version, exports with types, dependencies it imports', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'sdk', 'package.json'), 'utf8'));
    assert.equal(pkg.name, 'card-issuing-sdk');
    assert.match(pkg.version, /^\d+\.\d+\.\d+$/);
    assert.equal(pkg.exports['.'].types, './dist/index.d.ts');
    assert.equal(pkg.exports['.'].import, './dist/index.js');
    assert.ok(pkg.dependencies['lossless-json'], 'lossless-json is declared');
    assert.ok(pkg.dependencies.typebox, 'typebox (types of the contract) is declared');
    assert.ok(pkg.dependencies.ws, 'ws (the push subscription on Node 20, which has no WebSocket client) is declared');
  });

  it('is compiled, packed, installed into an empty project offline, and works from plain JavaScript and TypeScript', { timeout: 180_000 }, async () => {
    // A copy of sdk/ (the checkout stays clean); its node_modules link resolves typebox, lossless-json and @types/node.
    const sdk = path.join(dir, 'sdk');
    cpSync(path.join(ROOT, 'sdk'), sdk, { recursive: true, filter: (src) => !/[\\/](dist|node_modules)$/.test(src) });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(sdk, 'node_modules'));
    await run(process.execPath, [TSC, '-p', path.join(sdk, 'tsconfig.json')]);
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: sdk });
    for (const dep of ['lossless-json', 'typebox', 'ws']) {
      await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: path.join(ROOT, 'node_modules', dep) });
    }
    const tarballs = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
    const sdkTarball = tarballs.find((f) => f.startsWith('card-issuing-sdk-'))!;
    assert.ok(sdkTarball, `packed: ${tarballs.join(', ')}`);
    const listing = (await run('tar', ['-tzf', path.join(dir, sdkTarball)])).stdout;
    assert.match(listing, /package\/dist\/index\.js/);
    assert.match(listing, /package\/dist\/index\.d\.ts/);
    assert.doesNotMatch(listing, /package\/client\.ts|node_modules/, 'only the build, no sources');

    const app = path.join(dir, 'app');
    mkdirSync(app);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'partner-app', version: '1.0.0', private: true, type: 'module' }));
    await run('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', ...tarballs.map((t) => path.join(dir, t))], { cwd: app });

    const closedPort = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const { partner } = await svc.newPartner();
    writeFileSync(path.join(app, 'partner.mjs'), PARTNER_SCRIPT);
    const { stdout } = await run(process.execPath, ['partner.mjs'], {
      cwd: app, env: { ...process.env, BASE_URL: svc.baseUrl, API_KEY: partner.apiKey!, SECRET_KEY: partner.secretKey!, CLOSED_PORT: String(closedPort) },
    });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!);
    assert.equal(out.partnerId, partner.partnerId);
    assert.equal(out.orgStatus, 'ACTIVE');
    assert.equal(out.available, '1234.56', 'exact amount through the packaged lossless parser');
    assert.deepEqual([...out.iterated].sort(), ['emp-0', 'emp-1', 'emp-2', 'emp-3'], 'the async iterator walked both pages');
    assert.equal(out.duplicate.isSdkError, true);
    assert.equal(out.duplicate.code, 'ORGANIZATION_REF_DUPLICATE');
    assert.equal(out.duplicate.httpStatus, 200);
    assert.match(out.duplicate.requestId, /^[0-9a-f-]{36}$/);
    assert.deepEqual(out.down, { isSdkError: true, code: 'NETWORK_ERROR', httpStatus: 0, attempts: 2 });
    assert.deepEqual(out.slow, { code: 'TIMEOUT', isSdkError: true });

    // TypeScript: the declarations resolve through the package's exports.
    writeFileSync(path.join(app, 'typed.ts'), TYPED_SCRIPT);
    writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false,
        types: ['node'], typeRoots: [path.join(ROOT, 'node_modules', '@types')] },
      files: ['typed.ts'],
    }));
    await run(process.execPath, [TSC, '-p', path.join(app, 'tsconfig.json')]).catch((err) => {
      assert.fail(`TypeScript use of the package does not compile:\n${err.stdout}${err.stderr}`);
    });
  });
});
