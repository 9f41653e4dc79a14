/**
 * The ledger (D29, D33): accounts, balanced double-entry postings, statements and the audit. The
 * public entry of the domain: other domains and the top level import only from here. See the API
 * notes at the top of ledger.ts.
 */
export {
  availableReachedSince, findAccount, findAccountById, getOrCreateAccount, listAccountsOfOrganization, listAccountsOfOwner,
  listMovements, lockAccounts, post, type Balance, type EntryInput, type LedgerAccount,
} from './ledger.ts';
export { auditLedger, auditLedgerWhenDue, lastLedgerAudit, observeLedgerAudit } from './audit.ts';
export { postingsWithEntries } from './operator-views.ts';
export { ledgerAdminRoutes } from './routes.ts';
