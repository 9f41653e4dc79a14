import type { Static } from 'typebox';
import type { SignedHttpClient } from '../client.ts';
import type {
  DecimalEchoAnswer, KycDecision, SimulateDepositBody, SimulatedDeposit, SimulateKycDecisionBody,
} from '../contract/sandbox.ts';
import type { WireAmount } from '../contract/wire.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/sandbox.ts).
export type DepositParams = Static<typeof SimulateDepositBody>;
export type Deposit = Static<typeof SimulatedDeposit>;
export type KycDecisionParams = Static<typeof SimulateKycDecisionBody>;
export type KycDecisionResult = Static<typeof KycDecision>;

export class SandboxResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Stores an exact decimal and reads it back (D4).
   * @example await client.sandbox.decimalEcho(decimal('0.123456789012345678'));
   */
  decimalEcho(amount: WireAmount): Promise<Static<typeof DecimalEchoAnswer>> {
    return this.http.call('POST', '/open-api/sandbox/v1/decimal-echo', { body: { amount } });
  }

  /**
   * Simulates an incoming deposit (D40) to a company funding pool (subjectType ORGANIZATION).
   * @example await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: organizationId, currency: 'USD', amount: decimal('100.00') });
   */
  deposit(params: DepositParams): Promise<Deposit> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/deposit', { body: params });
  }

  /**
   * Decides the employee's KYC review in flight (D40, D17).
   * @example await client.sandbox.kycDecision({ customerId, decision: 'APPROVED' });
   */
  kycDecision(params: KycDecisionParams): Promise<KycDecisionResult> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/kyc-decision', { body: params });
  }
}
