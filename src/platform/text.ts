/**
 * Text from outside the service (a partner's answer, an error about it) made safe to store, log and
 * echo: anything but a string is null; control characters (C0 with NUL, DEL, C1), lone surrogates
 * and bidirectional overrides each become U+FFFD (shown, not silently dropped, so "NO\u0000PE" never
 * reads as "NOPE"); surrounding blanks go; at most `maxChars` code points, the cut marked with an
 * ellipsis. Empty is null. Invalid UTF-8 was already turned into U+FFFD when the bytes were decoded.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function cleanText(value: unknown, maxChars: number): string | null {
  if (typeof value !== 'string') return null;
  // Bound the work before scanning: maxChars code points fit in 2 * maxChars UTF-16 units.
  const head = value.length > 2 * maxChars + 2 ? value.slice(0, 2 * maxChars + 2) : value;
  const points = Array.from(head.replace(UNSAFE, '\ufffd').trim());
  if (points.length === 0) return null;
  return points.length > maxChars || head.length < value.length ? `${points.slice(0, maxChars - 1).join('')}\u2026` : points.join('');
}
