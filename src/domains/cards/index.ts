/**
 * Cards (4.4, D22-D29, D44): card profiles, applications and their leased job, cards and card data
 * at rest, receiving accounts, dedicated balances and transfers. The public entry of the domain:
 * other domains and the top level import only from here.
 */
export { cardRoutes } from './routes.ts';
export {
  blockCard, cancelCardsOnCustomerTermination, cancelCardsOnOrganizationTermination, cardLookup, cardView, dedicatedCards,
  depositToCard, findCardById, isCancelledDedicatedCard, sweepToPool, unblockCard,
} from './service.ts';
export { cardApplicationJob } from './jobs.ts';
export { ensureCardsReady, listProfilesForPartner } from './profiles.ts';
export {
  cardProfileOf, changeConsumerCardStatus, consumerCardView, consumerProfile, findConsumerCard, findSpendCard, issueConsumerCard,
  listConsumerCards, type SpendCard,
} from './consumer.ts';
export {
  activatePhysical, cancelUpgrade, openUpgradesOf, reportBureauStatus, requestUpgrade, upgradeDetail, useConsumerUpgradeFees,
  CARD_FEE_OWNER, type FeeLine, type UpgradeCardRow, type UpgradeFeeBook,
} from './upgrades.ts';
export type { ConsumerCard, CardStatus } from './store.ts';
export { cardApplicationBacklog, findCardsByLast4 } from './operator-views.ts';
