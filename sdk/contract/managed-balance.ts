import { Type } from 'typebox';
import { RestrictionCode } from './organizations.ts';
import { ASSET_MAX_SCALE, IsoTime, Literals, Money, Nullable, Page, PagingQuery, WireNumber } from './wire.ts';

/**
 * The managed-balance model (spec 1, 2.3, 2.4, 4.2, 4.3; D35, D36, D39, D48): users keyed by
 * (partner, externalUserId), their balances per asset, asset movements, consumer cards, QR
 * payments and the push stream. See docs/managed-balance.md.
 */

// Not in the spec: D10 bounds every field.
/** A partner's user id: 1 to 64 characters. */
export const EXTERNAL_USER_ID_MAX = 64;
// Not in the spec.
/** A partner's transfer id (externalTranId): 1 to 64 characters. */
export const EXTERNAL_TRAN_ID_MAX = 64;
// Not in the spec: like the spec's other remarks.
/** The remark of a movement: at most 256 characters. */
export const MOVEMENT_REMARK_MAX = 256;

export const ExternalUserId = Type.String({ minLength: 1, maxLength: EXTERNAL_USER_ID_MAX, description: 'The partner\'s own user id (1-64 characters); the user is created on first use' });
export const ExternalTranId = Type.String({ minLength: 1, maxLength: EXTERNAL_TRAN_ID_MAX, description: 'The partner\'s unique id of this transfer (1-64 characters); a repeat is EXTERNAL_TRAN_ID_DUPLICATE' });
/** An asset code as the assets table holds them (USDT, USDC, USD, ... the list grows: never hard-code it). */
export const AssetCode = Type.String({ pattern: '^[A-Z0-9]{2,12}$', description: 'An asset of GET /user-asset/v1/assets (USDT, USDC, USD, ...)' });
/** Positive, at most 18 decimals; an asset may allow fewer (4.3, section 8). */
export const AssetAmount = Money({ maxScale: ASSET_MAX_SCALE, sign: 'positive' }, { description: 'Positive, at most 18 decimal places, exact' });

/** One balance object per asset (2.3). */
export const UserBalance = Type.Object({
  asset: Type.String(),
  network: Type.String(),
  logo: Type.String(),
  free: WireNumber({ description: 'Available balance' }),
  freeze: WireNumber({ description: 'Held by authorizations not yet settled' }),
  total: WireNumber({ description: 'free + freeze' }),
});
export const UserBalanceList = Type.Array(UserBalance);

// ---------------------------------------------------------------------------------------------
// User assets (4.3): credit, debit, conversion, balance, movements

/** Movement types (2.4). */
export const MOVEMENT_TYPES = ['DEPOSIT', 'WITHDRAW', 'CARD_PRINTING_FEE', 'CARD_POSTAL_FEE', 'CARD_VIP_FROZEN_FEE', 'CONVERSION',
  'REWARD_DISTRIBUTION', 'REWARD_PAY', 'REWARD_REFUND', 'MIGRATION'] as const;
export const MovementType = Literals(MOVEMENT_TYPES);
const MovementRemark = Type.String({ maxLength: MOVEMENT_REMARK_MAX, description: 'Up to 256 characters' });

/** Credit and debit share one body. `type` (optional) labels the movement with a movement type of the right direction (4.3, 2.4). */
export const CreditBody = Type.Object({
  externalTranId: ExternalTranId,
  asset: AssetCode,
  amount: AssetAmount,
  externalUserId: ExternalUserId,
  remark: Type.Optional(MovementRemark),
  type: Type.Optional(Literals(['DEPOSIT', 'REWARD_DISTRIBUTION', 'REWARD_REFUND', 'MIGRATION'] as const, { description: 'Default DEPOSIT' })),
});
export const DebitBody = Type.Object({
  externalTranId: ExternalTranId,
  asset: AssetCode,
  amount: AssetAmount,
  externalUserId: ExternalUserId,
  remark: Type.Optional(MovementRemark),
  type: Type.Optional(Literals(['WITHDRAW', 'REWARD_PAY', 'MIGRATION'] as const, { description: 'Default WITHDRAW' })),
});
export const ConvertBody = Type.Object({
  externalTranId: ExternalTranId,
  externalUserId: ExternalUserId,
  fromAsset: AssetCode,
  toAsset: AssetCode,
  amount: AssetAmount,
  remark: Type.Optional(MovementRemark),
});

