/**
 * Velocity rules (2.10, 2.11, 4.7; D30-D32, D44-D47): the rules in the spec's words, one
 * transaction per call.
 *
 * Exports for other domains (call them inside your own transaction `q`):
 * - `checkRulesForCard(q, {partnerId, organizationId, ruleIds, settlementCurrencies, lock})`: the
 *   rule constraints of a card application, in D44's order across the whole array: duplicates ->
 *   DAPI_PARAM_INVALID; unknown or another organization's / partner's -> VELOCITY_RULE_NOT_FOUND;
 *   INACTIVE -> VELOCITY_RULE_STATUS_INVALID; a rule with amount limits sharing no currency with
 *   the card's settlement currencies -> VELOCITY_RULE_CURRENCY_MISMATCH. `lock: true` takes FOR
 *   SHARE locks so a concurrent change-rule-status waits until the caller commits. Empty or absent
 *   ruleIds pass.
 * - `bindRulesToCard(q, {partnerId, organizationId, ruleIds, cardId, now})`: binds the rules to
 *   the new card (idempotent); call it after checkRulesForCard in the card-creation transaction.
 * - `releaseUsage(q, {partnerId, card, control, currency, amount, count, at})`: for the
 *   authorization engine (D32): a reversal, hold expiry or partner decline gives the amount and
 *   the count back in the periods of `at`, the original authorization time, in the partner's time
 *   zone schedule then (issue 31; velocity_period_keys), of the card
 *   and, for an employee card (card.subjectType CUSTOMER), of its employee; never below zero. The
 *   increment is card_authorize's and the decline rules are card_velocity_refusal's (migration
 *   050): velocity's decisions and usage arithmetic run in the database (docs/contributing.md).
 */
import { RULE_IDS_PER_CARD_MAX } from '../../../sdk/contract/velocity.ts';
import type { Clock } from '../../platform/clock.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import type { Db, Queryable } from '../../platform/db/db.ts';
import { ApiError, invariant, paramInvalid } from '../../platform/errors.ts';
import { pageOf, type Paging } from '../../platform/http/schema.ts';
import { amount as toAmount, type Amount } from '../../platform/money.ts';
import { mergeQuota, relevantCurrencies, UsageBook, type AppliedRule } from './merge.ts';
import {
  amountLimitCurrencies, BINDABLE_SUBJECT_TYPES, controlsFromWire, CORPORATE_CURRENCIES, ruleDocument, ruleSummaryView, ruleView,
  type RuleControls,
  type BindableSubjectType, type CorporateCurrency, type LimitControl, type Period, type RuleStatus, type VelocityRule, type WireControls,
} from './model.ts';
import { PERIOD_COLUMN, periodWindows, type PeriodWindow } from './periods.ts';
import {
  deleteBindings, findRule, findRules, insertBindings, insertRule, listBindings as listBindingRows,
  listRules as listRuleRows, listSubjectRules as listSubjectRuleRows, readUsage, replaceRuleIfVersion, rulesBoundTo,
  setStatusIfVersion, giveBackUsage, readPeriods, databaseKnowsZone, deletePendingZones, insertZoneChange,
  type RuleKey, type SubjectRef,
} from './store.ts';
import { employeeFacts, organizationFacts, type CardFacts, type CardLookup } from './subjects.ts';

export interface VelocityDeps {
  db: Db;
  clock: Clock;
  /** The cards domain (above velocity), passed in at wiring time. */
  cards: CardLookup;
}

/** Rules named by one card application (a wire bound: the contract holds it). */
export { RULE_IDS_PER_CARD_MAX };

function now(deps: VelocityDeps): Date {
  return new Date(deps.clock.now());
}

function paging(query: { page?: number; pageSize?: number }): Paging {
  return { page: query.page ?? 1, pageSize: query.pageSize ?? 20 };
}

function offsetOf(p: Paging): number {
  return (p.page - 1) * p.pageSize;
}

