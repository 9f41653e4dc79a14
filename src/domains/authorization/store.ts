import type { Queryable } from '../../platform/db/db.ts';
import { Where } from '../../platform/db/where.ts';
import { inItemOrder } from '../../platform/db/lane.ts';
import { invariant } from '../../platform/errors.ts';

/**
 * SQL of the authorization engine. The authorization itself is one call of the database function
 * card_authorize (src/domains/authorization/sql/card_authorize.sql): one round trip decides and books it;
 * authorizations that arrive together share one call of card_authorize_batch (lane.ts).
 */

export type MessageType = 'AUTHORIZATION' | 'CLEARING' | 'REVERSAL' | 'REFUND';
export type TransactionStatus = 'PENDING' | 'CLEARED' | 'REVERSED' | 'EXPIRED' | 'DECLINED' | 'POSTED';
export type Source = 'NETWORK' | 'SANDBOX';

/**
 * The request of card_authorize. Every field is passed by name (issue 33), through
 * CARD_AUTHORIZE_PARAMS: no list of positions to keep in step with the function's signature.
 */
export interface AuthorizeRow {
  partnerId: string | null;
  cardId: string;
  source: Source;
  networkTransactionId: string;
  /** Serialize and answer copies of the message (network messages; sandbox ids are fresh). */
  replayGuard: boolean;
  amount: string;
  currency: string;
  billingAmount: string | null;
  billingCurrency: string | null;
  merchantName: string;
  mcc: string;
  merchantCountry: string;
  channel: string;
  now: Date;
  transactionTime: Date;
  blockers: readonly string[];
  transId: string;
  outstandingTransactionId: string;
  postingId: string;
  eventId: string;
  alertEventId: string;
  /** When the hold expires unless cleared (D34). */
  expiryDueAt: Date;
  /** Issue 26: this request's claim on the partner decision a forwarded approval awaits (migration 089). */
  decisionToken: string;
  /** The answer deadline of partners without their own setting (AUTH_FORWARD_DEADLINE_MS). */
  defaultDeadlineMs: number;
  /** How long after its deadline an awaited decision is left to the request that forwards it. */
  decisionGraceMs: number;
}

export type AuthorizeOutcome = 'NEW' | 'NEW_LOW_BALANCE' | 'REPLAY' | 'CARD_INVALID';

export interface AuthorizeResult {
  outcome: AuthorizeOutcome;
  body: string | null;
  partnerId: string | null;
  /** Non-null while the authorization awaits its partner's decision: the stand-in and deadline it was taken with. */
  standIn: 'APPROVE' | 'DECLINE' | null;
  deadlineMs: number | null;
}

/**
 * card_authorize's parameter of each field of AuthorizeRow (and its cast), called in named notation
 * (`p_card_id => $2`): a field without its parameter does not compile, a parameter name the function
 * lacks is refused by the database. Named notation costs nothing at run time (one JSON record
 * unpacked in the function cost about 40-55 us per call).
 */
const CARD_AUTHORIZE_PARAMS: Record<keyof AuthorizeRow, readonly [param: string, cast?: string]> = {
  partnerId: ['p_partner_id'],
  cardId: ['p_card_id'],
  source: ['p_source'],
  networkTransactionId: ['p_network_id'],
  replayGuard: ['p_replay_guard'],
  amount: ['p_amount', 'numeric'],
  currency: ['p_currency'],
  billingAmount: ['p_billing_amount', 'numeric'],
  billingCurrency: ['p_billing_currency'],
  merchantName: ['p_merchant_name'],
  mcc: ['p_mcc'],
  merchantCountry: ['p_country'],
  channel: ['p_channel'],
  now: ['p_now'],
  transactionTime: ['p_transaction_time'],
  blockers: ['p_blockers', 'text[]'],
  transId: ['p_trans_id'],
  outstandingTransactionId: ['p_outstanding_id'],
  postingId: ['p_posting_id'],
  eventId: ['p_event_id'],
  alertEventId: ['p_alert_event_id'],
  expiryDueAt: ['p_expiry_due_at'],
  decisionToken: ['p_decision_token'],
  defaultDeadlineMs: ['p_default_deadline_ms'],
  decisionGraceMs: ['p_decision_grace_ms'],
};
const AUTHORIZE_FIELDS = Object.keys(CARD_AUTHORIZE_PARAMS) as (keyof AuthorizeRow)[];
const AUTHORIZE_SQL = `SELECT outcome, body, answer_partner AS "partnerId", stand_in AS "standIn", deadline_ms AS "deadlineMs"
  FROM card_authorize(${AUTHORIZE_FIELDS.map((f, i) => {
    const [param, cast] = CARD_AUTHORIZE_PARAMS[f];
    return `${param} => $${i + 1}${cast ? `::${cast}` : ''}`;
  }).join(', ')})`;

