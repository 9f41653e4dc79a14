import type { Command } from 'commander';
import pino, { type DestinationStream } from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import type { CliIo } from './cli/admin.ts';
import { startTracing } from './platform/tracing.ts';
import { StartupError } from './platform/startup-error.ts';

// The service (app, workers, database) is imported by the commands that use it, so the operator
// commands, which only call the admin API, start without it (issue 33: tests spawn them by the dozen).


/**
 * Log lines are collected up to this size and written with one system call (one write per line
 * cost about 4 us of kernel time per request under load); the buffer is flushed at least every
 * LOG_FLUSH_INTERVAL_MS, after start-up, at shutdown and on exit.
 */
const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_INTERVAL_MS = 250;

/**
 * Where the logs go (issue 32): readable lines when a person watches a terminal, one JSON object per
 * line otherwise (files, pipes, log collectors). LOG_FORMAT=json|pretty overrides the guess.
 */
export async function logDestination(format: 'auto' | 'pretty' | 'json', isTty: boolean): Promise<{ stream: DestinationStream; flush(): void; pretty: boolean }> {
  if (format === 'pretty' || (format === 'auto' && isTty)) {
    // Loaded only here: a service writing JSON never loads the prettifier.
    const { default: pretty } = await import('pino-pretty');
    // singleLine (review rvF): one line per event, as the JSON format; each request took seven lines of a terminal.
    const stream = pretty({ destination: 1, sync: true, colorize: isTty, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true });
    return { stream, flush: () => {}, pretty: true };
  }
  const stream = pino.destination({ dest: 1, sync: true, minLength: LOG_BUFFER_BYTES });
  return { stream, flush: () => stream.flushSync(), pretty: false };
}

/**
 * Issue 28: start-up leaves tens of megabytes of garbage (migration texts, compiled schemas, the
 * OpenAPI document's intermediate objects) that V8 may keep for minutes before a full collection;
 * one full collection once the service listens lets resident memory at rest reflect what it keeps.
 * `npm start` passes --expose-gc for this (package.json); without it nothing happens.
 */
function collectStartupGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc === 'function') setTimeout(gc, 1000).unref();
}

async function serve(): Promise<void> {
  const { config, notices, announcements } = loadConfig();
  // Issue 27: OpenTelemetry only when OTEL_EXPORTER_OTLP_ENDPOINT is set (nothing of it loads otherwise).
  const tracing = await startTracing();
  const [{ buildApp }, { startWorkers }, { openDatabase }, { migrate }] = await Promise.all([
    import('./app.ts'), import('./workers.ts'), import('./platform/db/open.ts'), import('./migrate.ts'),
  ]);
  const db = await openDatabase(config);
  const migrated = await migrate(db);
  const log = await logDestination(config.logFormat, process.stdout.isTTY === true);
  setInterval(log.flush, LOG_FLUSH_INTERVAL_MS).unref();
  process.on('exit', log.flush);
  const logStream = log.stream;
  const { app, ctx } = await buildApp({ config, db, logStream });
  for (const line of announcements) process.stdout.write(`${line}\n`);
  for (const notice of notices) app.log.warn(notice);
  // One line each, also in a terminal: a first start applies dozens (the names are listed by `npm run migrate`).
  if (migrated.versions.length) app.log.info({ count: migrated.versions.length, latest: migrated.versions.at(-1) }, 'migrations applied');
  if (migrated.repeatable.length) app.log.info({ count: migrated.repeatable.length }, 'database functions applied');
  const workers = config.workers ? startWorkers(ctx, app.log) : null;
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // A port in use or refused is one line saying what to do, not a stack dump (docs/operations.md).
    const code = (err as NodeJS.ErrnoException).code;
    await workers?.stop().catch(() => {});
    await db.close().catch(() => {});
    if (code === 'EADDRINUSE') throw new StartupError(`port ${config.port} on ${config.host} is already in use (another service, or this one already running); stop it or set PORT`);
    if (code === 'EACCES') throw new StartupError(`not allowed to listen on port ${config.port} on ${config.host}; choose a port above 1023 with PORT`);
    if (code === 'EADDRNOTAVAIL') throw new StartupError(`HOST ${config.host} is not an address of this machine; set HOST (default 0.0.0.0)`);
    throw err;
  }
  app.log.info({ env: config.env, database: db.kind, port: config.port, metricsPort: config.metricsPort, tracing: tracing !== null }, 'service started');
  log.flush();
  collectStartupGarbage();

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    await app.close(); // stops accepting, waits for in-flight requests
    await workers?.stop();
    await db.close();
    await tracing?.shutdown().catch(() => {});
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

