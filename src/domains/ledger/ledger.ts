/**
 * The ledger (D29, D33): every money movement is one balanced double-entry posting.
 *
 * API (all functions take the caller's transaction `q`; call them inside `db.tx`):
 *
 *   getOrCreateAccount(q, {partnerId, ownerType, ownerId, currency, organizationId?}) -> LedgerAccount
 *       One account per (partner, ownerType, ownerId, currency). Owner types:
 *         ORGANIZATION_POOL  a company funding pool (ownerId = organizationId)
 *         CARD               a dedicated card balance (ownerId = cardId; pass organizationId so the
 *                            balance shows in fund/v1/balance `cards`)
 *         MANAGED_USER       a managed-balance user asset (ownerId = the user's id)
 *         EXTERNAL           money outside the service (bank deposits, withdrawals; ownerId e.g. 'BANK')
 *         CLEARING           network settlement (ownerId e.g. 'VISA')
 *         FEE_INCOME         fees earned by the service
 *       The last three are system accounts: they may go negative (they mirror the outside world).
 *
 *   post(q, {partnerId, kind, entries: [{accountId, amount, bucket}], forced?, reference?,
 *            description?, createTime, postingId?}) -> PostingResult
 *       `amount` is a signed Amount (money.ts): positive raises the account's bucket, negative lowers
 *       it. Buckets: AVAILABLE (= `free` of 2.3) and PENDING (= `freeze`, authorization holds).
 *       Per currency the amounts must sum to zero. Accounts are locked in account_id order before
 *       anything is written, so concurrent postings never lose an update nor deadlock.
 *       Throws ApiError('INSUFFICIENT_BALANCE', ..., {data: {errorCode, errorMsg: the short balance}}) when a
 *       non-forced posting would take the AVAILABLE of a non-system account below zero. No SQL has
 *       been sent at that point except the row locks, so the caller may catch it and go on in the
 *       same transaction (an authorization records a decline). `forced: true` is for postings the
 *       service cannot refuse (a clearing above its hold, a fee: D33).
 *       Examples:
 *         deposit to a pool:      [{pool, +100, AVAILABLE}, {external, -100, AVAILABLE}]
 *         pool -> dedicated card: [{pool, -50, AVAILABLE}, {card, +50, AVAILABLE}]
 *         authorization hold:     [{card, -10, AVAILABLE}, {card, +10, PENDING}]
 *         clearing of that hold:  [{card, -10, PENDING}, {clearing, +10, AVAILABLE}]
 *         release of a hold:      [{card, -10, PENDING}, {card, +10, AVAILABLE}]
 *
 *   getBalance(q, accountId) / getBalances(q, accountIds) -> {available, pending, total} (Amounts)
 *   lockAccounts(q, accountIds)   row locks in a stable order, returns the accounts (read-then-decide)
 *   auditLedger(q, {partnerId?})  re-derives every balance from the entries (see audit.ts)
 *
 * The database enforces the same invariants in ledger_post (src/domains/ledger/sql/ledger_post.sql), the one writer of
 * postings and entries: balanced postings of at least two entries, balances changed only through
 * it, pending >= 0, available >= 0 for non-system accounts unless forced, append-only postings and
 * entries.
 */
import { newId } from '../../platform/crypto/secrets.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { ApiError, invariant } from '../../platform/errors.ts';
import { fromDb, toDb, ZERO, type Amount } from '../../platform/money.ts';
import {
  availableReachedSince as availableReachedSinceRow, insertPosting, listMovementRows, type EntryRow, type MovementFilter,
  type MovementRow,
} from './postings-store.ts';
import {
  findAccountRow, findAccountRowById, insertAccountIfAbsent, listAccountRowsOfOrganization,
  listAccountRowsOfOwner, lockAccountRows, type AccountRow, type Bucket, type OwnerType,
} from './store.ts';

export type { AccountRow, Bucket, MovementFilter, MovementRow, OwnerType };

