import { Decimal } from 'decimal.js';
import { amount, toWire, ZERO, type Amount } from '../../platform/money.ts';
import {
  CORPORATE_CURRENCIES, type BindableSubjectType, type CorporateCurrency, type LimitControl,
  type Period, type VelocityRule,
} from './model.ts';

/**
 * Merging of the rules that apply to a subject (4.7 rule 1, D31, D46), and the quota structure of
 * 2.11. Pure: the caller loads the rules, the usage and the subject's currencies.
 *
 * Each applied rule is measured against the usage of the subject it is bound to: a rule bound to a
 * card caps that card's usage, a rule bound to an employee caps the employee's usage (every card
 * of the employee adds to it, D32). Per dimension (group, currency, period) the effective cap is
 * the strictest one: the candidate leaving the least headroom (cap minus the usage it measures),
 * then the smaller cap, then the older rule. When every candidate measures the same usage (a card
 * query with rules on the card, or an employee query) that is simply the smallest cap.
 */

/** A rule in force for the queried subject, and whose usage it measures. */
export interface AppliedRule {
  rule: VelocityRule;
  scope: BindableSubjectType;
}

export interface UsageRow {
  subjectType: BindableSubjectType;
  control: LimitControl;
  currency: string;
  period: Period;
  usedAmount: Amount;
  usedCount: number;
}

/** Usage of the current periods, per scope. */
export class UsageBook {
  private readonly amounts = new Map<string, Amount>();
  private readonly counts = new Map<string, number>();

  constructor(rows: UsageRow[]) {
    for (const row of rows) {
      const amountKey = `${row.subjectType}|${row.control}|${row.currency}|${row.period}`;
      this.amounts.set(amountKey, (this.amounts.get(amountKey) ?? ZERO).plus(row.usedAmount));
      // Count caps span currencies (D31 countLimits has no currency).
      const countKey = `${row.subjectType}|${row.control}|${row.period}`;
      this.counts.set(countKey, (this.counts.get(countKey) ?? 0) + row.usedCount);
    }
  }

  amount(scope: BindableSubjectType, control: LimitControl, currency: string, period: Period): Amount {
    return this.amounts.get(`${scope}|${control}|${currency}|${period}`) ?? ZERO;
  }

  count(scope: BindableSubjectType, control: LimitControl, period: Period): number {
    return this.counts.get(`${scope}|${control}|${period}`) ?? 0;
  }
}

interface Candidate {
  cap: Amount;
  used: Amount;
  ruleId: string;
  order: number;
}

/** The binding candidate of one dimension, or null when no applied rule caps it. */
function strictest(candidates: Candidate[]): Candidate | null {
  let best: Candidate | null = null;
  for (const c of candidates) {
    if (!best) {
      best = c;
      continue;
    }
    const headroom = c.cap.minus(c.used).comparedTo(best.cap.minus(best.used));
    const cap = c.cap.comparedTo(best.cap);
    if (headroom < 0 || (headroom === 0 && (cap < 0 || (cap === 0 && c.order < best.order)))) best = c;
  }
  return best;
}

/** 2.11 / D46: a percentage rounded half-up to two decimals, a JSON number. */
export function utilizationRate(used: Amount, cap: Amount): Amount {
  return used.div(cap).mul(100).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
}

function groupOf(rule: VelocityRule, control: LimitControl) {
  return control === 'PURCHASE' ? rule.purchaseControl : rule.cashAdvanceControl;
}

export interface QuotaInput {
  subjectType: BindableSubjectType;
  /** ACTIVE rules only, oldest first. */
  applied: AppliedRule[];
  usage: UsageBook;
  periodKeys: Record<Period, string>;
  /** Currencies shown: the requested one, or every relevant one (D46). */
  currencies: CorporateCurrency[];
  /** CARD: the card's settlement currencies; null for CUSTOMER (every currency is effective). */
  settlementCurrencies: readonly string[] | null;
}

function amountNode(input: QuotaInput, control: LimitControl, currency: CorporateCurrency, period: Period) {
  const candidates: Candidate[] = [];
  input.applied.forEach(({ rule, scope }, order) => {
    const limit = groupOf(rule, control)?.amountLimits.find((l) => l.currency === currency);
    const cap = limit?.[period] ?? null;
    if (cap) candidates.push({ cap, used: input.usage.amount(scope, control, currency, period), ruleId: rule.ruleId, order });
  });
  const chosen = strictest(candidates);
  const used = chosen ? chosen.used : input.usage.amount(input.subjectType, control, currency, period);
  return {
    limitAmount: chosen ? toWire(chosen.cap) : null,
    usedAmount: toWire(used),
    remainingAmount: chosen ? toWire(chosen.cap.minus(used)) : null,
    utilizationRate: chosen ? toWire(utilizationRate(used, chosen.cap)) : null,
    periodKey: input.periodKeys[period],
    sourceRuleId: chosen ? chosen.ruleId : null,
  };
}

