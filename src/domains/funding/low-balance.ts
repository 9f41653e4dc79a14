/**
 * Low-balance alerts (2.12, section 6 LOW_BALANCE, D49). A pool is low when its available balance
 * is below the threshold of its currency. Rules:
 *   - the first scan that sees a pool low sends LOW_BALANCE (webhook event, plus one email per
 *     configured address);
 *   - while it stays low, at most one alert per UTC day (again on each later UTC day);
 *   - once the balance was back at or above the threshold (seen by a scan, or recorded by any
 *     ledger entry since the last alert), the next fall alerts again at once, the same day too.
 *
 * The scan is a job on the leased job runner (src/platform/jobs.ts): each alert setting is an item,
 * due every LOW_BALANCE_SCAN_INTERVAL_MS; a run leases due settings with FOR UPDATE SKIP LOCKED,
 * so several instances never scan one setting at once. The company and its pool are read through
 * the organizations and ledger domains.
 */
import type { AppContext } from '../../platform/context.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { runJobOnce, type JobDefinition, type JobLog, type JobOutcome, type Lease, type LogLevel } from '../../platform/jobs.ts';
import { fromDb, type Amount } from '../../platform/money.ts';
import { recordEvent } from '../events/index.ts';
import { availableReachedSince, findAccount } from '../ledger/index.ts';
import { findOrganizationById } from '../organizations/index.ts';
import { corporateWire } from './service.ts';
import {
  alertSettingsBacklog, leaseDueAlertSettings, listAlertEmails, lockLeasedAlertSetting, makeAlertScansDue, readAlertConfig, rearmAlert, recordAlertSent, releaseAlertSetting,
  type LeasedAlertSetting,
} from './store.ts';

export type LowBalanceDeps = Pick<AppContext, 'db' | 'clock' | 'mailer'>;

/** Each configured pool is looked at this often: an alert is at most this late (plus the poll interval). */
export const LOW_BALANCE_SCAN_INTERVAL_MS = 60_000;
/** How often each instance looks for settings due for a scan. */
export const LOW_BALANCE_POLL_INTERVAL_MS = 5_000;
/** Settings leased per run. */
export const LOW_BALANCE_BATCH_SIZE = 100;
/** A scan holds its setting at most this long before another instance may take it. */
export const LOW_BALANCE_LEASE_MS = 60_000;
/** Unexpected failures of one setting's scan before it waits for its next regular scan. */
export const LOW_BALANCE_MAX_ATTEMPTS = 3;

export interface ScanResult {
  checked: number;
  fired: number;
}

type ScanDetail = { mailIds: string[] };

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** One email per configured address (2.12 emailSettings), queued in the caller's transaction. */
async function enqueueAlertMails(
  deps: LowBalanceDeps, q: Queryable,
  a: { organizationId: string; organizationName: string; currency: string; available: Amount; threshold: Amount; now: Date },
): Promise<string[]> {
  const mailIds: string[] = [];
  for (const email of await listAlertEmails(q, a.organizationId)) {
    mailIds.push(await deps.mailer.enqueue(q, {
      to: email,
      subject: `Low balance: ${a.organizationName} ${a.currency} pool`,
      body: [
        `The ${a.currency} funding pool of ${a.organizationName} (${a.organizationId}) is below its alert threshold.`,
        `Available: ${a.available.toFixed(2)} ${a.currency}`,
        `Threshold: ${a.threshold.toFixed(2)} ${a.currency}`,
        `Time: ${a.now.toISOString()}`,
        'You receive this message at most once a day while the balance stays below the threshold.',
      ].join('\n'),
    }));
  }
  return mailIds;
}

/**
 * The emails of a LOW_BALANCE that an authorization fired in its own transaction (the webhook event
 * is already in the outbox): the same message the scan sends, with the pool's balance now.
 */
export async function mailLowBalanceAlert(deps: LowBalanceDeps, alert: { organizationId: string; currency: string }): Promise<number> {
  const mailIds = await deps.db.tx(async (q) => {
    const organization = await findOrganizationById(q, alert.organizationId);
    if (!organization) return [];
    const pool = await findAccount(q, { partnerId: organization.partnerId, ownerType: 'ORGANIZATION_POOL', ownerId: alert.organizationId, currency: alert.currency });
    const setting = (await readAlertConfig(q, alert.organizationId)).settings.find((s) => s.currency === alert.currency);
    if (!pool || !setting) return [];
    return enqueueAlertMails(deps, q, {
      organizationId: alert.organizationId, organizationName: organization.organizationName, currency: alert.currency,
      available: pool.available, threshold: fromDb(setting.threshold), now: new Date(deps.clock.now()),
    });
  });
  for (const id of mailIds) await deps.mailer.deliver(id);
  return mailIds.length;
}

