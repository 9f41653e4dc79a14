import { Decimal } from 'decimal.js';
import { isLosslessNumber, LosslessNumber } from 'lossless-json';
import type { AmountRules } from '../../sdk/contract/wire.ts';
import { invariant, paramInvalid } from './errors.ts';

/**
 * Exact money (D4). Amounts arrive as LosslessNumber (or a JS number for a safe integer) from the
 * lossless body parser, are computed with decimal.js, travel to the database as strings into
 * NUMERIC columns, and leave as LosslessNumber so the JSON writer prints their exact digits.
 */
const ExactDecimal = Decimal.clone({ precision: 80, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -100, toExpPos: 100 });
export type Amount = InstanceType<typeof ExactDecimal>;

/** Scale of corporate currencies (USD, HKD) and of managed-balance assets (D4); the wire contract defines them. */
export { ASSET_MAX_SCALE, CORPORATE_SCALE } from '../../sdk/contract/wire.ts';
import { CORPORATE_SCALE } from '../../sdk/contract/wire.ts';
export type { AmountRules };
/** Largest magnitude accepted anywhere: NUMERIC(38,18) holds 20 integer digits. */
const MAX_INTEGER_DIGITS = 20;

const PLAIN_DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?$/;


/** The text of a wire number exactly as the partner wrote it, or null when it is no number. */
export function wireNumberText(value: unknown): string | null {
  if (isLosslessNumber(value)) return (value as LosslessNumber).value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/** Why a wire value breaks the rules, or null when it is a valid amount. */
export function amountViolation(value: unknown, rules: AmountRules): string | null {
  const text = wireNumberText(value);
  if (text === null) return 'must be a JSON number';
  if (!PLAIN_DECIMAL.test(text)) return 'must be a plain decimal number without exponent';
  const [intPart, fraction = ''] = text.replace('-', '').split('.');
  if (fraction.length > rules.maxScale) return `must have at most ${rules.maxScale} decimal places`;
  if (intPart.length > MAX_INTEGER_DIGITS) return `must have at most ${MAX_INTEGER_DIGITS} integer digits`;
  const amount = new ExactDecimal(text);
  if (rules.sign === 'positive' && !amount.gt(0)) return 'must be greater than 0';
  if (rules.sign === 'nonNegative' && amount.lt(0)) return 'must not be negative';
  return null;
}

/** Parses a validated wire amount; a violation here is DAPI_PARAM_INVALID naming the field. */
export function parseAmount(field: string, value: unknown, rules: AmountRules): Amount {
  const violation = amountViolation(value, rules);
  if (violation) throw paramInvalid(field, violation);
  return new ExactDecimal(wireNumberText(value)!);
}

/** A NUMERIC column value (string) as an Amount. */
export function fromDb(value: string | null | undefined): Amount {
  invariant(typeof value === 'string' && PLAIN_DECIMAL.test(value), `NUMERIC from database: ${String(value)}`);
  return new ExactDecimal(value);
}

export function amount(value: string | number): Amount {
  return new ExactDecimal(value);
}

/**
 * `value` times `rate` (units of the target per unit of `value`), cut to `scale` decimals: UP for
 * what a payer owes (holds, clearings, fees), DOWN for what is given back or received (releases,
 * refunds, conversions). Asset conversions of D35 all go through here.
 */
export function atRate(value: Amount, rate: Amount | string, scale: number, rounding: 'UP' | 'DOWN'): Amount {
  const r = typeof rate === 'string' ? fromDb(rate) : rate;
  return value.times(r).toDecimalPlaces(scale, rounding === 'UP' ? ExactDecimal.ROUND_UP : ExactDecimal.ROUND_DOWN);
}

/** For SQL parameters: exact, no exponent, no trailing zeros. */
export function toDb(value: Amount): string {
  return value.toFixed();
}

/**
 * For responses: a JSON number carrying exactly these digits. A NUMERIC column's text is written as
 * the database holds it (its scale included: `10.50` stays `10.50`); a computed Amount in its
 * shortest exact form.
 */
export function toWire(value: Amount | string): LosslessNumber {
  if (typeof value === 'string') {
    invariant(PLAIN_DECIMAL.test(value), `amount text for the wire: ${value}`);
    return new LosslessNumber(value);
  }
  return new LosslessNumber(value.toFixed());
}

/**
 * Corporate amounts (USD, HKD) on the wire with exactly two decimals (D4; docs/decisions.md 21):
 * `100.50`, `0.00`, the same digits wherever one pool or card balance or movement is shown. The
 * ledger never holds more decimals for these currencies (amounts are parsed with scale 2).
 */
export function corporateWire(value: Amount | string): LosslessNumber {
  const dec = typeof value === 'string' ? fromDb(value) : value;
  invariant(dec.decimalPlaces() <= CORPORATE_SCALE, `corporate amount ${dec.toFixed()} has at most ${CORPORATE_SCALE} decimals`);
  return new LosslessNumber(dec.toFixed(CORPORATE_SCALE));
}

export const ZERO = new ExactDecimal(0);
