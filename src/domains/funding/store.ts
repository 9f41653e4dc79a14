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
