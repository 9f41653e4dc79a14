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

/** An alert setting leased by a low-balance scan (the job item). */
export interface LeasedAlertSetting {
  organizationId: string;
  currency: string;
  /** NUMERIC text. */
  threshold: string;
  /** UTC day (YYYY-MM-DD) of the last LOW_BALANCE of the current fall; null when armed. */
  lastAlertDay: string | null;
  /** Pool account version at the last alert (BIGINT text). */
  lastAlertVersion: string | null;
  /** Scans of this setting claimed since its last completed one (1 for a first try). */
  attempt: number;
}

const LEASED_COLUMNS = `s.organization_id AS "organizationId", s.currency, s.threshold::text AS threshold,
  s.last_alert_day::text AS "lastAlertDay", s.last_alert_version::text AS "lastAlertVersion", s.scan_attempts AS attempt`;

/** Settings due for a scan and the oldest due time (metrics, issue 27): what the next lease would take. */
export async function alertSettingsBacklog(q: Queryable, now: Date): Promise<{ pending: number; oldestDueAt: Date | null }> {
  const [row] = await q.query<{ pending: number; oldestDueAt: Date | null }>(
    `SELECT count(*)::int AS pending, min(next_scan_at) AS "oldestDueAt" FROM balance_alert_settings
      WHERE next_scan_at <= $1`,
    [now],
  );
  return row;
}

/**
 * Leases up to `limit` settings due for a scan: FOR UPDATE SKIP LOCKED, next_scan_at moved to the
 * lease expiry, lease_token stamped, the attempt counted.
 */
export async function leaseDueAlertSettings(q: Queryable, l: { token: string; now: Date; until: Date; limit: number }): Promise<LeasedAlertSetting[]> {
  return q.query<LeasedAlertSetting>(
    `WITH due AS (
       SELECT organization_id, currency FROM balance_alert_settings
        WHERE next_scan_at <= $1
        ORDER BY next_scan_at, organization_id, currency
        LIMIT $4
        FOR UPDATE SKIP LOCKED
     )
     UPDATE balance_alert_settings s SET next_scan_at = $2, lease_token = $3, scan_attempts = s.scan_attempts + 1
       FROM due WHERE s.organization_id = due.organization_id AND s.currency = due.currency
     RETURNING ${LEASED_COLUMNS}`,
    [l.now, l.until, l.token, l.limit],
  );
}

/** The setting, locked, if `token` still holds its lease. */
export async function lockLeasedAlertSetting(q: Queryable, organizationId: string, currency: string, token: string): Promise<LeasedAlertSetting | null> {
  const rows = await q.query<LeasedAlertSetting>(
    `SELECT ${LEASED_COLUMNS} FROM balance_alert_settings s
      WHERE s.organization_id = $1 AND s.currency = $2 AND s.lease_token = $3 FOR UPDATE`,
    [organizationId, currency, token],
  );
  return rows[0] ?? null;
}

/** Ends the lease: the next scan is due at `nextScanAt`; `resetAttempts` after a completed scan (or a given-up one). */
export async function releaseAlertSetting(
  q: Queryable, organizationId: string, currency: string, token: string, nextScanAt: Date, resetAttempts: boolean,
): Promise<boolean> {
  const rows = await q.query(
    `UPDATE balance_alert_settings SET lease_token = NULL, next_scan_at = $4,
            scan_attempts = CASE WHEN $5 THEN 0 ELSE scan_attempts END
      WHERE organization_id = $1 AND currency = $2 AND lease_token = $3 RETURNING 1 AS ok`,
    [organizationId, currency, token, nextScanAt, resetAttempts],
  );
  return rows.length === 1;
}

/** Every setting no worker holds becomes due at `now` (a full scan on demand). */
export async function makeAlertScansDue(q: Queryable, now: Date): Promise<void> {
  await q.query('UPDATE balance_alert_settings SET next_scan_at = $1 WHERE lease_token IS NULL AND next_scan_at > $1', [now]);
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
