// test-database: none (never opens the test database: `npm test` runs it in the embedded pass only; test/run.ts)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cleanEnv, MAIN_JS, ROOT } from './helpers/compiled-service.ts';
import { seedDataDir } from './helpers/template.ts';
import { missingTool } from './helpers/tools.ts';
import { lockDataFolder } from '../src/platform/db/open.ts';

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
      assert.match(started, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO.*: service started \{"env":"sandbox",.*\}$/, 'time, level, message, its fields on the same line');
      assert.ok(!out.split('\n').some((l) => l.startsWith('{')), 'no JSON lines');
      // Review rvF: one line per request in a terminal (it was seven: one per field).
      await fetch(`http://127.0.0.1:${port}/healthz`);
      for (let i = 0; i < 50 && !out.includes('request completed'); i++) await new Promise((r) => setTimeout(r, 100));
      assert.match(out, /^\[[\d:.]+\] INFO.*: request completed \{"reqId":"[^"]+","method":"GET","url":"\/healthz","statusCode":200,.*\}$/m);
      assert.match(out, /^ADMIN_TOKEN=[0-9a-f]{48}$/m);
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  /** One line on stderr, no stack trace, no JSON dump (review rvF: what a new operator meets when a start fails). */
  function assertOneLine(stderr: string, pattern: RegExp): void {
    const lines = stderr.trim().split('\n');
    assert.equal(lines.length, 1, `one line, got:\n${stderr}`);
    assert.match(lines[0], pattern);
    assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
  }

  it('a start that cannot work says why in one line: port in use, database unreachable, data folder already open (review rvF)', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-fail-')); // not seeded: a first start, its migrations logged
    const blocker = net.createServer();
    const busyPort = await new Promise<number>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as net.AddressInfo).port)));
    const run = (env: Record<string, string>) => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(MAIN[0], [...MAIN[1], 'serve'], { cwd: ROOT, env: cleanEnv({ HOST: '127.0.0.1', ...env }) });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
    });
    let first: ReturnType<typeof spawn> | null = null;
    try {
      const inUse = await run({ DATA_DIR: dataDir, PORT: String(busyPort), LOG_FORMAT: 'pretty' });
      assert.equal(inUse.code, 1);
      // A first start in a terminal listed every migration and function file, one per line (about 80 lines).
      assert.match(inUse.stdout, /INFO.*: migrations applied \{"count":\d+,"latest":"\d{3}-[a-z-]+"\}\n/);
      assert.doesNotMatch(inUse.stdout, /^\s+"\d{3}-/m, 'no migration listed line by line');
      assertOneLine(inUse.stderr, new RegExp(`^error: port ${busyPort} on 127\\.0\\.0\\.1 is already in use .*set PORT$`));
      assert.ok(!existsSync(path.join(dataDir, 'pgdata.lock')), 'the data folder is released');

      const noDb = await run({ DATABASE_URL: `postgres://nobody:s3cret@127.0.0.1:${busyPort + 0}/cards`, MASTER_KEY: 'a'.repeat(64), ADMIN_TOKEN: 'x'.repeat(20), PORT: '1' });
      assert.equal(noDb.code, 1);
      assertOneLine(noDb.stderr, new RegExp(`^error: cannot open the database at DATABASE_URL 127\\.0\\.0\\.1:${busyPort}/cards: .*DATABASE_URL is right$`));
      assert.doesNotMatch(noDb.stderr, /s3cret|nobody/, 'never the credentials of the URL');

      // docs/operations.md: one process at a time may open a data folder (PGlite has no lock of its own).
      const port = 20000 + Math.floor(Math.random() * 20000);
      first = spawn(MAIN[0], [...MAIN[1], 'serve'], { cwd: ROOT, env: cleanEnv({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' }) });
      for (let i = 0; i < 300 && !(await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 200));
      const second = await run({ DATA_DIR: dataDir, PORT: String(port + 1) });
      assert.equal(second.code, 1);
      assertOneLine(second.stderr, new RegExp(`^error: the embedded database in .*pgdata is in use by process ${first.pid} .*set DATA_DIR to another folder$`));
      const audit = spawnSync(MAIN[0], [...MAIN[1], 'ledger-audit'], { cwd: ROOT, env: cleanEnv({ DATA_DIR: dataDir }), encoding: 'utf8' });
      assert.equal(audit.status, 1);
      assertOneLine(audit.stderr, /in use by process/);
      const exited = new Promise((resolve) => first!.on('exit', resolve));
      first.kill('SIGTERM');
      assert.equal(await exited, 0);
      assert.ok(!existsSync(path.join(dataDir, 'pgdata.lock')), 'released at shutdown');
    } finally {
      first?.kill('SIGKILL');
      blocker.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a data folder lock left by a dead process, or holding this very pid (a container restarted after a crash), is taken over', () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cardsvc-lock-'));
    const pgdata = path.join(dataDir, 'pgdata');
    try {
      for (const stale of [process.pid, 2 ** 22 + 1]) { // this process's own pid; a pid above Linux's pid_max (no process)
        writeFileSync(`${pgdata}.lock`, `${stale}\n`);
        const release = lockDataFolder(pgdata);
        assert.equal(readFileSync(`${pgdata}.lock`, 'utf8'), `${process.pid}\n`);
        release();
        assert.ok(!existsSync(`${pgdata}.lock`));
      }
    } finally {
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
      assert.match(started.replace(/\x1b\[[0-9;]*m/g, ''), /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO.*: service started \{.*\}$/, 'time, level, message, fields');
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