export async function authorizeInDb(q: Queryable, a: AuthorizeRow): Promise<AuthorizeResult> {
  const rows = await q.query<AuthorizeResult>(AUTHORIZE_SQL, AUTHORIZE_FIELDS.map((f) => a[f]));
  return rows[0];
}

/**
 * card_authorize_batch's parameters (sql/card_authorize_batch.sql): card_authorize's, each as an
 * array with one element per authorization (position k is authorization k), but the blockers, which
 * are the batch's. Dates go as ISO strings: both drivers then send the same text.
 */
const BATCH_ARRAY_TYPES: Record<keyof AuthorizeRow, string> = {
  partnerId: 'text', cardId: 'text', source: 'text', networkTransactionId: 'text', replayGuard: 'boolean',
  amount: 'numeric', currency: 'text', billingAmount: 'numeric', billingCurrency: 'text', merchantName: 'text', mcc: 'text',
  merchantCountry: 'text', channel: 'text', now: 'timestamptz', transactionTime: 'timestamptz', blockers: 'text',
  transId: 'text', outstandingTransactionId: 'text', postingId: 'text', eventId: 'text', alertEventId: 'text',
  expiryDueAt: 'timestamptz', decisionToken: 'text', defaultDeadlineMs: 'integer', decisionGraceMs: 'integer',
};
const AUTHORIZE_BATCH_SQL = `SELECT item, outcome, body, answer_partner AS "partnerId", stand_in AS "standIn", deadline_ms AS "deadlineMs"
  FROM card_authorize_batch(${AUTHORIZE_FIELDS.map((f, i) => `${CARD_AUTHORIZE_PARAMS[f][0]} => $${i + 1}::${BATCH_ARRAY_TYPES[f]}[]`).join(', ')})`;

/**
 * Several authorizations in one call and one commit, each decided by card_authorize as alone; the
 * results in the order of `items`. They must share their blockers. Any error rolls them all back.
 */
export async function authorizeBatchInDb(q: Queryable, items: readonly AuthorizeRow[]): Promise<AuthorizeResult[]> {
  const blockers = items[0].blockers;
  invariant(items.every((a) => a.blockers === blockers || a.blockers.join() === blockers.join()), 'a batch of authorizations shares its blockers');
  const params = AUTHORIZE_FIELDS.map((f) => (f === 'blockers' ? blockers : items.map((a) => {
    const v = a[f];
    return v instanceof Date ? v.toISOString() : v;
  })));
  return inItemOrder(await q.query<AuthorizeResult & { item: number }>(AUTHORIZE_BATCH_SQL, params), items.length, 'card_authorize_batch');
}

// ---- Awaited partner decisions (issue 26, migration 089) ----

/** A forwarded authorization awaiting its partner's decision. */
export interface AwaitedDecision {
  transId: string;
  partnerId: string;
  networkTransactionId: string;
  leaseToken: string;
  standIn: 'APPROVE' | 'DECLINE';
  deadlineMs: number;
  dueAt: Date;
  attempts: number;
  createdAt: Date;
}

const DECISION_COLUMNS = `d.trans_id AS "transId", d.partner_id AS "partnerId", t.network_transaction_id AS "networkTransactionId",
  d.lease_token AS "leaseToken", d.stand_in AS "standIn", d.deadline_ms AS "deadlineMs", d.due_at AS "dueAt", d.attempts, d.created_at AS "createdAt"`;

/**
 * Takes the awaited decision of an authorization for deciding it in the caller's transaction (the
 * row is deleted, so the decision is recorded once): with this request's claim token, or by anyone
 * once it is overdue. Null when it is decided already or someone else holds it.
 */
