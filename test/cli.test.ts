// test-database: once (the command line: arguments, output, exit codes; the admin API behind it is asserted on both databases by: foundation, credentials, funding-alerts, cards-manage)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { ADMIN_TOKEN, closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { ROOT, MAIN_JS } from './helpers/compiled-service.ts';
import { cardWorld, issueCard } from './helpers/cards.ts';

/** Issue 14, item 1: the operator command line, run as an operator runs it (a child process). */

interface Run { code: number; stdout: string; stderr: string }

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN_JS, ...args], {
      cwd: ROOT, env: { ...process.env, ADMIN_TOKEN, DATA_DIR: '/nonexistent-cli-test', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => { stderr += c; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

function assertOneLineFailure(run: Run, code: number, pattern: RegExp): void {
  assert.equal(run.code, code, `exit code; stderr: ${run.stderr}`);
  assert.match(run.stderr, pattern);
  assert.doesNotMatch(run.stderr, /^\s+at /m, 'no stack trace');
  assert.doesNotMatch(run.stderr, /TypeError|SyntaxError/);
}

describe('admin command line (issue 14)', () => {
  let svc: TestService;
  let admin: (args: string[], env?: Record<string, string>) => Promise<Run>;

  before(async () => {
    svc = await startService();
    admin = (args, env = {}) => cli(['admin', ...args], { ADMIN_URL: svc.baseUrl, ...env });
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('answers --help, -h and help for the tool, admin and each command', async () => {
    // Independent invocations run side by side (each is a process start).
    const asked = [['--help'], ['admin', '--help'], ['admin', '-h'], ['admin', 'help'], ['admin', 'partner-create', '--help'], ['admin', 'help', 'partner-update']];
    const [update, ...runs] = await Promise.all([cli(['admin', 'partner-update', '--help']), ...asked.map((args) => cli(args))]);
    asked.forEach((args, i) => {
      const run = runs[i];
      assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stdout, /Usage: cardsvc/, args.join(' '));
      assert.equal(run.stderr, '');
    });
    for (const option of ['--partner-id', '--pci', '--webhook-url', '--api-ip', '--body']) assert.ok(update.stdout.includes(option), option);
  });

  it('refuses unknown commands, unknown options and malformed values with one line and exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['nosuch'], /unknown command 'nosuch'/],
      [['partner-update', '--partner-id', 'p1', '--pci-allowlist'], /unknown option '--pci-allowlist'/],
      [['partner-create', '--name', 'X', '--body', '{"pciCertified":tru'], /--body.*not valid JSON/],
      [['partner-update', '--partner-id', 'p1'], /nothing to change/],
      [['partner-create'], /required option '--name <name>' not specified/],
    ];
    const runs = await Promise.all(cases.map(([args]) => admin(args)));
    cases.forEach(([, pattern], i) => assertOneLineFailure(runs[i], 2, pattern));
  });

  it('partner-create and partner-update send every documented option; the answer is text by default, JSON with --json', async () => {
    const created = await admin(['partner-create', '--name', 'CLI Wallet', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const partner = JSON.parse(created.stdout);
    assert.equal(partner.pciCertified, false);
    assert.match(partner.secretKey, /^[A-Za-z0-9]{32}$/);

    const updated = await admin(['partner-update', '--partner-id', partner.partnerId, '--pci', '--webhook-url', 'https://acme.example/hooks',
      '--api-ip', '203.0.113.7', '--api-ip', '198.51.100.0/24', '--retrieval-ip', '192.0.2.1', '--secure-card-iv-mode', 'PER_FIELD']);
    assert.equal(updated.code, 0, updated.stderr);
    assert.match(updated.stdout, /^Partner updated\./);
    assert.match(updated.stdout, /pciCertified\s+true/);
    assert.doesNotMatch(updated.stdout, /^\{/, 'human-readable, not JSON');
    const view = await svc.admin.call<any>('GET', '/internal/admin/v1/partners/detail', { query: { partnerId: partner.partnerId } });
    assert.equal(view.pciCertified, true);
    assert.equal(view.webhookUrl, 'https://acme.example/hooks');
    assert.deepEqual(view.ipWhitelist.api, ['203.0.113.7', '198.51.100.0/24']);
    assert.deepEqual(view.ipWhitelist.retrieval, ['192.0.2.1']);
    assert.equal(view.secureCardIvMode, 'PER_FIELD');

    const cleared = await admin(['partner-update', '--partner-id', partner.partnerId, '--no-pci', '--webhook-url', 'none']);
    assert.equal(cleared.code, 0, cleared.stderr);
    const after = await svc.admin.call<any>('GET', '/internal/admin/v1/partners/detail', { query: { partnerId: partner.partnerId } });
    assert.equal(after.pciCertified, false);
    assert.equal(after.webhookUrl, null);
    assert.deepEqual(after.ipWhitelist.api, ['203.0.113.7', '198.51.100.0/24'], 'kinds not given are kept');

    const listed = await admin(['partner-list']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /partnerId/);
    assert.ok(listed.stdout.includes(partner.partnerId));
  });

  it('a typo inside --body is refused by the admin API (unknown field) with exit 2 and changes nothing', async () => {
    const { partner } = await svc.newPartner();
    const typo = await admin(['partner-update', '--partner-id', partner.partnerId, '--body', '{"pciAllowlist":true}']);
    assertOneLineFailure(typo, 2, /DAPI_PARAM_INVALID: Invalid parameter pciAllowlist: is not a known field/);
    const nested = await admin(['partner-update', '--partner-id', partner.partnerId, '--body', '{"ipWhitelist":{"apis":["203.0.113.7"]}}']);
    assertOneLineFailure(nested, 2, /ipWhitelist\.apis/);
    const view = await svc.admin.call<any>('GET', '/internal/admin/v1/partners/detail', { query: { partnerId: partner.partnerId } });
    assert.equal(view.pciCertified, false);
    assert.deepEqual(view.ipWhitelist.api, []);
    // The admin API itself refuses it too, whoever calls it.
    const raw = await svc.admin.raw('POST', '/internal/admin/v1/partners/update', { body: { partnerId: partner.partnerId, pciAllowlist: true } });
    assert.equal(raw.envelope.code, 'DAPI_PARAM_INVALID');
  });

  it('a service that is down, a wrong token and a business refusal are one line and exit 1', async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const down = await admin(['partner-list'], { ADMIN_URL: `http://127.0.0.1:${closed}` });
    assertOneLineFailure(down, 1, /cannot reach the service at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
    assertOneLineFailure(await admin(['partner-list'], { ADMIN_TOKEN: 'wrong-token-0123456789' }), 1, /SYS_UNAUTHORIZED/);
    assertOneLineFailure(await admin(['partner-show', '--partner-id', 'pt-missing']), 1, /PARTNER_INVALID/);
    // Review rvF: the code was printed twice (`PARTNER_INVALID: PARTNER_INVALID: ...`).
    assert.match((await admin(['partner-show', '--partner-id', 'pt-missing'])).stderr, /^error: PARTNER_INVALID: [^:]+$/m);
  });

  it('review rvF: an unknown top-level command names itself, a malformed --url is a usage error, a missing token names the folder searched', async () => {
    const [top, url, token] = await Promise.all([
      cli(['nosuch']),
      admin(['partner-list'], { ADMIN_URL: 'localhost:8080x' }),
      admin(['partner-list'], { ADMIN_TOKEN: '', DATA_DIR: '/nonexistent-rvF' }),
    ]);
    // It read as `serve nosuch`: "too many arguments for 'serve'".
    assertOneLineFailure(top, 2, /^error: unknown command 'nosuch'/);
    assert.doesNotMatch(top.stderr, /serve/);
    // It was "cannot reach the service at ... is it running?", exit 1.
    assertOneLineFailure(url, 2, /--url <url>.*'localhost:8080x' from env 'ADMIN_URL' is invalid\. must be an http:\/\/ or https:\/\/ URL/);
    assertOneLineFailure(token, 2, /no generated token was found in the data folder \(\/nonexistent-rvF\/admin-token\)/);
  });

  it('help marks required options; call takes a route under /internal/admin/v1/ as its help says (issue 32)', async () => {
    const help = await cli(['admin', 'credential-link', '--help']);
    for (const option of ['--partner-id', '--email', '--retrieval-ip']) assert.match(help.stdout, new RegExp(`${option} \\S+\\s+\\(required\\)`), option);
    const update = await cli(['admin', 'partner-update', '--help']);
    assert.match(update.stdout, /--partner-id <id>\s+\(required\) the partner/);
    assert.doesNotMatch(update.stdout, /--webhook-url <url>\s+\(required\)/, 'optional ones are not marked');

    const { partner } = await svc.newPartner();
    for (const route of ['partners', '/partners', '/internal/admin/v1/partners', 'internal/admin/v1/partners']) {
      const listed = await admin(['call', 'GET', route, '--json']);
      assert.equal(listed.code, 0, `${route}: ${listed.stderr}`);
      assert.ok(JSON.parse(listed.stdout).result.some((p: { partnerId: string }) => p.partnerId === partner.partnerId), route);
    }
    const detail = await admin(['call', 'get', `partners/detail?partnerId=${partner.partnerId}`, '--json']);
    assert.equal(detail.code, 0, detail.stderr);
    assert.equal(JSON.parse(detail.stdout).partnerId, partner.partnerId);
    assertOneLineFailure(await admin(['call', 'GET', '../../open-api/partner/v1/settings']), 2, /not an admin route/);
    assertOneLineFailure(await admin(['call', 'DELETE', 'partners']), 2, /must be GET or POST/);
  });

  it('partner-update prints what changed; outbox-mail in text shows each mail whole, the retrieval link uncut (issue 32)', async () => {
    const { partner } = await svc.newPartner();
    const updated = await admin(['partner-update', '--partner-id', partner.partnerId, '--pci', '--webhook-url', 'https://acme.example/hooks', '--api-ip', '203.0.113.7']);
    assert.equal(updated.code, 0, updated.stderr);
    assert.match(updated.stdout, /^Partner updated\. Changed:$/m);
    assert.match(updated.stdout, /^  pciCertified: false -> true$/m);
    assert.match(updated.stdout, /^  webhookUrl: - -> https:\/\/acme\.example\/hooks$/m);
    assert.match(updated.stdout, /^  ipWhitelist\.api: \[\] -> \["203\.0\.113\.7"\]$/m);
    const again = await admin(['partner-update', '--partner-id', partner.partnerId, '--pci']);
    assert.match(again.stdout, /^Partner updated: nothing changed/m);

    const email = `ops-${partner.partnerId}@partner.example`;
    const linked = await admin(['credential-link', '--partner-id', partner.partnerId, '--email', email, '--retrieval-ip', '192.0.2.10']);
    assert.equal(linked.code, 0, linked.stderr);
    const json = await admin(['outbox-mail', '--recipient', email, '--json']);
    assert.equal(json.code, 0, json.stderr);
    const mail = JSON.parse(json.stdout).result[0];
    const link = /https?:\/\/\S+/.exec(mail.body)?.[0];
    assert.ok(link && link.length > 40, `a long retrieval link in the mail: ${mail.body}`);
    const text = await admin(['outbox-mail', '--recipient', email]);
    assert.equal(text.code, 0, text.stderr);
    assert.ok(text.stdout.includes(link), `the whole link in text mode:\n${text.stdout}`);
    assert.match(text.stdout, new RegExp(`^to +${email.replace(/[.]/g, '\\.')}$`, 'm'));
  });

  it('card-keys-reencrypt runs batch after batch until no card is left under a retired key', async () => {
    const world = await cardWorld(svc);
    for (let i = 0; i < 3; i++) await issueCard(svc, world);
    const rotated = await admin(['card-keys-rotate', '--json']);
    assert.equal(rotated.code, 0, rotated.stderr);
    const newKey = JSON.parse(rotated.stdout).keyId;
    const run = await admin(['card-keys-reencrypt', '--batch', '1', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const summary = JSON.parse(run.stdout);
    assert.equal(summary.remaining, 0);
    assert.equal(summary.activeKeyId, newKey);
    assert.ok(summary.reencrypted >= 3, `re-encrypted ${summary.reencrypted}`);
    const check = await svc.admin.call<any>('POST', '/internal/admin/v1/card-keys/reencrypt', { body: { limit: 1 } });
    assert.equal(check.remaining, 0);
    assert.equal(check.reencrypted, 0);
    const human = await admin(['card-keys-reencrypt']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /All cards are under the active PAN data key/);
  });
});
