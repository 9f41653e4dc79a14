import { randomBytes } from 'node:crypto';
import {
  decimal, decimalText, type CardServiceClient, type CreateCustomerParams, type CreateOrganizationParams,
  type Customer, type Organization,
} from '../../sdk/index.ts';
import type { TestService } from './service.ts';
export { expectCode } from './expect-code.ts';

/** Fixtures and assertions shared by the organizations, customers, funding and ledger tests. */

export function uniqueRef(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

export function newCompany(client: CardServiceClient, overrides: Partial<CreateOrganizationParams> = {}): Promise<Organization> {
  return client.organizations.create({
    organizationRef: uniqueRef('org'),
    organizationName: 'Acme Trading Limited',
    companyRegistrationNumber: 'CR-1234567',
    countryCode: 'HK',
    fundingCurrencies: ['USD', 'HKD'],
    ...overrides,
  });
}

export function newEmployee(client: CardServiceClient, organizationId: string, overrides: Partial<CreateCustomerParams> = {}): Promise<Customer> {
  return client.customers.create({
    organizationId,
    customerRef: uniqueRef('emp'),
    firstName: 'Ada',
    lastName: 'Lovelace',
    phoneCountryCode: 'HK',
    phoneNumber: '91234567',
    email: 'ada@example.com',
    ...overrides,
  });
}

/** An employee whose KYC is APPROVED (sandbox simulation). */
export async function approvedEmployee(client: CardServiceClient, organizationId: string, overrides: Partial<CreateCustomerParams> = {}): Promise<Customer> {
  const employee = await newEmployee(client, organizationId, overrides);
  await client.sandbox.kycDecision({ customerId: employee.customerId, decision: 'APPROVED' });
  return client.customers.query(employee.customerId);
}

export function admin(svc: TestService) {
  return {
    call: <T = unknown>(method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) =>
      svc.admin.call<T>(method, path, method === 'GET' ? { query: body as Record<string, string> } : { body }),
    restrictions: (body: Record<string, unknown>) => svc.admin.call<{
      status: string; restrictions: { code: string; source: string }[]; retainedRestrictions: string[];
    }>('POST', '/internal/admin/v1/restrictions', { body }),
    suspend: (subjectType: 'CUSTOMER' | 'ORGANIZATION', subjectId: string, suspended: boolean) =>
      svc.admin.call('POST', '/internal/admin/v1/suspensions', { body: { subjectType, subjectId, suspended } }),
    terminateOrganization: (organizationId: string) =>
      svc.admin.call('POST', '/internal/admin/v1/organizations/terminate', { body: { organizationId } }),
    kycDecision: (customerId: string, decision: 'APPROVED' | 'REJECTED', reason?: string) =>
      svc.admin.call('POST', '/internal/admin/v1/kyc-decisions', { body: { customerId, decision, reason } }),
    outboxMail: (recipient: string) => svc.admin.call<{ total: number; result: { recipient: string; subject: string; body: string }[] }>(
      'GET', '/internal/admin/v1/outbox-mail', { query: { recipient, pageSize: 100 } }),
    audit: (partnerId?: string) => svc.admin.call<{ ok: boolean; accounts: number; postings: number; entries: number; findings: unknown[] }>(
      'GET', '/internal/admin/v1/ledger/audit', { query: partnerId ? { partnerId } : {} }),
  };
}

/** Events of the partner through the partner's event log, oldest first (by per-business sequence). */
export async function eventsOf(client: CardServiceClient, filter: { eventType?: string; businessId?: string }) {
  const page = await client.events.listEvents({ ...filter, pageSize: 100 });
  return [...page.result].sort((a, b) => a.sequence - b.sequence || a.createTime.localeCompare(b.createTime));
}

export function money(value: unknown): string {
  return decimalText(value);
}

export { decimal };
