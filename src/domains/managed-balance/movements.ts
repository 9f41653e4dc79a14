/**
 * Asset movements of managed users (2.3, 2.4, 4.3; D33, D35): credit, debit and conversion, the
 * balance, the movement list and lookups. A credit or debit is one database call
 * (user_asset_move, src/domains/managed-balance/sql/user_asset_move.sql): user on first use, capability, externalTranId, funds, movement,
 * posting. A conversion books one posting over both assets at the operator rate.
 */
import { Decimal } from 'decimal.js';
import { newId } from '../../platform/crypto/secrets.ts';
import type { AppContext } from '../../platform/context.ts';
import { ApiError, invariant, paramInvalid } from '../../platform/errors.ts';
import { parseJson } from '../../platform/http/json.ts';
import { counter } from '../../platform/metrics.ts';
import { pageOf, type Paging, type WireAmount } from '../../platform/http/schema.ts';
import { ASSET_MAX_SCALE, atRate, fromDb, parseAmount, toDb, toWire, type Amount } from '../../platform/money.ts';
import { getOrCreateAccount, listAccountsOfOwner, post } from '../ledger/index.ts';
import { CAPABILITY_BLOCKERS } from '../organizations/index.ts';
import {
  externalTranIdUsed, findMovementBody, insertMovement, listMovementBodies, moveInLane, type MoveOutcome,
} from './movements-store.ts';
import { activeAsset, ensureUser, findUser, listAssets, restrictionsOf } from './users.ts';

export type MovementDeps = Pick<AppContext, 'db' | 'clock'>;

/** 2.4 types a partner's credit may carry (balance up); DEPOSIT when absent. */
export const CREDIT_TYPES = ['DEPOSIT', 'REWARD_DISTRIBUTION', 'REWARD_REFUND', 'MIGRATION'] as const;
/** 2.4 types a partner's debit may carry (balance down); WITHDRAW when absent. */
export const DEBIT_TYPES = ['WITHDRAW', 'REWARD_PAY', 'MIGRATION'] as const;
const AMOUNT_RULES = { maxScale: ASSET_MAX_SCALE, sign: 'positive' } as const;
/** The contra account of conversions: the service's own position in each asset. */
const CONVERSION_OWNER = 'ASSET_CONVERSION';

/** A movement as answered (asset_movement_json). */
export type MovementView = Record<string, unknown> & { transactionId: string };

const now = (deps: MovementDeps) => new Date(deps.clock.now());

/** Issue 27: booked credits, debits and conversions by 2.4 type (a closed set) and direction. */
const movementsBooked = counter('user_asset_movements_total', 'Managed users\' asset movements booked by partner credits, debits and conversions, by type and direction', ['type', 'direction']);

function view(body: string): MovementView {
  return parseJson(body) as MovementView;
}

export interface MoveInput {
  externalTranId: string;
  asset: string;
  amount: WireAmount;
  externalUserId: string;
  remark?: string;
  type?: string;
}

const REFUSALS: Record<Exclude<MoveOutcome, 'OK'>, (detail: string, input: MoveInput) => ApiError> = {
  ASSET_INVALID: (d) => new ApiError('ASSET_INVALID', `asset: ${d} is not a supported asset`, { data: { errorCode: 'ASSET_INVALID', errorMsg: 'asset' } }),
  AMOUNT_SCALE: (d, i) => paramInvalid('amount', `${i.asset} amounts have at most ${d} decimal places`),
  CAPABILITY_FROZEN: (d) => new ApiError('CAPABILITY_FROZEN', `The user's capability is frozen (${d})`, { data: { errorCode: d, errorMsg: 'USER' } }),
  DUPLICATE: (d) => new ApiError('EXTERNAL_TRAN_ID_DUPLICATE', `externalTranId ${d} was already used`),
  INSUFFICIENT_BALANCE: (_d, i) => new ApiError('INSUFFICIENT_BALANCE', `Insufficient free ${i.asset} balance`),
};

