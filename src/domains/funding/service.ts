import type { Static } from 'typebox';
import { THRESHOLD_RULES, type BalanceAlertSetBody, type StatementQuery as StatementQuerySchema } from '../../../sdk/contract/funding.ts';
import type { AppContext } from '../../platform/context.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { ApiError, invariant, paramInvalid } from '../../platform/errors.ts';
import { pageOf, type Paging } from '../../platform/http/schema.ts';
import { corporateWire, fromDb, parseAmount, toDb, type Amount } from '../../platform/money.ts';
import { findAccount, getOrCreateAccount, listAccountsOfOrganization, listAccountsOfOwner, listMovements, post } from '../ledger/index.ts';
import { assertCapability, findOrganization, findOrganizationShared } from '../organizations/index.ts';
import { readAlertConfig, replaceAlertConfig } from './store.ts';

export type FundingDeps = Pick<AppContext, 'db' | 'clock'>;

/** What funding needs of the cards domain (a higher layer), plugged in at wiring time (src/app.ts). */
export interface DedicatedCards {
  /** The company's DEDICATED cards of the partner, every status, oldest first, with the card's currency. */
  dedicatedCardsOf(q: Queryable, partnerId: string, organizationId: string): Promise<Array<{ cardId: string; currency: string }>>;
}

export type FundingRouteDeps = FundingDeps & { cards: DedicatedCards };

/** 2.12 / section 8: thresholds are non-negative with at most two decimals (a wire rule: the contract holds it). */
export { THRESHOLD_RULES };
/** Corporate deposit amounts: positive, two decimals (D4); a wire rule, the contract holds it. */
export { CORPORATE_AMOUNT_RULES } from '../../../sdk/contract/sandbox.ts';
/** The external account sandbox deposits come from (money outside the service). */
export const DEPOSIT_SOURCE_OWNER = 'BANK';

/** Corporate amounts on the wire with two decimals: the money module's rule (D4). */
export { corporateWire };

function balanceView(b: { available: Amount; pending: Amount; total: Amount }) {
  return { available: corporateWire(b.available), pending: corporateWire(b.pending), total: corporateWire(b.total) };
}

/**
 * D29/D48 fund/v1/balance: pools in funding-currency order, and every dedicated card of the company
 * (D57), oldest first: one line per currency its balance holds, or zeros in the card's currency
 * before its first movement.
 */
export async function fundBalance(deps: FundingRouteDeps, partnerId: string, organizationId: string) {
  const organization = await findOrganization(deps.db, partnerId, organizationId);
  if (!organization) throw new ApiError('ORGANIZATION_INVALID');
  const pools = await listAccountsOfOwner(deps.db, partnerId, 'ORGANIZATION_POOL', organizationId);
  const byCurrency = new Map(pools.map((p) => [p.currency, p]));
  const dedicated = await deps.cards.dedicatedCardsOf(deps.db, partnerId, organizationId);
  const accounts = (await listAccountsOfOrganization(deps.db, organizationId, 'CARD')).filter((a) => a.partnerId === partnerId);
  const zero = fromDb('0');
  return {
    organizationId,
    pools: organization.fundingCurrencies.map((currency) => {
      const pool = byCurrency.get(currency);
      invariant(pool, `pool ${currency} of ${organizationId} exists`);
      return { currency, ...balanceView(pool) };
    }),
    cards: dedicated.flatMap((card) => {
      const own = accounts.filter((a) => a.ownerId === card.cardId);
      return own.length > 0
        ? own.map((a) => ({ cardId: card.cardId, currency: a.currency, ...balanceView(a) }))
        : [{ cardId: card.cardId, currency: card.currency, ...balanceView({ available: zero, pending: zero, total: zero }) }];
    }),
  };
}

/** The statement route's filters (sdk/contract/funding.ts), paging aside. */
export type StatementQuery = Omit<Static<typeof StatementQuerySchema>, 'page' | 'pageSize'>;

/**
 * D29 fund/v1/statement: every movement of the company pools, or with `cardId` of a dedicated
 * card's own balance (deposits, transfers, authorization holds, clearings, reversals, refunds),
 * newest first. A card that is not a dedicated card of this company has no lines.
 */
export async function statement(deps: FundingDeps, partnerId: string, query: StatementQuery, paging: Paging) {
  const startTime = query.startTime ? new Date(query.startTime) : null;
  const endTime = query.endTime ? new Date(query.endTime) : null;
  if (startTime && endTime && startTime.getTime() > endTime.getTime()) throw paramInvalid('endTime', 'must not be before startTime');
  const organization = await findOrganization(deps.db, partnerId, query.organizationId);
  if (!organization) throw new ApiError('ORGANIZATION_INVALID');
  if (query.cardId !== undefined) {
    const accounts = await listAccountsOfOwner(deps.db, partnerId, 'CARD', query.cardId);
    if (!accounts.some((a) => a.organizationId === query.organizationId)) return pageOf(paging, 0, []);
  }
  const { total, rows } = await listMovements(deps.db, {
    partnerId,
    ownerType: query.cardId === undefined ? 'ORGANIZATION_POOL' : 'CARD',
    ownerId: query.cardId ?? query.organizationId,
    currency: query.currency ?? null,
    startTime,
    endTime,
  }, paging.pageSize, (paging.page - 1) * paging.pageSize);
  return pageOf(paging, total, rows.map((r) => {
    const availableAfter = fromDb(r.availableAfter);
    const pendingAfter = fromDb(r.pendingAfter);
    invariant(fromDb(r.amount).eq(fromDb(r.availableChange).plus(fromDb(r.pendingChange))), 'statement line amount = changes');
    return {
      statementId: `st${r.firstEntryId}`,
      postingId: r.postingId,
      currency: r.currency,
      type: r.kind,
      amount: corporateWire(r.amount),
      availableChange: corporateWire(r.availableChange),
      pendingChange: corporateWire(r.pendingChange),
      availableAfter: corporateWire(availableAfter),
      pendingAfter: corporateWire(pendingAfter),
      totalAfter: corporateWire(availableAfter.plus(pendingAfter)),
      reference: r.reference,
      description: r.description,
      createTime: r.createdAt.toISOString(),
    };
  }));
}

