import { createHash, createPrivateKey, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DeploymentEnv } from './platform/deployment.ts';
import { isValidWhitelistEntry } from './platform/http/ip.ts';

export type { DeploymentEnv };

export interface Config {
  env: DeploymentEnv;
  port: number;
  host: string;
  /** Folder of the embedded database and generated keys. */
  dataDir: string;
  /** PostgreSQL server; when set the embedded database is not used. */
  databaseUrl: string | null;
  adminToken: string;
  /** 32-byte key that wraps every stored secret (partner secret keys, data keys). */
  masterKey: Buffer;
  /** D7: accepted when |now - timestamp| <= this. */
  timestampWindowMs: number;
  /** Per-partner request budget per window; protects the service from one noisy partner. */
  rateLimitMax: number;
  rateLimitWindowMs: number;
  /** Requests per source address per window, counted before authentication (docs/security.md). */
  preAuthRateLimitMax: number;
  /** Failed signed-request authentications per source address per window; beyond it, 429. */
  authFailureLimitMax: number;
  /** Admin API requests per source address per window. */
  adminRateLimitMax: number;
  /** Wrong admin tokens per source address per window; beyond it, 429 (token guessing). */
  adminAuthFailureLimitMax: number;
  /** Shared rate-limit counters across instances (Redis); in-process when null. */
  redisUrl: string | null;
  /** Slow-client deadlines (src/platform/http/guards.ts). */
  httpHeadersTimeoutMs: number;
  httpRequestTimeoutMs: number;
  httpKeepAliveTimeoutMs: number;
  httpIdleTimeoutMs: number;
  /** D3: a body over 64 KiB is a framework-level rejection. */
  bodyLimitBytes: number;
  /** Base URL partners reach the service at; used in credential retrieval links. */
  publicBaseUrl: string;
  /** D14: how long a one-time retrieval link stays valid. */
  credentialLinkTtlMs: number;
  smtpUrl: string | null;
  mailFrom: string;
  /**
   * Trust X-Forwarded-For from these proxies (fastify trustProxy: addresses, CIDRs or proxy-addr's
   * names); false = use the socket address. `TRUST_PROXY=true` is the private ranges, see loadConfig.
   */
  trustProxy: string | boolean;
  logLevel: string;
  /** 'pretty' (readable lines), 'json' (one JSON object per line), or 'auto': pretty when stdout is a terminal. */
  logFormat: 'auto' | 'pretty' | 'json';
  dbPoolSize: number;
  /** How long a partner looked up by API key is reused before it is read again (0 = every call). */
  partnerCacheTtlMs: number;
  /** D39 push (/card/v1/ws): bytes queued to one slow client before it is disconnected. */
  pushSendBufferBytes: number;
  /**
   * D39 push: WebSocket connections one partner may hold open on this instance; one more upgrade is
   * refused (429) before it is answered, so one partner cannot tie up the instance's sockets and memory.
   */
  pushMaxConnectionsPerPartner: number;
  /**
   * Issue 31 section 3: velocity-rule backtests one partner may hold unfinished (PENDING or RUNNING);
   * one more start is refused (429) before anything is written, so one partner cannot queue hundreds
   * ahead of every other partner's backtests on the one worker.
   */
  backtestMaxPendingPerPartner: number;
  /** D39 push: WebSocket ping interval; a client that missed the previous pong is dropped. */
  pushPingIntervalMs: number;
  /** D39 push: how often the stream is read without a notification (a missed NOTIFY costs at most this). */
  pushPollIntervalMs: number;
  /** D39 push: how long stream rows are kept for clients resuming with `since`. */
  pushRetentionMs: number;
  /** Run background workers (outbox delivery, janitors) in this process. */
  workers: boolean;
  /**
   * Serve the browsable API explorer at /docs (API_EXPLORER=true|false). On by default in sandbox,
   * off in production, where its code is then never loaded (/openapi.json is always served).
   */
  apiExplorer: boolean;
  /** D38: a webhook attempt with no complete answer within this is a failure (spec: 5 s). */
  webhookTimeoutMs: number;
  /** 5.5: the service's egress addresses (IP or CIDR) partners whitelist for webhooks; published to them. */
  webhookEgressIps: string[];
  /** D37: default deadline of a partner's auth_url answer (per-partner setting overrides it). */
  authForwardDeadlineMs: number;
  /**
   * D37: the service's RSA-2048 private key (SERVICE_RSA_PRIVATE_KEY, Base64 PKCS#8 DER). When absent
   * a key pair is generated at first start and kept sealed under the master key in the database.
   */
  serviceRsaPrivateKey: Buffer | null;
  /**
   * D26: double-length DES card-verification key (CARD_CVK, 32 hex) and its id (CARD_CVK_ID,
   * default "cvk-" + key check value). Required in production; sandbox generates one at first use.
   */
  cardVerificationKey: { keyId: string; key: Buffer } | null;
  /**
   * Issue 27: GET /metrics on its own port (METRICS_PORT, no authentication: reachable only from the
   * monitoring network); null serves it on the main port behind the admin token.
   */
  metricsPort: number | null;
  /** Issue 27: how often a worker instance audits the whole ledger (LEDGER_AUDIT_INTERVAL_MINUTES; 0 = never). */
  ledgerAuditIntervalMs: number;
}

