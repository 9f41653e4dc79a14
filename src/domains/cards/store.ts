import type { Queryable } from '../../platform/db/db.ts';

/** SQL of the cards domain; plain objects in and out, no business rules. */

export type CardNetwork = 'VISA' | 'MASTERCARD';
export type CardForm = 'VIRTUAL' | 'PHYSICAL';
/** ASSET: a consumer card of the managed-balance model, spending its user's funding asset (migration 083). */
export type BalanceMode = 'SHARED' | 'DEDICATED' | 'ASSET';
export type CardSubjectType = 'ORGANIZATION' | 'CUSTOMER';
export type CardStatus = 'ACTIVE' | 'BLOCKED' | 'CANCELLED';
export type ApplyStatus = 'PENDING' | 'PROCESSING' | 'SUCCESS' | 'REJECTED';

// ---------------------------------------------------------------------------------------------
// Card profiles (D22)

export interface CardProfile {
  cardProfileId: string;
  partnerId: string | null;
  profileName: string;
  cardNetwork: CardNetwork;
  cardForm: CardForm;
  balanceMode: BalanceMode;
  settlementCurrencies: string[];
  bin: string;
  panLength: number;
  validityMonths: number;
  issuanceFee: string;
  monthlyFee: string;
  /** Consumer (ASSET) profiles: CARD_POSTAL_FEE of a physical card, CARD_VIP_FROZEN_FEE of an unfreeze. */
  postalFee: string;
  frozenFee: string;
  status: 'ACTIVE' | 'INACTIVE';
  createdAt: Date;
  updatedAt: Date;
}

const PROFILE_COLUMNS = `card_profile_id AS "cardProfileId", partner_id AS "partnerId", profile_name AS "profileName",
  card_network AS "cardNetwork", card_form AS "cardForm", balance_mode AS "balanceMode",
  settlement_currencies AS "settlementCurrencies", bin, pan_length AS "panLength", validity_months AS "validityMonths",
  issuance_fee::text AS "issuanceFee", monthly_fee::text AS "monthlyFee", postal_fee::text AS "postalFee",
  frozen_fee::text AS "frozenFee", status, created_at AS "createdAt", updated_at AS "updatedAt"`;

export type NewCardProfile = Omit<CardProfile, 'createdAt' | 'updatedAt'>;

