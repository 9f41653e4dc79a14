import type { Queryable } from '../../platform/db/db.ts';

export interface PendingKyc {
  reviewId: string;
  customerId: string;
  partnerId: string;
  organizationId: string;
  firstName: string;
  lastName: string;
  openedBy: string;
  openedAt: Date;
}

/** The KYC review queue across partners, oldest first (issue 29), keyset-paged on (opened_at, review_id). */
export async function pendingKycRows(q: Queryable, limit: number, after: { openedAt: Date; reviewId: string } | null): Promise<PendingKyc[]> {
  return q.query<PendingKyc>(
    `SELECT r.review_id AS "reviewId", c.customer_id AS "customerId", c.partner_id AS "partnerId", c.organization_id AS "organizationId",
       c.first_name AS "firstName", c.last_name AS "lastName", r.opened_by AS "openedBy", r.opened_at AS "openedAt"
     FROM kyc_reviews r JOIN customers c ON c.customer_id = r.customer_id
     WHERE r.status = 'PENDING' AND ($2::timestamptz IS NULL OR (r.opened_at, r.review_id) > ($2::timestamptz, $3::text))
     ORDER BY r.opened_at, r.review_id LIMIT $1`,
    [limit, after?.openedAt ?? null, after?.reviewId ?? null],
  );
}
