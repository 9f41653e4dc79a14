// test-database: none (never opens the test database: `npm test` runs it in the embedded pass only; test/run.ts)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOG } from '../src/platform/errors.ts';
import { ROOT } from './helpers/compiled-service.ts';

/** Every code of spec section 7 and of the decisions (D2, D5, D14, "Errors added by these decisions"). */
const SPEC_CODES = [
  'SYS_ILLEGAL_PARAM', 'DAPI_TIMESTAMP_FORMAT_ERROR', 'DAPI_TIMESTAMP_EXPIRED', 'DAPI_PARAM_INVALID', 'APPLY_NOT_FOUND',
  'CARD_INVALID', 'PCI_NOT_CERTIFIED', 'CARD_NOT_DEDICATED', 'UNSUPPORTED_CURRENCY', 'CURRENCY_NOT_ALLOWED', 'SUBJECT_INVALID',
  'SUBJECT_TYPE_NOT_ALLOWED', 'CUSTOMER_INVALID', 'KYC_IN_REVIEW', 'COUNTRY_SANCTIONED', 'STATUS_CONFLICT',
  'ORGANIZATION_INVALID', 'BALANCE_ALERT_CURRENCY_NO_POOL', 'VELOCITY_RULE_NOT_FOUND', 'VELOCITY_RULE_VERSION_CONFLICT',
  'VELOCITY_RULE_STATUS_INVALID',
  'SYS_NOT_FOUND', 'SYS_RATE_LIMITED', 'SYS_INTERNAL_ERROR', 'DAPI_API_KEY_INVALID', 'DAPI_SIGN_INVALID', 'DAPI_NONCE_INVALID',
  'DAPI_NONCE_REPLAYED', 'DAPI_IP_NOT_ALLOWED', 'SECRET_EXTRACT_INVALID', 'SECRET_EXTRACT_EXPIRED', 'ORGANIZATION_REF_DUPLICATE',
  'CUSTOMER_REF_DUPLICATE', 'CARD_APPLY_REF_DUPLICATE', 'CARD_PROFILE_INVALID', 'VELOCITY_RULE_CURRENCY_MISMATCH',
  'INSUFFICIENT_BALANCE', 'EXTERNAL_TRAN_ID_DUPLICATE', 'VERIFICATION_CODE_INVALID', 'CAPABILITY_FROZEN', 'KYC_NOT_APPROVED',
  // D52 (issue 30)
  'CARD_UPGRADE_REF_DUPLICATE', 'CARD_UPGRADE_IN_PROGRESS', 'CARD_ACTIVATION_CODE_INVALID', 'CARD_ACTIVATION_LOCKED',
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith('.ts') ? [full] : [];
  });
}

describe('error catalog (D2)', () => {
  it('holds every code of spec section 7 and of the decisions', () => {
    for (const code of SPEC_CODES) assert.ok(code in ERROR_CATALOG, `${code} missing from the catalog`);
  });

  it('maps statuses as D2 says: auth 401, IP 403, unknown path 404, rate limit 429, internal 500, database unreachable 503, framework 400, business 200', () => {
    const expected: Record<string, number> = {
      SYS_ILLEGAL_PARAM: 400, SYS_NOT_FOUND: 404, SYS_RATE_LIMITED: 429, SYS_INTERNAL_ERROR: 500, DAPI_IP_NOT_ALLOWED: 403,
      DAPI_API_KEY_INVALID: 401, DAPI_SIGN_INVALID: 401, DAPI_NONCE_INVALID: 401, DAPI_NONCE_REPLAYED: 401,
      DAPI_TIMESTAMP_FORMAT_ERROR: 401, DAPI_TIMESTAMP_EXPIRED: 401,
      // Project decision (docs/decisions.md, issue 14): a copy of a request still executing is
      // transient and retryable like a rate limit, so it is not a business answer.
      IDEMPOTENCY_KEY_IN_USE: 409,
      // Issue 29: an operator whose role does not allow the action (or a change without its CSRF token).
      SYS_FORBIDDEN: 403,
      // Issue 28: the database unreachable (restart, failover) is a transient refusal, not a business answer.
      SYS_UNAVAILABLE: 503,
    };
    for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
      const want = expected[code] ?? (code === 'SYS_UNAUTHORIZED' ? 401 : 200);
      assert.equal(entry.httpStatus, want, code);
      assert.ok(entry.message.length > 0, code);
    }
  });

  it('every code the source raises or documents is in the catalog', () => {
    const root = path.join(ROOT, 'src');
    const used = new Set<string>();
    for (const file of sourceFiles(root)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/ApiError\(\s*'([A-Z0-9_]+)'/g)) used.add(m[1]);
      for (const m of text.matchAll(/errors:\s*\[([^\]]*)\]/g)) {
        for (const c of m[1].matchAll(/'([A-Z0-9_]+)'/g)) used.add(c[1]);
      }
    }
    assert.ok(used.size > 5, 'the scan found the codes in use');
    for (const code of used) assert.ok(code in ERROR_CATALOG, `${code} is used but not in the catalog`);
  });
});
