import assert from 'node:assert/strict';
import { CardServiceError } from '../../sdk/index.ts';
import { ERROR_CATALOG } from '../../src/platform/errors.ts';

/**
 * Awaits a call that must fail with `code` (a CardServiceError of the SDK) and returns the error.
 * A code of the service's catalog must come with the catalog's HTTP status (D1: business errors
 * with 200, D5's signature codes with 401, ...); `messageIncludes` checks the message too.
 * The one definition for every test (issue 33).
 */
export async function expectCode(promise: Promise<unknown>, code: string, messageIncludes?: string): Promise<CardServiceError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof CardServiceError, `expected CardServiceError, got ${String(err)}`);
    assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
    const catalogued = (ERROR_CATALOG as Record<string, { httpStatus: number } | undefined>)[code];
    if (catalogued) assert.equal(err.httpStatus, catalogued.httpStatus, `${code} answered with HTTP ${err.httpStatus}`);
    if (messageIncludes) assert.ok(err.message.includes(messageIncludes), `message "${err.message}" names "${messageIncludes}"`);
    return err;
  }
  assert.fail(`expected ${code}, but the call succeeded`);
}
