import { isInteger, isSafeNumber, LosslessNumber, parse, stringify } from 'lossless-json';

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

export function stringifyJson(value: unknown): string {
  const out = stringify(value);
  if (out === undefined) throw new Error('value is not serializable as JSON');
  return out;
}