/** Owner types that mirror money outside the service: they may go negative. */
const SYSTEM_OWNER_TYPES: ReadonlySet<OwnerType> = new Set(['EXTERNAL', 'CLEARING', 'FEE_INCOME']);

/**
 * D1: `data.errorMsg` of INSUFFICIENT_BALANCE names the balance that was short in the partner's own
 * terms (a company pool, a card, a user's asset); ledger account ids and the service's internal user
 * ids are never shown to partners (no partner endpoint takes them).
 */
function balanceHolderOf(account: Pick<AccountRow, 'ownerType' | 'ownerId' | 'currency'>): string {
  switch (account.ownerType) {
    case 'ORGANIZATION_POOL': return `pool ${account.ownerId} ${account.currency}`;
    case 'CARD': return `card ${account.ownerId} ${account.currency}`;
    case 'MANAGED_USER': return `user ${account.currency}`;
    default: return account.currency;
  }
}

/** Postings carry at most this many entries: a bound on every loop (TigerBeetle style). */
export const MAX_ENTRIES_PER_POSTING = 16;
const POSTING_KIND = /^[A-Z][A-Z0-9_]{0,39}$/;

type BalanceField = 'available' | 'pending' | 'total';

/** An account as the ledger hands it out: its row with exact Amounts and the version as a number. */
export type LedgerAccount = Omit<AccountRow, BalanceField | 'version'> & Record<BalanceField, Amount> & { version: number };

export type Balance = Pick<LedgerAccount, BalanceField>;

/** Who owns an account and in which currency; `organizationId` names the owning company of pools and card balances. */
export type AccountKey = Pick<AccountRow, 'partnerId' | 'ownerType' | 'ownerId' | 'currency'> & { organizationId?: string | null };

export interface EntryInput {
  accountId: string;
  /** Signed: positive raises the bucket, negative lowers it. */
  amount: Amount;
  bucket: Bucket;
}

export interface PostingInput {
  /** Minted when absent; a caller-chosen id must be unique (a repeat is a programmer error). */
  postingId?: string;
  partnerId: string;
  /** What happened, in the spec's words: DEPOSIT, WITHDRAW, TRANSFER, AUTHORIZATION, CLEARING, ... */
  kind: string;
  entries: EntryInput[];
  /** D33: the service cannot refuse it, so AVAILABLE may go below zero. */
  forced?: boolean;
  /** The business id this posting belongs to (transId, externalTranId, ...). */
  reference?: string | null;
  description?: string | null;
  createTime: Date;
}

export interface PostedEntry {
  entryId: string;
  accountId: string;
  currency: string;
  bucket: Bucket;
  amount: Amount;
  availableAfter: Amount;
  pendingAfter: Amount;
  accountVersion: number;
}

export interface PostingResult {
  postingId: string;
  kind: string;
  createTime: Date;
  entries: PostedEntry[];
  /** Balance of every touched account after the posting, by account id. */
  balances: Map<string, Balance>;
}

function toAccount(row: AccountRow): LedgerAccount {
  const account: LedgerAccount = {
    ...row,
    available: fromDb(row.available),
    pending: fromDb(row.pending),
    total: fromDb(row.total),
    version: Number(row.version),
  };
  invariant(account.pending.gte(0), `pending >= 0 on ${row.accountId}`);
  invariant(account.total.eq(account.available.plus(account.pending)), `total = available + pending on ${row.accountId}`);
  return account;
}

/** The account of an owner in a currency, created empty on first use (safe under concurrency). */
export async function getOrCreateAccount(q: Queryable, key: AccountKey, createTime: Date = new Date()): Promise<LedgerAccount> {
  const existing = await findAccount(q, key);
  if (existing) return existing;
  await insertAccountIfAbsent(q, {
    accountId: newId('la'), partnerId: key.partnerId, organizationId: key.organizationId ?? null, ownerType: key.ownerType,
    ownerId: key.ownerId, currency: key.currency, allowNegative: SYSTEM_OWNER_TYPES.has(key.ownerType), createdAt: createTime,
  });
  const created = await findAccount(q, key);
  invariant(created, `ledger account exists after create: ${key.ownerType}/${key.ownerId}/${key.currency}`);
  return created;
}

