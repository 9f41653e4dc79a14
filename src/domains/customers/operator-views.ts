import type { Queryable } from '../../platform/db/db.ts';
import { pendingKycRows, type PendingKyc } from './operator-store.ts';
import { findCustomer as findCustomerRow, type Customer } from './store.ts';

/** The operator console (issue 29): the pending KYC reviews of every partner, oldest first. */
export function pendingKycReviews(q: Queryable, limit: number, after: { openedAt: Date; reviewId: string } | null = null): Promise<PendingKyc[]> {
  return pendingKycRows(q, limit, after);
}

/** An employee of any partner. */
export function findCustomerAnyPartner(q: Queryable, customerId: string): Promise<Customer | null> {
  return findCustomerRow(q, null, customerId);
}

export type { PendingKyc };