/** The balance-alert-set body (sdk/contract/funding.ts). */
export type BalanceAlertInput = Static<typeof BalanceAlertSetBody>;

/**
 * 4.6 balance-alert-set (2.12, D41). After the schema: each entry has `threshold` or its alias
 * `thresholdAmount` (equal when both are given), currencies and emails are unique
 * (DAPI_PARAM_INVALID); then the company (SUBJECT_INVALID, D41), then each currency has a pool
 * (BALANCE_ALERT_CURRENCY_NO_POOL). Replaces the whole configuration; answers null.
 */
export async function setBalanceAlerts(deps: FundingDeps, partnerId: string, input: BalanceAlertInput): Promise<null> {
  const seen = new Set<string>();
  const settings = input.balanceSettings.map((s, i) => {
    if (seen.has(s.currency)) throw paramInvalid(`balanceSettings.${i}.currency`, `${s.currency} appears twice`);
    seen.add(s.currency);
    const canonical = s.threshold !== undefined ? parseAmount(`balanceSettings.${i}.threshold`, s.threshold, THRESHOLD_RULES) : null;
    const alias = s.thresholdAmount !== undefined ? parseAmount(`balanceSettings.${i}.thresholdAmount`, s.thresholdAmount, THRESHOLD_RULES) : null;
    if (canonical === null && alias === null) throw paramInvalid(`balanceSettings.${i}.threshold`, 'is required');
    if (canonical !== null && alias !== null && !canonical.eq(alias)) {
      throw paramInvalid(`balanceSettings.${i}.threshold`, 'threshold and thresholdAmount differ');
    }
    return { currency: s.currency, threshold: toDb((canonical ?? alias)!) };
  });
  const emails = input.emailSettings ?? [];
  const lower = new Set<string>();
  emails.forEach((e, i) => {
    if (lower.has(e.toLowerCase())) throw paramInvalid(`emailSettings.${i}`, `${e} appears twice`);
    lower.add(e.toLowerCase());
  });
  const at = new Date(deps.clock.now());
  await deps.db.tx(async (q) => {
    const organization = await findOrganization(q, partnerId, input.organizationId, true);
    if (!organization || organization.lifecycle !== 'ACTIVE') throw new ApiError('SUBJECT_INVALID', 'Organization is missing or invalid');
    for (const s of settings) {
      if (!organization.fundingCurrencies.includes(s.currency)) {
        throw new ApiError('BALANCE_ALERT_CURRENCY_NO_POOL', `The company has no ${s.currency} funding pool`);
      }
    }
    await replaceAlertConfig(q, organization.organizationId, { settings, emails }, at);
  });
  return null;
}

/** Reads the alert configuration back (not in the spec; lets partners verify what is set). */
export async function queryBalanceAlerts(deps: FundingDeps, partnerId: string, organizationId: string) {
  const organization = await findOrganization(deps.db, partnerId, organizationId);
  if (!organization) throw new ApiError('SUBJECT_INVALID', 'Organization is missing or invalid');
  const config = await readAlertConfig(deps.db, organizationId);
  return {
    organizationId,
    balanceSettings: config.settings.map((s) => ({ currency: s.currency, threshold: corporateWire(s.threshold) })),
    emailSettings: config.emails,
  };
}

export interface PoolDeposit {
  partnerId: string;
  organizationId: string;
  currency: string;
  amount: Amount;
  reference?: string | null;
  description?: string | null;
  at: Date;
}

/**
 * Credits a company pool from outside the service (a bank deposit; sandbox simulate/deposit).
 * Errors: SUBJECT_INVALID (unknown, foreign or TERMINATED company), CURRENCY_NOT_ALLOWED (no pool
 * in that currency), CAPABILITY_FROZEN with data.errorCode CASH_IN_FROZEN (D20). The company row
 * is read FOR SHARE so a concurrent freeze either precedes the deposit or waits for it.
 */
export async function depositToPool(q: Queryable, d: PoolDeposit) {
  const organization = await findOrganizationShared(q, d.partnerId, d.organizationId);
  if (!organization || organization.lifecycle !== 'ACTIVE') throw new ApiError('SUBJECT_INVALID', 'Organization is missing or invalid');
  const pool = await findAccount(q, { partnerId: d.partnerId, ownerType: 'ORGANIZATION_POOL', ownerId: d.organizationId, currency: d.currency });
  if (!pool) throw new ApiError('CURRENCY_NOT_ALLOWED', `The company has no ${d.currency} funding pool`);
  await assertCapability(q, { subjectType: 'ORGANIZATION', subjectId: d.organizationId }, 'CASH_IN');
  const source = await getOrCreateAccount(q, { partnerId: d.partnerId, ownerType: 'EXTERNAL', ownerId: DEPOSIT_SOURCE_OWNER, currency: d.currency }, d.at);
  const posting = await post(q, {
    partnerId: d.partnerId,
    kind: 'DEPOSIT',
    entries: [
      { accountId: pool.accountId, amount: d.amount, bucket: 'AVAILABLE' },
      { accountId: source.accountId, amount: d.amount.negated(), bucket: 'AVAILABLE' },
    ],
    reference: d.reference ?? null,
    description: d.description ?? null,
    createTime: d.at,
  });
  const balance = posting.balances.get(pool.accountId)!;
  return { postingId: posting.postingId, balance };
}