/** 4.7: only CARD and CUSTOMER; any other well-formed word is SUBJECT_TYPE_NOT_ALLOWED. */
function bindableSubjectType(value: string): BindableSubjectType {
  if (!(BINDABLE_SUBJECT_TYPES as readonly string[]).includes(value)) {
    throw new ApiError('SUBJECT_TYPE_NOT_ALLOWED', `subjectType ${value} is not allowed; use CARD or CUSTOMER`);
  }
  return value as BindableSubjectType;
}

function assertDistinct(field: string, values: string[]): void {
  const seen = new Set<string>();
  for (const [i, v] of values.entries()) {
    if (seen.has(v)) throw paramInvalid(`${field}[${i}]`, `duplicate value ${v}; duplicates are rejected, not merged`);
    seen.add(v);
  }
}

function ruleNotFound(ruleId: string): ApiError {
  return new ApiError('VELOCITY_RULE_NOT_FOUND', `Velocity rule ${ruleId} not found`);
}

async function requireRule(q: Queryable, key: RuleKey, lock: 'none' | 'share' | 'update' = 'none'): Promise<VelocityRule> {
  const rule = await findRule(q, key, lock);
  if (!rule) throw ruleNotFound(key.ruleId);
  return rule;
}

async function requireOrganization(q: Queryable, partnerId: string, organizationId: string) {
  const org = await organizationFacts(q, partnerId, organizationId);
  if (!org) throw new ApiError('ORGANIZATION_INVALID');
  return org;
}

// ---- Rules ----

export interface CreateRuleInput extends WireControls {
  organizationId: string;
  ruleRef: string;
  ruleName: string;
  remark?: string | null;
}

/** D30: a new rule is ACTIVE at ruleVersion 1. */
export async function createRule(deps: VelocityDeps, partnerId: string, input: CreateRuleInput) {
  const controls = controlsFromWire(input);
  return deps.db.tx(async (q) => {
    await requireOrganization(q, partnerId, input.organizationId);
    const ruleId = newId('vr');
    const created = await insertRule(q, {
      ruleId, partnerId, organizationId: input.organizationId, ruleRef: input.ruleRef, ruleName: input.ruleName,
      remark: input.remark ?? null, controls, now: now(deps),
    });
    if (!created) {
      throw new ApiError('VELOCITY_RULE_REF_DUPLICATE', `ruleRef ${input.ruleRef} is already used in this organization`);
    }
    const rule = await requireRule(q, { partnerId, organizationId: input.organizationId, ruleId });
    invariant(rule.ruleVersion === 1 && rule.status === 'ACTIVE', 'a new rule is ACTIVE at version 1');
    return ruleView(rule);
  });
}

export async function queryRule(deps: VelocityDeps, partnerId: string, input: { organizationId: string; ruleId: string }) {
  return ruleView(await requireRule(deps.db, { partnerId, ...input }));
}

export async function listRules(
  deps: VelocityDeps, partnerId: string,
  input: { organizationId: string; status?: RuleStatus; page?: number; pageSize?: number },
) {
  await requireOrganization(deps.db, partnerId, input.organizationId);
  const p = paging(input);
  const { total, rows } = await listRuleRows(deps.db, {
    partnerId, organizationId: input.organizationId, status: input.status ?? null, limit: p.pageSize, offset: offsetOf(p),
  });
  return pageOf(p, total, rows.map(ruleSummaryView));
}

export interface UpdateRuleInput extends WireControls {
  organizationId: string;
  ruleId: string;
  ruleVersion: number;
  ruleName: string;
  remark?: string | null;
}

/**
 * 4.7 rule 2: full replacement. An absent group is deleted, an absent remark is cleared, absent
 * currencies of amountLimits are deleted; at least one group must remain (DAPI_PARAM_INVALID).
 * 4.7 rule 4: the version must match (VELOCITY_RULE_VERSION_CONFLICT). Both ACTIVE and INACTIVE
 * rules can be updated; the change applies to bound subjects at once (rule 3).
 */
