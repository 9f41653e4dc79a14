/**
 * THE TEST ORACLE of the velocity decision and usage (issue 33): a TypeScript model of D31, D32
 * and D45 and of the stage order of docs/authorizations.md, written from the spec, not from the
 * SQL. Production never runs it (the service decides in card_velocity_refusal and counts usage in
 * card_authorize / velocity_usage_give_back, all in the database); its only user is
 * test/velocity-oracle.test.ts, which feeds the same random rules and transactions to the service
 * and to this model and compares every decision and usage figure. Nothing under src/ may import
 * it (test/architecture-boundaries.test.ts).
 *
 * Money is integer cents (amounts and caps have at most 2 decimals here); never a JS float.
 */

export type Control = 'PURCHASE' | 'CASH_ADVANCE';
export type Scope = 'CARD' | 'CUSTOMER';
export type FilterType = 'WHITELIST' | 'BLACKLIST';
export const PERIODS = ['DAILY', 'MONTHLY', 'QUARTERLY', 'YEARLY'] as const;
export type PeriodName = (typeof PERIODS)[number];
/** Amount caps are checked per transaction first, then per period. */
const AMOUNT_CAPS = ['PER_TRANSACTION', ...PERIODS] as const;
const WIRE_PERIOD = { PER_TRANSACTION: 'perTransaction', DAILY: 'daily', MONTHLY: 'monthly', QUARTERLY: 'quarterly', YEARLY: 'yearly' } as const;

export interface FilterGroup { filterType: FilterType; values: string[] }
export interface AmountLimitCents { currency: string; perTransaction?: number; daily?: number; monthly?: number; quarterly?: number; yearly?: number }
export interface CountLimits { daily?: number; monthly?: number; quarterly?: number; yearly?: number }
export interface LimitGroup { amountLimits: AmountLimitCents[]; countLimits?: CountLimits }

/** A rule as the partner configured it (the wire groups, amounts in cents). */
export interface OracleRule {
  ruleId: string;
  active: boolean;
  purchaseControl?: LimitGroup;
  cashAdvanceControl?: LimitGroup & { allowed: boolean };
  currencyControl?: FilterGroup;
  mccControl?: FilterGroup;
  geographicControl?: FilterGroup;
}

/** A card: an employee card counts usage toward its employee too, a company card only toward itself (D45). */
export interface OracleCard { cardId: string; employeeId: string | null }

export interface OracleTransaction {
  card: OracleCard;
  /** ATM is cash advance, everything else purchase (D32). */
  control: Control;
  /** The transaction currency (the currency filter), the MCC and the merchant country (the other filters). */
  currency: string;
  mcc: string;
  country: string;
  /** Caps and usage are in the billing currency (docs/authorizations.md). */
  billingCents: number;
  billingCurrency: string;
  /** UTC instant of the authorization. */
  at: Date;
}

// ---- Filters (D31: whitelists intersect, blacklists unite) ----

export interface EffectiveFilter {
  /** null when no applied rule whitelists this dimension. */
  whitelist: Set<string> | null;
  blacklist: Set<string>;
}

export function mergeFilters(groups: (FilterGroup | undefined)[]): EffectiveFilter {
  let whitelist: Set<string> | null = null;
  const blacklist = new Set<string>();
  for (const group of groups) {
    if (!group) continue;
    if (group.filterType === 'BLACKLIST') {
      for (const v of group.values) blacklist.add(v);
    } else {
      const values = new Set<string>(group.values);
      whitelist = whitelist === null ? values : new Set([...(whitelist as Set<string>)].filter((v) => values.has(v)));
    }
  }
  return { whitelist, blacklist };
}

export function filterAllows(filter: EffectiveFilter, value: string): boolean {
  return (filter.whitelist === null || filter.whitelist.has(value)) && !filter.blacklist.has(value);
}

// ---- Period keys (2.11, D11: UTC) ----

export function periodKey(period: PeriodName, at: Date): string {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth() + 1;
  const pad = (n: number) => String(n).padStart(2, '0');
  switch (period) {
    case 'DAILY': return `${y}${pad(m)}${pad(at.getUTCDate())}`;
    case 'MONTHLY': return `${y}${pad(m)}`;
    case 'QUARTERLY': return `${y}Q${Math.ceil(m / 3)}`;
    case 'YEARLY': return `${y}`;
  }
}

// ---- The model ----

interface Binding { ruleId: string; scope: Scope; subjectId: string }

export class VelocityOracle {
  /** In creation order. */
  private readonly rules: OracleRule[] = [];
  private readonly bindings: Binding[] = [];
  private readonly usage = new Map<string, { cents: number; count: number }>();

  addRule(rule: OracleRule): void {
    this.rules.push(rule);
  }

  setActive(ruleId: string, active: boolean): void {
    this.rules.find((r) => r.ruleId === ruleId)!.active = active;
  }

  bind(ruleId: string, scope: Scope, subjectId: string): void {
    if (!this.bindings.some((b) => b.ruleId === ruleId && b.scope === scope && b.subjectId === subjectId)) {
      this.bindings.push({ ruleId, scope, subjectId });
    }
  }

  /** The subjects whose usage a transaction on the card counts toward (D32, D45). */
  static subjectsOf(card: OracleCard): { scope: Scope; subjectId: string }[] {
    return card.employeeId === null
      ? [{ scope: 'CARD', subjectId: card.cardId }]
      : [{ scope: 'CARD', subjectId: card.cardId }, { scope: 'CUSTOMER', subjectId: card.employeeId }];
  }