/** Inserts a profile; false when the id is taken (seeding is idempotent). */
export async function insertCardProfile(q: Queryable, p: NewCardProfile, now: Date): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO card_profiles (card_profile_id, partner_id, profile_name, card_network, card_form, balance_mode,
       settlement_currencies, bin, pan_length, validity_months, issuance_fee, monthly_fee, postal_fee, frozen_fee, status, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::numeric, $12::numeric, $13::numeric, $14::numeric, $15, $16, $16)
     ON CONFLICT (card_profile_id) DO NOTHING RETURNING 1 AS ok`,
    [p.cardProfileId, p.partnerId, p.profileName, p.cardNetwork, p.cardForm, p.balanceMode, JSON.stringify(p.settlementCurrencies),
      p.bin, p.panLength, p.validityMonths, p.issuanceFee, p.monthlyFee, p.postalFee, p.frozenFee, p.status, now],
  );
  return rows.length === 1;
}

export async function findCardProfile(q: Queryable, cardProfileId: string, forUpdate = false): Promise<CardProfile | null> {
  const rows = await q.query<CardProfile>(
    `SELECT ${PROFILE_COLUMNS} FROM card_profiles WHERE card_profile_id = $1${forUpdate ? ' FOR UPDATE' : ''}`,
    [cardProfileId],
  );
  return rows[0] ?? null;
}

export async function updateCardProfile(
  q: Queryable,
  cardProfileId: string,
  s: { profileName: string; status: 'ACTIVE' | 'INACTIVE'; issuanceFee: string; monthlyFee: string; postalFee: string; frozenFee: string },
  now: Date,
): Promise<CardProfile> {
  const rows = await q.query<CardProfile>(
    `UPDATE card_profiles SET profile_name = $2, status = $3, issuance_fee = $4::numeric, monthly_fee = $5::numeric,
       postal_fee = $6::numeric, frozen_fee = $7::numeric, updated_at = $8
     WHERE card_profile_id = $1 RETURNING ${PROFILE_COLUMNS}`,
    [cardProfileId, s.profileName, s.status, s.issuanceFee, s.monthlyFee, s.postalFee, s.frozenFee, now],
  );
  return rows[0];
}

/** Profiles offered to a partner (its own and the shared ones), or all (partnerId null: operators). */
export async function listCardProfiles(
  q: Queryable,
  filter: { partnerId: string | null; cardNetwork?: string; balanceMode?: string; status?: string; balanceModes?: readonly BalanceMode[] },
  limit: number,
  offset: number,
): Promise<{ total: number; rows: CardProfile[] }> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.partnerId !== null) {
    params.push(filter.partnerId);
    where.push(`(partner_id IS NULL OR partner_id = $${params.length})`);
  }
  if (filter.balanceModes !== undefined) {
    params.push(filter.balanceModes);
    where.push(`balance_mode = ANY($${params.length}::text[])`);
  }
  for (const [column, value] of [['card_network', filter.cardNetwork], ['balance_mode', filter.balanceMode], ['status', filter.status]] as const) {
    if (value === undefined) continue;
    params.push(value);
    where.push(`${column} = $${params.length}`);
  }
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const [{ total }] = await q.query<{ total: number }>(`SELECT count(*)::int AS total FROM card_profiles ${clause}`, params);
  const rows = await q.query<CardProfile>(
    `SELECT ${PROFILE_COLUMNS} FROM card_profiles ${clause} ORDER BY created_at DESC, card_profile_id DESC
     LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, limit, offset],
  );
  return { total, rows };
}

// ---------------------------------------------------------------------------------------------
// Card applications (D23, D24)

