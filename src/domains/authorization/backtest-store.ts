import type { Queryable } from '../../platform/db/db.ts';
import type { Lease } from '../../platform/jobs.ts';

/** SQL only (issue 31 section 3): the rule_backtest* tables and velocity_backtest_step. No business decisions. */

export interface NewBacktest {
  backtestId: string;
  partnerId: string;
  organizationId: string;
  request: unknown;
  draft: Record<string, unknown>;
  cardIds: string[];
  employeeIds: string[];
  contextEmployeeIds: string[];
  mode: 'COMBINED' | 'ALONE';
  windowStart: Date;
  windowEnd: Date;
  now: Date;
}

/**
 * Serializes the starts of one partner's backtests until the transaction ends (a transaction-scoped
 * advisory lock, so it holds across instances sharing the database): the count of unfinished
 * backtests read after it cannot be outdated by a concurrent start.
 */
export async function lockPartnerBacktestStarts(q: Queryable, partnerId: string): Promise<void> {
  await q.query(`SELECT pg_advisory_xact_lock(hashtextextended('rule-backtest-start:' || $1, 0))`, [partnerId]);
}

/** The partner's backtests not yet ended (PENDING or RUNNING). */
export async function countUnfinishedBacktests(q: Queryable, partnerId: string): Promise<number> {
  const rows = await q.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM rule_backtests WHERE partner_id = $1 AND status IN ('PENDING', 'RUNNING')`,
    [partnerId],
  );
  return Number(rows[0]?.n ?? 0);
}

export async function insertBacktest(q: Queryable, b: NewBacktest): Promise<void> {
  await q.query(
    `INSERT INTO rule_backtests (backtest_id, partner_id, organization_id, request, draft, card_ids, employee_ids, context_employee_ids,
       mode, window_start, window_end, status, due_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6::text[], $7::text[], $8::text[], $9, $10, $11, 'PENDING', $12, $12, $12)`,
    [b.backtestId, b.partnerId, b.organizationId, JSON.stringify(b.request), JSON.stringify(b.draft), b.cardIds, b.employeeIds,
      b.contextEmployeeIds, b.mode, b.windowStart, b.windowEnd, b.now],
  );
}

export interface BacktestRow {
  backtestId: string;
  organizationId: string;
  status: 'PENDING' | 'RUNNING' | 'COMPLETED' | 'FAILED';
  mode: 'COMBINED' | 'ALONE';
  windowStart: Date;
  windowEnd: Date;
  total: string | null;
  processed: string;
  /** The result document as text (amounts inside are decimal strings). */
  result: string;
  error: string | null;
  createdAt: Date;
  completedAt: Date | null;
}

export async function findBacktest(q: Queryable, partnerId: string, backtestId: string): Promise<BacktestRow | null> {
  const rows = await q.query<BacktestRow>(
    `SELECT backtest_id AS "backtestId", organization_id AS "organizationId", status, mode, window_start AS "windowStart",
       window_end AS "windowEnd", total::text AS total, processed::text AS processed, result::text AS result, error,
       created_at AS "createdAt", completed_at AS "completedAt"
     FROM rule_backtests WHERE partner_id = $1 AND backtest_id = $2`,
    [partnerId, backtestId],
  );
  return rows[0] ?? null;
}

export interface SubjectDeclineRow {
  subjectId: string;
  declinedCount: string;
  /** [{currency, amount}] with amount as decimal text. */
  amounts: string;
}

/** The subjects of one type with the most declines (then by id), at most `limit`. */
export async function topDeclinedSubjects(q: Queryable, backtestId: string, subjectType: 'CARD' | 'CUSTOMER', limit: number): Promise<SubjectDeclineRow[]> {
  return q.query<SubjectDeclineRow>(
    `SELECT subject_id AS "subjectId", sum(declined_count)::text AS "declinedCount",
       jsonb_agg(jsonb_build_object('currency', currency, 'amount', declined_amount::text) ORDER BY currency)::text AS amounts
     FROM rule_backtest_subjects WHERE backtest_id = $1 AND subject_type = $2
     GROUP BY subject_id ORDER BY sum(declined_count) DESC, subject_id LIMIT $3`,
    [backtestId, subjectType, limit],
  );
}

export interface LeasedBacktest {
  backtestId: string;
  attempts: number;
}

/** Leases due backtests (PENDING or RUNNING whose lease expired or that are due for their next step). */
export async function leaseDueBacktests(q: Queryable, lease: Lease): Promise<LeasedBacktest[]> {
  return q.query<LeasedBacktest>(
    `UPDATE rule_backtests b SET lease_token = $1, due_at = $2, attempts = b.attempts + 1, updated_at = $3
      WHERE b.backtest_id IN (SELECT backtest_id FROM rule_backtests
                               WHERE status IN ('PENDING', 'RUNNING') AND due_at <= $3
                               ORDER BY due_at, backtest_id LIMIT $4 FOR UPDATE SKIP LOCKED)
      RETURNING b.backtest_id AS "backtestId", b.attempts`,
    [lease.token, lease.until, lease.now, lease.limit],
  );
}

export interface StepOutcome {
  outcome: 'LOST_LEASE' | 'MORE' | 'COMPLETED';
  processed: string | null;
  total: string | null;
}

/** Replays the next `limit` authorizations of the backtest (velocity_backtest_step), while the lease holds. */
export async function stepBacktest(q: Queryable, backtestId: string, lease: Lease, limit: number): Promise<StepOutcome> {
  const rows = await q.query<StepOutcome>(
    'SELECT outcome, processed::text AS processed, total::text AS total FROM velocity_backtest_step($1, $2, $3, $4)',
    [backtestId, lease.token, limit, lease.now],
  );
  return rows[0]!;
}

/** A failed step: due again at `retryAt`, or FAILED with its error (the replay's usage deleted). */
export async function failBacktest(q: Queryable, backtestId: string, token: string, error: string, retryAt: Date | null, now: Date): Promise<boolean> {
  const rows = await q.query(
    `UPDATE rule_backtests SET lease_token = NULL, updated_at = $4,
       due_at = COALESCE($3, due_at), status = CASE WHEN $3::timestamptz IS NULL THEN 'FAILED' ELSE status END,
       error = CASE WHEN $3::timestamptz IS NULL THEN $5 ELSE error END,
       completed_at = CASE WHEN $3::timestamptz IS NULL THEN $4 ELSE completed_at END,
       usage_count_slots = CASE WHEN $3::timestamptz IS NULL THEN '{}' ELSE usage_count_slots END,
       usage_count_keys = CASE WHEN $3::timestamptz IS NULL THEN '{}' ELSE usage_count_keys END,
       usage_counts = CASE WHEN $3::timestamptz IS NULL THEN '{}' ELSE usage_counts END,
       usage_amount_slots = CASE WHEN $3::timestamptz IS NULL THEN '{}' ELSE usage_amount_slots END,
       usage_amount_keys = CASE WHEN $3::timestamptz IS NULL THEN '{}' ELSE usage_amount_keys END,
       usage_amounts = CASE WHEN $3::timestamptz IS NULL THEN '{}' ELSE usage_amounts END
     WHERE backtest_id = $1 AND lease_token = $2 RETURNING 1 AS ok`,
    [backtestId, token, retryAt, now, error],
  );
  return rows.length > 0;
}

/** Backtests waiting for a step now, and the oldest due time (metrics). */
export async function backtestBacklog(q: Queryable, now: Date): Promise<{ pending: number; oldestDueAt: Date | null }> {
  const rows = await q.query<{ pending: string; oldest: Date | null }>(
    `SELECT count(*)::text AS pending, min(due_at) AS oldest FROM rule_backtests WHERE status IN ('PENDING', 'RUNNING') AND due_at <= $1`,
    [now],
  );
  return { pending: Number(rows[0]?.pending ?? 0), oldestDueAt: rows[0]?.oldest ?? null };
}