export async function claimAwaitedDecision(q: Queryable, transId: string, by: { token: string } | { overdueAt: Date }): Promise<AwaitedDecision | null> {
  const rows = await q.query<AwaitedDecision>(
    `DELETE FROM auth_decisions d USING card_transactions t
      WHERE d.trans_id = $1 AND t.trans_id = d.trans_id AND (d.lease_token = $2 OR d.due_at <= $3)
     RETURNING ${DECISION_COLUMNS}`,
    [transId, 'token' in by ? by.token : null, 'overdueAt' in by ? by.overdueAt : null],
  );
  return rows[0] ?? null;
}

/** An authorization as the partner sees it and, while its decision is awaited, when that is due. */
export async function decisionState(q: Queryable, transId: string): Promise<{ body: string; dueAt: Date | null } | null> {
  const rows = await q.query<{ body: string; dueAt: Date | null }>(
    `SELECT card_transaction_json(t)::text AS body, d.due_at AS "dueAt"
       FROM card_transactions t LEFT JOIN auth_decisions d ON d.trans_id = t.trans_id WHERE t.trans_id = $1`,
    [transId],
  );
  return rows[0] ?? null;
}

/**
 * Leases awaited decisions past their due time (the recovery job): FOR UPDATE SKIP LOCKED, so
 * instances skip each other's rows; the due time moves to the lease expiry, the attempt is counted.
 */
export async function leaseOverdueDecisions(
  q: Queryable, l: { token: string; now: Date; until: Date; limit: number; maxAttempts: number },
): Promise<AwaitedDecision[]> {
  return q.query<AwaitedDecision>(
    `WITH due AS (
       SELECT trans_id AS due_id FROM auth_decisions WHERE due_at <= $1 AND attempts < $5 ORDER BY due_at LIMIT $4 FOR UPDATE SKIP LOCKED),
     leased AS (
       UPDATE auth_decisions d SET due_at = $2, lease_token = $3, attempts = d.attempts + 1 FROM due WHERE d.trans_id = due.due_id
       RETURNING d.*)
     SELECT ${DECISION_COLUMNS} FROM leased d JOIN card_transactions t ON t.trans_id = d.trans_id`,
    [l.now, l.until, l.token, l.limit, l.maxAttempts],
  );
}

/** The decision-recovery job's backlog: awaited decisions overdue by `now` that it may still take (metrics, issue 27). */
export async function overdueDecisionsBacklog(q: Queryable, now: Date, maxAttempts: number): Promise<{ pending: number; oldestDueAt: Date | null }> {
  const [row] = await q.query<{ pending: number; oldestDueAt: Date | null }>(
    `SELECT count(*)::int AS pending, min(due_at) AS "oldestDueAt" FROM auth_decisions WHERE due_at <= $1 AND attempts < $2`,
    [now, maxAttempts],
  );
  return row;
}

/** A failed recovery: due again at `retryAt`, or never (given up, left to operators) when null. */
export async function releaseDecisionLease(q: Queryable, transId: string, token: string, retryAt: Date | null): Promise<boolean> {
  const rows = await q.query(
    `UPDATE auth_decisions SET due_at = COALESCE($3, 'infinity'::timestamptz) WHERE trans_id = $1 AND lease_token = $2 RETURNING 1`,
    [transId, token, retryAt],
  );
  return rows.length > 0;
}

/** The stored facts of a transaction that settlement needs. */
export interface TransactionRow {
  transId: string;
  partnerId: string;
  cardId: string;
  /** Null for a consumer card (subject USER, managed-balance model). */
  organizationId: string | null;
  subjectType: 'ORGANIZATION' | 'CUSTOMER' | 'USER';
  subjectId: string;
  messageType: MessageType;
  status: TransactionStatus;
  channel: string | null;
  billingAmount: string;
  billingCurrency: string;
  holdAmount: string;
  fundsAccountId: string | null;
  /** D35: units of the funds account's asset per billing unit, when it is not the billing currency 1:1 (migration 087). */
  fundsRate: string | null;
  fundsScale: number | null;
  /** With fundsRate: what is still held, in the asset. */
  fundsHold: string | null;
  outstandingTransactionId: string | null;
  postedTransactionId: string | null;
  transactionTime: Date;
  createdAt: Date;
}

