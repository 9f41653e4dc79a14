import { Type } from 'typebox';
import { ASSET_MAX_SCALE, Money, WireNumber } from './wire.ts';

/**
 * The managed-balance model (spec 1, 2.3, 2.4, 4.2, 4.3; D35, D36, D39, D48): users keyed by
 * (partner, externalUserId), their balances per asset, asset movements, consumer cards, QR
 * payments and the push stream. See docs/managed-balance.md.
 */

/** Not in the spec: a partner's user id is 1 to 64 characters (D10: bounds on every field). */
export const EXTERNAL_USER_ID_MAX = 64;
/** Not in the spec: a partner's transfer id (externalTranId) is 1 to 64 characters. */
export const EXTERNAL_TRAN_ID_MAX = 64;
/** Not in the spec: remarks of movements are at most 256 characters, like the spec's other remarks. */
export const MOVEMENT_REMARK_MAX = 256;

export const ExternalUserId = Type.String({ minLength: 1, maxLength: EXTERNAL_USER_ID_MAX, description: 'The partner\'s own user id (1-64 characters); the user is created on first use (D35)' });
export const ExternalTranId = Type.String({ minLength: 1, maxLength: EXTERNAL_TRAN_ID_MAX, description: 'The partner\'s unique id of this transfer (1-64 characters); a repeat is EXTERNAL_TRAN_ID_DUPLICATE' });
/** An asset code as the assets table holds them (USDT, USDC, USD, ... the list grows: never hard-code it). */
export const AssetCode = Type.String({ pattern: '^[A-Z0-9]{2,12}$', description: 'An asset of GET /user-asset/v1/assets (USDT, USDC, USD, ...)' });
/** 4.3 / section 8: positive, at most 18 decimals (an asset may allow fewer). */
export const AssetAmount = Money({ maxScale: ASSET_MAX_SCALE, sign: 'positive' }, { description: 'Positive, at most 18 decimal places (D4), exact' });

/** 2.3: one balance object per asset. */
export const UserBalance = Type.Object({
  asset: Type.String(),
  network: Type.String(),
  logo: Type.String(),
  free: WireNumber({ description: 'Available balance' }),
  freeze: WireNumber({ description: 'Held by authorizations not yet settled' }),
  total: WireNumber({ description: 'free + freeze' }),
});
export const UserBalanceList = Type.Array(UserBalance);
