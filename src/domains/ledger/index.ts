/**
 * The ledger (D29, D33): accounts, balanced double-entry postings, statements and the audit. The
 * public entry of the domain: other domains and the top level import only from here. See the API
 * notes at the top of ledger.ts.
 */
export {
  availableReachedSince, findAccount, findAccountById, getBalance, getBalances, getOrCreateAccount, listAccountsOfOrganization,
  listAccountsOfOwner, listMovements, lockAccounts, post, MAX_ENTRIES_PER_POSTING,
  type AccountKey, type AccountRow, type Balance, type Bucket, type EntryInput, type LedgerAccount, type MovementFilter,
  type MovementRow, type OwnerType, type PostedEntry, type PostingInput, type PostingResult,
} from './ledger.ts';
export { auditLedger, auditLedgerWhenDue, lastLedgerAudit, observeLedgerAudit, type AuditFinding, type AuditReport } from './audit.ts';
export { postingsWithEntries, type PostingDetail } from './operator-views.ts';
export { ledgerAdminRoutes } from './routes.ts';
