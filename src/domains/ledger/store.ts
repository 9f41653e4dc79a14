import type { Queryable } from '../../platform/db/db.ts';

/** SQL of ledger accounts (D29, D33); plain rows in and out, balances as NUMERIC text. */

export type OwnerType = 'ORGANIZATION_POOL' | 'CARD' | 'MANAGED_USER' | 'EXTERNAL' | 'CLEARING' | 'FEE_INCOME';
export type Bucket = 'AVAILABLE' | 'PENDING';

/** A ledger_accounts row: money and the version as text (NUMERIC, BIGINT), never a JS number. */
export interface AccountRow {
  accountId: string;
  partnerId: string;
  organizationId: string | null;
  ownerType: OwnerType;
  ownerId: string;
  currency: string;
  allowNegative: boolean;
  available: string;
  pending: string;
  total: string;
  version: string;
  createdAt: Date;
}

/** What a new account is given; balances, version and total start at the database defaults. */
export type NewAccountRow = Omit<AccountRow, 'available' | 'pending' | 'total' | 'version'>;

export type AccountOwner = Pick<AccountRow, 'partnerId' | 'ownerType' | 'ownerId' | 'currency'>;

const ACCOUNT_COLUMNS = `account_id AS "accountId", partner_id AS "partnerId", organization_id AS "organizationId",
  owner_type AS "ownerType", owner_id AS "ownerId", currency, allow_negative AS "allowNegative",
  available::text AS available, pending::text AS pending, total::text AS total, version::text AS version,
  created_at AS "createdAt"`;

/** Inserts the account unless its owner already has one in the currency (concurrent creates are safe). */
export async function insertAccountIfAbsent(q: Queryable, a: NewAccountRow): Promise<void> {
  await q.query(
    `INSERT INTO ledger_accounts (account_id, partner_id, organization_id, owner_type, owner_id, currency, allow_negative, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (partner_id, owner_type, owner_id, currency) DO NOTHING`,
    [a.accountId, a.partnerId, a.organizationId, a.ownerType, a.ownerId, a.currency, a.allowNegative, a.createdAt],
  );
}

export async function findAccountRow(q: Queryable, owner: AccountOwner): Promise<AccountRow | null> {
  const rows = await q.query<AccountRow>(
    `SELECT ${ACCOUNT_COLUMNS} FROM ledger_accounts
     WHERE partner_id = $1 AND owner_type = $2 AND owner_id = $3 AND currency = $4`,
    [owner.partnerId, owner.ownerType, owner.ownerId, owner.currency],
  );
  return rows[0] ?? null;
}

export async function findAccountRowById(q: Queryable, accountId: string): Promise<AccountRow | null> {
  const rows = await q.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM ledger_accounts WHERE account_id = $1`, [accountId]);
  return rows[0] ?? null;
}

export async function listAccountRowsOfOwner(q: Queryable, partnerId: string, ownerType: OwnerType, ownerId: string): Promise<AccountRow[]> {
  return q.query<AccountRow>(
    `SELECT ${ACCOUNT_COLUMNS} FROM ledger_accounts WHERE partner_id = $1 AND owner_type = $2 AND owner_id = $3
     ORDER BY currency`,
    [partnerId, ownerType, ownerId],
  );
}

export async function listAccountRowsOfOrganization(q: Queryable, organizationId: string, ownerType: OwnerType): Promise<AccountRow[]> {
  return q.query<AccountRow>(
    `SELECT ${ACCOUNT_COLUMNS} FROM ledger_accounts WHERE organization_id = $1 AND owner_type = $2
     ORDER BY owner_id, currency`,
    [organizationId, ownerType],
  );
}

/** Row locks on the accounts, taken in account_id order (the caller passes the ids sorted). */
export async function lockAccountRows(q: Queryable, sortedIds: string[]): Promise<AccountRow[]> {
  return q.query<AccountRow>(
    `SELECT ${ACCOUNT_COLUMNS} FROM ledger_accounts WHERE account_id = ANY($1::text[]) ORDER BY account_id FOR UPDATE`,
    [sortedIds],
  );
}
