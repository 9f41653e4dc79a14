import { randomBytes } from 'node:crypto';
import { LosslessNumber } from 'lossless-json';
import type { CardServiceClient } from '../../sdk/index.ts';
export { expectCode } from './expect-code.ts';

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

export const dec = (text: string) => new LosslessNumber(text);

/** The exact digits of a JSON number from a response (or null). */
export function digits(value: unknown): string | null {
  if (value === null) return null;
  if (value instanceof LosslessNumber) return value.value;
  if (typeof value === 'number') return String(value);
  throw new TypeError(`not a JSON number: ${JSON.stringify(value)}`);
}
