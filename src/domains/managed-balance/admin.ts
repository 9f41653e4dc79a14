/** Operator controls of the managed-balance model: the assets table (2.3, D35) and user capability freezes (3, D20). */
import type { AppContext } from '../../platform/context.ts';
import { ApiError, paramInvalid } from '../../platform/errors.ts';
import type { WireAmount } from '../../platform/http/schema.ts';
import { ASSET_MAX_SCALE, CORPORATE_SCALE, parseAmount, toDb, toWire } from '../../platform/money.ts';
import { addUserRestrictions, removeUserRestrictions, upsertAssetRow } from './movements-store.ts';
import { ensureUser, findUser, listAssets, restrictionsOf, type AssetRow } from './users.ts';

type AdminDeps = Pick<AppContext, 'db' | 'clock'>;

export function assetView(a: AssetRow) {
  return {
    asset: a.asset, network: a.network, logo: a.logo, scale: a.scale, usdPegged: a.usdPegged,
    usdRate: a.usdRate === null ? null : toWire(a.usdRate), status: a.status,
  };
}

export async function assetList(deps: AdminDeps) {
  return (await listAssets(deps.db)).map(assetView);
}

export interface AssetInput {
  asset: string;
  network: string;
  logo: string;
  scale: number;
  usdPegged: boolean;
  usdRate?: WireAmount | null;
  status: 'ACTIVE' | 'INACTIVE';
  sortOrder?: number;
}

/** Creates or replaces an asset. A USD-pegged asset converts 1:1 (D35): its rate is 1, given or not. */
export async function upsertAsset(deps: AdminDeps, input: AssetInput) {
  let usdRate: string | null = null;
  if (input.usdRate !== undefined && input.usdRate !== null) usdRate = toDb(parseAmount('usdRate', input.usdRate, { maxScale: ASSET_MAX_SCALE, sign: 'positive' }));
  if (input.usdPegged) {
    if (usdRate !== null && usdRate !== '1') throw paramInvalid('usdRate', 'a USD-pegged asset converts 1:1');
    // 1:1 means a card's USD amounts (two decimals) are held, settled, refunded and charged as they
    // are: an asset with fewer decimals would get balances it cannot carry (D4, D35).
    if (input.scale < CORPORATE_SCALE) throw paramInvalid('scale', `a USD-pegged asset converts 1:1 and carries at least the ${CORPORATE_SCALE} decimals of USD`);
    usdRate = '1';
  }
  if (!await upsertAssetRow(deps.db, { ...input, usdRate, sortOrder: input.sortOrder ?? 100, now: new Date(deps.clock.now()) })) {
    throw paramInvalid('scale', `the decimals of ${input.asset} can be raised, never lowered: balances and holds in it may carry its current decimals`);
  }
  return assetList(deps);
}

export interface UserRestrictionsInput {
  partnerId: string;
  externalUserId: string;
  addRestrictions?: string[];
  removeRestrictions?: string[];
  remark?: string;
}

/** Set semantics like update-restrictions (4.5 rule 4): at least one code, idempotent. */
export async function setUserRestrictions(deps: AdminDeps, input: UserRestrictionsInput) {
  const add = input.addRestrictions ?? [];
  const remove = input.removeRestrictions ?? [];
  if (add.length === 0 && remove.length === 0) throw paramInvalid('addRestrictions', 'give at least one code to add or remove');
  if (add.some((c) => remove.includes(c))) throw paramInvalid('removeRestrictions', 'a code cannot be added and removed at once');
  return deps.db.tx(async (q) => {
    const at = new Date(deps.clock.now());
    const user = add.length > 0 ? await ensureUser(q, input.partnerId, input.externalUserId, at).catch((err: unknown) => {
      // The partner does not exist (foreign key): say so instead of a crash.
      if ((err as { code?: string }).code === '23503') throw new ApiError('PARTNER_INVALID', `Partner ${input.partnerId} does not exist`);
      throw err;
    }) : await findUser(q, input.partnerId, input.externalUserId);
    if (!user) return { externalUserId: input.externalUserId, restrictions: [] };
    await addUserRestrictions(q, user.userId, add, input.remark ?? null, at);
    await removeUserRestrictions(q, user.userId, remove);
    return { externalUserId: input.externalUserId, restrictions: await restrictionsOf(q, user.userId) };
  });
}