/** POST /user-asset/v1/credit and /debit: one movement, booked once per externalTranId. */
export async function move(deps: MovementDeps, partnerId: string, direction: 'CREDIT' | 'DEBIT', input: MoveInput): Promise<MovementView> {
  const amount = parseAmount('amount', input.amount, AMOUNT_RULES);
  const allowed: readonly string[] = direction === 'CREDIT' ? CREDIT_TYPES : DEBIT_TYPES;
  const type = input.type ?? allowed[0];
  if (!allowed.includes(type)) throw paramInvalid('type', `must be one of ${allowed.join(', ')}`);
  const result = await moveInLane(deps.db, {
    partnerId,
    externalUserId: input.externalUserId,
    newUserId: newId('mu'),
    externalTranId: input.externalTranId,
    type,
    direction,
    asset: input.asset,
    amount: toDb(amount),
    remark: input.remark ?? null,
    blockers: direction === 'CREDIT' ? CAPABILITY_BLOCKERS.CASH_IN : CAPABILITY_BLOCKERS.CASH_OUT,
    now: now(deps),
    movementId: newId('am'),
    postingId: newId('lp'),
    newAccountId: newId('la'),
    newContraId: newId('la'),
  });
  invariant(result, 'user_asset_move answers one row');
  if (result.outcome !== 'OK') throw REFUSALS[result.outcome](result.body, input);
  const movement = view(result.body);
  invariant(movement.direction === direction && fromDb(String(movement.amount)).eq(amount), `movement ${movement.transactionId} books the requested amount`);
  movementsBooked.inc({ type, direction });
  return movement;
}

export interface ConvertInput {
  externalTranId: string;
  externalUserId: string;
  fromAsset: string;
  toAsset: string;
  amount: WireAmount;
  remark?: string;
}

/**
 * CONVERSION (2.4, D35): `amount` of fromAsset becomes toAsset at the operator rate
 * (toAsset.usdRate / fromAsset.usdRate; USD-pegged assets 1:1), rounded down to toAsset's scale.
 * One posting: the user's fromAsset against the service's conversion account in fromAsset, and
 * the conversion account's toAsset against the user's toAsset.
 */
export async function convert(deps: MovementDeps, partnerId: string, input: ConvertInput): Promise<MovementView> {
  const amount = parseAmount('amount', input.amount, AMOUNT_RULES);
  if (input.fromAsset === input.toAsset) throw paramInvalid('toAsset', 'must differ from fromAsset');
  const converted = await deps.db.tx(async (q) => {
    const from = await activeAsset(q, input.fromAsset, 'fromAsset');
    const to = await activeAsset(q, input.toAsset, 'toAsset');
    if (amount.decimalPlaces() > from.scale) throw paramInvalid('amount', `${from.asset} amounts have at most ${from.scale} decimal places`);
    if (from.usdRate === null || to.usdRate === null) {
      throw new ApiError('CONVERSION_NOT_AVAILABLE', `No conversion rate is set between ${from.asset} and ${to.asset}`);
    }
    const rate = fromDb(to.usdRate).div(fromDb(from.usdRate));
    const counter = atRate(amount, rate, to.scale, 'DOWN');
    if (counter.lte(0)) throw paramInvalid('amount', `too small to convert into ${to.asset}`);
    const at = now(deps);
    const user = await ensureUser(q, partnerId, input.externalUserId, at);
    const codes = new Set(await restrictionsOf(q, user.userId));
    const frozen = CAPABILITY_BLOCKERS.CASH_OUT.find((c) => codes.has(c));
    if (frozen) throw REFUSALS.CAPABILITY_FROZEN(frozen, { ...input, asset: input.fromAsset });
    if (await externalTranIdUsed(q, partnerId, input.externalTranId)) throw REFUSALS.DUPLICATE(input.externalTranId, { ...input, asset: input.fromAsset });
    const userFrom = await getOrCreateAccount(q, { partnerId, ownerType: 'MANAGED_USER', ownerId: user.userId, currency: from.asset }, at);
    const userTo = await getOrCreateAccount(q, { partnerId, ownerType: 'MANAGED_USER', ownerId: user.userId, currency: to.asset }, at);
    const poolFrom = await getOrCreateAccount(q, { partnerId, ownerType: 'EXTERNAL', ownerId: CONVERSION_OWNER, currency: from.asset }, at);
    const poolTo = await getOrCreateAccount(q, { partnerId, ownerType: 'EXTERNAL', ownerId: CONVERSION_OWNER, currency: to.asset }, at);
    const movementId = newId('am');
    // post() refuses with INSUFFICIENT_BALANCE before writing anything when free < amount.
    const posting = await post(q, {
      partnerId,
      kind: 'CONVERSION',
      entries: [
        { accountId: userFrom.accountId, amount: amount.neg(), bucket: 'AVAILABLE' },
        { accountId: poolFrom.accountId, amount, bucket: 'AVAILABLE' },
        { accountId: poolTo.accountId, amount: counter.neg(), bucket: 'AVAILABLE' },
        { accountId: userTo.accountId, amount: counter, bucket: 'AVAILABLE' },
      ],
      reference: movementId,
      description: input.remark ?? null,
      createTime: at,
    });
    const freeAfter = posting.balances.get(userFrom.accountId)!.available;
    const body = await insertMovement(q, {
      movementId, partnerId, userId: user.userId, externalTranId: input.externalTranId, type: 'CONVERSION', direction: 'DEBIT',
      asset: from.asset, amount: toDb(amount), counterAsset: to.asset, counterAmount: toDb(counter), rate: toDb(rate), cardId: null,
      remark: input.remark ?? null, postingId: posting.postingId, freeAfter: toDb(freeAfter), createdAt: at,
    }, input.externalUserId);
    // A concurrent copy took the externalTranId after the check above: this transaction rolls back.
    if (body === null) throw REFUSALS.DUPLICATE(input.externalTranId, { ...input, asset: input.fromAsset });
    return view(body);
  });
  movementsBooked.inc({ type: 'CONVERSION', direction: 'DEBIT' });
  return converted;
}

