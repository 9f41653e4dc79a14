import { Type } from 'typebox';
import { CustomerId, REMARK_MAX } from './organizations.ts';
import { ASSET_MAX_SCALE, CORPORATE_SCALE, Money } from './wire.ts';

/** Sandbox simulations (D40) and the decimal probe (D4). Registered only in sandbox deployments. */

/** Corporate deposit amounts: positive, two decimals (D4). */
export const CORPORATE_AMOUNT_RULES = { maxScale: CORPORATE_SCALE, sign: 'positive' } as const;
/** The decimal probe takes any signed amount with up to 18 decimals. */
export const PROBE_AMOUNT_RULES = { maxScale: ASSET_MAX_SCALE, sign: 'any' } as const;

export const DecimalEchoBody = Type.Object({ amount: Money(PROBE_AMOUNT_RULES) });
export const DecimalEchoAnswer = Type.Object({ probeId: Type.String(), amount: Money(PROBE_AMOUNT_RULES) });

export const SimulateDepositBody = Type.Object({
  subjectType: Type.Union([Type.Literal('ORGANIZATION'), Type.Literal('CARD')]),
  subjectId: Type.String({ minLength: 1, maxLength: 32 }),
  currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'USD or HKD' }),
  amount: Money(CORPORATE_AMOUNT_RULES),
});

export const SimulatedDeposit = Type.Object({
  postingId: Type.String(),
  subjectType: Type.String(),
  subjectId: Type.String(),
  currency: Type.String(),
  amount: Money(CORPORATE_AMOUNT_RULES),
  available: Money({ maxScale: 18, sign: 'any' }),
  pending: Money({ maxScale: 18, sign: 'nonNegative' }),
  total: Money({ maxScale: 18, sign: 'any' }),
});

export const SimulateKycDecisionBody = Type.Object({
  customerId: CustomerId,
  decision: Type.Union([Type.Literal('APPROVED'), Type.Literal('REJECTED')]),
  reason: Type.Optional(Type.Union([Type.String({ maxLength: REMARK_MAX }), Type.Null()])),
});

export const KycDecision = Type.Object({
  customerId: Type.String(),
  kycStatus: Type.Union([Type.Literal('APPROVED'), Type.Literal('REJECTED')]),
  reason: Type.Union([Type.String(), Type.Null()]),
});
