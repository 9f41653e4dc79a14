import type { PGlite } from '@electric-sql/pglite';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type PgModule from 'pg';
import { statementSpan, traceHere, type DatabaseTarget, type TracePosition } from '../tracing.ts';
import { withUnitsOfWork } from './unit-of-work.ts';

export { insideUnitOfWork } from './unit-of-work.ts';

/** Anything SQL can be sent to: the database itself or an open transaction. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'embedded' | 'postgres';
  /** Runs fn in one transaction: committed when fn resolves, rolled back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /**
   * Runs fn as one unit of work: every statement sent through this Db while fn runs, by fn or any
   * function it calls, goes to one transaction (see unit-of-work.ts). Issue 29: an administrative
   * action and its audit entry commit together or not at all.
   */
  atomic<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * LISTEN on a channel: `onNotify` runs for every NOTIFY committed by any connection (any service
   * instance). On PostgreSQL a dedicated connection, re-opened after a failure (notifications sent
   * while it was down are lost: callers also poll). Resolves to a function that stops listening.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
  /** The connection pool's figures (metrics, issue 27); absent on the embedded database, which has none. */
  poolStats?(): PoolStats;
}

export interface PoolStats {
  /** Connections open. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
  /** The pool's size limit. */
  max: number;
}

const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * node-postgres, loaded without the global `Response` (issue 28). When it loads, pg asks whether it
 * runs on Cloudflare Workers by constructing a `Response`, and on Node 20 the first touch of that
 * global loads Node's whole fetch implementation (undici and its WebAssembly HTTP parser): about 4 MB
 * resident at rest in a service that never calls fetch at start. Without the global pg picks the
 * Node sockets it picks on Node anyway; the global is put back, untouched, before anything else runs.
 */
function loadPg(): typeof PgModule {
  const response = Object.getOwnPropertyDescriptor(globalThis, 'Response');
  if (response?.configurable) delete (globalThis as { Response?: unknown }).Response;
  try {
    return createRequire(import.meta.url)('pg') as typeof PgModule;
  } finally {
    if (response?.configurable) Object.defineProperty(globalThis, 'Response', response);
  }
}
const pg = loadPg();

// NUMERIC and BIGINT come back as strings on both databases: money never passes through a JS number.
const NUMERIC_OID = 1700;
const INT8_OID = 20;
pg.types.setTypeParser(NUMERIC_OID, (v) => v);
pg.types.setTypeParser(INT8_OID, (v) => v);

export async function openEmbedded(dataDir: string | null): Promise<Db> {
  // Loaded only when the embedded database is used: a PostgreSQL deployment never pays for it.
  const { PGlite } = await import('@electric-sql/pglite');
  const parsers = { [NUMERIC_OID]: (v: string) => v, [INT8_OID]: (v: string) => v };
  const lite: PGlite = dataDir ? new PGlite(dataDir, { parsers }) : new PGlite({ parsers });
  await lite.waitReady;
  const wrap = (q: { query: PGlite['query']; exec: PGlite['exec'] }): Queryable => ({
    async query<T>(sql: string, params?: unknown[]) {
      const result = await q.query<T>(sql, params as unknown[]);
      return result.rows;
    },
    async exec(sql: string) {
      await q.exec(sql);
    },
  });
  return withUnitsOfWork({
    kind: 'embedded',
    ...wrap(lite),
    tx: (fn) => lite.transaction((t) => fn(wrap(t))),
    async listen(channel, onNotify) {
      if (!CHANNEL_NAME.test(channel)) throw new Error(`listen: bad channel name ${channel}`);
      return lite.listen(channel, () => onNotify());
    },
    close: () => lite.close(),
  });
}

export interface PostgresOptions {
  connectionString: string;
  poolSize: number;
  /** Search path for every connection; tests use a fresh schema per run. */
  schema?: string;
}

/**
 * Every parameterized statement is sent as a named prepared statement, so PostgreSQL parses and
 * plans each distinct SQL text once per connection instead of once per call. The set of texts is
 * fixed by the code (no SQL is built from input), so the per-connection cache stays bounded.
 */
