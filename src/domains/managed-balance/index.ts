/**
 * The managed-balance model (spec 1, 2.3, 2.4, 4.2, 4.3; D33, D35, D36, D39): managed users and
 * assets, asset movements (credit, debit, fees, conversion), consumer cards, QR payments and the
 * push stream of /card/v1/ws. The public entry of the domain. See docs/managed-balance.md.
 */
export { activeAsset, ensureUser, findAsset, findUser, listAssets, restrictionsOf, type AssetRow, type ManagedUserRow } from './users.ts';
export { userAssetRoutes } from './routes.ts';
export { consumerCardRoutes } from './consumer-card-routes.ts';
export { qrPaymentRoutes } from './qr-payment-routes.ts';
export { PushHub, PUSH_CLOSE, pruneUserStream, type PushDeps } from './push.ts';
export { CODE_MAX_ATTEMPTS, CODE_TTL_MS } from './consumer-cards.ts';
export { balances, convert, move, CREDIT_TYPES, DEBIT_TYPES, type MovementDeps, type MovementView } from './movements.ts';
export { consumerUpgradeFees } from './consumer-upgrades.ts';
export { findManagedUsers, type ManagedUserHit } from './operator-views.ts';