const ROW_COLUMNS = `trans_id AS "transId", partner_id AS "partnerId", card_id AS "cardId", organization_id AS "organizationId",
  subject_type AS "subjectType", subject_id AS "subjectId", message_type AS "messageType", status, channel,
  billing_amount::text AS "billingAmount", billing_currency AS "billingCurrency", hold_amount::text AS "holdAmount",
  funds_account_id AS "fundsAccountId", funds_rate::text AS "fundsRate", funds_scale AS "fundsScale", funds_hold::text AS "fundsHold",
  outstanding_transaction_id AS "outstandingTransactionId",
  posted_transaction_id AS "postedTransactionId", transaction_time AS "transactionTime", created_at AS "createdAt"`;

/** Serializes copies of one network message until the caller's transaction ends. */
export async function lockNetworkMessage(q: Queryable, networkTransactionId: string): Promise<void> {
  await q.query(`SELECT pg_advisory_xact_lock(hashtextextended('card-net:' || $1, 0))`, [networkTransactionId]);
}

/** The answer already given to a network message id, or null. */
export async function transactionJsonByNetworkId(q: Queryable, networkTransactionId: string): Promise<string | null> {
  const rows = await q.query<{ body: string }>(
    `SELECT card_transaction_json(t)::text AS body FROM card_transactions t WHERE network_transaction_id = $1`,
    [networkTransactionId],
  );
  return rows[0]?.body ?? null;
}

export async function transactionJson(q: Queryable, transId: string): Promise<string | null> {
  const rows = await q.query<{ body: string }>(
    `SELECT card_transaction_json(t)::text AS body FROM card_transactions t WHERE trans_id = $1`, [transId]);
  return rows[0]?.body ?? null;
}

/** An authorization, locked until the caller's transaction ends, by its transId or its network id. */
export async function lockAuthorization(
  q: Queryable, by: { transId: string; partnerId?: string } | { networkTransactionId: string },
): Promise<TransactionRow | null> {
  const rows = 'transId' in by
    ? await q.query<TransactionRow>(
      `SELECT ${ROW_COLUMNS} FROM card_transactions
        WHERE trans_id = $1 AND ($2::text IS NULL OR partner_id = $2) AND message_type = 'AUTHORIZATION' FOR UPDATE`,
      [by.transId, by.partnerId ?? null])
    : await q.query<TransactionRow>(
      `SELECT ${ROW_COLUMNS} FROM card_transactions WHERE network_transaction_id = $1 AND message_type = 'AUTHORIZATION' FOR UPDATE`,
      [by.networkTransactionId]);
  return rows[0] ?? null;
}

export async function findAuthorization(
  q: Queryable, by: { transId: string; partnerId: string } | { networkTransactionId: string },
): Promise<TransactionRow | null> {
  const rows = 'transId' in by
    ? await q.query<TransactionRow>(
      `SELECT ${ROW_COLUMNS} FROM card_transactions WHERE trans_id = $1 AND partner_id = $2 AND message_type = 'AUTHORIZATION'`,
      [by.transId, by.partnerId])
    : await q.query<TransactionRow>(
      `SELECT ${ROW_COLUMNS} FROM card_transactions WHERE network_transaction_id = $1 AND message_type = 'AUTHORIZATION'`,
      [by.networkTransactionId]);
  return rows[0] ?? null;
}

export interface NewSettlement {
  transId: string;
  partnerId: string;
  cardId: string;
  organizationId: string | null;
  subjectType: string;
  subjectId: string;
  messageType: Exclude<MessageType, 'AUTHORIZATION'>;
  authType: 'EXPEND' | 'REFUND' | 'REVERSAL';
  debitCreditIndicator: 'D' | 'C';
  source: Source;
  networkTransactionId: string;
  originalTransId: string | null;
  amount: string;
  currency: string;
  billingAmount: string;
  billingCurrency: string;
  merchantName: string | null;
  mcc: string | null;
  merchantCountry: string | null;
  channel: string | null;
  fundsAccountId: string;
  outstandingTransactionId: string | null;
  postedTransactionId: string | null;
  /** Null when nothing moved (a reversal too small to move a unit of a rated asset). */
  postingId: string | null;
  transactionTime: Date;
  now: Date;
}

