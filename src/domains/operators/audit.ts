import { createHmac } from 'node:crypto';
import { isLosslessNumber } from 'lossless-json';
import type { Db, Queryable } from '../../platform/db/db.ts';
import type { AdminCaller } from '../../platform/caller.ts';
import { auditRowsAfter, insertAuditRow, listAuditRows, lockAuditHead, readAuditHead, type AuditFilter, type AuditRow } from './audit-store.ts';

/**
 * The audit trail (issue 29, PCI DSS 10.2): every administrative action from the console, the admin
 * API or the CLI, appended with who, what, on what, where from and when. Tamper-evident: each
 * entry's hash is HMAC-SHA256 under a key derived from the master key over the previous entry's
 * hash and the entry's own fields, so changing, removing or inserting a row breaks the chain from
 * there, and rewriting the chain needs the master key, not only write access to the database.
 * Appends lock the one-row head (audit_trail_head) in their transaction: concurrent appends from
 * several instances are serialized into one chain.
 */

export interface AuditInput {
  caller: AdminCaller;
  action: string;
  target: string | null;
  /** What changed: a small JSON object, secrets already removed (see redact). */
  summary: Record<string, unknown>;
  outcome: 'DONE' | 'DENIED' | 'FAILED';
  sourceIp: string;
  requestId: string;
}

export const GENESIS_HASH = '0'.repeat(64);

function chainKey(masterKey: Buffer): Buffer {
  return createHmac('sha256', masterKey).update('audit-trail-chain-v1').digest();
}

type HashedFields = Omit<AuditRow, 'hash'>;

/** The entry's hash: over the previous hash and every field, in a fixed order, as JSON. */
export function entryHash(masterKey: Buffer, e: HashedFields): string {
  const fields = [e.seq, e.prevHash, e.recordedAt.toISOString(), e.actor, e.operatorId, e.role, e.channel, e.action, e.target, e.summary,
    e.outcome, e.sourceIp, e.requestId];
  return createHmac('sha256', chainKey(masterKey)).update(JSON.stringify(fields)).digest('hex');
}

const SECRET_FIELD = /secret|password|token|totp|^pan$|cvv|privatekey/i;
const SUMMARY_STRING_MAX = 200;

/** A request body as an audit summary: secret-looking fields replaced, long strings cut. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 4) return '[…]';
  if (isLosslessNumber(value)) return value.toString();
  if (Array.isArray(value)) return value.slice(0, 20).map((v) => redact(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_FIELD.test(k) ? '[redacted]' : redact(v, depth + 1);
    return out;
  }
  if (typeof value === 'string' && value.length > SUMMARY_STRING_MAX) return `${value.slice(0, SUMMARY_STRING_MAX)}…`;
  return typeof value === 'bigint' ? value.toString() : value;
}

export async function appendAudit(db: Db, masterKey: Buffer, input: AuditInput, now: Date): Promise<string> {
  return db.tx(async (q) => appendAuditIn(q, masterKey, input, now));
}

/** Appends inside the caller's transaction (the entry commits with the change it records). */
export async function appendAuditIn(q: Queryable, masterKey: Buffer, input: AuditInput, now: Date): Promise<string> {
  const head = await lockAuditHead(q);
  const fields: HashedFields = {
    seq: (BigInt(head.seq) + 1n).toString(),
    recordedAt: now,
    actor: input.caller.actor,
    operatorId: input.caller.operatorId,
    role: input.caller.role,
    channel: input.caller.channel,
    action: input.action,
    target: input.target,
    summary: JSON.stringify(input.summary),
    outcome: input.outcome,
    sourceIp: input.sourceIp,
    requestId: input.requestId,
    prevHash: head.hash,
  };
  await insertAuditRow(q, { ...fields, hash: entryHash(masterKey, fields) });
  return fields.seq;
}

export interface ChainReport {
  ok: boolean;
  entries: number;
  headSeq: string;
  /** The first entry that does not verify, and why. */
  brokenAt: { seq: string; reason: string } | null;
}

const VERIFY_BATCH = 1000;

/** Walks the whole chain from the start: each link, each hash, and the head at the end. */
export async function verifyAuditTrail(q: Queryable, masterKey: Buffer): Promise<ChainReport> {
  const head = await readAuditHead(q);
  let prevHash = GENESIS_HASH;
  let expectedSeq = 1n;
  let entries = 0;
  const broken = (seq: string, reason: string): ChainReport => ({ ok: false, entries, headSeq: head.seq, brokenAt: { seq, reason } });
  for (;;) {
    const rows = await auditRowsAfter(q, (expectedSeq - 1n).toString(), VERIFY_BATCH);
    for (const row of rows) {
      if (BigInt(row.seq) !== expectedSeq) return broken(expectedSeq.toString(), `entry ${expectedSeq} is missing`);
      if (row.prevHash !== prevHash) return broken(row.seq, 'does not link to the entry before it');
      if (entryHash(masterKey, row) !== row.hash) return broken(row.seq, 'its content does not match its hash (modified)');
      prevHash = row.hash;
      expectedSeq++;
      entries++;
    }
    if (rows.length < VERIFY_BATCH) break;
  }
  if (BigInt(head.seq) !== expectedSeq - 1n || head.hash !== prevHash) {
    return broken(head.seq, `the head (entry ${head.seq}) does not match the last entry (${expectedSeq - 1n}): entries were removed or added`);
  }
  return { ok: true, entries, headSeq: head.seq, brokenAt: null };
}

export interface AuditView {
  seq: string;
  time: string;
  actor: string;
  role: string;
  channel: string;
  action: string;
  target: string | null;
  summary: unknown;
  outcome: string;
  sourceIp: string;
  requestId: string;
  hash: string;
}

function auditView(r: AuditRow): AuditView {
  return {
    seq: r.seq, time: r.recordedAt.toISOString(), actor: r.actor, role: r.role, channel: r.channel, action: r.action, target: r.target,
    summary: JSON.parse(r.summary), outcome: r.outcome, sourceIp: r.sourceIp, requestId: r.requestId, hash: r.hash,
  };
}

export const AUDIT_PAGE_MAX = 100;

/** Newest first; `next` is the `before` of the following page (null at the end). */
export async function listAudit(q: Queryable, filter: Partial<AuditFilter>, limit = 50): Promise<{ entries: AuditView[]; next: string | null }> {
  const size = Math.min(Math.max(limit, 1), AUDIT_PAGE_MAX);
  const rows = await listAuditRows(q, {
    actor: filter.actor || null, action: filter.action || null, target: filter.target || null, beforeSeq: filter.beforeSeq || null,
  }, size + 1);
  const page = rows.slice(0, size);
  return { entries: page.map(auditView), next: rows.length > size ? page[page.length - 1].seq : null };
}
