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
import type { AppContext } from '../../platform/context.ts';
import { recordEvent } from '../events/index.ts';
import { fromDb } from '../../platform/money.ts';
import { corporateWire } from './service.ts';
import { availableReachedSince } from '../ledger/index.ts';
import { leaseAlertCandidates, listAlertEmails, rearmAlert, recordAlertSent } from './store.ts';

export type LowBalanceDeps = Pick<AppContext, 'db' | 'clock' | 'mailer'>;

/** How often the worker scans the pools: an alert is at most this late. */
export const LOW_BALANCE_SCAN_INTERVAL_MS = 60_000;
/** Settings rows leased per transaction. */
const SCAN_BATCH_SIZE = 100;

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
      const rows = await leaseAlertCandidates(q, after, SCAN_BATCH_SIZE);
      for (const c of rows) {
        result.checked++;
        const available = fromDb(c.available);
        const threshold = fromDb(c.threshold);
        if (available.gte(threshold)) {
          if (c.lastAlertDay !== null) {
            await rearmAlert(q, c.organizationId, c.currency);
          }
          continue;
        }
        let due = c.lastAlertDay === null || c.lastAlertDay < today;
        if (!due) {
          // Topped up to the threshold and fallen again between two scans: the entries say so.
          due = await availableReachedSince(q, c.accountId, c.lastAlertVersion ?? '0', c.threshold);
        }
        if (!due) continue;
        await recordEvent(q, {
          partnerId: c.partnerId,
          eventType: 'LOW_BALANCE',
          businessId: c.organizationId,
          data: { organizationId: c.organizationId, currency: c.currency, available: corporateWire(available), threshold: corporateWire(threshold) },
          createTime: now,
        });
        const emails = await listAlertEmails(q, c.organizationId);
        for (const email of emails) {
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
        await recordAlertSent(q, c.organizationId, c.currency, { day: today, version: c.version, at: now });
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
