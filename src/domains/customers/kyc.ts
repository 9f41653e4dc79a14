/**
 * KYC reviews (D17): PENDING -> APPROVED | REJECTED. A review opens when the employee is created,
 * when the name really changes, or on resubmission of a rejected review; the decision arrives
 * asynchronously (operator, screening provider, or simulate/kyc-decision in sandbox, D40, D51).
 * Every change of kycStatus after creation emits CUSTOMER_KYC_CHANGED {customerId, kycStatus, reason}.
 */
import { newId } from '../../platform/crypto/secrets.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { ApiError, invariant } from '../../platform/errors.ts';
import { recordEvent } from '../events/index.ts';
import { closeOpenKycReviews, findCustomer, insertKycReview, setKycStatus, type Customer, type KycStatus } from './store.ts';

export type KycDecision = 'APPROVED' | 'REJECTED';
export type KycDecider = 'OPERATOR' | 'SANDBOX' | 'SCREENING';
export type ReviewOpener = 'CREATE' | 'NAME_CHANGE' | 'RESUBMIT';

/** Opens a review and sets the employee PENDING; emits the event unless this is the creation. */
export async function openReview(q: Queryable, customer: Customer, openedBy: ReviewOpener, at: Date): Promise<void> {
  invariant(customer.kycStatus !== 'PENDING' || openedBy === 'CREATE', 'no second review while one is in flight');
  await insertKycReview(q, { reviewId: newId('kyc'), customerId: customer.customerId, openedBy, openedAt: at });
  await setKycStatus(q, customer.customerId, 'PENDING', null, at);
  if (openedBy !== 'CREATE') await emitKycChanged(q, customer, 'PENDING', null, at);
}

async function emitKycChanged(q: Queryable, customer: Customer, kycStatus: KycStatus, reason: string | null, at: Date): Promise<void> {
  await recordEvent(q, {
    partnerId: customer.partnerId,
    eventType: 'CUSTOMER_KYC_CHANGED',
    businessId: customer.customerId,
    data: { customerId: customer.customerId, kycStatus, reason },
    createTime: at,
  });
}

export interface DecisionInput {
  customerId: string;
  /** The calling partner (sandbox simulation); null for operators. */
  partnerId: string | null;
  decision: KycDecision;
  reason: string | null;
  decidedBy: KycDecider;
  at: Date;
}

/**
 * Closes the review in flight. CUSTOMER_INVALID for an unknown, foreign or terminated employee;
 * STATUS_CONFLICT when no review is in flight (KYC is not PENDING).
 */
export async function decideKyc(q: Queryable, d: DecisionInput) {
  const customer = await findCustomer(q, d.partnerId, d.customerId, true);
  if (!customer) throw new ApiError('CUSTOMER_INVALID');
  if (customer.lifecycle !== 'ACTIVE') throw new ApiError('CUSTOMER_INVALID', 'Employee is TERMINATED');
  if (customer.kycStatus !== 'PENDING') throw new ApiError('STATUS_CONFLICT', `No KYC review in flight (kycStatus ${customer.kycStatus})`);
  const closed = await closeOpenKycReviews(q, customer.customerId, { status: d.decision, reason: d.reason, decidedBy: d.decidedBy, decidedAt: d.at });
  invariant(closed === 1, `exactly one review in flight for ${customer.customerId}`);
  await setKycStatus(q, customer.customerId, d.decision, d.reason, d.at);
  await emitKycChanged(q, customer, d.decision, d.reason, d.at);
  return { customerId: customer.customerId, kycStatus: d.decision, reason: d.reason };
}

/** D17 resubmit: re-opens a REJECTED review. PENDING is KYC_IN_REVIEW; APPROVED has nothing to resubmit. */
export async function resubmitKyc(q: Queryable, partnerId: string, customerId: string, at: Date): Promise<void> {
  const customer = await findCustomer(q, partnerId, customerId, true);
  if (!customer || customer.lifecycle !== 'ACTIVE') throw new ApiError('CUSTOMER_INVALID');
  if (customer.kycStatus === 'PENDING') throw new ApiError('KYC_IN_REVIEW');
  if (customer.kycStatus === 'APPROVED') throw new ApiError('STATUS_CONFLICT', 'KYC is APPROVED; only a REJECTED review can be resubmitted');
  await openReview(q, customer, 'RESUBMIT', at);
}