/** The outcome transaction of one leased setting (the runner opens it). */
async function scanSetting(deps: LowBalanceDeps, q: Queryable, leased: LeasedAlertSetting, lease: Lease): Promise<JobOutcome<ScanDetail>> {
  const setting = await lockLeasedAlertSetting(q, leased.organizationId, leased.currency, lease.token);
  if (!setting) return { result: 'LOST_LEASE', level: 'warn' };
  const nowMs = deps.clock.now();
  const now = new Date(nowMs);
  const today = utcDay(nowMs);
  const fields = { organizationId: setting.organizationId, currency: setting.currency };
  const done = async (result: string, level: LogLevel = 'debug', detail?: ScanDetail): Promise<JobOutcome<ScanDetail>> => {
    await releaseAlertSetting(q, setting.organizationId, setting.currency, lease.token, new Date(nowMs + LOW_BALANCE_SCAN_INTERVAL_MS), true);
    return { result, level, fields, detail };
  };

  // A terminated company (or one whose pool is gone) is not scanned.
  const organization = await findOrganizationById(q, setting.organizationId);
  if (!organization || organization.lifecycle !== 'ACTIVE') return done('INACTIVE');
  const pool = await findAccount(q, { partnerId: organization.partnerId, ownerType: 'ORGANIZATION_POOL', ownerId: setting.organizationId, currency: setting.currency });
  if (!pool) return done('NO_POOL');

  const available = pool.available;
  const threshold = fromDb(setting.threshold);
  if (available.gte(threshold)) {
    if (setting.lastAlertDay === null) return done('ABOVE_THRESHOLD');
    await rearmAlert(q, setting.organizationId, setting.currency);
    return done('REARMED');
  }
  let due = setting.lastAlertDay === null || setting.lastAlertDay < today;
  // Topped up to the threshold and fallen again between two scans: the ledger entries say so.
  if (!due) due = await availableReachedSince(q, pool.accountId, setting.lastAlertVersion ?? '0', setting.threshold);
  if (!due) return done('ALREADY_ALERTED');

  await recordEvent(q, {
    partnerId: organization.partnerId,
    eventType: 'LOW_BALANCE',
    businessId: setting.organizationId,
    data: { organizationId: setting.organizationId, currency: setting.currency, available: corporateWire(available), threshold: corporateWire(threshold) },
    createTime: now,
  });
  const mailIds = await enqueueAlertMails(deps, q, { organizationId: setting.organizationId, organizationName: organization.organizationName, currency: setting.currency, available, threshold, now });
  await recordAlertSent(q, setting.organizationId, setting.currency, { day: today, version: String(pool.version), at: now });
  return done('ALERTED', 'info', { mailIds });
}

/** The low-balance scan on the leased job runner (src/platform/jobs.ts). */
export function lowBalanceJob(deps: LowBalanceDeps): JobDefinition<LeasedAlertSetting, undefined, ScanDetail> {
  return {
    name: 'low-balance-scan',
    intervalMs: LOW_BALANCE_POLL_INTERVAL_MS,
    batchSize: LOW_BALANCE_BATCH_SIZE,
    leaseMs: LOW_BALANCE_LEASE_MS,
    maxAttempts: LOW_BALANCE_MAX_ATTEMPTS,
    concurrency: 1,
    identify: (s) => ({ id: `${s.organizationId}/${s.currency}`, attempt: s.attempt }),
    claim: (q, lease) => leaseDueAlertSettings(q, lease),
    backlog: (q, now) => alertSettingsBacklog(q, now),
    complete: (q, setting, _none, lease) => scanSetting(deps, q, setting, lease),
    afterCommit: async (_setting, outcome) => {
      for (const id of outcome.detail?.mailIds ?? []) await deps.mailer.deliver(id);
    },
    fail: async (q, s, failure) => {
      // Given up: the setting waits for its next regular scan.
      const next = failure.retryAt ?? new Date(deps.clock.now() + LOW_BALANCE_SCAN_INTERVAL_MS);
      const released = await releaseAlertSetting(q, s.organizationId, s.currency, failure.lease.token, next, failure.retryAt === null);
      return released ? (failure.retryAt ? 'RETRY' : 'GAVE_UP') : 'LOST_LEASE';
    },
  };
}

/**
 * A full pass now over every alert setting no other worker holds (tests, with a moved clock, and
 * operators): every such setting becomes due, then runs of the job drain them.
 */
export async function scanLowBalances(deps: LowBalanceDeps, options: { log?: JobLog } = {}): Promise<ScanResult> {
  await makeAlertScansDue(deps.db, new Date(deps.clock.now()));
  const job = lowBalanceJob(deps);
  const result: ScanResult = { checked: 0, fired: 0 };
  for (;;) {
    const run = await runJobOnce(job, { db: deps.db, clock: deps.clock, log: options.log });
    for (const item of run.items) {
      if (!item.failed && !['INACTIVE', 'NO_POOL', 'LOST_LEASE'].includes(item.result)) result.checked++;
      if (item.result === 'ALERTED') result.fired++;
    }
    if (run.claimed < job.batchSize) return result;
  }
}