export async function updateRule(deps: VelocityDeps, partnerId: string, input: UpdateRuleInput) {
  const controls = controlsFromWire(input);
  const key: RuleKey = { partnerId, organizationId: input.organizationId, ruleId: input.ruleId };
  return deps.db.tx(async (q) => {
    const replaced = await replaceRuleIfVersion(q, key, input.ruleVersion, {
      ruleName: input.ruleName, remark: input.remark ?? null, controls, now: now(deps),
    });
    if (!replaced) {
      const current = await requireRule(q, key);
      throw new ApiError('VELOCITY_RULE_VERSION_CONFLICT',
        `ruleVersion ${input.ruleVersion} does not match the current version ${current.ruleVersion}; re-query and retry`);
    }
    const rule = await requireRule(q, key);
    invariant(rule.ruleVersion === input.ruleVersion + 1, 'update-rule increments ruleVersion by one');
    return ruleView(rule);
  });
}

/** Section 3: ACTIVE <-> INACTIVE with the matching version; the same status is VELOCITY_RULE_STATUS_INVALID. */
export async function changeRuleStatus(
  deps: VelocityDeps, partnerId: string,
  input: { organizationId: string; ruleId: string; status: RuleStatus; ruleVersion: number },
) {
  const key: RuleKey = { partnerId, organizationId: input.organizationId, ruleId: input.ruleId };
  return deps.db.tx(async (q) => {
    const changed = await setStatusIfVersion(q, key, input.ruleVersion, input.status, now(deps));
    const rule = await requireRule(q, key);
    if (!changed) {
      if (rule.ruleVersion !== input.ruleVersion) {
        throw new ApiError('VELOCITY_RULE_VERSION_CONFLICT',
          `ruleVersion ${input.ruleVersion} does not match the current version ${rule.ruleVersion}; re-query and retry`);
      }
      throw new ApiError('VELOCITY_RULE_STATUS_INVALID', `Rule is already ${rule.status}`);
    }
    invariant(rule.status === input.status && rule.ruleVersion === input.ruleVersion + 1, 'status changed with a new version');
    return {
      ruleId: rule.ruleId,
      ruleName: rule.ruleName,
      status: rule.status,
      ruleVersion: rule.ruleVersion,
      bindingCount: String(rule.bindingCount),
      modifyTime: rule.updatedAt.toISOString(),
    };
  });
}

// ---- Subjects and bindings ----

/**
 * The subject as velocity may use it: the partner's, in this organization, and (unless `anyState`)
 * not ended: an employee not TERMINATED, a card not CANCELLED (D47). Otherwise SUBJECT_INVALID.
 */
async function requireSubject(
  deps: VelocityDeps, q: Queryable, partnerId: string, organizationId: string, subjectType: BindableSubjectType, subjectId: string,
  options: { anyState?: boolean } = {},
): Promise<{ card: CardFacts | null }> {
  const invalid = () => new ApiError('SUBJECT_INVALID', `${subjectType} ${subjectId} is missing, not in organization ${organizationId}, or no longer active`);
  if (subjectType === 'CUSTOMER') {
    const employee = await employeeFacts(q, partnerId, subjectId);
    if (!employee || employee.organizationId !== organizationId || (employee.terminated && !options.anyState)) throw invalid();
    return { card: null };
  }
  const card = await deps.cards.cardFacts(q, partnerId, subjectId);
  if (!card || card.organizationId !== organizationId || (card.status === 'CANCELLED' && !options.anyState)) throw invalid();
  return { card };
}

function assertSharesCurrency(rule: RuleControls & { ruleId: string }, settlementCurrencies: readonly string[], what: string): void {
  const currencies = amountLimitCurrencies(rule);
  if (currencies.size === 0) return;
  if (![...currencies].some((c) => settlementCurrencies.includes(c))) {
    throw new ApiError('VELOCITY_RULE_CURRENCY_MISMATCH',
      `Rule ${rule.ruleId} limits ${[...currencies].join(', ')}, none of which is a settlement currency of ${what} (${settlementCurrencies.join(', ')})`);
  }
}

export interface BindInput {
  organizationId: string;
  ruleId: string;
  subjectType: string;
  subjectIds: string[];
}

/**
 * D30 bind-rule: all or nothing. The rule must be the partner's, under the organization, and
 * ACTIVE (as at card application, D44); every subject must be the partner's, in the organization
 * and not ended; a rule with amount limits must share a currency with each card's settlement
 * currencies. Subjects already bound stay bound (idempotent). Binding does not change the rule's
 * ruleVersion or modifyTime: it is not an edit of the rule.
 */
