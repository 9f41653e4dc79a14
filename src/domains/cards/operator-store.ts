import type { Queryable } from '../../platform/db/db.ts';

/** Console lookups across partners (issue 29); masked data only. */
export interface CardHit {
  cardId: string;
  partnerId: string;
  organizationId: string;
  panFirst6: string;
  panLast4: string;
  status: string;
  cardholderName: string | null;
}

export async function cardsByLast4(q: Queryable, last4: string, limit: number): Promise<CardHit[]> {
  return q.query<CardHit>(
    `SELECT card_id AS "cardId", partner_id AS "partnerId", organization_id AS "organizationId", pan_first6 AS "panFirst6", pan_last4 AS "panLast4",
       status, cardholder_name AS "cardholderName"
     FROM cards WHERE pan_last4 = $1 ORDER BY created_at DESC LIMIT $2`,
    [last4, limit],
  );
}

/** Card applications not yet decided (the application job's backlog), across partners. */
export async function openApplicationCount(q: Queryable): Promise<string> {
  const rows = await q.query<{ n: string }>(`SELECT count(*)::bigint AS n FROM card_applications WHERE status IN ('PENDING', 'PROCESSING')`);
  return rows[0].n;
}
