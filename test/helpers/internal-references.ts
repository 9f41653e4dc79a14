/**
 * Issue 32, item 6: what a partner reads (the API reference, error messages, READMEs, the SDK's
 * declarations) speaks the partner's language: no internal decision numbers ("D23"), spec section
 * numbers ("4.5 rule 1", "(2.12)") or issue numbers. Those stay in code comments, tests and
 * docs/decisions.md. One detector for test/docs-standalone.test.ts and test/sdk-package.test.ts.
 */
const INTERNAL_REFERENCES: [RegExp, string][] = [
  [/\bD\d{1,3}\b/, 'a decision number (D23)'],
  [/\b(?:spec|sections?)\s+\d/i, 'a spec section ("spec 5.3", "section 3")'],
  [/\(\s*\d+\.\d+/, 'a section number in parentheses ("(2.12)")'],
  [/\b\d+\.\d+(?:\.\d+)?\s+rules?\s+\d/i, 'a spec rule ("4.5 rule 1")'],
  [/\b\d+\.\d+\s+(?:rules?|says|table)\b/i, 'a spec section ("2.3 rule", "4.3 says", "4.5 table")'],
  [/\bas in \d+\.\d+/i, 'a section number ("as in 5.3")'],
  [/^\s*(?:\/\*\*|\*)?\s*[1-9]\.\d{1,2}\s*[:/]\s/, 'a section number opening a sentence ("4.3: credit", "2.12 / section 8")'],
  [/\bthe [1-9]\.\d{1,2} (?:objects?|elements?|address(?:es)?|balances?|types?)\b/i, 'a section number naming a shape ("the 2.3 object")'],
  [/\bissue\s+#?\d+/i, 'an issue number'],
];

/** The internal references in a partner-facing text, as `what: …snippet…`. */
export function internalReferences(text: string): string[] {
  const found: string[] = [];
  for (const [pattern, what] of INTERNAL_REFERENCES) {
    const m = pattern.exec(text);
    if (m) found.push(`${what}: …${text.slice(Math.max(0, m.index - 40), m.index + m[0].length + 20)}…`);
  }
  return found;
}
