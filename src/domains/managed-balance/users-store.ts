import type { Queryable } from '../../platform/db/db.ts';

/** Managed users (D35) and assets (2.3): rows as stored. */

export interface ManagedUserRow {
  userId: string;
  partnerId: string;
  externalUserId: string;
  createdAt: Date;
}

export interface AssetRow {
  asset: string;
  network: string;
  logo: string;
  scale: number;
  usdPegged: boolean;
  usdRate: string | null;
  status: 'ACTIVE' | 'INACTIVE';
  sortOrder: number;
}

const USER_COLUMNS = 'user_id AS "userId", partner_id AS "partnerId", external_user_id AS "externalUserId", created_at AS "createdAt"';
const ASSET_COLUMNS = 'asset, network, logo, scale, usd_pegged AS "usdPegged", usd_rate AS "usdRate", status, sort_order AS "sortOrder"';

export async function findUserRow(q: Queryable, partnerId: string, externalUserId: string): Promise<ManagedUserRow | null> {
  const rows = await q.query<ManagedUserRow>(`SELECT ${USER_COLUMNS} FROM managed_users WHERE partner_id = $1 AND external_user_id = $2`, [partnerId, externalUserId]);
  return rows[0] ?? null;
}

/** The user, created when absent; concurrent first uses agree on one row. */
export async function ensureUserRow(q: Queryable, row: ManagedUserRow): Promise<ManagedUserRow> {
  const rows = await q.query<ManagedUserRow>(
    `WITH ins AS (INSERT INTO managed_users (user_id, partner_id, external_user_id, created_at) VALUES ($1, $2, $3, $4)
                  ON CONFLICT (partner_id, external_user_id) DO NOTHING RETURNING ${USER_COLUMNS})
     SELECT * FROM ins UNION ALL SELECT ${USER_COLUMNS} FROM managed_users WHERE partner_id = $2 AND external_user_id = $3`,
    [row.userId, row.partnerId, row.externalUserId, row.createdAt],
  );
  if (rows[0]) return rows[0];
  // The concurrent inserter committed after this statement's snapshot was taken: read it now.
  const again = await findUserRow(q, row.partnerId, row.externalUserId);
  if (!again) throw new Error(`managed user ${row.partnerId}/${row.externalUserId} exists after insert`);
  return again;
}

export async function findAssetRow(q: Queryable, asset: string): Promise<AssetRow | null> {
  const rows = await q.query<AssetRow>(`SELECT ${ASSET_COLUMNS} FROM assets WHERE asset = $1`, [asset]);
  return rows[0] ?? null;
}

export async function listAssetRows(q: Queryable): Promise<AssetRow[]> {
  return q.query<AssetRow>(`SELECT ${ASSET_COLUMNS} FROM assets ORDER BY sort_order, asset`);
}

export async function userRestrictionCodes(q: Queryable, userId: string): Promise<string[]> {
  const rows = await q.query<{ code: string }>('SELECT code FROM managed_user_restrictions WHERE user_id = $1 ORDER BY code', [userId]);
  return rows.map((r) => r.code);
}

export async function findUserRowsByIds(q: Queryable, partnerId: string, userIds: string[]): Promise<ManagedUserRow[]> {
  if (userIds.length === 0) return [];
  return q.query<ManagedUserRow>(`SELECT ${USER_COLUMNS} FROM managed_users WHERE partner_id = $1 AND user_id = ANY($2::text[])`, [partnerId, userIds]);
}