  /** ACTIVE rules bound to the card or its employee, in rule creation order, each with the subject whose usage it measures. */
  private applied(card: OracleCard): { rule: OracleRule; scope: Scope; subjectId: string }[] {
    const subjects = VelocityOracle.subjectsOf(card);
    const out: { rule: OracleRule; scope: Scope; subjectId: string }[] = [];
    for (const rule of this.rules) {
      if (!rule.active) continue;
      for (const s of subjects) {
        if (this.bindings.some((b) => b.ruleId === rule.ruleId && b.scope === s.scope && b.subjectId === s.subjectId)) {
          out.push({ rule, ...s });
        }
      }
    }
    return out;
  }

  private key(scope: Scope, subjectId: string, control: Control, currency: string, period: PeriodName, at: Date): string {
    return `${scope}|${subjectId}|${control}|${currency}|${period}|${periodKey(period, at)}`;
  }

  /** Usage of a subject in the period of `at`: the amount in one currency, the count over every currency. */
  used(scope: Scope, subjectId: string, control: Control, currency: string, period: PeriodName, at: Date): { cents: number; count: number } {
    const cents = this.usage.get(this.key(scope, subjectId, control, currency, period, at))?.cents ?? 0;
    let count = 0;
    const prefix = `${scope}|${subjectId}|${control}|`;
    const suffix = `|${period}|${periodKey(period, at)}`;
    for (const [k, v] of this.usage) if (k.startsWith(prefix) && k.endsWith(suffix)) count += v.count;
    return { cents, count };
  }

  /**
   * The velocity decline of a transaction, 'REASON:detail', or null when velocity allows it.
   * docs/authorizations.md stage 4: the rules in creation order, each checked for cash advance,
   * currency, MCC and country; then amount caps (per transaction, then each period) of every rule;
   * then count caps. Whether the filters allow is the D31 merge (whitelists intersect, blacklists
   * unite); the rule named is the first one in creation order that refuses.
   */
  decide(tx: OracleTransaction): string | null {
    const applied = this.applied(tx.card);
    const filters = [
      { reason: 'CURRENCY_NOT_ALLOWED', group: (r: OracleRule) => r.currencyControl, value: tx.currency },
      { reason: 'MCC_NOT_ALLOWED', group: (r: OracleRule) => r.mccControl, value: tx.mcc },
      { reason: 'COUNTRY_NOT_ALLOWED', group: (r: OracleRule) => r.geographicControl, value: tx.country },
    ];
    const cashClosed = tx.control === 'CASH_ADVANCE' && applied.some(({ rule }) => rule.cashAdvanceControl?.allowed === false);
    const filtersAllow = filters.every((f) => filterAllows(mergeFilters(applied.map(({ rule }) => f.group(rule))), f.value));
    if (cashClosed || !filtersAllow) {
      for (const { rule } of applied) {
        if (tx.control === 'CASH_ADVANCE' && rule.cashAdvanceControl?.allowed === false) return `CASH_ADVANCE_NOT_ALLOWED:${rule.ruleId}`;
        for (const f of filters) {
          if (!filterAllows(mergeFilters([f.group(rule)]), f.value)) return `${f.reason}:${rule.ruleId}`;
        }
      }
      throw new Error('oracle: the merged filters refuse but no single rule does');
    }
    const group = (rule: OracleRule) => (tx.control === 'PURCHASE' ? rule.purchaseControl : rule.cashAdvanceControl);
    for (const { rule, scope, subjectId } of applied) {
      const limit = group(rule)?.amountLimits.find((l) => l.currency === tx.billingCurrency);
      if (!limit) continue;
      for (const cap of AMOUNT_CAPS) {
        const capCents = limit[WIRE_PERIOD[cap]];
        if (capCents === undefined) continue;
        const used = cap === 'PER_TRANSACTION' ? 0 : this.used(scope, subjectId, tx.control, tx.billingCurrency, cap, tx.at).cents;
        if (used + tx.billingCents > capCents) return `VELOCITY_LIMIT_EXCEEDED:${rule.ruleId}:${cap}`;
      }
    }
    for (const { rule, scope, subjectId } of applied) {
      const counts = group(rule)?.countLimits;
      if (!counts) continue;
      for (const period of PERIODS) {
        const cap = counts[WIRE_PERIOD[period]];
        if (cap === undefined) continue;
        if (this.used(scope, subjectId, tx.control, tx.billingCurrency, period, tx.at).count + 1 > cap) {
          return `VELOCITY_LIMIT_EXCEEDED:${rule.ruleId}:${period}_COUNT`;
        }
      }
    }
    return null;
  }

  /** D32: an approval adds its amount and one count to every period of the card and of its employee. */
  record(tx: OracleTransaction): void {
    this.add(tx, tx.billingCents, 1);
  }

  /** D32: a reversal (or expiry) gives amount and count back in the periods of the original authorization, never below zero. */
  giveBack(tx: OracleTransaction, cents: number, count: number): void {
    this.add(tx, -cents, -count);
  }

  private add(tx: OracleTransaction, cents: number, count: number): void {
    for (const { scope, subjectId } of VelocityOracle.subjectsOf(tx.card)) {
      for (const period of PERIODS) {
        const k = this.key(scope, subjectId, tx.control, tx.billingCurrency, period, tx.at);
        const row = this.usage.get(k);
        if (!row && cents < 0) continue;
        const next = row ?? { cents: 0, count: 0 };
        next.cents = Math.max(next.cents + cents, 0);
        next.count = Math.max(next.count + count, 0);
        this.usage.set(k, next);
      }
    }
  }
}
