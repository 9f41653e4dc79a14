import type { LosslessNumber } from 'lossless-json';
import type { SignedHttpClient } from '../client.ts';

export class SandboxResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Stores an exact decimal and reads it back (D4).
   * @example await client.sandbox.decimalEcho(decimal('0.123456789012345678'));
   */
  decimalEcho(amount: LosslessNumber | number): Promise<{ probeId: string; amount: LosslessNumber | number }> {
    return this.http.call('POST', '/open-api/sandbox/v1/decimal-echo', { body: { amount } });
  }

  /**
   * Simulates an incoming deposit (D40) to a company funding pool (subjectType ORGANIZATION).
   * @example await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: organizationId, currency: 'USD', amount: decimal('100.00') });
   */
  deposit(params: { subjectType: 'ORGANIZATION' | 'CARD'; subjectId: string; currency: string; amount: LosslessNumber | number }): Promise<{
    postingId: string; subjectType: string; subjectId: string; currency: string;
    amount: LosslessNumber | number; available: LosslessNumber | number; pending: LosslessNumber | number; total: LosslessNumber | number;
  }> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/deposit', { body: params });
  }

  /**
   * Decides the employee's KYC review in flight (D40, D17).
   * @example await client.sandbox.kycDecision({ customerId, decision: 'APPROVED' });
   */
  kycDecision(params: { customerId: string; decision: 'APPROVED' | 'REJECTED'; reason?: string | null }): Promise<{
    customerId: string; kycStatus: 'APPROVED' | 'REJECTED'; reason: string | null;
  }> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/kyc-decision', { body: params });
  }
}
