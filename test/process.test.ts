// test-database: none (never opens the test database: `npm test` runs it in the embedded pass only; test/run.ts)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cleanEnv, MAIN_JS, ROOT } from './helpers/compiled-service.ts';
import { seedDataDir } from './helpers/template.ts';
import { missingTool } from './helpers/tools.ts';

const MAIN = [process.execPath, [MAIN_JS]] as const;

describe('the service process', () => {
  it('when configuration is invalid, then it exits with code 2 and a clear message', () => {
    const bad = spawnSync(MAIN[0], [...MAIN[1], 'migrate'], { cwd: ROOT, env: cleanEnv({ PORT: 'eighty' }), encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /configuration error: PORT must be an integer/);
    const prod = spawnSync(MAIN[0], [...MAIN[1], 'migrate'], { cwd: ROOT, env: cleanEnv({ CARDSVC_ENV: 'production', ADMIN_TOKEN: 'x'.repeat(20) }), encoding: 'utf8' });
    assert.equal(prod.status, 2);
    assert.match(prod.stderr, /MASTER_KEY is required in production/);
  });

  it('starts on the embedded database in a fresh data folder, generates the admin token once, serves, and stops cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-proc-'));
    const port = 20000 + Math.floor(Math.random() * 20000);
    const child = spawn(MAIN[0], [...MAIN[1], 'serve'], { cwd: ROOT, env: cleanEnv({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' }) });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const base = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 300; i++) {
        const ok = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
        if (ok) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal((await fetch(`${base}/readyz`)).status, 200);
      const token = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
      // Issue 32: announced as a plain line of its own, never inside a JSON log line.
      assert.match(out, new RegExp(`^ADMIN_TOKEN=${token}$`, 'm'), 'the generated token is announced as a plain line');
      assert.ok(out.split('\n').filter((l) => l.includes(token)).every((l) => !l.startsWith('{')), 'not inside a JSON log line');
      assert.match(readFileSync(path.join(dataDir, 'master.key'), 'utf8').trim(), /^[0-9a-f]{64}$/);
      const res = await fetch(`${base}/internal/admin/v1/partners`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'proc-partner' }),
      });
      assert.equal(((await res.json()) as { code: string }).code, 'SYS_SUCCESS');
      // Not a terminal: each log line is one JSON object (issue 32: pretty only on a TTY).
      const logLines = out.split('\n').filter((l) => l.startsWith('{'));
      assert.ok(logLines.some((l) => JSON.parse(l).msg === 'service started'), 'JSON log lines when stdout is not a terminal');
      for (const line of logLines) JSON.parse(line);
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      assert.match(out, /shutting down/);
      // D33: the audit command re-derives the (empty) ledger from the same data folder.
      const audit = spawnSync(MAIN[0], [...MAIN[1], 'ledger-audit'], { cwd: ROOT, env: cleanEnv({ DATA_DIR: dataDir }), encoding: 'utf8' });
      assert.equal(audit.status, 0, audit.stderr);
      assert.equal(JSON.parse(audit.stdout).ok, true);
    } finally {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('LOG_FORMAT=pretty writes readable lines instead of JSON (what a terminal gets by default, issue 32)', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-pretty-'));
    seedDataDir(dataDir); // what is checked is the log format, not a first start
    const port = 20000 + Math.floor(Math.random() * 20000);
    const child = spawn(MAIN[0], [...MAIN[1], 'serve'], { cwd: ROOT, env: cleanEnv({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_FORMAT: 'pretty' }) });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      for (let i = 0; i < 300 && !out.includes('service started'); i++) await new Promise((r) => setTimeout(r, 200));
      const started = out.split('\n').find((l) => l.includes('service started'));
      assert.ok(started, out);
      assert.match(started, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO.*: service started$/, 'time, level, message');
      assert.ok(!out.split('\n').some((l) => l.startsWith('{')), 'no JSON lines');
      assert.match(out, /^ADMIN_TOKEN=[0-9a-f]{48}$/m);
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  // util-linux's script(1) (Debian's essential bsdutils) runs the service on a pseudo-terminal: what `npm start` gets in a terminal.
  const hasScript = spawnSync('script', ['--version']).status === 0;
  it('on a terminal, without LOG_FORMAT, the log is readable coloured lines (issue 32)', { skip: missingTool(hasScript ? null : 'script(1) is not on this machine') }, async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-tty-'));
    seedDataDir(dataDir);
    const port = 20000 + Math.floor(Math.random() * 20000);
    const env = cleanEnv({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
    delete env.LOG_FORMAT;
    const child = spawn('script', ['-qfec', `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN_JS)} serve`, '/dev/null'], { cwd: ROOT, env });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      for (let i = 0; i < 300 && !out.includes('service started'); i++) await new Promise((r) => setTimeout(r, 200));
      const lines = out.replace(/\r/g, '').split('\n');
      const started = lines.find((l) => l.includes('service started'));
      assert.ok(started, out);
      assert.match(started, /\x1b\[3\dm/, 'coloured for the terminal');
      assert.match(started.replace(/\x1b\[[0-9;]*m/g, ''), /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO.*: service started$/, 'time, level, message');
      assert.ok(!lines.some((l) => l.startsWith('{')), 'no JSON lines');
      // Stop the service itself (script(1) would kill it): its pid is script's child.
      const pid = Number(spawnSync('ps', ['--ppid', String(child.pid), '-o', 'pid='], { encoding: 'utf8' }).stdout.trim());
      assert.ok(pid > 0, 'the service process under script(1)');
      process.kill(pid, 'SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
