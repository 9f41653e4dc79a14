import type { Queryable } from '../../platform/db/db.ts';

export interface AlertSetting {
  currency: 'USD' | 'HKD';
  threshold: string;
}

export interface AlertConfig {
  settings: AlertSetting[];
  emails: string[];
}

export async function listAlertEmails(q: Queryable, organizationId: string): Promise<string[]> {
  const rows = await q.query<{ email: string }>(
    'SELECT email FROM balance_alert_emails WHERE organization_id = $1 ORDER BY position',
    [organizationId],
  );
  return rows.map((r) => r.email);
}

export async function readAlertConfig(q: Queryable, organizationId: string): Promise<AlertConfig> {
  const settings = await q.query<AlertSetting>(
    `SELECT currency, threshold::text AS threshold FROM balance_alert_settings WHERE organization_id = $1 ORDER BY position`,
    [organizationId],
  );
  const emails = await q.query<{ email: string }>(
    'SELECT email FROM balance_alert_emails WHERE organization_id = $1 ORDER BY position',
    [organizationId],
  );
  return { settings, emails: emails.map((e) => e.email) };
}

/**
 * Replaces the whole configuration (4.6). A currency whose threshold is unchanged keeps its alert
 * state (no second alert the same day just because the partner re-sent the list); a new or changed
 * threshold starts armed.
 */
export async function replaceAlertConfig(q: Queryable, organizationId: string, config: AlertConfig, at: Date): Promise<void> {
  const currencies = config.settings.map((s) => s.currency);
  await q.query(
    'DELETE FROM balance_alert_settings WHERE organization_id = $1 AND NOT (currency = ANY($2::text[]))',
    [organizationId, currencies],
  );
  for (const [position, s] of config.settings.entries()) {
    await q.query(
      `INSERT INTO balance_alert_settings (organization_id, currency, threshold, position, updated_at)
       VALUES ($1, $2, $3::numeric, $4, $5)
       ON CONFLICT (organization_id, currency) DO UPDATE SET
         position = excluded.position,
         updated_at = excluded.updated_at,
         last_alert_day     = CASE WHEN balance_alert_settings.threshold = excluded.threshold THEN balance_alert_settings.last_alert_day ELSE NULL END,
         last_alert_version = CASE WHEN balance_alert_settings.threshold = excluded.threshold THEN balance_alert_settings.last_alert_version ELSE NULL END,
         last_alert_at      = CASE WHEN balance_alert_settings.threshold = excluded.threshold THEN balance_alert_settings.last_alert_at ELSE NULL END,
         threshold = excluded.threshold`,
      [organizationId, s.currency, s.threshold, position, at],
    );
  }
  await q.query('DELETE FROM balance_alert_emails WHERE organization_id = $1', [organizationId]);
  if (config.emails.length > 0) {
    await q.query(
      `INSERT INTO balance_alert_emails (organization_id, position, email)
       SELECT $1, n - 1, email FROM unnest($2::text[]) WITH ORDINALITY AS t(email, n)`,
      [organizationId, config.emails],
    );
  }
}

export interface StatementRow {
  firstEntryId: string;
  postingId: string;
  currency: string;
  kind: string;
  reference: string | null;
  description: string | null;
  createdAt: Date;
  amount: string;
  availableChange: string;
  pendingChange: string;
  availableAfter: string;
  pendingAfter: string;
}

export interface StatementFilter {
  partnerId: string;
  organizationId: string;
  currency: string | null;
  startTime: Date | null;
  endTime: Date | null;
}

/**
 * Pool movements: one line per posting and pool account (a hold moving money from available to
 * pending is one line), newest first (D9).
 */