/** 2.3 balance objects: every ACTIVE asset (zero when never used) and any other asset the user holds. */
export async function balances(deps: MovementDeps, partnerId: string, externalUserId: string, asset?: string) {
  const [assets, user] = await Promise.all([listAssets(deps.db), findUser(deps.db, partnerId, externalUserId)]);
  const accounts = user ? await listAccountsOfOwner(deps.db, partnerId, 'MANAGED_USER', user.userId) : [];
  const byAsset = new Map(accounts.map((a) => [a.currency, a]));
  return assets
    .filter((s) => (s.status === 'ACTIVE' || byAsset.has(s.asset)) && (asset === undefined || s.asset === asset))
    .map((s) => {
      const a = byAsset.get(s.asset);
      const zero = new Decimal(0);
      const free: Amount = a?.available ?? zero;
      const freeze: Amount = a?.pending ?? zero;
      invariant(free.plus(freeze).eq(a?.total ?? zero), `total = free + freeze for ${s.asset}`);
      return { asset: s.asset, network: s.network, logo: s.logo, free: toWire(free), freeze: toWire(freeze), total: toWire(free.plus(freeze)) };
    });
}

export interface MovementQuery {
  externalUserId: string;
  asset?: string;
  type?: string;
  startTime?: string;
  endTime?: string;
}

export async function listMovements(deps: MovementDeps, partnerId: string, input: MovementQuery, paging: Paging) {
  const startTime = input.startTime ? new Date(input.startTime) : null;
  const endTime = input.endTime ? new Date(input.endTime) : null;
  if (startTime && endTime && startTime.getTime() > endTime.getTime()) throw paramInvalid('endTime', 'must not be before startTime');
  const { total, bodies } = await listMovementBodies(deps.db, {
    partnerId, externalUserId: input.externalUserId, asset: input.asset ?? null, type: input.type ?? null, startTime, endTime,
  }, paging.pageSize, (paging.page - 1) * paging.pageSize);
  return pageOf(paging, total, bodies.map(view));
}

/** One movement by transactionId or externalTranId (exactly one of them); another partner's does not exist. */
export async function movementDetail(deps: MovementDeps, partnerId: string, by: { transactionId?: string; externalTranId?: string; externalUserId?: string }) {
  if ((by.transactionId === undefined) === (by.externalTranId === undefined)) {
    throw paramInvalid(by.transactionId === undefined ? 'transactionId' : 'externalTranId', 'give exactly one of transactionId and externalTranId');
  }
  const body = await findMovementBody(deps.db, partnerId, { movementId: by.transactionId, externalTranId: by.externalTranId, externalUserId: by.externalUserId });
  if (body === null) throw new ApiError('TRANSACTION_NOT_FOUND', 'No such asset movement');
  return view(body);
}