export class ConfigError extends Error {}

const DEFAULT_PORT = 8080;
const DEFAULT_TIMESTAMP_WINDOW_MS = 5000; // spec 5.4: 5-second window
const DEFAULT_RATE_LIMIT_MAX = 6000; // per partner per minute: 100 req/s sustained
const DEFAULT_RATE_LIMIT_WINDOW_MS = 60_000;
/** Per source address per minute before authentication: room for two partners at their limit behind one address. */
const DEFAULT_PREAUTH_RATE_LIMIT_MAX = 12_000;
/** Failed authentications per address per minute: a misconfigured client sees its errors, a guesser stops. */
const DEFAULT_AUTH_FAILURE_LIMIT_MAX = 60;
/** Admin API calls per address per minute (operators and their scripts). */
const DEFAULT_ADMIN_RATE_LIMIT_MAX = 600;
/** Wrong admin tokens per address per minute. */
const DEFAULT_ADMIN_AUTH_FAILURE_LIMIT_MAX = 10;
/** Headers must arrive within 10 s, the whole request (64 KiB at most) within 20 s. */
const DEFAULT_HTTP_HEADERS_TIMEOUT_MS = 10_000;
const DEFAULT_HTTP_REQUEST_TIMEOUT_MS = 20_000;
/** Kept-alive connections without a request are closed after 5 s (Node's default). */
const DEFAULT_HTTP_KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** A connection with no traffic for 30 s is destroyed. */
const DEFAULT_HTTP_IDLE_TIMEOUT_MS = 30_000;
const BODY_LIMIT_BYTES = 64 * 1024; // D3
const DEFAULT_CREDENTIAL_LINK_TTL_MS = 72 * 3600_000; // three days to act on the email
const DEFAULT_DB_POOL_SIZE = 10;
const DEFAULT_PARTNER_CACHE_TTL_MS = 1000; // a settings change reaches every instance within a second
const DEFAULT_WEBHOOK_TIMEOUT_MS = 5000; // D38: no answer in 5 s is a failed attempt
const DEFAULT_AUTH_FORWARD_DEADLINE_MS = 2000; // D37: a partner's auth_url answers within 2 s by default
const DEFAULT_WEBHOOK_EGRESS_IPS = ''; // none configured: the published list is empty until operators set it
/** Issue 27: the whole ledger is re-derived every 6 hours (the LedgerAuditStale alert fires after 26 hours without one). */
const DEFAULT_LEDGER_AUDIT_INTERVAL_MINUTES = 360;