function countNode(input: QuotaInput, control: LimitControl, period: Period) {
  const candidates: Candidate[] = [];
  input.applied.forEach(({ rule, scope }, order) => {
    const cap = groupOf(rule, control)?.countLimits?.[period] ?? null;
    if (cap !== null) candidates.push({ cap: amount(cap), used: amount(input.usage.count(scope, control, period)), ruleId: rule.ruleId, order });
  });
  const chosen = strictest(candidates);
  const used = chosen ? chosen.used : amount(input.usage.count(input.subjectType, control, period));
  return {
    limitCount: chosen ? chosen.cap.toNumber() : null,
    usedCount: used.toNumber(),
    remainingCount: chosen ? chosen.cap.minus(used).toNumber() : null,
    utilizationRate: chosen ? toWire(utilizationRate(used, chosen.cap)) : null,
    periodKey: input.periodKeys[period],
    sourceRuleId: chosen ? chosen.ruleId : null,
  };
}

function perTransactionNode(input: QuotaInput, control: LimitControl, currency: CorporateCurrency) {
  let best: { cap: Amount; ruleId: string } | null = null;
  for (const { rule } of input.applied) {
    const cap = groupOf(rule, control)?.amountLimits.find((l) => l.currency === currency)?.perTransaction ?? null;
    if (cap && (!best || cap.lt(best.cap))) best = { cap, ruleId: rule.ruleId };
  }
  return { limitAmount: best ? toWire(best.cap) : null, sourceRuleId: best ? best.ruleId : null };
}

function limitsGroup(input: QuotaInput, control: LimitControl) {
  const countLimits = {
    daily: countNode(input, control, 'daily'),
    monthly: countNode(input, control, 'monthly'),
    quarterly: countNode(input, control, 'quarterly'),
    yearly: countNode(input, control, 'yearly'),
  };
  const amountLimits = input.currencies.map((currency) => {
    const effective = input.settlementCurrencies === null || input.settlementCurrencies.includes(currency);
    return {
      currency,
      effective,
      ineffectiveReason: effective ? null : 'NOT_CARD_SETTLEMENT_CURRENCY',
      perTransaction: perTransactionNode(input, control, currency),
      daily: amountNode(input, control, currency, 'daily'),
      monthly: amountNode(input, control, currency, 'monthly'),
      quarterly: amountNode(input, control, currency, 'quarterly'),
      yearly: amountNode(input, control, currency, 'yearly'),
    };
  });
  return { countLimits, amountLimits };
}

/** The purchase, cashAdvance and appliedRules parts of the query-quota answer (2.11, 4.7). */
export function mergeQuota(input: QuotaInput) {
  const closing = input.applied.find(({ rule }) => rule.cashAdvanceControl?.allowed === false);
  const appliedRules: { ruleId: string; ruleName: string; status: string }[] = [];
  const listed = new Set<string>();
  for (const { rule } of input.applied) {
    if (listed.has(rule.ruleId)) continue;
    listed.add(rule.ruleId);
    appliedRules.push({ ruleId: rule.ruleId, ruleName: rule.ruleName, status: rule.status });
  }
  return {
    purchase: limitsGroup(input, 'PURCHASE'),
    cashAdvance: {
      allowed: !closing,
      sourceRuleId: closing ? closing.rule.ruleId : null,
      ...limitsGroup(input, 'CASH_ADVANCE'),
    },
    appliedRules,
  };
}

/** D46: currencies in the applied rules' amount limits united with the subject's own currencies. */
export function relevantCurrencies(applied: AppliedRule[], subjectCurrencies: readonly string[]): CorporateCurrency[] {
  const set = new Set<string>(subjectCurrencies);
  for (const { rule } of applied) {
    for (const group of [rule.purchaseControl, rule.cashAdvanceControl]) {
      for (const limit of group?.amountLimits ?? []) set.add(limit.currency);
    }
  }
  return CORPORATE_CURRENCIES.filter((c) => set.has(c));
}
