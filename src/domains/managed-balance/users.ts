/**
 * Managed users (D35) and assets (2.3). A user is keyed by (partner, externalUserId) and created on
 * first use; another partner's externalUserId is simply another user. Assets come from the assets
 * table (operators extend it), never from code.
 */
import { newId } from '../../platform/crypto/secrets.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { ApiError } from '../../platform/errors.ts';
import { ensureUserRow, findAssetRow, findUserRow, findUserRowsByIds, listAssetRows, userRestrictionCodes, type AssetRow, type ManagedUserRow } from './users-store.ts';

export type { AssetRow, ManagedUserRow };

export async function ensureUser(q: Queryable, partnerId: string, externalUserId: string, at: Date): Promise<ManagedUserRow> {
  return ensureUserRow(q, { userId: newId('mu'), partnerId, externalUserId, createdAt: at });
}

/** The user for a read or for an operation on an existing thing (a card): absent is null, never created. */
export async function findUser(q: Queryable, partnerId: string, externalUserId: string): Promise<ManagedUserRow | null> {
  return findUserRow(q, partnerId, externalUserId);
}

export async function findUsersByIds(q: Queryable, partnerId: string, userIds: string[]): Promise<ManagedUserRow[]> {
  return findUserRowsByIds(q, partnerId, userIds);
}

/** An ACTIVE asset, or ASSET_INVALID naming it. */
export async function activeAsset(q: Queryable, asset: string, field = 'asset'): Promise<AssetRow> {
  const row = await findAssetRow(q, asset);
  if (!row || row.status !== 'ACTIVE') {
    throw new ApiError('ASSET_INVALID', `${field}: ${asset} is not a supported asset`, { data: { errorCode: 'ASSET_INVALID', errorMsg: field } });
  }
  return row;
}

/** An asset in any status, or null. */
export async function findAsset(q: Queryable, asset: string): Promise<AssetRow | null> {
  return findAssetRow(q, asset);
}

export async function listAssets(q: Queryable): Promise<AssetRow[]> {
  return listAssetRows(q);
}

export async function restrictionsOf(q: Queryable, userId: string): Promise<string[]> {
  return userRestrictionCodes(q, userId);
}