/** WEBHOOK_EGRESS_IPS: comma-separated IP addresses or CIDR blocks. */
function ipListFrom(env: NodeJS.ProcessEnv, name: string, fallback: string): string[] {
  const entries = (env[name] ?? fallback).split(',').map((e) => e.trim()).filter(Boolean);
  for (const entry of entries) {
    if (!isValidWhitelistEntry(entry)) throw new ConfigError(`${name}: "${entry}" is not an IP address or CIDR block`);
  }
  return [...new Set(entries)];
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function parseMasterKey(raw: string, source: string): Buffer {
  const trimmed = raw.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(trimmed)) {
    throw new ConfigError(`${source} must be 64 hexadecimal characters (32 bytes)`);
  }
  return Buffer.from(trimmed, 'hex');
}

/** Reads a generated secret from the data folder, creating it on first start. */
function generatedSecret(file: string, make: () => string): { value: string; created: boolean } {
  if (existsSync(file)) return { value: readFileSync(file, 'utf8').trim(), created: false };
  const value = make();
  writeFileSync(file, value + '\n', { mode: 0o600 });
  return { value, created: true };
}

/** D26: CARD_CVK is KA|KB (16 bytes, two distinct halves); CARD_CVK_ID names it (key rotation). */
function parseCardVerificationKey(env: NodeJS.ProcessEnv): { keyId: string; key: Buffer } | null {
  const raw = (env.CARD_CVK ?? '').trim();
  if (!raw) return null;
  if (!/^[0-9a-fA-F]{32}$/.test(raw)) throw new ConfigError('CARD_CVK must be 32 hexadecimal characters (a double-length DES key)');
  const key = Buffer.from(raw, 'hex');
  if (key.subarray(0, 8).equals(key.subarray(8))) throw new ConfigError('CARD_CVK halves must differ (double-length key)');
  const keyId = (env.CARD_CVK_ID ?? '').trim() || `cvk-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
  if (!/^[A-Za-z0-9._-]{1,40}$/.test(keyId)) throw new ConfigError('CARD_CVK_ID must be 1-40 characters of [A-Za-z0-9._-]');
  return { keyId, key };
}

/** D37: SERVICE_RSA_PRIVATE_KEY, Base64 of a PKCS#8 DER RSA-2048 private key. */
function parseServiceRsaKey(env: NodeJS.ProcessEnv): Buffer | null {
  const raw = (env.SERVICE_RSA_PRIVATE_KEY ?? '').trim();
  if (!raw) return null;
  try {
    const key = createPrivateKey({ key: Buffer.from(raw, 'base64'), format: 'der', type: 'pkcs8' });
    if (key.asymmetricKeyType !== 'rsa' || key.asymmetricKeyDetails?.modulusLength !== 2048) throw new Error('not RSA-2048');
    return Buffer.from(raw, 'base64');
  } catch {
    throw new ConfigError('SERVICE_RSA_PRIVATE_KEY must be the Base64 PKCS#8 DER of an RSA-2048 private key');
  }
}

export interface LoadedConfig {
  config: Config;
  /** Lines to print once at start (generated credentials). */
  notices: string[];
  /**
   * Plain lines for the operator at the terminal (issue 32: the generated ADMIN_TOKEN is printed as
   * a line of its own, not inside a JSON log line).
   */
  announcements: string[];
}

function logFormatFrom(value: string | undefined): Config['logFormat'] {
  const format = value || 'auto';
  if (format !== 'auto' && format !== 'pretty' && format !== 'json') throw new ConfigError(`LOG_FORMAT must be auto, pretty or json, got "${format}"`);
  return format;
}

/** proxy-addr's names for the ranges a load balancer in front of the service has its address in. */
export const TRUSTED_PRIVATE_PROXIES = 'loopback,linklocal,uniquelocal';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const notices: string[] = [];
  const announcements: string[] = [];
  const deployment = env.CARDSVC_ENV ?? 'sandbox';
  if (deployment !== 'sandbox' && deployment !== 'production') {
    throw new ConfigError(`CARDSVC_ENV must be "sandbox" or "production", got "${deployment}"`);
  }
  const port = intFrom(env, 'PORT', DEFAULT_PORT, 0, 65535);
  const host = env.HOST || '0.0.0.0';
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const needsDataDir = deployment === 'sandbox' && (!env.ADMIN_TOKEN || !env.MASTER_KEY);
  if (!databaseUrl || needsDataDir) mkdirSync(dataDir, { recursive: true });

  let adminToken = env.ADMIN_TOKEN ?? '';
  if (!adminToken) {
    if (deployment === 'production') throw new ConfigError('ADMIN_TOKEN is required in production');
    const generated = generatedSecret(path.join(dataDir, 'admin-token'), () => randomBytes(24).toString('hex'));
    adminToken = generated.value;
    if (generated.created) {
      announcements.push(`ADMIN_TOKEN=${adminToken}`, `  generated for the operator commands and the admin API; stored in ${path.join(dataDir, 'admin-token')}, where \`npm run admin\` finds it`);
    }
  } else if (adminToken.length < 16) {
    throw new ConfigError('ADMIN_TOKEN must be at least 16 characters');
  }

  let masterKey: Buffer;
  if (env.MASTER_KEY) {
    masterKey = parseMasterKey(env.MASTER_KEY, 'MASTER_KEY');
  } else {
    if (deployment === 'production') throw new ConfigError('MASTER_KEY is required in production (64 hex characters)');
    const file = path.join(dataDir, 'master.key');
    const generated = generatedSecret(file, () => randomBytes(32).toString('hex'));
    masterKey = parseMasterKey(generated.value, file);
    if (generated.created) notices.push(`Generated MASTER_KEY into ${file}; back it up: stored secrets cannot be read without it`);
  }

  const publicBaseUrl = (env.PUBLIC_BASE_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  const trustProxyRaw = env.TRUST_PROXY ?? '';
  // `true` trusts proxies on loopback, link-local and private addresses, not every address: trusting
  // every hop takes the left-most X-Forwarded-For entry, which the client writes itself in front of
  // the one its load balancer appends, so any caller passed any IP whitelist with a forged header
  // (review rvC). Walking from the socket, the first address outside those ranges is the caller.
  const trustProxy = trustProxyRaw === '' || trustProxyRaw === 'false' ? false : trustProxyRaw === 'true' ? TRUSTED_PRIVATE_PROXIES : trustProxyRaw;

  const config: Config = {
    env: deployment,
    port,
    host,
    dataDir,
    databaseUrl,
    adminToken,
    masterKey,
    timestampWindowMs: intFrom(env, 'TIMESTAMP_WINDOW_MS', DEFAULT_TIMESTAMP_WINDOW_MS, 1000, 300_000),
    rateLimitMax: intFrom(env, 'RATE_LIMIT_MAX', DEFAULT_RATE_LIMIT_MAX, 1, 10_000_000),
    rateLimitWindowMs: intFrom(env, 'RATE_LIMIT_WINDOW_MS', DEFAULT_RATE_LIMIT_WINDOW_MS, 1000, 3_600_000),
    preAuthRateLimitMax: intFrom(env, 'PREAUTH_RATE_LIMIT_MAX', DEFAULT_PREAUTH_RATE_LIMIT_MAX, 1, 10_000_000),
    authFailureLimitMax: intFrom(env, 'AUTH_FAILURE_LIMIT_MAX', DEFAULT_AUTH_FAILURE_LIMIT_MAX, 1, 10_000_000),
    adminRateLimitMax: intFrom(env, 'ADMIN_RATE_LIMIT_MAX', DEFAULT_ADMIN_RATE_LIMIT_MAX, 1, 10_000_000),
    adminAuthFailureLimitMax: intFrom(env, 'ADMIN_AUTH_FAILURE_LIMIT_MAX', DEFAULT_ADMIN_AUTH_FAILURE_LIMIT_MAX, 1, 10_000_000),
    redisUrl: env.REDIS_URL || null,
    httpHeadersTimeoutMs: intFrom(env, 'HTTP_HEADERS_TIMEOUT_MS', DEFAULT_HTTP_HEADERS_TIMEOUT_MS, 100, 60_000),
    httpRequestTimeoutMs: intFrom(env, 'HTTP_REQUEST_TIMEOUT_MS', DEFAULT_HTTP_REQUEST_TIMEOUT_MS, 100, 120_000),
    httpKeepAliveTimeoutMs: intFrom(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', DEFAULT_HTTP_KEEP_ALIVE_TIMEOUT_MS, 100, 120_000),
    httpIdleTimeoutMs: intFrom(env, 'HTTP_IDLE_TIMEOUT_MS', DEFAULT_HTTP_IDLE_TIMEOUT_MS, 100, 300_000),
    bodyLimitBytes: BODY_LIMIT_BYTES,
    publicBaseUrl,
    credentialLinkTtlMs: intFrom(env, 'CREDENTIAL_LINK_TTL_MS', DEFAULT_CREDENTIAL_LINK_TTL_MS, 60_000, 30 * 24 * 3600_000),
    smtpUrl: env.SMTP_URL || null,
    mailFrom: env.MAIL_FROM || 'cardsvc@localhost',
    trustProxy,
    logLevel: env.LOG_LEVEL || 'info',
    logFormat: logFormatFrom(env.LOG_FORMAT),
    dbPoolSize: intFrom(env, 'DB_POOL_SIZE', DEFAULT_DB_POOL_SIZE, 1, 200),
    partnerCacheTtlMs: intFrom(env, 'PARTNER_CACHE_TTL_MS', DEFAULT_PARTNER_CACHE_TTL_MS, 0, 60_000),
    pushSendBufferBytes: intFrom(env, 'PUSH_SEND_BUFFER_BYTES', 1_048_576, 1024, 64 * 1_048_576),
    pushMaxConnectionsPerPartner: intFrom(env, 'PUSH_MAX_CONNECTIONS_PER_PARTNER', 200, 1, 100_000),
    backtestMaxPendingPerPartner: intFrom(env, 'BACKTEST_MAX_PENDING_PER_PARTNER', 5, 1, 1000),
    pushPingIntervalMs: intFrom(env, 'PUSH_PING_INTERVAL_MS', 30_000, 100, 600_000),
    pushPollIntervalMs: intFrom(env, 'PUSH_POLL_INTERVAL_MS', 1000, 20, 60_000),
    pushRetentionMs: intFrom(env, 'PUSH_RETENTION_HOURS', 72, 1, 24 * 90) * 3_600_000,
    workers: env.WORKERS !== 'false',
    apiExplorer: env.API_EXPLORER === undefined || env.API_EXPLORER === '' ? deployment !== 'production' : env.API_EXPLORER === 'true',
    webhookTimeoutMs: intFrom(env, 'WEBHOOK_TIMEOUT_MS', DEFAULT_WEBHOOK_TIMEOUT_MS, 50, 60_000),
    webhookEgressIps: ipListFrom(env, 'WEBHOOK_EGRESS_IPS', DEFAULT_WEBHOOK_EGRESS_IPS),
    authForwardDeadlineMs: intFrom(env, 'AUTH_FORWARD_DEADLINE_MS', DEFAULT_AUTH_FORWARD_DEADLINE_MS, 100, 10_000),
    serviceRsaPrivateKey: parseServiceRsaKey(env),
    cardVerificationKey: parseCardVerificationKey(env),
    metricsPort: env.METRICS_PORT ? intFrom(env, 'METRICS_PORT', 0, 0, 65535) : null,
    ledgerAuditIntervalMs: intFrom(env, 'LEDGER_AUDIT_INTERVAL_MINUTES', DEFAULT_LEDGER_AUDIT_INTERVAL_MINUTES, 0, 7 * 24 * 60) * 60_000,
  };
  if (config.httpHeadersTimeoutMs > config.httpRequestTimeoutMs) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)');
  }
  return { config, notices, announcements };
}
