import type { Queryable } from '../../platform/db/db.ts';
import { Where } from '../../platform/db/where.ts';
import { inItemOrder, lanes } from '../../platform/db/lane.ts';
import { invariant } from '../../platform/errors.ts';

/** Asset movements (2.4): SQL of the credit/debit call, conversion rows and the reads. */

export type MoveOutcome = 'OK' | 'ASSET_INVALID' | 'AMOUNT_SCALE' | 'CAPABILITY_FROZEN' | 'DUPLICATE' | 'INSUFFICIENT_BALANCE';

export interface MoveRow {
  partnerId: string;
  externalUserId: string;
  newUserId: string;
  externalTranId: string;
  type: string;
  direction: 'CREDIT' | 'DEBIT';
  asset: string;
  amount: string;
  remark: string | null;
  blockers: readonly string[];
  now: Date;
  movementId: string;
  postingId: string;
  newAccountId: string;
  newContraId: string;
}

/** SQLSTATE of user_asset_move when a concurrent copy took the externalTranId after this call created the user or account (sql/user_asset_move.sql). */
const CONCURRENT_DUPLICATE = 'CS409';

/**
 * One credit or debit, decided and booked in one call (user_asset_move, sql/user_asset_move.sql). A
 * refusal writes nothing: the function decides it before its first write, or raises, which undoes
 * the call (an autocommit statement) and is answered here as DUPLICATE.
 */
async function moveInDb(q: Queryable, m: MoveRow): Promise<{ outcome: MoveOutcome; body: string }> {
  try {
    const rows = await q.query<{ outcome: MoveOutcome; body: string }>(
      `SELECT outcome, body FROM user_asset_move($1, $2, $3, $4, $5, $6, $7, $8::numeric, $9, $10::text[], $11, $12, $13, $14, $15)`,
      [m.partnerId, m.externalUserId, m.newUserId, m.externalTranId, m.type, m.direction, m.asset, m.amount, m.remark, m.blockers, m.now,
        m.movementId, m.postingId, m.newAccountId, m.newContraId],
    );
    return rows[0];
  } catch (err) {
    if ((err as { code?: string }).code === CONCURRENT_DUPLICATE) return { outcome: 'DUPLICATE', body: m.externalTranId };
    throw err;
  }
}

/**
 * Several credits or debits of one direction in one call and one commit (user_asset_move_batch,
 * sql/user_asset_move_batch.sql), each decided by user_asset_move as alone; the results in the order
 * of `moves`. Any error rolls them all back (a concurrent copy's CS409 included).
 */
async function moveBatchInDb(q: Queryable, moves: readonly MoveRow[]): Promise<{ outcome: MoveOutcome; body: string }[]> {
  const blockers = moves[0].blockers;
  invariant(moves.every((m) => m.blockers.join() === blockers.join()), 'a batch of movements shares its blockers');
  const col = <K extends keyof MoveRow>(k: K) => moves.map((m) => m[k]);
  const rows = await q.query<{ item: number; outcome: MoveOutcome; body: string }>(
    `SELECT item, outcome, body FROM user_asset_move_batch($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
       $8::numeric[], $9::text[], $10::text[], $11::timestamptz[], $12::text[], $13::text[], $14::text[], $15::text[])`,
    [col('partnerId'), col('externalUserId'), col('newUserId'), col('externalTranId'), col('type'), col('direction'), col('asset'),
      col('amount'), col('remark'), blockers, moves.map((m) => m.now.toISOString()), col('movementId'), col('postingId'),
      col('newAccountId'), col('newContraId')],
  );
  return inItemOrder(rows, moves.length, 'user_asset_move_batch');
}

/**
 * One credit or debit through the movement lane of `db` and its direction (src/platform/db/lane.ts,
 * issue 34): the movements that arrive while the lane's previous call is in the database go together.
 */
export const moveInLane = lanes<MoveRow, { outcome: MoveOutcome; body: string }>('user_asset', 'Credits and debits',
  (db) => ({ alone: (row) => moveInDb(db, row), together: (rows) => moveBatchInDb(db, rows) }), (m) => m.direction);

export interface NewMovementRow {
  movementId: string;
  partnerId: string;
  userId: string;
  externalTranId: string | null;
  type: string;
  direction: 'CREDIT' | 'DEBIT';
  asset: string;
  amount: string;
  counterAsset: string | null;
  counterAmount: string | null;
  rate: string | null;
  cardId: string | null;
  remark: string | null;
  postingId: string;
  freeAfter: string;
  createdAt: Date;
}

/** Inserts a movement booked by the caller's posting; null when the externalTranId is already used. */
export async function insertMovement(q: Queryable, m: NewMovementRow, externalUserId: string): Promise<string | null> {
  const rows = await q.query<{ body: string }>(
    `WITH ins AS (
       INSERT INTO asset_movements (movement_id, partner_id, user_id, external_tran_id, type, direction, asset, amount, counter_asset,
                                    counter_amount, rate, card_id, remark, status, posting_id, free_after, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::numeric, $9, $10::numeric, $11::numeric, $12, $13, 'SUCCESS', $14, $15::numeric, $16)
       ON CONFLICT (partner_id, external_tran_id) WHERE external_tran_id IS NOT NULL DO NOTHING
       RETURNING *)
     SELECT asset_movement_json(ins, $17)::text AS body FROM ins`,
    [m.movementId, m.partnerId, m.userId, m.externalTranId, m.type, m.direction, m.asset, m.amount, m.counterAsset, m.counterAmount, m.rate,
      m.cardId, m.remark, m.postingId, m.freeAfter, m.createdAt, externalUserId],
  );
  return rows[0]?.body ?? null;
}

