import type { Queryable } from '../../platform/db/db.ts';

export interface AlertSetting {
  currency: 'USD' | 'HKD';
  threshold: string;
}

export interface AlertConfig {
  settings: AlertSetting[];
  emails: string[];
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
