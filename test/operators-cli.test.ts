// test-database: once (the operator commands of the command line; creating operators and verifying the audit trail are asserted on both databases by: operators)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ADMIN_TOKEN, closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { ROOT, MAIN_JS } from './helpers/compiled-service.ts';

/** Issue 29: operator accounts and the audit trail's verification from the admin command line (a child process). */

function admin(svc: TestService, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN_JS, 'admin', ...args], {
      cwd: ROOT, env: { ...process.env, ADMIN_TOKEN, ADMIN_URL: svc.baseUrl, DATA_DIR: '/nonexistent-cli-test' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => { stderr += c; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe('operator commands (issue 29)', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService();
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('operator-create prints the credentials once; the action is in the audit trail as the CLI; audit-verify exits 0, then 1 after tampering', async () => {
    const created = await admin(svc, ['--json', 'operator-create', '--name', 'cli.created', '--role', 'risk']);
    assert.equal(created.code, 0, created.stderr);
    const data = JSON.parse(created.stdout);
    assert.equal(data.role, 'risk');
    assert.match(data.credentials.totpUri, /^otpauth:\/\/totp\//);
    assert.equal((await admin(svc, ['operator-create', '--name', 'cli.other', '--role', 'owner'])).code, 2, 'an unknown role is a usage error');

    const trail = await admin(svc, ['--json', 'audit-trail', '--target', 'cli.created']);
    assert.equal(trail.code, 0, trail.stderr);
    const [entry] = JSON.parse(trail.stdout.split('\nmore:')[0]);
    assert.equal(entry.actor, 'admin-token');
    assert.equal(entry.channel, 'cli');
    assert.ok(!trail.stdout.includes(data.credentials.password));

    const ok = await admin(svc, ['audit-verify']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /verifies/);
    await svc.db.query(`UPDATE audit_trail SET actor = 'someone.else' WHERE seq = (SELECT min(seq) FROM audit_trail)`);
    const broken = await admin(svc, ['audit-verify']);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /audit trail broken at entry \d+: .*modified/);
  });
});
