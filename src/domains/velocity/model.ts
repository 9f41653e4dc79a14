import { paramInvalid } from '../../platform/errors.ts';
import { parseAmount, toDb, toWire, type Amount } from '../../platform/money.ts';
import { AMOUNT_RULES, BINDABLE_SUBJECT_TYPES, CORPORATE_CURRENCIES, FILTER_TYPES, RULE_STATUSES } from '../../../sdk/contract/velocity.ts';
import type { WireAmount } from '../../platform/http/schema.ts';

/**
 * The velocity rule model (2.10, D31): control groups, their validation from the wire, and their
 * wire view. Pure: no database, no clock.
 */

// The wire values (currencies, statuses, subject types, filter types, amount rules) are the contract's.
export { AMOUNT_RULES, BINDABLE_SUBJECT_TYPES, CORPORATE_CURRENCIES, FILTER_TYPES, RULE_STATUSES };
export type CorporateCurrency = (typeof CORPORATE_CURRENCIES)[number];
export type RuleStatus = (typeof RULE_STATUSES)[number];
export type BindableSubjectType = (typeof BINDABLE_SUBJECT_TYPES)[number];

/** Periods of D31, in the order they appear on the wire. */
export const PERIODS = ['daily', 'monthly', 'quarterly', 'yearly'] as const;
export type Period = (typeof PERIODS)[number];

/** The two limit groups; their usage is counted separately (D32: ATM / cash is cash advance). */
export type LimitControl = 'PURCHASE' | 'CASH_ADVANCE';

export type FilterType = (typeof FILTER_TYPES)[number];

export interface AmountLimit {
  currency: CorporateCurrency;
  perTransaction: Amount | null;
  daily: Amount | null;
  monthly: Amount | null;
  quarterly: Amount | null;
  yearly: Amount | null;
}

export type CountLimits = Record<Period, number | null>;

export interface LimitGroup {
  amountLimits: AmountLimit[];
  /** null when no count cap is set. */
  countLimits: CountLimits | null;
}

export interface CashAdvanceGroup extends LimitGroup {
  allowed: boolean;
}

export interface FilterGroup {
  filterType: FilterType;
  values: string[];
}

export interface RuleControls {
  purchaseControl: LimitGroup | null;
  cashAdvanceControl: CashAdvanceGroup | null;
  currencyControl: FilterGroup | null;
  mccControl: FilterGroup | null;
  geographicControl: FilterGroup | null;
}

export const CONTROL_GROUPS = ['purchaseControl', 'cashAdvanceControl', 'currencyControl', 'mccControl', 'geographicControl'] as const;

export interface VelocityRule extends RuleControls {
  ruleId: string;
  partnerId: string;
  organizationId: string;
  ruleRef: string;
  ruleName: string;
  remark: string | null;
  status: RuleStatus;
  ruleVersion: number;
  bindingCount: number;
  createdAt: Date;
  updatedAt: Date;
}

// ---- Wire input (already checked against the route schema: types, enums, lengths, decimals) ----

export interface WireAmountLimit {
  currency: string;
  perTransaction?: WireAmount | null;
  daily?: WireAmount | null;
  monthly?: WireAmount | null;
  quarterly?: WireAmount | null;
  yearly?: WireAmount | null;
}

export interface WireCountLimits {
  daily?: number | null;
  monthly?: number | null;
  quarterly?: number | null;
  yearly?: number | null;
}

export interface WireLimitGroup {
  amountLimits?: WireAmountLimit[] | null;
  countLimits?: WireCountLimits | null;
  allowed?: boolean | null;
}

export interface WireFilterGroup {
  filterType: string;
  values: string[];
}

export interface WireControls {
  purchaseControl?: WireLimitGroup | null;
  cashAdvanceControl?: WireLimitGroup | null;
  currencyControl?: WireFilterGroup | null;
  mccControl?: WireFilterGroup | null;
  geographicControl?: WireFilterGroup | null;
}

const AMOUNT_FIELDS = ['perTransaction', ...PERIODS] as const;

/** Value formats of the three filters (D31). */
const FILTER_VALUE_FORMATS: Record<'currencyControl' | 'mccControl' | 'geographicControl', { pattern: RegExp; what: string }> = {
  currencyControl: { pattern: /^[A-Z]{3}$/, what: 'an ISO 4217 alphabetic currency code' },
  mccControl: { pattern: /^\d{4}$/, what: 'a 4-digit MCC' },
  geographicControl: { pattern: /^[A-Z]{2}$/, what: 'an ISO 3166-1 alpha-2 country code' },
};

