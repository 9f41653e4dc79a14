import type { Queryable } from '../../platform/db/db.ts';

export interface ManagedUserHit {
  userId: string;
  partnerId: string;
  externalUserId: string;
  createdAt: Date;
}

/** Managed users by their id or the partner's user id, across partners (operator console, issue 29). */
export async function managedUserRows(q: Queryable, id: string, limit: number): Promise<ManagedUserHit[]> {
  return q.query<ManagedUserHit>(
    `SELECT user_id AS "userId", partner_id AS "partnerId", external_user_id AS "externalUserId", created_at AS "createdAt"
     FROM managed_users WHERE user_id = $1 OR external_user_id = $1 ORDER BY created_at DESC LIMIT $2`,
    [id, limit],
  );
}
