import type { LosslessNumber } from 'lossless-json';
import type { SignedHttpClient } from '../client.ts';
import type { CardTransaction, Channel } from './transactions.ts';

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

  /**
   * Runs an authorization through the engine (D34, D40); a decline is `approved: false` with `declineReason`.
   * @example await client.sandbox.authorize({ cardId, amount: decimal('12.50'), currency: 'USD', merchantName: 'Coffee', mcc: '5814', merchantCountry: 'HK', channel: 'POS' });
   */
  authorize(params: {
    cardId: string; amount: LosslessNumber | number; currency: string; merchantName: string; mcc: string; merchantCountry: string;
    channel: Channel; billingAmount?: LosslessNumber | number; billingCurrency?: string;
  }): Promise<CardTransaction> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/authorization', { body: params });
  }

  /**
   * Clears an authorization with its final amount (billing currency).
   * @example await client.sandbox.clear({ transId, amount: decimal('12.50') });
   */
  clear(params: { transId: string; amount: LosslessNumber | number }): Promise<CardTransaction> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/clearing', { body: params });
  }

  /**
   * Reverses all or part of what an authorization still holds.
   * @example await client.sandbox.reverse({ transId, amount: decimal('2.50') });
   */
  reverse(params: { transId: string; amount: LosslessNumber | number }): Promise<CardTransaction> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/reversal', { body: params });
  }

  /**
   * Credits a merchant refund to a card.
   * @example await client.sandbox.refund({ cardId, amount: decimal('5.00'), currency: 'USD', merchantName: 'Shop', transId });
   */
  refund(params: {
    cardId: string; amount: LosslessNumber | number; currency: string; merchantName: string; transId?: string;
    billingAmount?: LosslessNumber | number; billingCurrency?: string;
  }): Promise<CardTransaction> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/refund', { body: params });
  }

  /**
   * Sends a test authorization to your auth_url (nothing is booked) and reports what happened.
   * @example const report = await client.sandbox.testAuthUrl(); // { delivered, answerVerified, approved, latencyMs, ... }
   */
  testAuthUrl(): Promise<{
    configured: boolean; transId?: string; delivered: boolean; answerVerified: boolean; approved: boolean | null; declineReason: string | null;
    standInReason: string | null; outcome?: string; httpStatus: number | null; latencyMs: number; error: string | null;
  }> {
    return this.http.call('POST', '/open-api/sandbox/v1/auth-url/test', { body: {} });
  }
}
