import { zonedIso } from '../../platform/time-zone.ts';
import { PERIODS, type Period } from './model.ts';

/**
 * Velocity periods (D11, 2.11; issue 31: in the partner's time zone). The periods themselves (their
 * keys, zones, starts and ends) are made in one place, the database's velocity_periods
 * (src/domains/velocity/sql/velocity_periods.sql), because card_authorize, which learns the card's
 * partner only in the database, adds usage under them. This module names them and shows them.
 */

/** Period names as stored in velocity_usage.period. */
export const PERIOD_COLUMN: Record<Period, 'DAILY' | 'MONTHLY' | 'QUARTERLY' | 'YEARLY'> = {
  daily: 'DAILY',
  monthly: 'MONTHLY',
  quarterly: 'QUARTERLY',
  yearly: 'YEARLY',
};

/** One period as query-quota shows it: its key, zone, and start and end as local time with offset. */
export interface PeriodWindow {
  periodKey: string;
  timeZone: string;
  /** First instant counted in the period, e.g. 2026-11-26T00:00:00+08:00. */
  startTime: string;
  /** First instant of the next period (exclusive). */
  endTime: string;
}

/** The wire view of velocity_periods' rows, by period. */
export function periodWindows(
  rows: readonly { period: string; periodKey: string; timeZone: string; startsAt: Date; endsAt: Date }[],
): Record<Period, PeriodWindow> {
  const out = {} as Record<Period, PeriodWindow>;
  for (const period of PERIODS) {
    const row = rows.find((r) => r.period === PERIOD_COLUMN[period]);
    if (!row) throw new Error(`Invariant violated: velocity_periods returned no ${period} period`);
    out[period] = {
      periodKey: row.periodKey,
      timeZone: row.timeZone,
      startTime: zonedIso(row.startsAt, row.timeZone),
      endTime: zonedIso(row.endsAt, row.timeZone),
    };
  }
  return out;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/**
 * The period keys of an instant for a partner whose zone has always been UTC (the default): day
 * YYYYMMDD, month YYYYMM, quarter YYYYQn, year YYYY. A purchase at 2026-03-31T23:59:59.999Z is in
 * 20260331 / 202603 / 2026Q1 / 2026; one millisecond later in 20260401 / 202604 / 2026Q2 / 2026.
 * For tests and tools only; test/velocity-timezones.test.ts checks it agrees with velocity_periods.
 */
export function periodKeys(at: Date): Record<Period, string> {
  const time = at.getTime();
  if (!Number.isFinite(time)) throw new Error('Invariant violated: period of an invalid date');
  const year = pad(at.getUTCFullYear(), 4);
  const month = at.getUTCMonth() + 1;
  return {
    daily: `${year}${pad(month, 2)}${pad(at.getUTCDate(), 2)}`,
    monthly: `${year}${pad(month, 2)}`,
    quarterly: `${year}Q${Math.floor((month - 1) / 3) + 1}`,
    yearly: year,
  };
}
