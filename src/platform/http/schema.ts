import { Type, type TSchema } from 'typebox';
import type { LosslessNumber } from 'lossless-json';
import type { AmountRules } from '../money.ts';
import { DECIMAL_KEYWORD } from './validation.ts';

/** A wire amount as it reaches a handler: LosslessNumber, or number for a safe integer (D4). */
export type WireAmount = LosslessNumber | number;

/**
 * An exact decimal amount: `type: number` in the published document, checked losslessly at run
 * time (scale, sign, no exponent) by the x-decimal keyword.
 */
export function Money(rules: AmountRules, options: { description?: string } = {}) {
  const sign = rules.sign === 'positive' ? 'positive, ' : rules.sign === 'nonNegative' ? 'non-negative, ' : '';
  return Type.Unsafe<WireAmount>({
    type: 'number',
    [DECIMAL_KEYWORD]: rules,
    description: options.description ?? `Exact decimal amount: ${sign}at most ${rules.maxScale} decimal places`,
  });
}

/** D9 paging query parameters. */
export const PagingQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, default 20, max 100' })),
};

/** D9 paging envelope. */
export function Page<T extends TSchema>(item: T) {
  return Type.Object({
    page: Type.Integer(),
    pageSize: Type.Integer(),
    total: Type.Number(),
    result: Type.Array(item),
  });
}

export interface Paging {
  page: number;
  pageSize: number;
}

export function pageOf<T>(paging: Paging, total: number, result: T[]) {
  return { page: paging.page, pageSize: paging.pageSize, total, result };
}

/** D11: ISO-8601 UTC with milliseconds. */
export function isoTime(value: Date | string | null): string | null {
  if (value === null) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

export const IsoTime = Type.String({ format: 'date-time', description: 'ISO-8601 UTC with milliseconds' });
