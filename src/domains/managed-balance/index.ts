/**
 * The managed-balance model (spec 1, 2.3, 2.4, 4.2, 4.3; D33, D35, D36, D39): managed users and
 * assets, asset movements (credit, debit, fees, conversion), consumer cards, QR payments and the
 * push stream of /card/v1/ws. The public entry of the domain. See docs/managed-balance.md.
 */
export { findAsset } from './users.ts';
export { userAssetRoutes } from './routes.ts';
export { consumerCardRoutes } from './consumer-card-routes.ts';
export { qrPaymentRoutes } from './qr-payment-routes.ts';
export { PushHub, pruneUserStream, type PushGrant } from './push.ts';
export { consumerUpgradeFees } from './consumer-upgrades.ts';
export { findManagedUsers } from './operator-views.ts';