/** Inserts a clearing, reversal or refund record (always POSTED) and its CARD_TRANSACTION event. */
export async function insertSettlement(q: Queryable, s: NewSettlement, eventId: string): Promise<string> {
  await q.query(
    `INSERT INTO card_transactions (trans_id, partner_id, card_id, organization_id, subject_type, subject_id, message_type, auth_type,
         debit_credit_indicator, source, network_transaction_id, original_trans_id, amount, currency, billing_amount, billing_currency,
         merchant_name, mcc, merchant_country, channel, status, hold_amount, funds_account_id, outstanding_transaction_id,
         posted_transaction_id, posting_id, transaction_time, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::numeric, $14, $15::numeric, $16, $17, $18, $19, $20, 'POSTED', 0,
         $21, $22, $23, $24, $25, $26, $26)`,
    [s.transId, s.partnerId, s.cardId, s.organizationId, s.subjectType, s.subjectId, s.messageType, s.authType, s.debitCreditIndicator,
      s.source, s.networkTransactionId, s.originalTransId, s.amount, s.currency, s.billingAmount, s.billingCurrency, s.merchantName,
      s.mcc, s.merchantCountry, s.channel, s.fundsAccountId, s.outstandingTransactionId, s.postedTransactionId, s.postingId,
      s.transactionTime, s.now],
  );
  return recordTransactionEvent(q, s.transId, eventId, s.now);
}

/** Changes an authorization's hold and status and records its CARD_TRANSACTION event. */
export async function updateAuthorization(
  q: Queryable,
  u: {
    transId: string; status: TransactionStatus; holdAmount: string; postedTransactionId?: string | null; now: Date; eventId: string;
    declineReason?: string; declineDetail?: string | null;
    /** With a rated funds asset: what is still held in the asset. */
    fundsHold?: string;
  },
): Promise<string> {
  await q.query(
    // $2 is text (status is a domain over text, migration 154): one type for the SET and the CASE below.
    `UPDATE card_transactions SET status = $2::text, hold_amount = $3::numeric,
            funds_hold = CASE WHEN funds_rate IS NULL THEN NULL ELSE COALESCE($8::numeric, funds_hold) END,
            posted_transaction_id = COALESCE($4, posted_transaction_id), updated_at = $5,
            outstanding_transaction_id = CASE WHEN $2 = 'DECLINED' THEN NULL ELSE outstanding_transaction_id END,
            decline_reason = COALESCE($6, decline_reason), decline_detail = COALESCE($7, decline_detail)
      WHERE trans_id = $1 AND message_type = 'AUTHORIZATION'`,
    [u.transId, u.status, u.holdAmount, u.postedTransactionId ?? null, u.now, u.declineReason ?? null, u.declineDetail ?? null, u.fundsHold ?? null],
  );
  return recordTransactionEvent(q, u.transId, u.eventId, u.now);
}

/** Records the CARD_TRANSACTION event of a transaction's current state; returns that state's JSON view. */
async function recordTransactionEvent(q: Queryable, transId: string, eventId: string, now: Date): Promise<string> {
  const rows = await q.query<{ body: string }>(
    `SELECT card_transaction_json(t)::text AS body, card_transaction_event(t, $2, $3) FROM card_transactions t WHERE trans_id = $1`,
    [transId, eventId, now],
  );
  return rows[0].body;
}

/** An outstanding hold leased for expiry by the job runner. */
export interface ExpiringHold extends TransactionRow {
  attempt: number;
}

/**
 * Leases due holds (D34): FOR UPDATE SKIP LOCKED, so instances skip each other's rows; the due time
 * moves to the lease expiry (a crashed worker's holds are due again then), the attempt is counted.
 */
/** Holds due for expiry and the oldest due time (metrics, issue 27): what the next lease would take. */
export async function dueHoldsBacklog(q: Queryable, now: Date, maxAttempts: number): Promise<{ pending: number; oldestDueAt: Date | null }> {
  const [row] = await q.query<{ pending: number; oldestDueAt: Date | null }>(
    `SELECT count(*)::int AS pending, min(expiry_due_at) AS "oldestDueAt" FROM card_transactions
      WHERE message_type = 'AUTHORIZATION' AND status = 'PENDING' AND expiry_due_at <= $1 AND expiry_attempts < $2`,
    [now, maxAttempts],
  );
  return row;
}

