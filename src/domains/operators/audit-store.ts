import type { Queryable } from '../../platform/db/db.ts';

export interface AuditRow {
  seq: string;
  recordedAt: Date;
  actor: string;
  operatorId: string | null;
  role: string;
  channel: string;
  action: string;
  target: string | null;
  summary: string;
  outcome: 'DONE' | 'DENIED' | 'FAILED';
  sourceIp: string;
  requestId: string;
  prevHash: string;
  hash: string;
}

const COLUMNS = `seq, recorded_at AS "recordedAt", actor, operator_id AS "operatorId", role, channel, action, target, summary, outcome,
  source_ip AS "sourceIp", request_id AS "requestId", prev_hash AS "prevHash", hash`;

/** The chain's head, locked until the transaction ends: every append in every instance waits here. */
export async function lockAuditHead(q: Queryable): Promise<{ seq: string; hash: string }> {
  const rows = await q.query<{ seq: string; hash: string }>('SELECT seq, hash FROM audit_trail_head WHERE id FOR UPDATE');
  return rows[0];
}

export async function readAuditHead(q: Queryable): Promise<{ seq: string; hash: string }> {
  const rows = await q.query<{ seq: string; hash: string }>('SELECT seq, hash FROM audit_trail_head WHERE id');
  return rows[0];
}

export async function insertAuditRow(q: Queryable, r: AuditRow): Promise<void> {
  await q.query(
    `INSERT INTO audit_trail (seq, recorded_at, actor, operator_id, role, channel, action, target, summary, outcome, source_ip, request_id, prev_hash, hash)
     VALUES ($1::bigint, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [r.seq, r.recordedAt, r.actor, r.operatorId, r.role, r.channel, r.action, r.target, r.summary, r.outcome, r.sourceIp, r.requestId, r.prevHash, r.hash],
  );
  await q.query('UPDATE audit_trail_head SET seq = $1::bigint, hash = $2 WHERE id', [r.seq, r.hash]);
}

/** Entries in chain order after `afterSeq`, for verification. */
export async function auditRowsAfter(q: Queryable, afterSeq: string, limit: number): Promise<AuditRow[]> {
  return q.query<AuditRow>(`SELECT ${COLUMNS} FROM audit_trail WHERE seq > $1::bigint ORDER BY seq LIMIT $2`, [afterSeq, limit]);
}

export interface AuditFilter {
  actor: string | null;
  action: string | null;
  target: string | null;
  /** Keyset paging: entries older than this sequence. */
  beforeSeq: string | null;
}

/** Newest first, keyset-paged on seq (each filter has an index on (column, seq DESC)). */
export async function listAuditRows(q: Queryable, f: AuditFilter, limit: number): Promise<AuditRow[]> {
  return q.query<AuditRow>(
    `SELECT ${COLUMNS} FROM audit_trail
     WHERE ($1::text IS NULL OR actor = $1) AND ($2::text IS NULL OR action = $2) AND ($3::text IS NULL OR target = $3)
       AND ($4::bigint IS NULL OR seq < $4::bigint)
     ORDER BY seq DESC LIMIT $5`,
    [f.actor, f.action, f.target, f.beforeSeq, limit],
  );
}