export async function bindRule(deps: VelocityDeps, partnerId: string, input: BindInput) {
  const subjectType = bindableSubjectType(input.subjectType);
  assertDistinct('subjectIds', input.subjectIds);
  const key: RuleKey = { partnerId, organizationId: input.organizationId, ruleId: input.ruleId };
  return deps.db.tx(async (q) => {
    const rule = await requireRule(q, key, 'share');
    if (rule.status !== 'ACTIVE') throw new ApiError('VELOCITY_RULE_STATUS_INVALID', `Rule ${rule.ruleId} is ${rule.status}; only ACTIVE rules can be bound`);
    for (const subjectId of input.subjectIds) {
      const { card } = await requireSubject(deps, q, partnerId, input.organizationId, subjectType, subjectId);
      if (card) assertSharesCurrency(rule, card.settlementCurrencies, `card ${card.cardId}`);
    }
    const changed = await insertBindings(q, { ruleId: rule.ruleId, partnerId, subjectType, subjectIds: input.subjectIds, now: now(deps) });
    const after = await requireRule(q, key);
    return { ruleId: rule.ruleId, subjectType, subjectIds: input.subjectIds, changed, bindingCount: String(after.bindingCount) };
  });
}

/** D30 unbind-rule: removes the bindings that exist (idempotent); works on INACTIVE rules and ended subjects. */
export async function unbindRule(deps: VelocityDeps, partnerId: string, input: BindInput) {
  const subjectType = bindableSubjectType(input.subjectType);
  assertDistinct('subjectIds', input.subjectIds);
  const key: RuleKey = { partnerId, organizationId: input.organizationId, ruleId: input.ruleId };
  return deps.db.tx(async (q) => {
    const rule = await requireRule(q, key, 'share');
    const changed = await deleteBindings(q, { ruleId: rule.ruleId, subjectType, subjectIds: input.subjectIds });
    const after = await requireRule(q, key);
    return { ruleId: rule.ruleId, subjectType, subjectIds: input.subjectIds, changed, bindingCount: String(after.bindingCount) };
  });
}

export async function listBindings(
  deps: VelocityDeps, partnerId: string,
  input: { organizationId: string; ruleId: string; subjectType?: BindableSubjectType; page?: number; pageSize?: number },
) {
  const rule = await requireRule(deps.db, { partnerId, organizationId: input.organizationId, ruleId: input.ruleId });
  const p = paging(input);
  const { total, rows } = await listBindingRows(deps.db, {
    ruleId: rule.ruleId, subjectType: input.subjectType ?? null, limit: p.pageSize, offset: offsetOf(p),
  });
  return pageOf(p, total, rows.map((r) => ({ subjectType: r.subjectType, subjectId: r.subjectId, bindTime: r.bindTime.toISOString() })));
}

/** Rules bound directly to a subject, every status; ended subjects can still be read (D43). */
export async function listSubjectRules(
  deps: VelocityDeps, partnerId: string,
  input: { organizationId: string; subjectType: string; subjectId: string; page?: number; pageSize?: number },
) {
  const subjectType = bindableSubjectType(input.subjectType);
  await requireSubject(deps, deps.db, partnerId, input.organizationId, subjectType, input.subjectId, { anyState: true });
  const p = paging(input);
  const { total, rows } = await listSubjectRuleRows(deps.db, {
    partnerId, organizationId: input.organizationId, subject: { subjectType, subjectId: input.subjectId },
    limit: p.pageSize, offset: offsetOf(p),
  });
  return pageOf(p, total, rows.map(({ rule, bindTime }) => ({
    ruleId: rule.ruleId,
    ruleRef: rule.ruleRef,
    ruleName: rule.ruleName,
    status: rule.status,
    ruleVersion: rule.ruleVersion,
    bindingCount: String(rule.bindingCount),
    modifyTime: rule.updatedAt.toISOString(),
    bindTime: bindTime.toISOString(),
  })));
}

// ---- Quota ----