export async function leaseDueHolds(q: Queryable, l: { token: string; now: Date; until: Date; limit: number; maxAttempts: number }): Promise<ExpiringHold[]> {
  return q.query<ExpiringHold>(
    `WITH due AS (
       SELECT trans_id AS due_id FROM card_transactions
        WHERE message_type = 'AUTHORIZATION' AND status = 'PENDING' AND expiry_due_at <= $1 AND expiry_attempts < $5
        ORDER BY expiry_due_at LIMIT $4 FOR UPDATE SKIP LOCKED)
     UPDATE card_transactions t SET expiry_due_at = $2, expiry_lease_token = $3, expiry_attempts = t.expiry_attempts + 1
       FROM due WHERE t.trans_id = due.due_id
     RETURNING ${ROW_COLUMNS}, t.expiry_attempts AS attempt`,
    [l.now, l.until, l.token, l.limit, l.maxAttempts],
  );
}

/** The leased hold, locked, while this lease still holds it and it is still outstanding; null otherwise. */
export async function lockLeasedHold(q: Queryable, transId: string, token: string): Promise<TransactionRow | null> {
  const rows = await q.query<TransactionRow>(
    `SELECT ${ROW_COLUMNS} FROM card_transactions
      WHERE trans_id = $1 AND expiry_lease_token = $2 AND status = 'PENDING' AND message_type = 'AUTHORIZATION' FOR UPDATE`,
    [transId, token],
  );
  return rows[0] ?? null;
}

/** A failed expiry: due again at `retryAt`, or never (given up, left for operators) when null. */
export async function releaseHoldLease(q: Queryable, transId: string, token: string, retryAt: Date | null): Promise<boolean> {
  const rows = await q.query(
    `UPDATE card_transactions SET expiry_lease_token = NULL, expiry_due_at = COALESCE($3, 'infinity'::timestamptz)
      WHERE trans_id = $1 AND expiry_lease_token = $2 RETURNING 1`,
    [transId, token, retryAt],
  );
  return rows.length > 0;
}

export interface TransactionFilter {
  partnerId: string;
  organizationId: string | null;
  cardId: string | null;
  customerId: string | null;
  status: string | null;
  messageType: string | null;
  startTime: Date | null;
  endTime: Date | null;
  /** CORPORATE: company and employee cards; CONSUMER: consumer cards (subject USER) of `userId` when given. */
  family: 'CORPORATE' | 'CONSUMER';
  userId?: string | null;
  authType?: string | null;
}

/** Transactions newest first (D9), as their JSON view; the WHERE holds only the filters given (Where). */
export async function listTransactions(q: Queryable, f: TransactionFilter, limit: number, offset: number): Promise<{ total: number; bodies: string[] }> {
  const w = new Where();
  w.and(`t.partner_id = ${w.arg(f.partnerId, 'text')}`);
  w.eq('t.organization_id', f.organizationId);
  w.eq('t.card_id', f.cardId);
  if (f.customerId !== null) w.and(`t.subject_type = 'CUSTOMER' AND t.subject_id = ${w.arg(f.customerId, 'text')}`);
  w.eq('t.status', f.status);
  w.eq('t.message_type', f.messageType);
  if (f.startTime !== null) w.and(`t.created_at >= ${w.arg(f.startTime, 'timestamptz')}`);
  if (f.endTime !== null) w.and(`t.created_at < ${w.arg(f.endTime, 'timestamptz')}`);
  const userId = f.userId ?? null;
  if (f.family === 'CONSUMER') {
    w.and(`t.subject_type = 'USER'`);
    w.eq('t.subject_id', userId);
  } else {
    // A user's transactions are never a corporate list's.
    w.and(userId === null ? `t.subject_type <> 'USER'` : 'false');
  }
  const authType = f.authType ?? null;
  w.eq('t.auth_type', authType);
  const [{ total }] = await q.query<{ total: number }>(`SELECT count(*)::int AS total FROM card_transactions t WHERE ${w.sql}`, w.params);
  const rows = await q.query<{ body: string }>(
    `SELECT card_transaction_json(t)::text AS body FROM card_transactions t WHERE ${w.sql}
      ORDER BY t.created_at DESC, t.trans_id DESC LIMIT ${w.next()} OFFSET ${w.next(1)}`,
    [...w.params, limit, offset],
  );
  return { total, bodies: rows.map((r) => r.body) };
}

