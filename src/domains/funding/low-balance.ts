/**
 * Low-balance alerts (2.12, section 6 LOW_BALANCE, D49). A pool is low when its available balance
 * is below the threshold of its currency. Rules:
 *   - the first scan that sees a pool low sends LOW_BALANCE (webhook event, plus one email per
 *     configured address);
 *   - while it stays low, at most one alert per UTC day (again on each later UTC day);
 *   - once the balance was back at or above the threshold (seen by a scan, or recorded by any
 *     ledger entry since the last alert), the next fall alerts again at once, the same day too.
 * Safe on several instances: each batch leases its settings rows with FOR UPDATE SKIP LOCKED.
 */
import type { AppContext } from '../../app.ts';
import { recordEvent } from '../events/outbox.ts';
import { fromDb } from '../../platform/money.ts';
import { corporateWire } from './service.ts';

export type LowBalanceDeps = Pick<AppContext, 'db' | 'clock' | 'mailer'>;

/** How often the worker scans the pools: an alert is at most this late. */
export const LOW_BALANCE_SCAN_INTERVAL_MS = 60_000;
/** Settings rows leased per transaction. */
const SCAN_BATCH_SIZE = 100;

interface Candidate {
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

export interface ScanResult {
  checked: number;
  fired: number;
}

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** One pass over every alert setting; tests call it directly with a moved clock. */
export async function scanLowBalances(deps: LowBalanceDeps): Promise<ScanResult> {
  const result: ScanResult = { checked: 0, fired: 0 };
  let after: [string, string] = ['', ''];
  for (;;) {
    const nowMs = deps.clock.now();
    const now = new Date(nowMs);
    const today = utcDay(nowMs);
    const mailIds: string[] = [];
    const batch = await deps.db.tx(async (q) => {
      const rows = await q.query<Candidate>(
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
        [after[0], after[1], SCAN_BATCH_SIZE],
      );
      for (const c of rows) {
        result.checked++;
        const available = fromDb(c.available);
        const threshold = fromDb(c.threshold);
        if (available.gte(threshold)) {
          if (c.lastAlertDay !== null) {
            await q.query(
              `UPDATE balance_alert_settings SET last_alert_day = NULL, last_alert_version = NULL WHERE organization_id = $1 AND currency = $2`,
              [c.organizationId, c.currency],
            );
          }
          continue;
        }
        let due = c.lastAlertDay === null || c.lastAlertDay < today;
        if (!due) {
          // Topped up to the threshold and fallen again between two scans: the entries say so.
          const recovered = await q.query(
            `SELECT 1 FROM ledger_entries WHERE account_id = $1 AND account_version > $2 AND available_after >= $3::numeric LIMIT 1`,
            [c.accountId, c.lastAlertVersion ?? '0', c.threshold],
          );
          due = recovered.length > 0;
        }
        if (!due) continue;
        await recordEvent(q, {
          partnerId: c.partnerId,
          eventType: 'LOW_BALANCE',
          businessId: c.organizationId,
          data: { organizationId: c.organizationId, currency: c.currency, available: corporateWire(available), threshold: corporateWire(threshold) },
          createTime: now,
        });
        const emails = await q.query<{ email: string }>(
          'SELECT email FROM balance_alert_emails WHERE organization_id = $1 ORDER BY position',
          [c.organizationId],
        );
        for (const { email } of emails) {
          mailIds.push(await deps.mailer.enqueue(q, {
            to: email,
            subject: `Low balance: ${c.organizationName} ${c.currency} pool`,
            body: [
              `The ${c.currency} funding pool of ${c.organizationName} (${c.organizationId}) is below its alert threshold.`,
              `Available: ${available.toFixed(2)} ${c.currency}`,
              `Threshold: ${threshold.toFixed(2)} ${c.currency}`,
              `Time: ${now.toISOString()}`,
              'You receive this message at most once a day while the balance stays below the threshold.',
            ].join('\n'),
          }));
        }
        await q.query(
          `UPDATE balance_alert_settings SET last_alert_day = $3::date, last_alert_version = $4, last_alert_at = $5
            WHERE organization_id = $1 AND currency = $2`,
          [c.organizationId, c.currency, today, c.version, now],
        );
        result.fired++;
      }
      return rows;
    });
    for (const id of mailIds) await deps.mailer.deliver(id);
    if (batch.length < SCAN_BATCH_SIZE) break;
    const last = batch[batch.length - 1];
    after = [last.organizationId, last.currency];
  }
  return result;
}
