/**
 * Cards (4.4, D22-D29, D44): card profiles, applications and their leased job, cards and card data
 * at rest, receiving accounts, dedicated balances and transfers. The public entry of the domain:
 * other domains and the top level import only from here.
 */
export { cardRoutes } from './routes.ts';
export {
  applyForCard, applyView, blockCard, cancelCard, cancelCardInTx, cancelCardsOfCustomer, cancelCardsOfOrganization,
  cancelCardsOnCustomerTermination, cancelCardsOnOrganizationTermination, cardLookup, cardOrderDetail, cardView,
  checkApplication, checkCurrencyList, dedicatedCards, depositAccountsOf, depositToCard, findCardById, listCardsOf, openVirtualAccounts,
  queryApply, queryCard, retrieveSecureCard, revealCardSecretOf, transferFunds, unblockCard, CARD_CURRENCIES, CARDHOLDER_NAME_MAX,
  DEPOSIT_BANK, type ApplyInput, type CheckedApplication, type TransferInput,
} from './service.ts';
export {
  cardApplicationJob, leaseCardApplications, processCardApplications, CARD_APPLY_BATCH, CARD_APPLY_LEASE_MS, CARD_APPLY_MAX_ATTEMPTS,
  CARD_APPLY_POLL_INTERVAL_MS, PROCESSING_FAILED, SCREENING_REJECTED, type JobLogger, type ProcessResult,
} from './jobs.ts';
export {
  createCardProfile, ensureCardsReady, listProfilesForOperator, listProfilesForPartner, updateCardProfileSettings, DEFAULT_VALIDITY_MONTHS,
  SANDBOX_PROFILES, type CardDeps, type CreateProfileInput,
} from './profiles.ts';
export {
  cardProfileOf, changeConsumerCardStatus, consumerCardView, consumerProfile, findConsumerCard, findSpendCard, issueConsumerCard, listConsumerCards,
  type SpendCard,
} from './consumer.ts';
export {
  activatePhysical, cancelUpgrade, openUpgradesOf, reportBureauStatus, requestUpgrade, upgradeDetail, useConsumerUpgradeFees, CARD_FEE_OWNER,
  type CardScope, type FeeLine, type UpgradeCardRow, type UpgradeFeeBook, type UpgradeView,
} from './upgrades.ts';
export { cardKeyInventory, reencryptCardData, rotatePanDataKey } from './keys.ts';
export type { CardSecret } from './card-data.ts';
export type {
  ApplyStatus, BalanceMode, Card, CardApplication, ConsumerCard, CardForm, CardNetwork, CardProfile, CardStatus, CardSubjectType, CardTransfer,
  DepositAccount,
} from './store.ts';
export { cardApplicationBacklog, findCardsByLast4, type CardHit } from './operator-views.ts';