/** One transaction of the partner by transId: of a company or employee card, or (userId given) of that user's consumer cards. */
export async function findTransactionJson(q: Queryable, partnerId: string, transId: string, userId: string | null = null): Promise<string | null> {
  const rows = await q.query<{ body: string }>(
    `SELECT card_transaction_json(t)::text AS body FROM card_transactions t WHERE trans_id = $1 AND partner_id = $2
        AND (CASE WHEN $3::text IS NULL THEN t.subject_type <> 'USER' ELSE t.subject_type = 'USER' AND t.subject_id = $3 END)`,
    [transId, partnerId, userId],
  );
  return rows[0]?.body ?? null;
}

export interface ResolvedRow {
  id: string;
  idType: 'OUTSTANDING' | 'POSTED';
  transId: string;
  status: TransactionStatus;
  relatedTransactionId: string | null;
}

/**
 * Outstanding ids (of authorizations) and posted ids (of clearings and refunds) of the partner.
 * An outstanding id's related id is its clearing's posted id; a posted id's is its outstanding id.
 */
export async function resolveTransactionIds(q: Queryable, partnerId: string, ids: string[]): Promise<ResolvedRow[]> {
  return q.query<ResolvedRow>(
    `SELECT t.outstanding_transaction_id AS id, 'OUTSTANDING' AS "idType", t.trans_id AS "transId", t.status,
            t.posted_transaction_id AS "relatedTransactionId"
       FROM card_transactions t
      WHERE t.partner_id = $1 AND t.message_type = 'AUTHORIZATION' AND t.outstanding_transaction_id = ANY($2::text[])
     UNION ALL
     SELECT t.posted_transaction_id, 'POSTED', t.trans_id, t.status, t.outstanding_transaction_id
       FROM card_transactions t
      WHERE t.partner_id = $1 AND t.message_type <> 'AUTHORIZATION' AND t.posted_transaction_id = ANY($2::text[])`,
    [partnerId, ids],
  );
}

// ---- Network ingress credentials ----

export interface NetworkKeyRow {
  networkKeyId: string;
  name: string;
  apiKey: string;
  secretKeyEnc: string;
  ipAllowlist: string[];
  status: 'ACTIVE' | 'REVOKED';
  createdAt: Date;
}

const KEY_COLUMNS = `network_key_id AS "networkKeyId", name, api_key AS "apiKey", secret_key_enc AS "secretKeyEnc",
  ip_allowlist AS "ipAllowlist", status, created_at AS "createdAt"`;

export async function insertNetworkKey(q: Queryable, k: Omit<NetworkKeyRow, 'status'>): Promise<void> {
  await q.query(
    `INSERT INTO network_keys (network_key_id, name, api_key, secret_key_enc, ip_allowlist, created_at) VALUES ($1, $2, $3, $4, $5::jsonb, $6)`,
    [k.networkKeyId, k.name, k.apiKey, k.secretKeyEnc, JSON.stringify(k.ipAllowlist), k.createdAt],
  );
}

export async function findNetworkKeyByApiKey(q: Queryable, apiKey: string): Promise<NetworkKeyRow | null> {
  const rows = await q.query<NetworkKeyRow>(`SELECT ${KEY_COLUMNS} FROM network_keys WHERE api_key = $1`, [apiKey]);
  return rows[0] ?? null;
}

export async function listNetworkKeys(q: Queryable): Promise<NetworkKeyRow[]> {
  return q.query<NetworkKeyRow>(`SELECT ${KEY_COLUMNS} FROM network_keys ORDER BY created_at DESC`);
}

export async function revokeNetworkKey(q: Queryable, networkKeyId: string): Promise<boolean> {
  const rows = await q.query(`UPDATE network_keys SET status = 'REVOKED' WHERE network_key_id = $1 RETURNING 1`, [networkKeyId]);
  return rows.length > 0;
}
