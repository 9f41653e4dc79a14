import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { migrate } from './platform/db/migrate.ts';
import { openDatabase } from './platform/db/open.ts';
import { startWorkers } from './workers.ts';
import { auditLedger } from './domains/ledger/index.ts';

const USAGE = `Usage:
  cardsvc serve                      start the HTTP service (migrations are applied first)
  cardsvc migrate                    apply pending database migrations and exit
  cardsvc ledger-audit [partnerId]   re-derive every ledger balance from its postings (D33); exit 1 on any finding
  cardsvc admin <command> [options]  operator commands over the admin API (see docs/operations.md)
`;

/**
 * Log lines are collected up to this size and written with one system call (one write per line
 * cost about 4 us of kernel time per request under load); the buffer is flushed at least every
 * LOG_FLUSH_INTERVAL_MS, after start-up, at shutdown and on exit.
 */
const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_INTERVAL_MS = 250;

async function serve(): Promise<void> {
  const { config, notices } = loadConfig();
  const db = await openDatabase(config);
  const applied = await migrate(db);
  const logStream = pino.destination({ dest: 1, sync: true, minLength: LOG_BUFFER_BYTES });
  setInterval(() => logStream.flushSync(), LOG_FLUSH_INTERVAL_MS).unref();
  process.on('exit', () => logStream.flushSync());
  const { app, ctx } = await buildApp({ config, db, logStream });
  for (const notice of notices) app.log.warn(notice);
  if (applied.length) app.log.info({ applied }, 'migrations applied');
  const workers = config.workers ? startWorkers(ctx, app.log) : null;
  await app.listen({ port: config.port, host: config.host });
  app.log.info({ env: config.env, database: db.kind, port: config.port }, 'service started');
  logStream.flushSync();

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    await app.close(); // stops accepting, waits for in-flight requests
    await workers?.stop();
    await db.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

async function migrateOnly(): Promise<void> {
  const { config } = loadConfig();
  const db = await openDatabase(config);
  const applied = await migrate(db);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  await db.close();
}

async function ledgerAudit(partnerId: string | undefined): Promise<void> {
  const { config } = loadConfig();
  const db = await openDatabase(config);
  try {
    const report = await auditLedger(db, { partnerId });
    console.log(JSON.stringify(report, null, 2));
    if (!report.ok) process.exitCode = 1;
  } finally {
    await db.close();
  }
}

function adminToken(): string {
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const file = path.join(path.resolve(process.env.DATA_DIR || './data'), 'admin-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  throw new ConfigError('ADMIN_TOKEN is not set and no generated token was found in the data folder');
}

async function admin(args: string[]): Promise<void> {
  const [command, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      url: { type: 'string', default: process.env.ADMIN_URL || `http://127.0.0.1:${process.env.PORT || 8080}` },
      name: { type: 'string' },
      'partner-id': { type: 'string' },
      pci: { type: 'boolean' },
      'webhook-url': { type: 'string' },
      'auth-url': { type: 'string' },
      'api-ip': { type: 'string', multiple: true },
      email: { type: 'string' },
      'retrieval-ip': { type: 'string' },
      ip: { type: 'string', multiple: true },
      'key-id': { type: 'string' },
      json: { type: 'string' },
    },
  });
  const call = async (method: 'GET' | 'POST', route: string, body?: unknown) => {
    const res = await fetch(values.url + route, {
      method,
      headers: { authorization: `Bearer ${adminToken()}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    console.log(text);
    const parsed = JSON.parse(text) as { code?: string };
    if (parsed.code !== 'SYS_SUCCESS') process.exitCode = 1;
  };
  const extra = values.json ? (JSON.parse(values.json) as Record<string, unknown>) : {};
  switch (command) {
    case 'partner-create':
      return call('POST', '/internal/admin/v1/partners', {
        name: values.name,
        pciCertified: values.pci ?? false,
        webhookUrl: values['webhook-url'],
        authUrl: values['auth-url'],
        ipWhitelist: values['api-ip'] ? { api: values['api-ip'] } : undefined,
        ...extra,
      });
    case 'partner-update':
      return call('POST', '/internal/admin/v1/partners/update', { partnerId: values['partner-id'], ...extra });
    case 'partner-list':
      return call('GET', '/internal/admin/v1/partners');
    case 'partner-show':
      return call('GET', `/internal/admin/v1/partners/detail?partnerId=${encodeURIComponent(values['partner-id'] ?? '')}`);
    case 'credential-link':
      return call('POST', '/internal/admin/v1/credential-links', {
        partnerId: values['partner-id'], email: values.email, retrievalIp: values['retrieval-ip'],
      });
    case 'network-key-create':
      return call('POST', '/internal/admin/v1/network-keys', { name: values.name, ipAllowlist: values.ip ?? [] });
    case 'network-key-list':
      return call('GET', '/internal/admin/v1/network-keys');
    case 'network-key-revoke':
      return call('POST', '/internal/admin/v1/network-keys/revoke', { networkKeyId: values['key-id'] });
    case 'call': {
      const [method, route] = positionals;
      if ((method !== 'GET' && method !== 'POST') || !route) throw new ConfigError('usage: admin call GET|POST /internal/admin/v1/... [--json BODY]');
      return call(method, route, method === 'POST' ? extra : undefined);
    }
    default:
      console.error(`unknown admin command "${command ?? ''}"\ncommands: partner-create, partner-update, partner-list, partner-show, credential-link, network-key-create, network-key-list, network-key-revoke, call`);
      process.exitCode = 2;
  }
}

async function main(): Promise<void> {
  const [command, ...args] = process.argv.slice(2);
  if (command === 'serve' || command === undefined) return serve();
  if (command === 'migrate') return migrateOnly();
  if (command === 'ledger-audit') return ledgerAudit(args[0]);
  if (command === 'admin') return admin(args);
  process.stderr.write(USAGE);
  process.exitCode = 2;
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    console.error(`configuration error: ${err.message}`);
    process.exit(2);
  }
  console.error(err);
  process.exit(1);
});