const statementNames = new Map<string, string>();
function prepared(sql: string, params: unknown[] | undefined): PgModule.QueryConfig {
  if (!params || params.length === 0) return { text: sql };
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `s${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;
    statementNames.set(sql, name);
  }
  return { name, text: sql, values: params };
}

/**
 * Issue 28: a request waits at most this long for a connection. When the database is down or
 * failing over, a request then answers 503 within about a second instead of hanging.
 */
export const DB_CONNECT_TIMEOUT_MS = 1000;

/**
 * Connection-level failures: the database is unreachable, shutting down, restarting, or no longer
 * the primary (a failover). The transaction that met one did not commit, except when the connection
 * broke while COMMIT was on its way: then its outcome is unknown, and the caller's retry with the same
 * id (Idempotency-Key, network transaction id, externalTranId) answers it. SQLSTATE classes: 08 connection exception, 57P01-57P03 shutdown /
 * starting, 25006 a read-only standby (the old primary after a failover), 53300 too many connections.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '25006', '53300']);
const UNAVAILABLE_SYSCALL_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const UNAVAILABLE_MESSAGES = [
  'Connection terminated', // node-postgres: the server closed the connection (unexpectedly / due to connection timeout)
  'timeout exceeded when trying to connect', // node-postgres pool: no connection within DB_CONNECT_TIMEOUT_MS
  'Client has encountered a connection error and is not queryable',
  'Connection ended',
];

export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_SYSCALL_CODES.has(code))) return true;
  if (err instanceof AggregateError && err.errors.some(isDatabaseUnavailable)) return true;
  return UNAVAILABLE_MESSAGES.some((m) => err.message.startsWith(m));
}

/** Where the statements of a connection string go, for their spans (issue 27). */
function databaseTarget(connectionString: string): DatabaseTarget {
  try {
    const url = new URL(connectionString);
    return { namespace: decodeURIComponent(url.pathname.slice(1)) || 'postgres', address: url.hostname || 'localhost', port: Number(url.port) || 5432 };
  } catch {
    return { namespace: 'postgres', address: 'localhost', port: 5432 };
  }
}

/**
 * One statement with its span (issue 27): under the active step, or under `here` (the position
 * where its transaction began). The span records the SQLSTATE of a failure, never its message
 * (which can quote a parameter).
 */
async function traced<R>(sql: string, target: DatabaseTarget, here: TracePosition | undefined, send: () => Promise<R>): Promise<R> {
  const span = statementSpan(sql, target, here);
  if (!span.recording) return send();
  try {
    const result = await send();
    span.end({});
    return result;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    span.end({ error: typeof code === 'string' ? code : 'error' });
    throw err;
  }
}

export async function openPostgres(options: PostgresOptions): Promise<Db> {
  const target = databaseTarget(options.connectionString);
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize,
    options: options.schema ? `-c search_path=${options.schema}` : undefined,
    connectionTimeoutMillis: DB_CONNECT_TIMEOUT_MS,
    // A dead peer (the primary's host gone) is noticed by TCP keepalive, not only by the next query.
    keepAlive: true,
  });
  // An idle client's network error must not crash the process; the pool replaces the client.
  pool.on('error', () => {});
  const client = await pool.connect();
  client.release();
  return withUnitsOfWork({
    kind: 'postgres',
    async query<T>(sql: string, params?: unknown[]) {
      const result = await traced(sql, target, undefined, () => pool.query(prepared(sql, params)));
      return result.rows as T[];
    },
    async tx<T>(fn: (q: Queryable) => Promise<T>) {
      const here = traceHere();
      const conn = await pool.connect();
      // A checked-out client has no pool listener: a connection lost between two statements of the
      // transaction (database restart, failover) emits 'error' on it, which would otherwise crash
      // the process. The next statement then fails, the transaction is rolled back by the server, and
      // the broken client is destroyed instead of going back to the pool (issue 28, found by the HA rehearsal).
      let broken = false;
      const onError = () => { broken = true; };
      conn.on('error', onError);
      try {
        await traced('BEGIN', target, here, () => conn.query('BEGIN'));
        const result = await fn({
          async query<R>(sql: string, params?: unknown[]) {
            return (await traced(sql, target, here, () => conn.query(prepared(sql, params)))).rows as R[];
          },
          async exec(sql: string) {
            await traced(sql, target, here, () => conn.query(sql));
          },
        });
        await traced('COMMIT', target, here, () => conn.query('COMMIT'));
        return result;
      } catch (err) {
        if (!broken && !isDatabaseUnavailable(err)) await traced('ROLLBACK', target, here, () => conn.query('ROLLBACK')).catch(() => { broken = true; });
        else broken = true;
        throw err;
      } finally {
        conn.off('error', onError);
        conn.release(broken);
      }
    },
    async exec(sql) {
      await traced(sql, target, undefined, () => pool.query(sql));
    },
    async listen(channel, onNotify) {
      if (!CHANNEL_NAME.test(channel)) throw new Error(`listen: bad channel name ${channel}`);
      let client: PgModule.Client | null = null;
      let stopped = false;
      let retry: NodeJS.Timeout | null = null;
      const open = async (): Promise<void> => {
        const c = new pg.Client({ connectionString: options.connectionString, options: options.schema ? `-c search_path=${options.schema}` : undefined });
        c.on('notification', (n) => {
          if (n.channel === channel) onNotify();
        });
        c.on('error', () => {
          c.end().catch(() => {});
          if (client === c) client = null;
          if (!stopped && !retry) retry = setTimeout(reopen, 1000).unref();
        });
        await c.connect();
        await c.query(`LISTEN ${channel}`);
        if (stopped) {
          await c.end();
          return;
        }
        client = c;
      };
      const reopen = () => {
        retry = null;
        open().then(onNotify, () => {
          if (!stopped && !retry) retry = setTimeout(reopen, 1000).unref();
        });
      };
      await open();
      return async () => {
        stopped = true;
        if (retry) clearTimeout(retry);
        const c = client;
        client = null;
        if (c) await c.end().catch(() => {});
      };
    },
    close: () => pool.end(),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: options.poolSize }),
  });
}

/** Readiness probe: one trivial statement (GET /readyz). */
export async function ping(q: Queryable): Promise<void> {
  await q.query('SELECT 1');
}

/** Transaction-scoped advisory lock: serializes one-time work (provisioning, migrations) across instances. */
export async function advisoryXactLock(q: Queryable, key: number): Promise<void> {
  await q.query('SELECT pg_advisory_xact_lock($1)', [key]);
}