/** The subjects whose usage a card's purchases count toward (D32, D45). */
/** A consumer card (subject USER, managed-balance model) measures the card alone, like a company card. */
function usageSubjectsOfCard(card: { cardId: string; subjectType: CardFacts['subjectType'] | 'USER'; subjectId: string }): SubjectRef[] {
  const subjects: SubjectRef[] = [{ subjectType: 'CARD', subjectId: card.cardId }];
  if (card.subjectType === 'CUSTOMER') subjects.push({ subjectType: 'CUSTOMER', subjectId: card.subjectId });
  return subjects;
}

async function activeRulesBoundTo(q: Queryable, partnerId: string, subjects: SubjectRef[]): Promise<AppliedRule[]> {
  const bound = await rulesBoundTo(q, partnerId, subjects);
  return bound.filter(({ rule }) => rule.status === 'ACTIVE').map(({ rule, subjectType }) => ({ rule, scope: subjectType }));
}

const WELL_FORMED_CURRENCY = /^[A-Z]{3}$/;

/** D42: USD / HKD; another well-formed ISO code is UNSUPPORTED_CURRENCY; anything else DAPI_PARAM_INVALID. */
function quotaCurrency(value: string | undefined): CorporateCurrency | null {
  if (value === undefined) return null;
  if (!WELL_FORMED_CURRENCY.test(value)) throw paramInvalid('currency', 'must be a 3-letter ISO 4217 code: USD or HKD');
  if (!(CORPORATE_CURRENCIES as readonly string[]).includes(value)) {
    throw new ApiError('UNSUPPORTED_CURRENCY', `Currency ${value} is not supported; use USD or HKD`);
  }
  return value as CorporateCurrency;
}

/**
 * query-quota (2.11, 4.7, D46, D47). Checks in order: subjectType (SUBJECT_TYPE_NOT_ALLOWED),
 * currency (DAPI_PARAM_INVALID / UNSUPPORTED_CURRENCY), then the organization and the subject
 * (SUBJECT_INVALID for missing, another partner's, not in the organization, a TERMINATED employee
 * or a CANCELLED card; blocked cards and restricted employees can be queried).
 */
export async function queryQuota(
  deps: VelocityDeps, partnerId: string,
  input: { organizationId: string; subjectType: string; subjectId: string; currency?: string },
) {
  const subjectType = bindableSubjectType(input.subjectType);
  const currency = quotaCurrency(input.currency);
  const asOf = now(deps);
  const q = deps.db;
  const org = await organizationFacts(q, partnerId, input.organizationId);
  if (!org) throw new ApiError('SUBJECT_INVALID', `Organization ${input.organizationId} does not exist`);
  const { card } = await requireSubject(deps, q, partnerId, input.organizationId, subjectType, input.subjectId);

  const scopes: SubjectRef[] = card ? usageSubjectsOfCard(card) : [{ subjectType: 'CUSTOMER', subjectId: input.subjectId }];
  const applied = await activeRulesBoundTo(q, partnerId, scopes);
  const periods = periodWindows(await readPeriods(q, partnerId, asOf));
  const keys = Object.fromEntries(Object.entries(periods).map(([p, w]) => [p, w.periodKey])) as Record<Period, string>;
  const usage = new UsageBook(await readUsage(q, partnerId, scopes, keys));
  const subjectCurrencies = card ? card.settlementCurrencies : org.fundingCurrencies;
  const merged = mergeQuota({
    subjectType,
    applied,
    usage,
    periodKeys: keys,
    currencies: currency ? [currency] : relevantCurrencies(applied, subjectCurrencies),
    settlementCurrencies: card ? card.settlementCurrencies : null,
  });
  return { subjectType, subjectId: input.subjectId, asOfTime: asOf.toISOString(), periods, ...merged };
}

// ---- For the cards domain (D44) ----

export interface CheckRulesInput {
  partnerId: string;
  organizationId: string;
  ruleIds: string[] | null | undefined;
  settlementCurrencies: readonly string[];
  /** FOR SHARE on the rules until the caller's transaction ends (use it in the creation job). */
  lock?: boolean;
}