export async function findAccount(q: Queryable, key: Omit<AccountKey, 'organizationId'>): Promise<LedgerAccount | null> {
  const row = await findAccountRow(q, key);
  return row ? toAccount(row) : null;
}

export async function findAccountById(q: Queryable, accountId: string): Promise<LedgerAccount | null> {
  const row = await findAccountRowById(q, accountId);
  return row ? toAccount(row) : null;
}

/** Accounts of an owner (all currencies), e.g. every pool of a company. */
export async function listAccountsOfOwner(q: Queryable, partnerId: string, ownerType: OwnerType, ownerId: string): Promise<LedgerAccount[]> {
  return (await listAccountRowsOfOwner(q, partnerId, ownerType, ownerId)).map(toAccount);
}

/** Accounts of one company by owner type (e.g. every dedicated card balance of the company). */
export async function listAccountsOfOrganization(q: Queryable, organizationId: string, ownerType: OwnerType): Promise<LedgerAccount[]> {
  return (await listAccountRowsOfOrganization(q, organizationId, ownerType)).map(toAccount);
}

/**
 * Takes the row locks of the accounts in account_id order (the one global order, so two
 * transactions can never wait on each other in a cycle) and returns them by id.
 */
export async function lockAccounts(q: Queryable, accountIds: string[]): Promise<Map<string, LedgerAccount>> {
  const ids = [...new Set(accountIds)].sort();
  invariant(ids.length > 0 && ids.length <= MAX_ENTRIES_PER_POSTING, `lockAccounts: 1..${MAX_ENTRIES_PER_POSTING} accounts`);
  const rows = await lockAccountRows(q, ids);
  invariant(rows.length === ids.length, `lockAccounts: every account exists (${ids.join(',')})`);
  return new Map(rows.map((r) => [r.accountId, toAccount(r)]));
}

/**
 * Books one balanced posting. Checks, in order: shape (programmer errors -> invariant), balance
 * per currency (invariant), funds (INSUFFICIENT_BALANCE, an expected failure); then writes the
 * posting and its entries and checks that the balances the database computed are the ones
 * predicted here (pair assertion).
 */