async function migrateOnly(): Promise<void> {
  const { config } = loadConfig();
  const { openDatabase } = await import('./platform/db/open.ts');
  const { migrate } = await import('./migrate.ts');
  const db = await openDatabase(config);
  const { versions, repeatable } = await migrate(db);
  const applied = [...versions, ...repeatable];
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  await db.close();
}

async function ledgerAudit(partnerId: string | undefined): Promise<void> {
  const { config } = loadConfig();
  const { openDatabase } = await import('./platform/db/open.ts');
  const { auditLedger } = await import('./domains/ledger/index.ts');
  const db = await openDatabase(config);
  try {
    const report = await auditLedger(db, { partnerId });
    console.log(JSON.stringify(report, null, 2));
    if (!report.ok) process.exitCode = 1;
  } finally {
    await db.close();
  }
}

/** The whole command line: serve, migrate, ledger-audit and the operator commands (src/cli/admin.ts). */
export function program(io: CliIo, admin: typeof import('./cli/admin.ts') | null, { Command }: typeof import('commander')): Command {
  const cli = new Command('cardsvc')
    .description('Card-issuing platform service: the HTTP service and its operator tools')
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ writeOut: (t) => io.out(t.replace(/\n$/, '')), writeErr: (t) => io.err(t.replace(/\n$/, '')) })
    .exitOverride();
  // Not commander's default command: `cardsvc nosuch` would then read as `serve nosuch` and answer
  // "too many arguments for 'serve'"; no arguments at all still serves (runCli's serveOnly).
  cli.command('serve').description('start the HTTP service (migrations are applied first)').action(serve);
  cli.command('migrate').description('apply pending database migrations and exit').action(migrateOnly);
  cli.command('ledger-audit').description('re-derive every ledger balance from its postings; exit 1 on any finding')
    .argument('[partnerId]', 'audit one partner only')
    .action((partnerId?: string) => ledgerAudit(partnerId));
  if (admin) cli.addCommand(admin.adminCommand(io));
  // Every command exits through the same path: usage errors 2, help 0 (commander throws).
  const exitOverride = (c: Command) => {
    c.exitOverride();
    c.showHelpAfterError('(add --help for usage)');
    c.configureOutput({ writeOut: (t) => io.out(t.replace(/\n$/, '')), writeErr: (t) => io.err(t.replace(/\n$/, '')) });
    c.commands.forEach(exitOverride);
  };
  cli.commands.forEach(exitOverride);
  return cli;
}

/** Runs the command line; answers the exit code (0 ok, 1 failure, 2 usage or configuration). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  // Issue 28: the service's own commands never load the operator tools (commands, HTTP client,
  // progress bars); help and every other command do.
  const lean = (argv.length === 0 || ['serve', 'migrate', 'ledger-audit'].includes(argv[0])) && !argv.some((a) => a === '--help' || a === '-h');
  // `npm start` (`serve` alone, or nothing: the default command) starts without the command-line
  // parser either: commander is only loaded for the other command lines (about 1 MB at rest).
  const serveOnly = argv.length === 0 || (argv.length === 1 && argv[0] === 'serve');
  const admin = lean ? null : await import('./cli/admin.ts');
  const commander = serveOnly ? null : await import('commander');
  try {
    if (serveOnly) await serve();
    else await program(io, admin, commander!).parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (commander && err instanceof commander.CommanderError) {
      // Help (asked for) exits 0; a usage error (already written, one line plus the --help hint) 2.
      return err.exitCode === 0 ? 0 : 2;
    }
    if (admin && err instanceof admin.CliFailure) {
      io.err(`error: ${err.message}`);
      return err.exitCode;
    }
    if (err instanceof StartupError) {
      io.err(`error: ${err.message}`);
      return 1;
    }
    if (err instanceof ConfigError) {
      io.err(`configuration error: ${err.message}`);
      return 2;
    }
    io.err(`error: ${(err as Error).message ?? String(err)}`);
    return 1;
  }
}

const processIo: CliIo = {
  out: (t) => process.stdout.write(`${t}\n`),
  err: (t) => process.stderr.write(`${t}\n`),
  env: process.env,
  progressStream: process.stderr,
};

runCli(process.argv.slice(2), processIo).then((code) => {
  // serve keeps running (its listeners hold the process); every other command ends here.
  if (code !== 0) process.exit(code);
  process.exitCode = code;
});
