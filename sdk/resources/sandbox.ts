import type { Static } from 'typebox';
import type { SignedHttpClient } from '../client.ts';
import type {
  DecimalEchoAnswer, KycDecision, SimulateDepositBody, SimulatedDeposit, SimulateKycDecisionBody,
} from '../contract/sandbox.ts';
import type { WireAmount } from '../contract/wire.ts';
import type { AuthUrlTestReport, SimulateAuthorizationBody, SimulateRefundBody, SimulateSettleBody } from '../contract/authorization.ts';
import type { SimulateQrPaymentBody } from '../contract/qr-payments.ts';
import type { CardTransaction } from './transactions.ts';
import type { QrPayment } from './qr-payments.ts';
import type { CardShipmentParams, CardShipmentResult } from './card-upgrades.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/sandbox.ts).
export type DepositParams = Static<typeof SimulateDepositBody>;
export type Deposit = Static<typeof SimulatedDeposit>;
export type KycDecisionParams = Static<typeof SimulateKycDecisionBody>;
export type KycDecisionResult = Static<typeof KycDecision>;
export type SimulateAuthorizationParams = Static<typeof SimulateAuthorizationBody>;
export type SimulateSettleParams = Static<typeof SimulateSettleBody>;
export type SimulateRefundParams = Static<typeof SimulateRefundBody>;
export type AuthUrlTest = Static<typeof AuthUrlTestReport>;
export type SimulateQrPaymentParams = Static<typeof SimulateQrPaymentBody>;

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

  /**
   * Runs an authorization through the engine (D34, D40); a decline is `approved: false` with `declineReason`.
   * @example await client.sandbox.authorize({ cardId, amount: decimal('12.50'), currency: 'USD', merchantName: 'Coffee', mcc: '5814', merchantCountry: 'HK', channel: 'POS' });
   */
  authorize(params: SimulateAuthorizationParams): Promise<CardTransaction> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/authorization', { body: params });
  }

  /**
   * Clears an authorization with its final amount (billing currency).
   * @example await client.sandbox.clear({ transId, amount: decimal('12.50') });
   */
  clear(params: SimulateSettleParams): Promise<CardTransaction> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/clearing', { body: params });
  }

  /**
   * Reverses all or part of what an authorization still holds.
   * @example await client.sandbox.reverse({ transId, amount: decimal('2.50') });
   */
  reverse(params: SimulateSettleParams): Promise<CardTransaction> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/reversal', { body: params });
  }

  /**
   * Credits a merchant refund to a card.
   * @example await client.sandbox.refund({ cardId, amount: decimal('5.00'), currency: 'USD', merchantName: 'Shop', transId });
   */
  refund(params: SimulateRefundParams): Promise<CardTransaction> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/refund', { body: params });
  }

  /**
   * A QR payment message for one of your managed users: PAY, or REFUND, REFUND_PART, REVERSAL of a PAY (by its orderId).
   * @example await client.sandbox.simulateQrPayment({ transType: 'PAY', externalUserId: 'u-1', asset: 'USDT', amount: decimal('4.20'), merchantName: 'Noodle bar' });
   */
  simulateQrPayment(params: SimulateQrPaymentParams): Promise<QrPayment> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/qr-payment', { body: params });
  }

  /**
   * Sends a test authorization to your auth_url (nothing is booked) and reports what happened.
   * @example const report = await client.sandbox.testAuthUrl(); // { delivered, answerVerified, approved, latencyMs, ... }
   */
  testAuthUrl(): Promise<AuthUrlTest> {
    return this.http.call('POST', '/open-api/sandbox/v1/auth-url/test', { body: {} });
  }

  /**
   * Plays the card bureau for a physical card upgrade; SHIPPED answers the activation code on the carrier.
   * @example const { activationCode } = await client.sandbox.cardShipment({ upgradeRef: 'upgrade-0001', status: 'SHIPPED', carrier: 'DHL', trackingNumber: 'JD0146' });
   */
  cardShipment(params: CardShipmentParams): Promise<CardShipmentResult> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/card-shipment', { body: params });
  }
}