function isCorporateCurrency(value: string): value is CorporateCurrency {
  return (CORPORATE_CURRENCIES as readonly string[]).includes(value);
}

function limitGroupFromWire(field: string, wire: WireLimitGroup, cashAdvance: boolean): CashAdvanceGroup {
  const amountLimits: AmountLimit[] = [];
  const seen = new Set<string>();
  (wire.amountLimits ?? []).forEach((entry, i) => {
    const at = `${field}.amountLimits[${i}]`;
    if (!isCorporateCurrency(entry.currency)) throw paramInvalid(`${at}.currency`, 'must be one of USD, HKD');
    if (seen.has(entry.currency)) throw paramInvalid(`${at}.currency`, `duplicate currency ${entry.currency}`);
    seen.add(entry.currency);
    const limit: AmountLimit = { currency: entry.currency, perTransaction: null, daily: null, monthly: null, quarterly: null, yearly: null };
    for (const key of AMOUNT_FIELDS) {
      const value = entry[key];
      if (value !== undefined && value !== null) limit[key] = parseAmount(`${at}.${key}`, value, AMOUNT_RULES);
    }
    if (AMOUNT_FIELDS.every((key) => limit[key] === null)) {
      throw paramInvalid(at, 'must set at least one of perTransaction, daily, monthly, quarterly, yearly');
    }
    amountLimits.push(limit);
  });
  let countLimits: CountLimits | null = null;
  if (wire.countLimits) {
    const counts: CountLimits = { daily: null, monthly: null, quarterly: null, yearly: null };
    for (const period of PERIODS) {
      const value = wire.countLimits[period];
      if (value !== undefined && value !== null) counts[period] = value;
    }
    // An empty countLimits object configures nothing: it reads back as null, never as {} (2.10).
    if (PERIODS.some((p) => counts[p] !== null)) countLimits = counts;
  }
  const allowedGiven = cashAdvance && wire.allowed !== undefined && wire.allowed !== null;
  if (amountLimits.length === 0 && countLimits === null && !allowedGiven) {
    throw paramInvalid(field, cashAdvance
      ? 'must set allowed, amountLimits or countLimits'
      : 'must set amountLimits or countLimits');
  }
  return { amountLimits, countLimits, allowed: cashAdvance ? (wire.allowed ?? true) : true };
}

function filterGroupFromWire(field: keyof typeof FILTER_VALUE_FORMATS, wire: WireFilterGroup): FilterGroup {
  if (!(FILTER_TYPES as readonly string[]).includes(wire.filterType)) {
    throw paramInvalid(`${field}.filterType`, `must be one of ${FILTER_TYPES.join(', ')}`);
  }
  const format = FILTER_VALUE_FORMATS[field];
  const seen = new Set<string>();
  wire.values.forEach((value, i) => {
    if (!format.pattern.test(value)) throw paramInvalid(`${field}.values[${i}]`, `must be ${format.what}`);
    if (seen.has(value)) throw paramInvalid(`${field}.values[${i}]`, `duplicate value ${value}`);
    seen.add(value);
  });
  return { filterType: wire.filterType as FilterType, values: [...wire.values] };
}

/**
 * The five control groups of a create-rule or update-rule request. A group that is absent or
 * null is not configured; at least one must be (4.7 rule 2, D47); an empty group is rejected
 * rather than stored as {} (2.10).
 */
export function controlsFromWire(wire: WireControls): RuleControls {
  const controls: RuleControls = {
    purchaseControl: null,
    cashAdvanceControl: null,
    currencyControl: null,
    mccControl: null,
    geographicControl: null,
  };
  if (wire.purchaseControl) {
    const { amountLimits, countLimits } = limitGroupFromWire('purchaseControl', wire.purchaseControl, false);
    controls.purchaseControl = { amountLimits, countLimits };
  }
  if (wire.cashAdvanceControl) controls.cashAdvanceControl = limitGroupFromWire('cashAdvanceControl', wire.cashAdvanceControl, true);
  if (wire.currencyControl) controls.currencyControl = filterGroupFromWire('currencyControl', wire.currencyControl);
  if (wire.mccControl) controls.mccControl = filterGroupFromWire('mccControl', wire.mccControl);
  if (wire.geographicControl) controls.geographicControl = filterGroupFromWire('geographicControl', wire.geographicControl);
  if (CONTROL_GROUPS.every((g) => controls[g] === null)) {
    throw paramInvalid('controlGroups', `at least one of ${CONTROL_GROUPS.join(', ')} must be configured`);
  }
  return controls;
}

