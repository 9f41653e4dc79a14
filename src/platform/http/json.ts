import { isInteger, isSafeNumber, LosslessNumber, parse } from 'lossless-json';
import { invariant } from '../errors.ts';

/**
 * Lossless JSON (D4). Safe integers become JS numbers (so integer fields validate normally);
 * every other number stays a LosslessNumber holding its exact text until the money module reads it.
 */
function parseNumber(text: string): number | LosslessNumber {
  return isInteger(text) && isSafeNumber(text) ? Number(text) : new LosslessNumber(text);
}

export function parseJson(text: string): unknown {
  return parse(text, null, parseNumber);
}

/** How JSON.stringify writes a LosslessNumber (its own fields); replaced by the bare digits. */
const LOSSLESS_NUMBER_OBJECT = /\{"value":"(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)","isLosslessNumber":true\}/g;
const LOSSLESS_MARK = '"isLosslessNumber":true}';

/**
 * Native JSON.stringify (several times faster than a JS serializer on the hot path), then every
 * LosslessNumber object it wrote becomes a JSON number with exactly its digits. Inside a JSON
 * string a quote is always escaped, so the pattern can only match a real LosslessNumber.
 */
export function stringifyJson(value: unknown): string {
  let out = JSON.stringify(value);
  if (out === undefined) throw new Error('value is not serializable as JSON');
  if (out.includes(LOSSLESS_MARK)) {
    out = out.replace(LOSSLESS_NUMBER_OBJECT, '$1');
    invariant(!out.includes(LOSSLESS_MARK), 'a LosslessNumber was not written as a number');
  }
  return out;
}
