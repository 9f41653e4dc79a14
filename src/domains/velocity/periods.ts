import type { Period } from './model.ts';

/** Period names as stored in velocity_usage.period. */
export const PERIOD_COLUMN: Record<Period, 'DAILY' | 'MONTHLY' | 'QUARTERLY' | 'YEARLY'> = {
  daily: 'DAILY',
  monthly: 'MONTHLY',
  quarterly: 'QUARTERLY',
  yearly: 'YEARLY',
};

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/**
 * The period keys of an instant, in UTC (D11, 2.11): day YYYYMMDD, month YYYYMM, quarter YYYYQn,
 * year YYYY. A purchase at 2026-03-31T23:59:59.999Z is in 20260331 / 202603 / 2026Q1 / 2026; one
 * millisecond later in 20260401 / 202604 / 2026Q2 / 2026.
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