export async function listPoolMovements(q: Queryable, f: StatementFilter, limit: number, offset: number): Promise<{ total: number; rows: StatementRow[] }> {
  const where = `a.partner_id = $1 AND a.owner_type = 'ORGANIZATION_POOL' AND a.owner_id = $2
    AND ($3::text IS NULL OR a.currency = $3)
    AND ($4::timestamptz IS NULL OR e.created_at >= $4) AND ($5::timestamptz IS NULL OR e.created_at < $5)`;
  const params = [f.partnerId, f.organizationId, f.currency, f.startTime, f.endTime];
  const [{ total }] = await q.query<{ total: number }>(
    `SELECT count(*)::int AS total FROM (
       SELECT 1 FROM ledger_entries e JOIN ledger_accounts a ON a.account_id = e.account_id
        WHERE ${where} GROUP BY e.posting_id, e.account_id) g`,
    params,
  );
  const rows = await q.query<StatementRow>(
    `SELECT min(e.entry_id)::text AS "firstEntryId", e.posting_id AS "postingId", a.currency, p.kind, p.reference,
            p.description, p.created_at AS "createdAt",
            sum(e.amount)::text AS amount,
            COALESCE(sum(e.amount) FILTER (WHERE e.bucket = 'AVAILABLE'), 0)::text AS "availableChange",
            COALESCE(sum(e.amount) FILTER (WHERE e.bucket = 'PENDING'), 0)::text AS "pendingChange",
            ((array_agg(e.available_after ORDER BY e.account_version DESC))[1])::text AS "availableAfter",
            ((array_agg(e.pending_after ORDER BY e.account_version DESC))[1])::text AS "pendingAfter"
       FROM ledger_entries e
       JOIN ledger_accounts a ON a.account_id = e.account_id
       JOIN ledger_postings p ON p.posting_id = e.posting_id
      WHERE ${where}
      GROUP BY e.posting_id, e.account_id, a.currency, p.kind, p.reference, p.description, p.created_at, p.seq
      ORDER BY p.created_at DESC, p.seq DESC
      LIMIT $6 OFFSET $7`,
    [...params, limit, offset],
  );
  return { total, rows };
}

export interface AlertCandidate {
  organizationId: string;
  currency: string;
  threshold: string;
  lastAlertDay: string | null;
  lastAlertVersion: string | null;
  partnerId: string;
  organizationName: string;
  accountId: string;
  available: string;
  version: string;
}

/** Alert settings after `after` (keyset), with their company and pool, locked FOR UPDATE SKIP LOCKED. */
export async function leaseAlertCandidates(q: Queryable, after: [string, string], limit: number): Promise<AlertCandidate[]> {
  return q.query<AlertCandidate>(
    `SELECT s.organization_id AS "organizationId", s.currency, s.threshold::text AS threshold,
            s.last_alert_day::text AS "lastAlertDay", s.last_alert_version::text AS "lastAlertVersion",
            o.partner_id AS "partnerId", o.organization_name AS "organizationName",
            a.account_id AS "accountId", a.available::text AS available, a.version::text AS version
       FROM balance_alert_settings s
       JOIN organizations o ON o.organization_id = s.organization_id AND o.lifecycle = 'ACTIVE'
       JOIN ledger_accounts a ON a.partner_id = o.partner_id AND a.owner_type = 'ORGANIZATION_POOL'
                             AND a.owner_id = s.organization_id AND a.currency = s.currency
      WHERE (s.organization_id, s.currency) > ($1, $2)
      ORDER BY s.organization_id, s.currency
      LIMIT $3
      FOR UPDATE OF s SKIP LOCKED`,
    [after[0], after[1], limit],
  );
}

export async function rearmAlert(q: Queryable, organizationId: string, currency: string): Promise<void> {
  await q.query(
    `UPDATE balance_alert_settings SET last_alert_day = NULL, last_alert_version = NULL WHERE organization_id = $1 AND currency = $2`,
    [organizationId, currency],
  );
}

export async function recordAlertSent(q: Queryable, organizationId: string, currency: string, a: { day: string; version: string; at: Date }): Promise<void> {
  await q.query(
    `UPDATE balance_alert_settings SET last_alert_day = $3::date, last_alert_version = $4, last_alert_at = $5
      WHERE organization_id = $1 AND currency = $2`,
    [organizationId, currency, a.day, a.version, a.at],
  );
}

/** Whether any entry on the account after `afterVersion` left its available at or above `threshold`. */
export async function availableReachedSince(q: Queryable, accountId: string, afterVersion: string, threshold: string): Promise<boolean> {
  const rows = await q.query(
    `SELECT 1 FROM ledger_entries WHERE account_id = $1 AND account_version > $2 AND available_after >= $3::numeric LIMIT 1`,
    [accountId, afterVersion, threshold],
  );
  return rows.length > 0;
}