/** D44 rule constraints of a card application, each check over the whole array before the next. */
export async function checkRulesForCard(q: Queryable, input: CheckRulesInput): Promise<VelocityRule[]> {
  const ruleIds = input.ruleIds ?? [];
  if (ruleIds.length > RULE_IDS_PER_CARD_MAX) throw paramInvalid('ruleIds', `must hold at most ${RULE_IDS_PER_CARD_MAX} rules`);
  assertDistinct('ruleIds', ruleIds);
  if (ruleIds.length === 0) return [];
  const found = await findRules(q, input.partnerId, input.organizationId, ruleIds, input.lock ? 'share' : 'none');
  const byId = new Map(found.map((r) => [r.ruleId, r]));
  const missing = ruleIds.find((id) => !byId.has(id));
  if (missing !== undefined) throw ruleNotFound(missing);
  const rules = ruleIds.map((id) => byId.get(id)!);
  const inactive = rules.find((r) => r.status !== 'ACTIVE');
  if (inactive) throw new ApiError('VELOCITY_RULE_STATUS_INVALID', `Rule ${inactive.ruleId} is ${inactive.status}`);
  for (const rule of rules) assertSharesCurrency(rule, input.settlementCurrencies, 'the card');
  return rules;
}

/** Binds the (already checked) rules to a new card; bindings that exist are kept. */
export async function bindRulesToCard(
  q: Queryable, input: { partnerId: string; organizationId: string; ruleIds: string[]; cardId: string; now?: Date },
): Promise<void> {
  if (input.ruleIds.length === 0) return;
  const rules = await findRules(q, input.partnerId, input.organizationId, input.ruleIds);
  invariant(rules.length === new Set(input.ruleIds).size, 'bindRulesToCard: every rule belongs to the partner and organization');
  for (const rule of rules) {
    await insertBindings(q, {
      ruleId: rule.ruleId, partnerId: input.partnerId, subjectType: 'CARD', subjectIds: [input.cardId], now: input.now ?? new Date(),
    });
  }
}

// ---- For the authorization engine (D32) ----

export interface UsageInput {
  partnerId: string;
  /** The card as the cards domain has it: its holder decides whether the employee counts too (D45). */
  card: { cardId: string; subjectType: 'ORGANIZATION' | 'CUSTOMER' | 'USER'; subjectId: string };
  /** PURCHASE, or CASH_ADVANCE for the ATM / cash channel (D32). */
  control: LimitControl;
  currency: string;
  /** Positive amount (a decimal string or an Amount); never a JS number. */
  amount: Amount | string;
  /** Transactions to count; default 1. */
  count?: number;
  /** Time of the authorization; its periods (in the partner's zone then, issue 31) receive the usage. */
  at: Date;
}

/** D32: a reversal gives the amount and count back in the periods of the original authorization (`at`). */
export async function releaseUsage(q: Queryable, input: UsageInput): Promise<void> {
  const amount = typeof input.amount === 'string' ? toAmount(input.amount) : input.amount;
  const count = input.count ?? 1;
  invariant(amount.gte(0), 'usage amount is not negative');
  invariant(Number.isSafeInteger(count) && count >= 0, 'usage count is a non-negative integer');
  await giveBackUsage(q, {
    partnerId: input.partnerId, cardId: input.card.cardId, holderType: input.card.subjectType, holderId: input.card.subjectId,
    control: input.control, currency: input.currency, amount, count, at: input.at,
  });
}

// ---- The partner's time zone (issue 31) ----

/** When each period follows the zone from (a period already in the zone keeps its current row). */
export interface ZoneChange {
  period: Period;
  timeZone: string;
  effectiveFrom: Date;
}

/**
 * Issue 31: the partner's velocity periods follow `timeZone` (an IANA name the caller has checked
 * and canonicalized). Call it in the transaction that changes the partner's setting, with the
 * partner row locked. Each period switches at the end of its running instance in the zone it has
 * now, so usage already counted is neither split nor reset (docs/decisions.md); a change not yet in
 * effect is replaced, and choosing the zone a period already has cancels that period's pending change.
 * Returns, per period, the zone and the instant it is (or was) effective from.
 */
