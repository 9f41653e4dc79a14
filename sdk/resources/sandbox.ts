import type { Static } from 'typebox';
import type { CallOptions, RequestOf, SignedHttpClient } from '../client.ts';
import type {
  DecimalEchoAnswer, KycDecision, SimulateDepositBody, SimulatedDeposit, SimulateKycDecisionBody,
} from '../contract/sandbox.ts';
import type { WireAmount } from '../contract/wire.ts';
import type { AuthUrlTestReport, SimulateAuthorizationBody, SimulateExpiryBody, SimulateRefundBody, SimulateSettleBody } from '../contract/authorization.ts';
import type { SimulateQrPaymentBody } from '../contract/qr-payments.ts';
import type { CardTransaction } from './transactions.ts';
import type { QrPayment } from './qr-payments.ts';
import type { CardShipmentParams, CardShipmentResult } from './card-upgrades.ts';
import type { SignatureCheckBody, SignatureCheckReport } from '../contract/partners.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/sandbox.ts).
export type DepositParams = RequestOf<typeof SimulateDepositBody>;
export type Deposit = Static<typeof SimulatedDeposit>;
export type KycDecisionParams = RequestOf<typeof SimulateKycDecisionBody>;
export type KycDecisionResult = Static<typeof KycDecision>;
export type SimulateAuthorizationParams = RequestOf<typeof SimulateAuthorizationBody>;
export type SimulateSettleParams = RequestOf<typeof SimulateSettleBody>;
export type SimulateRefundParams = RequestOf<typeof SimulateRefundBody>;
export type SimulateExpiryParams = RequestOf<typeof SimulateExpiryBody>;
export type AuthUrlTest = Static<typeof AuthUrlTestReport>;
export type SimulateQrPaymentParams = RequestOf<typeof SimulateQrPaymentBody>;
/** What you signed; apiKey defaults to the client's. */
export type SignatureCheckParams = Omit<Static<typeof SignatureCheckBody>, 'apiKey'> & { apiKey?: string };
export type SignatureCheck = Static<typeof SignatureCheckReport>;

export class SandboxResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Stores an exact decimal and reads it back (D4).
   * @example await client.sandbox.decimalEcho(decimal('0.123456789012345678'));
   */
  decimalEcho(amount: WireAmount, options?: CallOptions): Promise<Static<typeof DecimalEchoAnswer>> {
    return this.http.call('POST', '/open-api/sandbox/v1/decimal-echo', { body: { amount } }, options);
  }

  /**
   * Simulates an incoming deposit (D40) to a company funding pool (subjectType ORGANIZATION).
   * @example await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: organizationId, currency: 'USD', amount: decimal('100.00') });
   */
  deposit(params: DepositParams, options?: CallOptions): Promise<Deposit> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/deposit', { body: params }, options);
  }

  /**
   * Decides the employee's KYC review in flight (D40, D17).
   * @example await client.sandbox.kycDecision({ customerId, decision: 'APPROVED' });
   */
  kycDecision(params: KycDecisionParams, options?: CallOptions): Promise<KycDecisionResult> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/kyc-decision', { body: params }, options);
  }

  /**
   * Runs an authorization through the engine (D34, D40); a decline is `approved: false` with `declineReason`.
   * @example await client.sandbox.authorize({ cardId, amount: decimal('12.50'), currency: 'USD', merchantName: 'Coffee', mcc: '5814', merchantCountry: 'HK', channel: 'POS' });
   */
  authorize(params: SimulateAuthorizationParams, options?: CallOptions): Promise<CardTransaction> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/authorization', { body: params }, options);
  }

  /**
   * Clears an authorization with its final amount (billing currency).
   * @example await client.sandbox.clear({ transId, amount: decimal('12.50') });
   */
  clear(params: SimulateSettleParams, options?: CallOptions): Promise<CardTransaction> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/clearing', { body: params }, options);
  }

  /**
   * Reverses all or part of what an authorization still holds.
   * @example await client.sandbox.reverse({ transId, amount: decimal('2.50') });
   */
  reverse(params: SimulateSettleParams, options?: CallOptions): Promise<CardTransaction> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/reversal', { body: params }, options);
  }

  /**
   * Expires a PENDING authorization's hold now, exactly as 30 days without clearing would: the hold
   * returns to free, usage is given back, the authorization is EXPIRED (and its CARD_TRANSACTION event sent).
   * @example const expired = await client.sandbox.expire({ transId }); // expired.status === 'EXPIRED'
   */
  expire(params: SimulateExpiryParams, options?: CallOptions): Promise<CardTransaction> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/expiry', { body: params }, options);
  }

  /**
   * Credits a merchant refund to a card.
   * @example await client.sandbox.refund({ cardId, amount: decimal('5.00'), currency: 'USD', merchantName: 'Shop', transId });
   */
  refund(params: SimulateRefundParams, options?: CallOptions): Promise<CardTransaction> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/refund', { body: params }, options);
  }

  /**
   * A QR payment message for one of your managed users: PAY, or REFUND, REFUND_PART, REVERSAL of a PAY (by its orderId).
   * @example await client.sandbox.simulateQrPayment({ transType: 'PAY', externalUserId: 'u-1', asset: 'USDT', amount: decimal('4.20'), merchantName: 'Noodle bar' });
   */
  simulateQrPayment(params: SimulateQrPaymentParams, options?: CallOptions): Promise<QrPayment> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/qr-payment', { body: params }, options);
  }

  /**
   * Sends a test authorization to your auth_url (nothing is booked) and reports what happened.
   * @example const report = await client.sandbox.testAuthUrl(); // { delivered, answerVerified, approved, latencyMs, ... }
   */
  testAuthUrl(options?: CallOptions): Promise<AuthUrlTest> {
    return this.http.call('POST', '/open-api/sandbox/v1/auth-url/test', { body: {} }, options);
  }

  /**
   * Checks a signature you computed (with your own signer, in any language) step by step: the service
   * clock and your timestamp's window, the nonce, the length and SHA-256 of the string to sign as the
   * service builds it, whether the key is known and whether the signature matches. Never the right
   * signature; the nonce is not used up. Unsigned on the service side; counts as a failed authentication.
   * @example const report = await client.sandbox.signatureCheck({ timestamp, nonce, method: 'GET', payload: 'customerId=cusmwxdk8zr9bf0f6582', signature });
   * // report.verdict === 'SYS_SUCCESS', or the code the real request would get; report.hints says why
   */
  signatureCheck(params: SignatureCheckParams, options?: CallOptions): Promise<SignatureCheck> {
    return this.http.call('POST', '/open-api/sandbox/v1/signature-check', { body: { apiKey: this.http.apiKey, ...params } }, options);
  }

  /**
   * Plays the card bureau for a physical card upgrade; SHIPPED answers the activation code on the carrier.
   * @example const { activationCode } = await client.sandbox.cardShipment({ upgradeRef: 'upgrade-0001', status: 'SHIPPED', carrier: 'DHL', trackingNumber: 'JD0146' });
   */
  cardShipment(params: CardShipmentParams, options?: CallOptions): Promise<CardShipmentResult> {
    return this.http.call('POST', '/open-api/sandbox/v1/simulate/card-shipment', { body: params }, options);
  }
}