/** An asset movement (2.4) as answered by every user-asset route. */
export const AssetMovement = Type.Object({
  transactionId: Type.String({ description: 'The service\'s id of the movement (at most 20 characters)' }),
  externalTranId: Nullable(Type.String({ description: 'The partner\'s id; null for movements the service books itself (fees)' })),
  externalUserId: Type.String(),
  type: MovementType,
  direction: Literals(['CREDIT', 'DEBIT'] as const, { description: 'CREDIT raises the balance of `asset`, DEBIT lowers it' }),
  asset: Type.String(),
  amount: WireNumber(),
  counterAsset: Nullable(Type.String({ description: 'CONVERSION: the asset credited' })),
  counterAmount: Nullable(WireNumber({ description: 'CONVERSION: the amount credited in counterAsset' })),
  rate: Nullable(WireNumber({ description: 'CONVERSION: counterAmount per unit of asset before rounding down' })),
  cardId: Nullable(Type.String({ description: 'Card fees: the card' })),
  remark: Nullable(Type.String()),
  status: Literals(['SUCCESS'] as const),
  freeAfter: WireNumber({ description: 'The user\'s free balance in `asset` after the movement' }),
  createTime: Type.String(),
});
export const AssetMovementPage = Page(AssetMovement);

export const BalanceQuery = Type.Object({ externalUserId: ExternalUserId, asset: Type.Optional(AssetCode) });
export const MovementListFilter = Type.Object({
  externalUserId: ExternalUserId,
  asset: Type.Optional(AssetCode),
  type: Type.Optional(MovementType),
  startTime: Type.Optional(IsoTime),
  endTime: Type.Optional(IsoTime),
  ...PagingQuery,
});
export const MovementDetailBody = Type.Object({
  transactionId: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
  externalTranId: Type.Optional(ExternalTranId),
  externalUserId: Type.Optional(ExternalUserId),
});
export const TransferQuery = Type.Object({ externalTranId: ExternalTranId });

/** An asset as partners see it. */
export const AssetView = Type.Object({
  asset: Type.String(),
  network: Type.String(),
  logo: Type.String(),
  scale: Type.Integer({ description: 'Decimal places an amount may carry' }),
  usdPegged: Type.Boolean(),
  usdRate: Nullable(WireNumber({ description: 'Units of the asset per USD; null when not convertible' })),
  status: Literals(['ACTIVE', 'INACTIVE'] as const),
});
export const AssetList = Type.Array(AssetView);

// Operators
export const AssetUpsertBody = Type.Object({
  asset: AssetCode,
  network: Type.String({ minLength: 1, maxLength: 32 }),
  logo: Type.String({ minLength: 1, maxLength: 256 }),
  scale: Type.Integer({ minimum: 0, maximum: ASSET_MAX_SCALE }),
  usdPegged: Type.Boolean(),
  usdRate: Type.Optional(Nullable(Money({ maxScale: ASSET_MAX_SCALE, sign: 'positive' }, { description: 'Units per USD; must be 1 for a pegged asset; absent/null: not convertible' }))),
  status: Literals(['ACTIVE', 'INACTIVE'] as const),
  sortOrder: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
});
export const UserRestrictionsBody = Type.Object({
  partnerId: Type.String({ minLength: 1, maxLength: 20 }),
  externalUserId: ExternalUserId,
  addRestrictions: Type.Optional(Type.Array(RestrictionCode, { maxItems: 5 })),
  removeRestrictions: Type.Optional(Type.Array(RestrictionCode, { maxItems: 5 })),
  remark: Type.Optional(Type.String({ maxLength: 256 })),
});
export const UserRestrictionsView = Type.Object({ externalUserId: Type.String(), restrictions: Type.Array(Type.String()) });
