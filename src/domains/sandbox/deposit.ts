/**
 * simulate/deposit (D40): one handler per subjectType. Each runs inside the request's transaction
 * and answers the balance of the credited account after the deposit.
 *
 * CARD: not yet available (answers SUBJECT_INVALID). The cards domain replaces the CARD entry with
 * a handler that credits the dedicated card balance, e.g.
 *   CARD: (q, d) => depositToCard(q, { partnerId: d.partnerId, cardId: d.subjectId, ... })
 */
import type { Queryable } from '../../platform/db/db.ts';
import type { Amount } from '../../platform/money.ts';
import type { Balance } from '../ledger/index.ts';
import { depositToPool } from '../funding/index.ts';
import { depositToCard } from '../cards/index.ts';

export type DepositSubjectType = 'ORGANIZATION' | 'CARD';

export interface SimulatedDeposit {
  partnerId: string;
  subjectId: string;
  currency: string;
  amount: Amount;
  at: Date;
}

export type DepositHandler = (q: Queryable, d: SimulatedDeposit) => Promise<{ postingId: string; balance: Balance }>;

export const depositHandlers: Record<DepositSubjectType, DepositHandler> = {
  ORGANIZATION: (q, d) => depositToPool(q, {
    partnerId: d.partnerId,
    organizationId: d.subjectId,
    currency: d.currency,
    amount: d.amount,
    description: 'sandbox simulated deposit',
    at: d.at,
  }),
  // Credits the dedicated balance through the card's receiving account (cards domain, D28).
  CARD: (q, d) => depositToCard(q, { partnerId: d.partnerId, cardId: d.subjectId, currency: d.currency, amount: d.amount, now: d.at }),
};
