import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import { LosslessNumber } from 'lossless-json';
import { CardServiceError, type CardServiceClient } from '../../sdk/index.ts';

/** Shared set-up of the velocity tests: companies and employees through the public API. */

export const uniq = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

export async function newOrganization(client: CardServiceClient, fundingCurrencies: ('USD' | 'HKD')[] = ['USD', 'HKD']): Promise<string> {
  const org = await client.http.call<{ organizationId: string }>('POST', '/open-api-corp/organization/v1/create', {
    body: {
      organizationRef: uniq('org'), organizationName: 'Velocity Test Ltd', companyRegistrationNumber: uniq('crn'),
      countryCode: 'HK', fundingCurrencies,
    },
  });
  return org.organizationId;
}

export async function newEmployee(client: CardServiceClient, organizationId: string): Promise<string> {
  const employee = await client.http.call<{ customerId: string }>('POST', '/open-api-corp/customer/v1/create', {
    body: {
      organizationId, customerRef: uniq('emp'), firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com',
      phoneCountryCode: 'HK', phoneNumber: '91234567',
    },
  });
  return employee.customerId;
}

/** Expects the call to fail with this code; returns the error. */
export async function expectCode(promise: Promise<unknown>, code: string, messageIncludes?: string): Promise<CardServiceError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof CardServiceError, `expected CardServiceError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.equal(err.httpStatus, 200);
    if (messageIncludes) assert.ok(err.message.includes(messageIncludes), `"${err.message}" should mention ${messageIncludes}`);
    return err;
  }
  assert.fail(`expected ${code}, but the call succeeded`);
}

export const dec = (text: string) => new LosslessNumber(text);

/** The exact digits of a JSON number from a response (or null). */
export function digits(value: unknown): string | null {
  if (value === null) return null;
  if (value instanceof LosslessNumber) return value.value;
  if (typeof value === 'number') return String(value);
  throw new TypeError(`not a JSON number: ${JSON.stringify(value)}`);
}