export async function scheduleTimeZone(
  q: Queryable, input: { partnerId: string; timeZone: string; now: Date },
): Promise<ZoneChange[]> {
  if (!(await databaseKnowsZone(q, input.timeZone))) {
    throw paramInvalid('timeZone', `${input.timeZone} is not a time zone this service knows; use an IANA name such as Asia/Hong_Kong`);
  }
  await deletePendingZones(q, input.partnerId, input.now);
  const changes: ZoneChange[] = [];
  for (const row of await readPeriods(q, input.partnerId, input.now)) {
    const period = periodOfColumn(row.period);
    if (row.timeZone === input.timeZone) {
      changes.push({ period, timeZone: row.timeZone, effectiveFrom: row.startsAt });
      continue;
    }
    await insertZoneChange(q, { partnerId: input.partnerId, period: row.period, effectiveFrom: row.endsAt, timeZone: input.timeZone, now: input.now });
    changes.push({ period, timeZone: input.timeZone, effectiveFrom: row.endsAt });
  }
  return changes;
}

function periodOfColumn(column: string): Period {
  const period = (Object.keys(PERIOD_COLUMN) as Period[]).find((p) => PERIOD_COLUMN[p] === column);
  invariant(period !== undefined, `known period ${column}`);
  return period;
}

export type { PeriodWindow };

// ---- For backtests of a draft rule (issue 31 section 3; the replay is the authorization engine's) ----

export interface DraftInput {
  rule: CreateRuleInput;
  bindings: { subjectType: string; subjectIds: string[] }[];
}

/** A draft rule checked as create-rule and bind-rule check it, in velocity_refusal's rule document form. */
export interface CheckedDraft {
  organizationId: string;
  /** The rule document velocity_refusal reads (ruleId DRAFT; the scope is set per authorization). */
  document: Record<string, unknown>;
  cardIds: string[];
  employeeIds: string[];
  /** The employees holding the draft's cards (employee cards) that are not among employeeIds. */
  holderIds: string[];
}

/** The rule id a backtest names the draft by in its decline reasons. */
export const DRAFT_RULE_ID = 'DRAFT';

/**
 * Issue 31 section 3: a draft rule and the subjects it would be bound to, validated exactly as
 * create-rule (the controls, then the organization: ORGANIZATION_INVALID) and bind-rule (each
 * subject type, no duplicates, each subject the partner's, in the organization and not ended:
 * SUBJECT_INVALID; a card sharing a currency with the draft's amount limits) validate them. Nothing
 * is written: the draft needs no ruleRef of its own (a ruleRef already used is accepted).
 */
export async function checkDraft(deps: VelocityDeps, q: Queryable, partnerId: string, input: DraftInput): Promise<CheckedDraft> {
  const controls = controlsFromWire(input.rule);
  const organizationId = input.rule.organizationId;
  await requireOrganization(q, partnerId, organizationId);
  const cardIds: string[] = [];
  const employeeIds: string[] = [];
  const holders = new Set<string>();
  const seenTypes = new Set<string>();
  for (const [i, binding] of input.bindings.entries()) {
    const subjectType = bindableSubjectType(binding.subjectType);
    if (seenTypes.has(subjectType)) throw paramInvalid(`bindings[${i}].subjectType`, `${subjectType} appears twice; list its subjects once`);
    seenTypes.add(subjectType);
    assertDistinct(`bindings[${i}].subjectIds`, binding.subjectIds);
    for (const subjectId of binding.subjectIds) {
      const { card } = await requireSubject(deps, q, partnerId, organizationId, subjectType, subjectId);
      if (card) assertSharesCurrency({ ...controls, ruleId: DRAFT_RULE_ID }, card.settlementCurrencies, `card ${card.cardId}`);
      if (card?.subjectType === 'CUSTOMER') holders.add(card.subjectId);
      (subjectType === 'CARD' ? cardIds : employeeIds).push(subjectId);
    }
  }
  const holderIds = [...holders].filter((id) => !employeeIds.includes(id));
  return { organizationId, document: ruleDocument(DRAFT_RULE_ID, controls), cardIds, employeeIds, holderIds };
}
