import type { AppContext } from '../../platform/context.ts';
import { ApiError } from '../../platform/errors.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import { parseAmount } from '../../platform/money.ts';
import { expireHold } from '../authorization/index.ts';
import { reportBureauStatus } from '../cards/index.ts';
import { decideKyc } from '../customers/index.ts';
import { corporateWire } from '../funding/index.ts';
import { FUNDING_CURRENCIES } from '../organizations/index.ts';
import { CORPORATE_AMOUNT_RULES, KycDecision, SimulateDepositBody, SimulatedDeposit, SimulateKycDecisionBody } from '../../../sdk/contract/sandbox.ts';
import { SimulateExpiryBody, TransactionOut } from '../../../sdk/contract/authorization.ts';
import { SimulateCardShipmentBody, UpgradeStatusAnswer } from '../../../sdk/contract/card-upgrades.ts';
import { depositHandlers } from './deposit.ts';

export type SandboxDeps = Pick<AppContext, 'db' | 'clock' | 'config'>;

/** Sandbox simulations of D40 kept in this domain: deposits, KYC decisions, the card bureau's shipment of a physical card (issue 30) and hold expiry (issue 26; the network's messages are simulated by the authorization routes). */
export function sandboxRoutes(deps: SandboxDeps): RouteDef[] {
  return [
    route({
      method: 'POST',
      url: '/open-api/sandbox/v1/simulate/expiry',
      auth: 'partner',
      tag: 'Sandbox',
      summary: 'Expire the hold of a pending authorization now, as 30 days without clearing would',
      description: 'Exactly what the hold-expiry job does when an authorization is not cleared within 30 days: what is still held returns to free '
        + '(a HOLD_EXPIRY posting), the velocity usage and count are given back, the authorization becomes EXPIRED, and a CARD_TRANSACTION event is recorded. '
        + 'Answers the authorization record. Another partner\'s transId, or one that is not an authorization, is TRANSACTION_NOT_FOUND; '
        + 'an authorization that holds nothing any more (DECLINED, CLEARED, REVERSED, EXPIRED) is TRANSACTION_STATUS_INVALID. '
        + 'A clearing that arrives after the expiry is still posted, even if free goes negative.',
      sandboxOnly: true,
      body: SimulateExpiryBody,
      data: TransactionOut,
      example: { transId: 'txmwxdk8zrbfad304ec4' },
      errors: ['TRANSACTION_NOT_FOUND', 'TRANSACTION_STATUS_INVALID'],
      handler: ({ body, partner }) => expireHold(deps, { transId: body.transId, partnerId: partner.partnerId }),
    }),
    route({
      method: 'POST',
      url: '/open-api/sandbox/v1/simulate/deposit',
      auth: 'partner',
      tag: 'Sandbox',
      summary: 'Simulate an incoming deposit to a company funding pool or a dedicated card',
      description: 'ORGANIZATION credits the company pool of the currency as a DEPOSIT posting from the external (bank) account. CASH_IN_FROZEN refuses it (CAPABILITY_FROZEN, data.errorCode). CARD credits the dedicated balance of a card through its receiving account in the currency (open-va first: CURRENCY_NOT_ALLOWED otherwise; CARD_INVALID, CARD_NOT_DEDICATED).',
      sandboxOnly: true,
      body: SimulateDepositBody,
      example: { subjectType: 'ORGANIZATION', subjectId: 'orgmwxdk8zq49621f23a', currency: 'USD', amount: 1000 },
      data: SimulatedDeposit,
      errors: ['UNSUPPORTED_CURRENCY', 'SUBJECT_INVALID', 'CURRENCY_NOT_ALLOWED', 'CAPABILITY_FROZEN', 'CARD_INVALID', 'CARD_NOT_DEDICATED'],
      handler: async ({ body, partner }) => {
        const amount = parseAmount('amount', body.amount, CORPORATE_AMOUNT_RULES);
        if (!(FUNDING_CURRENCIES as readonly string[]).includes(body.currency)) {
          throw new ApiError('UNSUPPORTED_CURRENCY', `Unsupported currency ${body.currency}`);
        }
        const at = new Date(deps.clock.now());
        const { postingId, balance } = await deps.db.tx((q) => depositHandlers[body.subjectType](q, {
          partnerId: partner.partnerId, subjectId: body.subjectId, currency: body.currency, amount, at,
        }));
        return {
          postingId,
          subjectType: body.subjectType,
          subjectId: body.subjectId,
          currency: body.currency,
          amount: corporateWire(amount),
          available: corporateWire(balance.available),
          pending: corporateWire(balance.pending),
          total: corporateWire(balance.total),
        };
      },
    }),
    route({
      method: 'POST',
      url: '/open-api/sandbox/v1/simulate/kyc-decision',
      auth: 'partner',
      tag: 'Sandbox',
      summary: 'Decide the KYC review in flight of an employee',
      description: 'Emits CUSTOMER_KYC_CHANGED. STATUS_CONFLICT when no review is in flight (kycStatus is not PENDING).',
      sandboxOnly: true,
      body: SimulateKycDecisionBody,
      data: KycDecision,
      errors: ['CUSTOMER_INVALID', 'STATUS_CONFLICT'],
      handler: async ({ body, partner }) => {
        const at = new Date(deps.clock.now());
        return deps.db.tx((q) => decideKyc(q, {
          customerId: body.customerId, partnerId: partner.partnerId, decision: body.decision, reason: body.reason ?? null,
          decidedBy: 'SANDBOX', at,
        }));
      },
    }),
    route({
      method: 'POST',
      url: '/open-api/sandbox/v1/simulate/card-shipment',
      auth: 'partner',
      tag: 'Sandbox',
      summary: 'Play the card bureau for a physical card upgrade: PRODUCING, SHIPPED, DELIVERED or REJECTED',
      description: 'SHIPPED needs carrier and trackingNumber and answers the 6-digit activation code printed on the carrier (also in the CARD_UPGRADE_STATUS_CHANGED event); '
        + 'REJECTED needs rejectReason and refunds the fees. Moves the states do not allow are CARD_UPGRADE_STATUS_INVALID.',
      sandboxOnly: true,
      body: SimulateCardShipmentBody,
      data: UpgradeStatusAnswer,
      example: { upgradeRef: 'upgrade-0001', status: 'SHIPPED', carrier: 'DHL', trackingNumber: 'JD014600006281230' },
      errors: ['CARD_UPGRADE_NOT_FOUND', 'CARD_UPGRADE_STATUS_INVALID'],
      handler: ({ body, partner }) => reportBureauStatus(deps, { ...body, partnerId: partner.partnerId }),
    }),
  ];
}