/** Currencies in which a rule caps amounts (purchase or cash advance). */
export function amountLimitCurrencies(rule: RuleControls): Set<CorporateCurrency> {
  const out = new Set<CorporateCurrency>();
  for (const group of [rule.purchaseControl, rule.cashAdvanceControl]) {
    for (const limit of group?.amountLimits ?? []) out.add(limit.currency);
  }
  return out;
}

// ---- Wire output ----

function amountLimitView(limit: AmountLimit) {
  const wire = (value: Amount | null) => (value === null ? null : toWire(value));
  return {
    currency: limit.currency,
    perTransaction: wire(limit.perTransaction),
    daily: wire(limit.daily),
    monthly: wire(limit.monthly),
    quarterly: wire(limit.quarterly),
    yearly: wire(limit.yearly),
  };
}

function limitGroupView(group: LimitGroup | null) {
  if (!group) return null;
  return { amountLimits: group.amountLimits.map(amountLimitView), countLimits: group.countLimits ? { ...group.countLimits } : null };
}

function filterGroupView(group: FilterGroup | null) {
  return group ? { filterType: group.filterType, values: [...group.values] } : null;
}

/** The complete rule object of 2.10. */
export function ruleView(rule: VelocityRule) {
  return {
    ruleId: rule.ruleId,
    ruleRef: rule.ruleRef,
    organizationId: rule.organizationId,
    ruleName: rule.ruleName,
    remark: rule.remark,
    status: rule.status,
    ruleVersion: rule.ruleVersion,
    bindingCount: String(rule.bindingCount), // 2.10: emitted as a string
    createTime: rule.createdAt.toISOString(),
    modifyTime: rule.updatedAt.toISOString(),
    purchaseControl: limitGroupView(rule.purchaseControl),
    cashAdvanceControl: rule.cashAdvanceControl
      ? { allowed: rule.cashAdvanceControl.allowed, ...limitGroupView(rule.cashAdvanceControl)! }
      : null,
    currencyControl: filterGroupView(rule.currencyControl),
    mccControl: filterGroupView(rule.mccControl),
    geographicControl: filterGroupView(rule.geographicControl),
  };
}

/** The list-rules item of 4.7. */
export function ruleSummaryView(rule: VelocityRule) {
  return {
    ruleId: rule.ruleId,
    ruleName: rule.ruleName,
    status: rule.status,
    bindingCount: String(rule.bindingCount),
    modifyTime: rule.updatedAt.toISOString(),
  };
}

/**
 * Issue 31 section 3: a rule as the document velocity_refusal (src/domains/velocity/sql/) decides
 * on, the form velocity_bound_rules builds from the rule tables: the five groups as the
 * velocity_rules columns hold them, and every amount limit with its control. Amounts are exact
 * decimal strings. The scope (CARD or CUSTOMER) is added per binding by the caller.
 */
export function ruleDocument(ruleId: string, c: RuleControls): Record<string, unknown> {
  const amount = (v: Amount | null) => (v === null ? null : toDb(v));
  const limits = (control: LimitControl, group: LimitGroup | null) => (group?.amountLimits ?? []).map((l) => ({
    control, currency: l.currency, perTransaction: amount(l.perTransaction), daily: amount(l.daily),
    monthly: amount(l.monthly), quarterly: amount(l.quarterly), yearly: amount(l.yearly),
  }));
  return {
    ruleId,
    purchaseControl: c.purchaseControl ? { countLimits: c.purchaseControl.countLimits } : null,
    cashAdvanceControl: c.cashAdvanceControl ? { allowed: c.cashAdvanceControl.allowed, countLimits: c.cashAdvanceControl.countLimits } : null,
    currencyControl: c.currencyControl,
    mccControl: c.mccControl,
    geographicControl: c.geographicControl,
    amountLimits: [...limits('PURCHASE', c.purchaseControl), ...limits('CASH_ADVANCE', c.cashAdvanceControl)],
  };
}