export async function externalTranIdUsed(q: Queryable, partnerId: string, externalTranId: string): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM asset_movements WHERE partner_id = $1 AND external_tran_id = $2', [partnerId, externalTranId]);
  return rows.length > 0;
}

export interface MovementFilter {
  partnerId: string;
  externalUserId: string;
  asset: string | null;
  type: string | null;
  startTime: Date | null;
  endTime: Date | null;
}

export async function listMovementBodies(q: Queryable, f: MovementFilter, limit: number, offset: number): Promise<{ total: number; bodies: string[] }> {
  const w = new Where();
  w.and(`m.partner_id = ${w.arg(f.partnerId, 'text')}`).and(`u.external_user_id = ${w.arg(f.externalUserId, 'text')}`);
  if (f.asset !== null) {
    const asset = w.arg(f.asset, 'text');
    w.and(`(m.asset = ${asset} OR m.counter_asset = ${asset})`);
  }
  w.eq('m.type', f.type);
  if (f.startTime !== null) w.and(`m.created_at >= ${w.arg(f.startTime, 'timestamptz')}`);
  if (f.endTime !== null) w.and(`m.created_at < ${w.arg(f.endTime, 'timestamptz')}`);
  const [count] = await q.query<{ n: string }>(
    `SELECT count(*) AS n FROM asset_movements m JOIN managed_users u ON u.user_id = m.user_id WHERE ${w.sql}`, w.params);
  const rows = await q.query<{ body: string }>(
    `SELECT asset_movement_json(m, u.external_user_id)::text AS body FROM asset_movements m JOIN managed_users u ON u.user_id = m.user_id
      WHERE ${w.sql} ORDER BY m.created_at DESC, m.seq DESC LIMIT ${w.next()} OFFSET ${w.next(1)}`, [...w.params, limit, offset]);
  return { total: Number(count.n), bodies: rows.map((r) => r.body) };
}

/**
 * One movement of the partner by its id or by its externalTranId; optionally only of one user. Only the
 * keys given are in the statement: with all of them optional in one statement, its generic plan read
 * every movement of the partner (Where).
 */
export async function findMovementBody(q: Queryable, partnerId: string, by: { movementId?: string; externalTranId?: string; externalUserId?: string }): Promise<string | null> {
  const w = new Where();
  w.and(`m.partner_id = ${w.arg(partnerId, 'text')}`);
  w.eq('m.movement_id', by.movementId);
  w.eq('m.external_tran_id', by.externalTranId);
  w.eq('u.external_user_id', by.externalUserId);
  const rows = await q.query<{ body: string }>(
    `SELECT asset_movement_json(m, u.external_user_id)::text AS body FROM asset_movements m JOIN managed_users u ON u.user_id = m.user_id
      WHERE ${w.sql}`,
    w.params,
  );
  return rows[0]?.body ?? null;
}

export interface AssetUpsert {
  asset: string;
  network: string;
  logo: string;
  scale: number;
  usdPegged: boolean;
  usdRate: string | null;
  status: 'ACTIVE' | 'INACTIVE';
  sortOrder: number;
  now: Date;
}

/**
 * Creates or updates an asset; false (nothing written) when the update would lower its scale. The
 * decimals of an asset can be raised, never lowered: balances, holds and records in it may carry its
 * current decimals, which a lower scale would leave beyond every debit (review of 2026-11-27). Decided
 * on the row the statement locks, so no concurrent update slips between a check and the write.
 */
export async function upsertAssetRow(q: Queryable, a: AssetUpsert): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO assets (asset, network, logo, scale, usd_pegged, usd_rate, status, sort_order, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6::numeric, $7, $8, $9, $9)
     ON CONFLICT (asset) DO UPDATE SET network = excluded.network, logo = excluded.logo, scale = excluded.scale,
       usd_pegged = excluded.usd_pegged, usd_rate = excluded.usd_rate, status = excluded.status, sort_order = excluded.sort_order,
       updated_at = excluded.updated_at
     WHERE assets.scale <= excluded.scale
     RETURNING asset`,
    [a.asset, a.network, a.logo, a.scale, a.usdPegged, a.usdRate, a.status, a.sortOrder, a.now],
  );
  return rows.length === 1;
}

export async function addUserRestrictions(q: Queryable, userId: string, codes: string[], remark: string | null, now: Date): Promise<void> {
  if (codes.length === 0) return;
  await q.query(
    `INSERT INTO managed_user_restrictions (user_id, code, remark, created_at) SELECT $1, c, $3, $4 FROM unnest($2::text[]) c
     ON CONFLICT (user_id, code) DO NOTHING`, [userId, codes, remark, now]);
}

export async function removeUserRestrictions(q: Queryable, userId: string, codes: string[]): Promise<void> {
  if (codes.length === 0) return;
  await q.query('DELETE FROM managed_user_restrictions WHERE user_id = $1 AND code = ANY($2::text[])', [userId, codes]);
}