export interface CardApplication {
  cardApplyId: string;
  partnerId: string;
  cardApplyRef: string;
  organizationId: string;
  cardProfileId: string;
  subjectType: CardSubjectType;
  subjectId: string;
  custodianCustomerId: string;
  cardholderName: string | null;
  ruleIds: string[];
  status: ApplyStatus;
  cardId: string | null;
  rejectReason: string | null;
  attempts: number;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const APPLY_COLUMNS = `card_apply_id AS "cardApplyId", partner_id AS "partnerId", card_apply_ref AS "cardApplyRef",
  organization_id AS "organizationId", card_profile_id AS "cardProfileId", subject_type AS "subjectType",
  subject_id AS "subjectId", custodian_customer_id AS "custodianCustomerId", cardholder_name AS "cardholderName",
  rule_ids AS "ruleIds", status, card_id AS "cardId", reject_reason AS "rejectReason", attempts,
  lease_owner AS "leaseOwner", lease_expires_at AS "leaseExpiresAt", created_at AS "createdAt", updated_at AS "updatedAt"`;

export type NewCardApplication = Pick<CardApplication,
  'cardApplyId' | 'partnerId' | 'cardApplyRef' | 'organizationId' | 'cardProfileId' | 'subjectType' | 'subjectId'
  | 'custodianCustomerId' | 'cardholderName' | 'ruleIds'>;

/** Inserts a PENDING application; null when the partner already used the cardApplyRef (race-safe). */
export async function insertCardApplication(q: Queryable, a: NewCardApplication, now: Date): Promise<CardApplication | null> {
  const rows = await q.query<CardApplication>(
    `INSERT INTO card_applications (card_apply_id, partner_id, card_apply_ref, organization_id, card_profile_id, subject_type,
       subject_id, custodian_customer_id, cardholder_name, rule_ids, status, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'PENDING', $11, $11)
     ON CONFLICT (partner_id, card_apply_ref) DO NOTHING RETURNING ${APPLY_COLUMNS}`,
    [a.cardApplyId, a.partnerId, a.cardApplyRef, a.organizationId, a.cardProfileId, a.subjectType, a.subjectId,
      a.custodianCustomerId, a.cardholderName, JSON.stringify(a.ruleIds), now],
  );
  return rows[0] ?? null;
}

export async function findApplicationById(q: Queryable, partnerId: string, cardApplyId: string): Promise<CardApplication | null> {
  const rows = await q.query<CardApplication>(
    `SELECT ${APPLY_COLUMNS} FROM card_applications WHERE partner_id = $1 AND card_apply_id = $2`,
    [partnerId, cardApplyId],
  );
  return rows[0] ?? null;
}

export async function findApplicationByRef(q: Queryable, partnerId: string, cardApplyRef: string): Promise<CardApplication | null> {
  const rows = await q.query<CardApplication>(
    `SELECT ${APPLY_COLUMNS} FROM card_applications WHERE partner_id = $1 AND card_apply_ref = $2`,
    [partnerId, cardApplyRef],
  );
  return rows[0] ?? null;
}

/**
 * Applications due for a decision and the oldest due time (metrics, issue 27): PENDING ones since
 * their creation, PROCESSING ones whose lease expired since its expiry.
 */
export async function applicationsBacklog(q: Queryable, now: Date): Promise<{ pending: number; oldestDueAt: Date | null }> {
  const [row] = await q.query<{ pending: number; oldestDueAt: Date | null }>(
    `SELECT count(*)::int AS pending, min(CASE WHEN status = 'PENDING' THEN created_at ELSE lease_expires_at END) AS "oldestDueAt" FROM card_applications
      WHERE status = 'PENDING' OR (status = 'PROCESSING' AND lease_expires_at <= $1)`,
    [now],
  );
  return row;
}

/**
 * Leases up to `limit` due applications: PENDING ones, and PROCESSING ones whose lease expired
 * (their worker crashed). FOR UPDATE SKIP LOCKED lets several instances lease concurrently without
 * ever taking the same row.
 */
export async function leaseApplications(q: Queryable, owner: string, now: Date, leaseUntil: Date, limit: number): Promise<CardApplication[]> {
  return q.query<CardApplication>(
    `UPDATE card_applications SET status = 'PROCESSING', lease_owner = $1, lease_expires_at = $3, attempts = attempts + 1, updated_at = $2
     WHERE card_apply_id IN (
       SELECT card_apply_id FROM card_applications
       WHERE status = 'PENDING' OR (status = 'PROCESSING' AND lease_expires_at <= $2)
       ORDER BY created_at, card_apply_id
       LIMIT $4
       FOR UPDATE SKIP LOCKED)
     RETURNING ${APPLY_COLUMNS}`,
    [owner, now, leaseUntil, limit],
  );
}

/** The application if this worker still holds its lease, locked for the outcome transaction. */
export async function lockLeasedApplication(q: Queryable, cardApplyId: string, owner: string): Promise<CardApplication | null> {
  const rows = await q.query<CardApplication>(
    `SELECT ${APPLY_COLUMNS} FROM card_applications
     WHERE card_apply_id = $1 AND status = 'PROCESSING' AND lease_owner = $2 FOR UPDATE`,
    [cardApplyId, owner],
  );
  return rows[0] ?? null;
}

/** After a failure: the application stays PROCESSING, unowned, and is due again at `retryAt`. */
export async function deferApplication(q: Queryable, cardApplyId: string, retryAt: Date): Promise<void> {
  await q.query(
    `UPDATE card_applications SET lease_owner = NULL, lease_expires_at = $2 WHERE card_apply_id = $1 AND status = 'PROCESSING'`,
    [cardApplyId, retryAt],
  );
}

export async function completeApplication(
  q: Queryable,
  cardApplyId: string,
  outcome: { status: 'SUCCESS'; cardId: string } | { status: 'REJECTED'; rejectReason: string },
  now: Date,
): Promise<CardApplication> {
  const rows = await q.query<CardApplication>(
    `UPDATE card_applications SET status = $2, card_id = $3, reject_reason = $4, lease_owner = NULL, lease_expires_at = NULL, updated_at = $5
     WHERE card_apply_id = $1 RETURNING ${APPLY_COLUMNS}`,
    [cardApplyId, outcome.status, outcome.status === 'SUCCESS' ? outcome.cardId : null,
      outcome.status === 'REJECTED' ? outcome.rejectReason : null, now],
  );
  return rows[0];
}

// ---------------------------------------------------------------------------------------------
// Cards (2.5, D25, D26)

export interface Card {
  cardId: string;
  partnerId: string;
  organizationId: string;
  cardApplyId: string;
  cardProfileId: string;
  cardNetwork: CardNetwork;
  cardForm: CardForm;
  balanceMode: BalanceMode;
  currency: string;
  settlementCurrencies: string[];
  subjectType: CardSubjectType;
  subjectId: string;
  custodianCustomerId: string;
  cardholderName: string | null;
  panFirst6: string;
  panLast4: string;
  status: CardStatus;
  createdAt: Date;
  updatedAt: Date;
}

/** The encrypted card data of one card: only the secure-card and CVV paths read it. */
export interface CardSecretRow {
  cardId: string;
  panKeyId: string;
  panEnc: string;
  cvkKeyId: string;
}

const CARD_COLUMNS = `card_id AS "cardId", partner_id AS "partnerId", organization_id AS "organizationId",
  card_apply_id AS "cardApplyId", card_profile_id AS "cardProfileId", card_network AS "cardNetwork", card_form AS "cardForm",
  balance_mode AS "balanceMode", currency, settlement_currencies AS "settlementCurrencies", subject_type AS "subjectType",
  subject_id AS "subjectId", custodian_customer_id AS "custodianCustomerId", cardholder_name AS "cardholderName",
  pan_first6 AS "panFirst6", pan_last4 AS "panLast4", status, created_at AS "createdAt", updated_at AS "updatedAt"`;

export type NewCard = Omit<Card, 'status' | 'createdAt' | 'updatedAt'> & {
  panFingerprint: string;
  panKeyId: string;
  panEnc: string;
  cvkKeyId: string;
};

/** Inserts an ACTIVE card; null when the PAN fingerprint already exists (the caller draws another PAN). */
export async function insertCard(q: Queryable, c: NewCard, now: Date): Promise<Card | null> {
  const rows = await q.query<Card>(
    `INSERT INTO cards (card_id, partner_id, organization_id, card_apply_id, card_profile_id, card_network, card_form, balance_mode,
       currency, settlement_currencies, subject_type, subject_id, custodian_customer_id, cardholder_name, pan_first6, pan_last4,
       pan_fingerprint, pan_key_id, pan_enc, cvk_key_id, status, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, 'ACTIVE', $21, $21)
     ON CONFLICT (pan_fingerprint) DO NOTHING RETURNING ${CARD_COLUMNS}`,
    [c.cardId, c.partnerId, c.organizationId, c.cardApplyId, c.cardProfileId, c.cardNetwork, c.cardForm, c.balanceMode, c.currency,
      JSON.stringify(c.settlementCurrencies), c.subjectType, c.subjectId, c.custodianCustomerId, c.cardholderName, c.panFirst6,
      c.panLast4, c.panFingerprint, c.panKeyId, c.panEnc, c.cvkKeyId, now],
  );
  return rows[0] ?? null;
}

export async function findCard(q: Queryable, partnerId: string, cardId: string, forUpdate = false): Promise<Card | null> {
  const rows = await q.query<Card>(
    `SELECT ${CARD_COLUMNS} FROM cards WHERE partner_id = $1 AND card_id = $2 AND subject_type <> 'USER'${forUpdate ? ' FOR UPDATE' : ''}`,
    [partnerId, cardId],
  );
  return rows[0] ?? null;
}

/** A card by id alone: for internal callers (authorization, ledger) that resolved the partner already. */
export async function findCardById(q: Queryable, cardId: string): Promise<Card | null> {
  const rows = await q.query<Card>(`SELECT ${CARD_COLUMNS} FROM cards WHERE card_id = $1 AND subject_type <> 'USER'`, [cardId]);
  return rows[0] ?? null;
}

/**
 * Whether a corporate card is a CANCELLED dedicated card, its row share-locked until the caller's
 * transaction ends: a settlement takes it before moving the card's money, so a cancellation (which
 * locks the row first) and the release serialize. Null for a card that is not corporate.
 */
export async function lockCardStateShared(q: Queryable, cardId: string): Promise<{ status: string; balanceMode: string } | null> {
  const rows = await q.query<{ status: string; balanceMode: string }>(
    `SELECT status, balance_mode AS "balanceMode" FROM cards WHERE card_id = $1 AND subject_type <> 'USER' FOR SHARE`, [cardId]);
  return rows[0] ?? null;
}

/** A corporate card's secret row; `consumer` also finds a consumer card's (the tests' leak checks only). */
export async function findCardSecret(q: Queryable, partnerId: string, cardId: string, consumer = false): Promise<CardSecretRow | null> {
  const rows = await q.query<CardSecretRow>(
    `SELECT card_id AS "cardId", pan_key_id AS "panKeyId", pan_enc AS "panEnc", cvk_key_id AS "cvkKeyId"
     FROM cards WHERE partner_id = $1 AND card_id = $2 AND (subject_type <> 'USER' OR $3)`,
    [partnerId, cardId, consumer],
  );
  return rows[0] ?? null;
}

export async function setCardStatus(q: Queryable, cardId: string, status: CardStatus, now: Date): Promise<Card> {
  const rows = await q.query<Card>(
    `UPDATE cards SET status = $2, updated_at = $3 WHERE card_id = $1 RETURNING ${CARD_COLUMNS}`,
    [cardId, status, now],
  );
  return rows[0];
}

export interface CardFilter {
  partnerId: string;
  organizationId: string;
  subjectType?: CardSubjectType;
  subjectId?: string;
  status?: CardStatus;
}

export async function listCards(q: Queryable, f: CardFilter, limit: number, offset: number): Promise<{ total: number; rows: Card[] }> {
  const params: unknown[] = [f.partnerId, f.organizationId];
  const where = ['partner_id = $1', 'organization_id = $2'];
  for (const [column, value] of [['subject_type', f.subjectType], ['subject_id', f.subjectId], ['status', f.status]] as const) {
    if (value === undefined) continue;
    params.push(value);
    where.push(`${column} = $${params.length}`);
  }
  const clause = where.join(' AND ');
  const [{ total }] = await q.query<{ total: number }>(`SELECT count(*)::int AS total FROM cards WHERE ${clause}`, params);
  const rows = await q.query<Card>(
    `SELECT ${CARD_COLUMNS} FROM cards WHERE ${clause} ORDER BY created_at DESC, card_id DESC
     LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, limit, offset],
  );
  return { total, rows };
}

/** Cards of a subject that are not CANCELLED, locked: for cancellation when an employee is terminated. */
export async function lockOpenCardsOfSubject(q: Queryable, partnerId: string, subjectType: CardSubjectType, subjectId: string): Promise<Card[]> {
  return q.query<Card>(
    `SELECT ${CARD_COLUMNS} FROM cards WHERE partner_id = $1 AND subject_type = $2 AND subject_id = $3 AND status <> 'CANCELLED'
     ORDER BY card_id FOR UPDATE`,
    [partnerId, subjectType, subjectId],
  );
}

export async function listDedicatedCardsOfOrganization(q: Queryable, partnerId: string, organizationId: string): Promise<Card[]> {
  return q.query<Card>(
    `SELECT ${CARD_COLUMNS} FROM cards WHERE partner_id = $1 AND organization_id = $2 AND balance_mode = 'DEDICATED'
     ORDER BY created_at, card_id`,
    [partnerId, organizationId],
  );
}

// ---------------------------------------------------------------------------------------------
// Deposit accounts (4.4 open-va, D28)

export interface DepositAccount {
  accountId: string;
  partnerId: string;
  organizationId: string;
  subjectType: 'CARD' | 'ORGANIZATION';
  subjectId: string;
  currency: string;
  accountNumber: string;
  accountName: string;
  bankName: string;
  bankCode: string;
  status: 'ACTIVE' | 'CLOSED';
  createdAt: Date;
}

const ACCOUNT_COLUMNS = `account_id AS "accountId", partner_id AS "partnerId", organization_id AS "organizationId",
  subject_type AS "subjectType", subject_id AS "subjectId", currency, account_number AS "accountNumber",
  account_name AS "accountName", bank_name AS "bankName", bank_code AS "bankCode", status, created_at AS "createdAt"`;

export type NewDepositAccount = Omit<DepositAccount, 'status' | 'createdAt'>;

/**
 * Inserts an account. Returns 'exists' when the subject already has one in the currency
 * (idempotent re-open), 'number-taken' when the drawn account number collides (draw again).
 */
export async function insertDepositAccount(q: Queryable, a: NewDepositAccount, now: Date): Promise<'inserted' | 'exists' | 'number-taken'> {
  const [existing] = await q.query(
    'SELECT 1 AS ok FROM deposit_accounts WHERE subject_type = $1 AND subject_id = $2 AND currency = $3',
    [a.subjectType, a.subjectId, a.currency],
  );
  if (existing) return 'exists';
  const rows = await q.query(
    `INSERT INTO deposit_accounts (account_id, partner_id, organization_id, subject_type, subject_id, currency, account_number,
       account_name, bank_name, bank_code, status, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'ACTIVE', $11)
     ON CONFLICT DO NOTHING RETURNING 1 AS ok`,
    [a.accountId, a.partnerId, a.organizationId, a.subjectType, a.subjectId, a.currency, a.accountNumber, a.accountName,
      a.bankName, a.bankCode, now],
  );
  if (rows.length === 1) return 'inserted';
  // Lost a race for the (subject, currency) slot, or the account number is taken.
  const [raced] = await q.query(
    'SELECT 1 AS ok FROM deposit_accounts WHERE subject_type = $1 AND subject_id = $2 AND currency = $3',
    [a.subjectType, a.subjectId, a.currency],
  );
  return raced ? 'exists' : 'number-taken';
}

export async function listDepositAccounts(q: Queryable, partnerId: string, subjectType: 'CARD' | 'ORGANIZATION', subjectId: string): Promise<DepositAccount[]> {
  return q.query<DepositAccount>(
    `SELECT ${ACCOUNT_COLUMNS} FROM deposit_accounts WHERE partner_id = $1 AND subject_type = $2 AND subject_id = $3
     ORDER BY created_at, currency`,
    [partnerId, subjectType, subjectId],
  );
}

export async function findDepositAccount(q: Queryable, subjectType: 'CARD' | 'ORGANIZATION', subjectId: string, currency: string): Promise<DepositAccount | null> {
  const rows = await q.query<DepositAccount>(
    `SELECT ${ACCOUNT_COLUMNS} FROM deposit_accounts WHERE subject_type = $1 AND subject_id = $2 AND currency = $3`,
    [subjectType, subjectId, currency],
  );
  return rows[0] ?? null;
}

// ---------------------------------------------------------------------------------------------
// Pool <-> dedicated card transfers (D29)

export interface CardTransfer {
  transferId: string;
  partnerId: string;
  externalTranId: string;
  organizationId: string;
  cardId: string;
  direction: 'POOL_TO_CARD' | 'CARD_TO_POOL';
  currency: string;
  amount: string;
  postingId: string;
  createdAt: Date;
}

const TRANSFER_COLUMNS = `transfer_id AS "transferId", partner_id AS "partnerId", external_tran_id AS "externalTranId",
  organization_id AS "organizationId", card_id AS "cardId", direction, currency, amount::text AS amount,
  posting_id AS "postingId", created_at AS "createdAt"`;

export async function findTransferByExternalId(q: Queryable, partnerId: string, externalTranId: string): Promise<CardTransfer | null> {
  const rows = await q.query<CardTransfer>(
    `SELECT ${TRANSFER_COLUMNS} FROM card_transfers WHERE partner_id = $1 AND external_tran_id = $2`,
    [partnerId, externalTranId],
  );
  return rows[0] ?? null;
}

/** Inserts the transfer record; null when the externalTranId was taken meanwhile (race). */
export async function insertTransfer(q: Queryable, t: Omit<CardTransfer, 'createdAt'>, now: Date): Promise<CardTransfer | null> {
  const rows = await q.query<CardTransfer>(
    `INSERT INTO card_transfers (transfer_id, partner_id, external_tran_id, organization_id, card_id, direction, currency, amount,
       posting_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::numeric, $9, $10)
     ON CONFLICT (partner_id, external_tran_id) DO NOTHING RETURNING ${TRANSFER_COLUMNS}`,
    [t.transferId, t.partnerId, t.externalTranId, t.organizationId, t.cardId, t.direction, t.currency, t.amount, t.postingId, now],
  );
  return rows[0] ?? null;
}

/** Cards whose data is sealed under another key than `activeKeyId`, locked (skipping rows others hold). */
export async function lockCardsNotUnderKey(q: Queryable, activeKeyId: string, limit: number): Promise<CardSecretRow[]> {
  return q.query<CardSecretRow>(
    `SELECT card_id AS "cardId", pan_key_id AS "panKeyId", pan_enc AS "panEnc", cvk_key_id AS "cvkKeyId"
     FROM cards WHERE pan_key_id <> $1 ORDER BY card_id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [activeKeyId, limit],
  );
}

export async function setCardData(q: Queryable, cardId: string, panKeyId: string, panEnc: string): Promise<void> {
  await q.query('UPDATE cards SET pan_key_id = $2, pan_enc = $3 WHERE card_id = $1', [cardId, panKeyId, panEnc]);
}

export async function countCardsNotUnderKey(q: Queryable, activeKeyId: string): Promise<number> {
  const [{ remaining }] = await q.query<{ remaining: number }>('SELECT count(*)::int AS remaining FROM cards WHERE pan_key_id <> $1', [activeKeyId]);
  return remaining;
}

// ---------------------------------------------------------------------------------------------
// Consumer cards of the managed-balance model (migration 083): subject USER, balance mode ASSET.
// The corporate reads above never return them; these never return a corporate card.

export interface ConsumerCard {
  cardId: string;
  partnerId: string;
  /** The managed user (managed-balance domain's user id). */
  userId: string;
  cardProfileId: string;
  cardNetwork: CardNetwork;
  cardForm: CardForm;
  currency: string;
  fundingAsset: string;
  cardholderName: string | null;
  panFirst6: string;
  panLast4: string;
  status: CardStatus;
  createdAt: Date;
  updatedAt: Date;
}

const CONSUMER_COLUMNS = `card_id AS "cardId", partner_id AS "partnerId", subject_id AS "userId", card_profile_id AS "cardProfileId",
  card_network AS "cardNetwork", card_form AS "cardForm", currency, funding_asset AS "fundingAsset", cardholder_name AS "cardholderName",
  pan_first6 AS "panFirst6", pan_last4 AS "panLast4", status, created_at AS "createdAt", updated_at AS "updatedAt"`;

export type NewConsumerCard = Omit<ConsumerCard, 'status' | 'createdAt' | 'updatedAt'> & {
  panFingerprint: string;
  panKeyId: string;
  panEnc: string;
  cvkKeyId: string;
};

/** Inserts an ACTIVE consumer card; null when the PAN fingerprint already exists (the caller draws another PAN). */
export async function insertConsumerCard(q: Queryable, c: NewConsumerCard, now: Date): Promise<ConsumerCard | null> {
  const rows = await q.query<ConsumerCard>(
    `INSERT INTO cards (card_id, partner_id, organization_id, card_apply_id, card_profile_id, card_network, card_form, balance_mode,
       currency, settlement_currencies, subject_type, subject_id, custodian_customer_id, cardholder_name, pan_first6, pan_last4,
       pan_fingerprint, pan_key_id, pan_enc, cvk_key_id, funding_asset, status, created_at, updated_at)
     VALUES ($1, $2, NULL, NULL, $3, $4, $5, 'ASSET', $6, $7, 'USER', $8, NULL, $9, $10, $11, $12, $13, $14, $15, $16, 'ACTIVE', $17, $17)
     ON CONFLICT (pan_fingerprint) DO NOTHING RETURNING ${CONSUMER_COLUMNS}`,
    [c.cardId, c.partnerId, c.cardProfileId, c.cardNetwork, c.cardForm, c.currency, JSON.stringify([c.currency]), c.userId,
      c.cardholderName, c.panFirst6, c.panLast4, c.panFingerprint, c.panKeyId, c.panEnc, c.cvkKeyId, c.fundingAsset, now],
  );
  return rows[0] ?? null;
}

/** The user's consumer card, or null (another user's or partner's card, a corporate card: null alike). */
export async function findConsumerCard(q: Queryable, partnerId: string, userId: string, cardId: string, forUpdate = false): Promise<ConsumerCard | null> {
  const rows = await q.query<ConsumerCard>(
    `SELECT ${CONSUMER_COLUMNS} FROM cards
     WHERE card_id = $1 AND partner_id = $2 AND subject_type = 'USER' AND subject_id = $3${forUpdate ? ' FOR UPDATE' : ''}`,
    [cardId, partnerId, userId],
  );
  return rows[0] ?? null;
}

/** A consumer card by id alone: for internal callers that resolved the partner already (authorization). */
export async function findConsumerCardById(q: Queryable, cardId: string): Promise<ConsumerCard | null> {
  const rows = await q.query<ConsumerCard>(`SELECT ${CONSUMER_COLUMNS} FROM cards WHERE card_id = $1 AND subject_type = 'USER'`, [cardId]);
  return rows[0] ?? null;
}

export async function setConsumerCardStatus(q: Queryable, cardId: string, status: CardStatus, now: Date): Promise<ConsumerCard> {
  const rows = await q.query<ConsumerCard>(
    `UPDATE cards SET status = $2, updated_at = $3 WHERE card_id = $1 AND subject_type = 'USER' RETURNING ${CONSUMER_COLUMNS}`,
    [cardId, status, now],
  );
  return rows[0];
}

export async function listConsumerCards(
  q: Queryable,
  f: { partnerId: string; userId: string; status?: CardStatus },
  limit: number,
  offset: number,
): Promise<{ total: number; rows: ConsumerCard[] }> {
  const params: unknown[] = [f.userId, f.partnerId];
  let where = `subject_type = 'USER' AND subject_id = $1 AND partner_id = $2`;
  if (f.status !== undefined) {
    params.push(f.status);
    where += ` AND status = $${params.length}`;
  }
  const [{ total }] = await q.query<{ total: number }>(`SELECT count(*)::int AS total FROM cards WHERE ${where}`, params);
  const rows = await q.query<ConsumerCard>(
    `SELECT ${CONSUMER_COLUMNS} FROM cards WHERE ${where} ORDER BY created_at DESC, card_id DESC
     LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, limit, offset],
  );
  return { total, rows };
}
