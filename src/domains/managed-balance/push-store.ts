import type { Queryable } from '../../platform/db/db.ts';

/** The push stream (D39; tables of migrations 080 and 085, the sequencer in sql/user_stream_sequence.sql): sequencing, reads by push_seq, retention. */

export interface StreamRow {
  pushSeq: string;
  partnerId: string;
  kind: string;
  externalUserId: string;
  payload: string;
  createdAt: Date;
}

const ROW = `push_seq AS "pushSeq", partner_id AS "partnerId", kind, external_user_id AS "externalUserId", payload, created_at AS "createdAt"`;

/** One sequencer pass (user_stream_sequence): -1 when another instance is sequencing right now. */
export async function sequenceStream(q: Queryable, limit: number): Promise<{ sequenced: number; waiting: number }> {
  const [row] = await q.query<{ sequenced: number; waiting: number }>('SELECT sequenced, waiting FROM user_stream_sequence($1)', [limit]);
  return row;
}

/** Sequenced rows after `after`, of every partner (the hub's live feed). */
export async function rowsAfter(q: Queryable, after: string, limit: number): Promise<StreamRow[]> {
  return q.query<StreamRow>(
    `SELECT ${ROW} FROM user_stream WHERE push_seq > $1::bigint ORDER BY push_seq LIMIT $2`, [after, limit]);
}

/** One partner's rows in (after, upTo], optionally of one user (a client's replay). */
export async function partnerRowsBetween(
  q: Queryable, partnerId: string, after: string, upTo: string, externalUserId: string | null, limit: number,
): Promise<StreamRow[]> {
  return q.query<StreamRow>(
    `SELECT ${ROW} FROM user_stream
      WHERE partner_id = $1 AND push_seq > $2::bigint AND push_seq <= $3::bigint AND ($4::text IS NULL OR external_user_id = $4)
      ORDER BY push_seq LIMIT $5`,
    [partnerId, after, upTo, externalUserId, limit]);
}

export async function headSequence(q: Queryable): Promise<string> {
  const [row] = await q.query<{ head: string }>('SELECT COALESCE(max(push_seq), 0)::text AS head FROM user_stream');
  return row.head;
}

export async function prunedThrough(q: Queryable): Promise<string> {
  const [row] = await q.query<{ p: string }>('SELECT pruned_through::text AS p FROM user_stream_horizon WHERE id = 1');
  return row.p;
}

/** Deletes sequenced rows created before `before` (at most `limit`); raises the horizon to the last one removed. */
export async function pruneStream(q: Queryable, before: Date, limit: number): Promise<number> {
  const rows = await q.query<{ n: number }>(
    `WITH gone AS (
       DELETE FROM user_stream WHERE stream_seq IN (
         SELECT stream_seq FROM user_stream WHERE push_seq IS NOT NULL AND created_at < $1 ORDER BY push_seq LIMIT $2)
       RETURNING push_seq),
     h AS (UPDATE user_stream_horizon SET pruned_through = GREATEST(pruned_through, (SELECT max(push_seq) FROM gone))
            WHERE id = 1 AND EXISTS (SELECT 1 FROM gone) RETURNING 1)
     SELECT (SELECT count(*)::int FROM gone) AS n, (SELECT count(*) FROM h) AS h`,
    [before, limit]);
  return rows[0].n;
}
