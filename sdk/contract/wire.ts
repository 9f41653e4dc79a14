/**
 * The wire contract shared by the service and the SDK: the TypeBox schemas that validate the
 * service's routes (and document them in OpenAPI) are defined in sdk/contract/, and the SDK's
 * request and response types are `Static<typeof Schema>` of the same objects, so the two cannot
 * drift. The contract imports only `typebox` (and `lossless-json` types): it ships with the SDK
 * when the SDK is packaged, and the service imports it from here (docs/decisions.md).
 */
import { Type, type TSchema } from 'typebox';
import type { LosslessNumber } from 'lossless-json';

/** Schema keyword marking an exact decimal amount, checked by the service's validator (lossless). */
export const DECIMAL_KEYWORD = 'x-decimal';

/** Scale of corporate currencies (USD, HKD) and of managed-balance assets (D4). */
export const CORPORATE_SCALE = 2;
export const ASSET_MAX_SCALE = 18;

export interface AmountRules {
  maxScale: number;
  /** 'positive': > 0; 'nonNegative': >= 0; 'any': signed. */
  sign: 'positive' | 'nonNegative' | 'any';
}

/** An exact amount on the wire: LosslessNumber, or number for a safe integer (D4). Build one with `decimal('10.50')`. */
export type WireAmount = LosslessNumber | number;

/**
 * An exact decimal amount in a request: `type: number` in the published document, checked
 * losslessly at run time (scale, sign, no exponent) by the x-decimal keyword.
 */
export function Money(rules: AmountRules, options: { description?: string } = {}) {
  const sign = rules.sign === 'positive' ? 'positive, ' : rules.sign === 'nonNegative' ? 'non-negative, ' : '';
  return Type.Unsafe<WireAmount>({
    type: 'number',
    [DECIMAL_KEYWORD]: rules,
    description: options.description ?? `Exact decimal amount: ${sign}at most ${rules.maxScale} decimal places`,
  });
}

/** An exact amount in a response: a JSON number with its exact digits (read it with a lossless parser). */
export function WireNumber(options: { description?: string } = {}) {
  return Type.Unsafe<WireAmount>({ type: 'number', ...options });
}

/**
 * One of a list of strings: the JSON Schema of a union of literals (`anyOf` of `const`), typed as
 * the union of the values (a union mapped from a runtime list would otherwise type as never).
 */
export function Literals<const T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>(Type.Union(values.map((v) => Type.Literal(v)), options));
}

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** Paging query parameters (D9). */
export const PagingQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, default 20, max 100' })),
};

/** The paging envelope (D9). */
export function Page<T extends TSchema>(item: T) {
  return Type.Object({
    page: Type.Integer(),
    pageSize: Type.Integer(),
    total: Type.Number(),
    result: Type.Array(item),
  });
}

/** ISO-8601 UTC with milliseconds (D11). */
export const IsoTime = Type.String({ format: 'date-time', description: 'ISO-8601 UTC with milliseconds' });