export async function post(q: Queryable, input: PostingInput): Promise<PostingResult> {
  const { entries } = input;
  invariant(POSTING_KIND.test(input.kind), `posting kind "${input.kind}" is an upper-case word`);
  invariant(entries.length >= 2 && entries.length <= MAX_ENTRIES_PER_POSTING, `posting has 2..${MAX_ENTRIES_PER_POSTING} entries`);
  for (const e of entries) {
    invariant(!e.amount.isZero() && e.amount.isFinite(), `entry amount on ${e.accountId} is a non-zero finite decimal`);
    invariant(e.bucket === 'AVAILABLE' || e.bucket === 'PENDING', `entry bucket ${String(e.bucket)}`);
  }

  const accounts = await lockAccounts(q, entries.map((e) => e.accountId));

  // Balanced per currency (D33).
  const sums = new Map<string, Amount>();
  for (const e of entries) {
    const account = accounts.get(e.accountId)!;
    invariant(account.partnerId === input.partnerId, `account ${e.accountId} belongs to the posting's partner`);
    sums.set(account.currency, (sums.get(account.currency) ?? ZERO).plus(e.amount));
  }
  for (const [currency, sum] of sums) invariant(sum.isZero(), `posting balanced in ${currency} (sum ${sum.toFixed()})`);

  // Predict every balance after each entry, in entry order, as the database will apply them.
  const running = new Map<string, { available: Amount; pending: Amount; version: number }>();
  for (const [id, a] of accounts) running.set(id, { available: a.available, pending: a.pending, version: a.version });
  const predicted: { available: Amount; pending: Amount; version: number }[] = [];
  for (const e of entries) {
    const account = accounts.get(e.accountId)!;
    const state = running.get(e.accountId)!;
    const next = {
      available: e.bucket === 'AVAILABLE' ? state.available.plus(e.amount) : state.available,
      pending: e.bucket === 'PENDING' ? state.pending.plus(e.amount) : state.pending,
      version: state.version + 1,
    };
    invariant(next.pending.gte(0), `pending of ${e.accountId} stays >= 0 (a release never exceeds the hold)`);
    // D33: only an entry that lowers available is refused below zero; credits (and entries that leave
    // available alone) always pass, so a negative free is repaid by the next credits.
    if (e.bucket === 'AVAILABLE' && e.amount.lt(0) && next.available.lt(0) && !account.allowNegative && !input.forced) {
      throw new ApiError('INSUFFICIENT_BALANCE', `Insufficient available balance in ${account.currency}`, {
        data: { errorCode: 'INSUFFICIENT_BALANCE', errorMsg: balanceHolderOf(account) },
      });
    }
    running.set(e.accountId, next);
    predicted.push(next);
  }

  const postingId = input.postingId ?? newId('lp');
  // One call: the posting and its entries, applied in the order given.
  const rows = await insertPosting(q, {
    postingId, partnerId: input.partnerId, kind: input.kind, forced: input.forced ?? false, reference: input.reference ?? null,
    description: input.description ?? null, createdAt: input.createTime,
  }, entries.map((e) => ({ accountId: e.accountId, currency: accounts.get(e.accountId)!.currency, bucket: e.bucket, amount: toDb(e.amount) })));
  invariant(rows.length === entries.length, 'every entry was written');
  rows.sort((a, b) => Number(a.accountVersion) - Number(b.accountVersion) || Number(a.entryId) - Number(b.entryId));

  const posted: PostedEntry[] = [];
  const written = new Map<string, EntryRow[]>();
  for (const r of rows) written.set(r.accountId, [...(written.get(r.accountId) ?? []), r]);
  const cursor = new Map<string, number>();
  entries.forEach((e, i) => {
    const k = cursor.get(e.accountId) ?? 0;
    cursor.set(e.accountId, k + 1);
    const r = written.get(e.accountId)![k];
    const expected = predicted[i];
    // Pair assertion: what the database applied is what the code predicted.
    invariant(fromDb(r.amount).eq(e.amount) && r.bucket === e.bucket, `entry ${r.entryId} matches its input`);
    invariant(fromDb(r.availableAfter).eq(expected.available), `available after entry ${r.entryId} is as predicted`);
    invariant(fromDb(r.pendingAfter).eq(expected.pending), `pending after entry ${r.entryId} is as predicted`);
    invariant(Number(r.accountVersion) === expected.version, `version after entry ${r.entryId} is as predicted`);
    posted.push({
      entryId: r.entryId,
      accountId: r.accountId,
      currency: r.currency,
      bucket: r.bucket,
      amount: e.amount,
      availableAfter: expected.available,
      pendingAfter: expected.pending,
      accountVersion: expected.version,
    });
  });

  const balances = new Map<string, Balance>();
  for (const [id, s] of running) balances.set(id, { available: s.available, pending: s.pending, total: s.available.plus(s.pending) });
  return { postingId, kind: input.kind, createTime: input.createTime, entries: posted, balances };
}

/**
 * Movements of an owner's accounts for statements (D29): one line per posting and account, newest
 * first, with the account's change (available, pending) and its balances after the posting.
 */
export async function listMovements(q: Queryable, filter: MovementFilter, limit: number, offset: number): Promise<{ total: number; rows: MovementRow[] }> {
  return listMovementRows(q, filter, limit, offset);
}

/**
 * Whether the account's available balance was at or above `threshold` after any entry newer than
 * `afterVersion` (a top-up and a new fall between two looks at the balance, as the low-balance
 * alert needs it).
 */
export async function availableReachedSince(q: Queryable, accountId: string, afterVersion: string | number, threshold: Amount | string): Promise<boolean> {
  return availableReachedSinceRow(q, accountId, String(afterVersion), typeof threshold === 'string' ? threshold : toDb(threshold));
}
