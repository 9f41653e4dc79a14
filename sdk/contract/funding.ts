import { Type } from 'typebox';
import { FundingCurrency, OrganizationId } from './organizations.ts';
import { CORPORATE_SCALE, IsoTime, Money, Page, PagingQuery } from './wire.ts';

/** Company funds (D29, D48): pool and dedicated card balances, the pool statement, low-balance alerts (2.12, D41). */

/** Alert mailboxes: up to 128 characters each (section 8). */
export const ALERT_EMAIL_MAX = 128;
// Not in the spec.
/** At most this many alert mailboxes per company. */
export const ALERT_EMAILS_MAX = 10;
/** Two currencies exist; a longer list necessarily repeats one (DAPI_PARAM_INVALID either way). */
const BALANCE_SETTINGS_MAX = 10;
/** Thresholds are non-negative with at most two decimals (2.12, section 8). */
export const THRESHOLD_RULES = { maxScale: CORPORATE_SCALE, sign: 'nonNegative' } as const;

const BalanceFields = {
  currency: Type.String(),
  available: Money({ maxScale: 18, sign: 'any' }),
  pending: Money({ maxScale: 18, sign: 'nonNegative' }),
  total: Money({ maxScale: 18, sign: 'any' }),
};

const Threshold = Money(THRESHOLD_RULES, { description: 'Non-negative, at most two decimal places' });

export const PoolBalance = Type.Object(BalanceFields);
export const FundBalanceQuery = Type.Object({ organizationId: OrganizationId });
export const FundBalance = Type.Object({
  organizationId: Type.String(),
  pools: Type.Array(PoolBalance),
  cards: Type.Array(Type.Object({ cardId: Type.String(), ...BalanceFields })),
});

export const StatementQuery = Type.Object({
  organizationId: OrganizationId,
  cardId: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'A dedicated card of the company: the movements of its own balance instead of the pools\'' })),
  currency: Type.Optional(FundingCurrency),
  startTime: Type.Optional(IsoTime),
  endTime: Type.Optional(IsoTime),
  ...PagingQuery,
});

export const StatementLine = Type.Object({
  statementId: Type.String(),
  postingId: Type.String(),
  currency: Type.String(),
  type: Type.String({ description: 'DEPOSIT, TRANSFER, AUTHORIZATION, CLEARING, ...' }),
  amount: Money({ maxScale: 18, sign: 'any' }),
  availableChange: Money({ maxScale: 18, sign: 'any' }),
  pendingChange: Money({ maxScale: 18, sign: 'any' }),
  availableAfter: Money({ maxScale: 18, sign: 'any' }),
  pendingAfter: Money({ maxScale: 18, sign: 'nonNegative' }),
  totalAfter: Money({ maxScale: 18, sign: 'any' }),
  reference: Type.Union([Type.String(), Type.Null()]),
  description: Type.Union([Type.String(), Type.Null()]),
  createTime: Type.String(),
});
export const StatementPage = Page(StatementLine);

export const BalanceSetting = Type.Object({
  currency: FundingCurrency,
  threshold: Type.Optional(Threshold),
  thresholdAmount: Type.Optional(Threshold),
});

export const BalanceAlertSetBody = Type.Object({
  organizationId: OrganizationId,
  balanceSettings: Type.Array(BalanceSetting, { minItems: 1, maxItems: BALANCE_SETTINGS_MAX }),
  emailSettings: Type.Optional(Type.Array(Type.String({ format: 'email', maxLength: ALERT_EMAIL_MAX }), { maxItems: ALERT_EMAILS_MAX })),
});

export const BalanceAlertQuery = Type.Object({ organizationId: OrganizationId });
export const BalanceAlertConfig = Type.Object({
  organizationId: Type.String(),
  balanceSettings: Type.Array(Type.Object({ currency: FundingCurrency, threshold: Threshold })),
  emailSettings: Type.Array(Type.String()),
});
