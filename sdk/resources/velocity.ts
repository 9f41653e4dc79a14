import type { LosslessNumber } from 'lossless-json';
import type { SignedHttpClient } from '../client.ts';

/** An exact amount: build one with `decimal('100.50')`; responses carry LosslessNumber (or number). */
export type VelocityAmount = LosslessNumber | number;

export type VelocityCurrency = 'USD' | 'HKD';
export type VelocityRuleStatus = 'ACTIVE' | 'INACTIVE';
export type VelocitySubjectType = 'CARD' | 'CUSTOMER';
export type VelocityFilterType = 'WHITELIST' | 'BLACKLIST';

export interface AmountLimitInput {
  currency: VelocityCurrency;
  perTransaction?: VelocityAmount | null;
  daily?: VelocityAmount | null;
  monthly?: VelocityAmount | null;
  quarterly?: VelocityAmount | null;
  yearly?: VelocityAmount | null;
}

export interface CountLimitsInput {
  daily?: number | null;
  monthly?: number | null;
  quarterly?: number | null;
  yearly?: number | null;
}

export interface LimitControlInput {
  amountLimits?: AmountLimitInput[] | null;
  countLimits?: CountLimitsInput | null;
}

export interface CashAdvanceControlInput extends LimitControlInput {
  /** false turns cash advance off; default true. */
  allowed?: boolean | null;
}

export interface FilterControlInput {
  filterType: VelocityFilterType;
  values: string[];
}

export interface ControlGroupsInput {
  purchaseControl?: LimitControlInput | null;
  cashAdvanceControl?: CashAdvanceControlInput | null;
  currencyControl?: FilterControlInput | null;
  mccControl?: FilterControlInput | null;
  geographicControl?: FilterControlInput | null;
}

export interface CreateRuleParams extends ControlGroupsInput {
  organizationId: string;
  ruleRef: string;
  ruleName: string;
  remark?: string | null;
}

export interface UpdateRuleParams extends ControlGroupsInput {
  organizationId: string;
  ruleId: string;
  ruleVersion: number;
  ruleName: string;
  remark?: string | null;
}

export interface AmountLimit {
  currency: VelocityCurrency;
  perTransaction: VelocityAmount | null;
  daily: VelocityAmount | null;
  monthly: VelocityAmount | null;
  quarterly: VelocityAmount | null;
  yearly: VelocityAmount | null;
}

export interface CountLimits {
  daily: number | null;
  monthly: number | null;
  quarterly: number | null;
  yearly: number | null;
}

export interface LimitControl {
  amountLimits: AmountLimit[];
  countLimits: CountLimits | null;
}

export interface FilterControl {
  filterType: VelocityFilterType;
  values: string[];
}

/** The velocity rule of 2.10; unconfigured groups are null. */
export interface VelocityRule {
  ruleId: string;
  ruleRef: string;
  organizationId: string;
  ruleName: string;
  remark: string | null;
  status: VelocityRuleStatus;
  ruleVersion: number;
  /** Emitted as a string (2.10). */
  bindingCount: string;
  createTime: string;
  modifyTime: string;
  purchaseControl: LimitControl | null;
  cashAdvanceControl: (LimitControl & { allowed: boolean }) | null;
  currencyControl: FilterControl | null;
  mccControl: FilterControl | null;
  geographicControl: FilterControl | null;
}

export interface VelocityRuleSummary {
  ruleId: string;
  ruleName: string;
  status: VelocityRuleStatus;
  bindingCount: string;
  modifyTime: string;
}

export interface VelocityPage<T> {
  page: number;
  pageSize: number;
  total: number;
  result: T[];
}

export interface RuleStatusChange {
  ruleId: string;
  ruleName: string;
  status: VelocityRuleStatus;
  ruleVersion: number;
  bindingCount: string;
  modifyTime: string;
}

export interface BindParams {
  organizationId: string;
  ruleId: string;
  subjectType: VelocitySubjectType;
  subjectIds: string[];
}

export interface BindingChange {
  ruleId: string;
  subjectType: VelocitySubjectType;
  subjectIds: string[];
  /** Bindings actually created (bind) or removed (unbind). */
  changed: number;
  bindingCount: string;
}

export interface RuleBinding {
  subjectType: VelocitySubjectType;
  subjectId: string;
  bindTime: string;
}

export interface SubjectRule {
  ruleId: string;
  ruleRef: string;
  ruleName: string;
  status: VelocityRuleStatus;
  ruleVersion: number;
  bindingCount: string;
  modifyTime: string;
  bindTime: string;
}

export interface AmountQuota {
  limitAmount: VelocityAmount | null;
  usedAmount: VelocityAmount;
  remainingAmount: VelocityAmount | null;
  utilizationRate: VelocityAmount | null;
  periodKey: string;
  sourceRuleId: string | null;
}

export interface CountQuota {
  limitCount: number | null;
  usedCount: number;
  remainingCount: number | null;
  utilizationRate: VelocityAmount | null;
  periodKey: string;
  sourceRuleId: string | null;
}

export interface CurrencyQuota {
  currency: VelocityCurrency;
  effective: boolean;
  ineffectiveReason: 'NOT_CARD_SETTLEMENT_CURRENCY' | null;
  perTransaction: { limitAmount: VelocityAmount | null; sourceRuleId: string | null };
  daily: AmountQuota;
  monthly: AmountQuota;
  quarterly: AmountQuota;
  yearly: AmountQuota;
}

export interface QuotaGroup {
  countLimits: { daily: CountQuota; monthly: CountQuota; quarterly: CountQuota; yearly: CountQuota };
  amountLimits: CurrencyQuota[];
}

/** query-quota answer (2.11, 4.7, D46). */
export interface Quota {
  subjectType: VelocitySubjectType;
  subjectId: string;
  asOfTime: string;
  purchase: QuotaGroup;
  cashAdvance: QuotaGroup & { allowed: boolean; sourceRuleId: string | null };
  appliedRules: { ruleId: string; ruleName: string; status: 'ACTIVE' }[];
}

const BASE = '/open-api-corp/velocity/v1';

/** Velocity rules: spend limits, bindings and quotas (2.10, 2.11, 4.7, D30-D32). */
export class VelocityResource {
  constructor(private readonly http: SignedHttpClient) {}

  /**
   * Creates a rule, ACTIVE at ruleVersion 1.
   * @example
   * const rule = await client.velocity.createRule({
   *   organizationId, ruleRef: 'travel-2026', ruleName: 'Travel',
   *   purchaseControl: { amountLimits: [{ currency: 'USD', daily: decimal('500.00') }], countLimits: { daily: 10 } },
   * });
   */
  createRule(params: CreateRuleParams): Promise<VelocityRule> {
    return this.http.call('POST', `${BASE}/create-rule`, { body: params });
  }

  /** @example const rule = await client.velocity.queryRule({ organizationId, ruleId }); */
  queryRule(params: { organizationId: string; ruleId: string }): Promise<VelocityRule> {
    return this.http.call('GET', `${BASE}/query-rule`, { query: { ...params } });
  }

  /** @example const page = await client.velocity.listRules({ organizationId, status: 'ACTIVE', page: 1, pageSize: 20 }); */
  listRules(params: { organizationId: string; status?: VelocityRuleStatus; page?: number; pageSize?: number }): Promise<VelocityPage<VelocityRuleSummary>> {
    return this.http.call('GET', `${BASE}/list-rules`, { query: { ...params } });
  }

  /**
   * Replaces the rule as a whole: absent groups are deleted, an absent remark is cleared.
   * @example const updated = await client.velocity.updateRule({ organizationId, ruleId, ruleVersion: rule.ruleVersion, ruleName: 'Travel', mccControl: { filterType: 'BLACKLIST', values: ['7995'] } });
   */
  updateRule(params: UpdateRuleParams): Promise<VelocityRule> {
    return this.http.call('POST', `${BASE}/update-rule`, { body: params });
  }

  /** @example await client.velocity.changeRuleStatus({ organizationId, ruleId, status: 'INACTIVE', ruleVersion: 2 }); */
  changeRuleStatus(params: { organizationId: string; ruleId: string; status: VelocityRuleStatus; ruleVersion: number }): Promise<RuleStatusChange> {
    return this.http.call('POST', `${BASE}/change-rule-status`, { body: params });
  }

  /** @example await client.velocity.bindRule({ organizationId, ruleId, subjectType: 'CARD', subjectIds: [cardId] }); */
  bindRule(params: BindParams): Promise<BindingChange> {
    return this.http.call('POST', `${BASE}/bind-rule`, { body: params });
  }

  /** @example await client.velocity.unbindRule({ organizationId, ruleId, subjectType: 'CUSTOMER', subjectIds: [customerId] }); */
  unbindRule(params: BindParams): Promise<BindingChange> {
    return this.http.call('POST', `${BASE}/unbind-rule`, { body: params });
  }

  /** @example const page = await client.velocity.listBindings({ organizationId, ruleId }); */
  listBindings(params: { organizationId: string; ruleId: string; subjectType?: VelocitySubjectType; page?: number; pageSize?: number }): Promise<VelocityPage<RuleBinding>> {
    return this.http.call('GET', `${BASE}/list-bindings`, { query: { ...params } });
  }

  /** @example const page = await client.velocity.listSubjectRules({ organizationId, subjectType: 'CARD', subjectId: cardId }); */
  listSubjectRules(params: { organizationId: string; subjectType: VelocitySubjectType; subjectId: string; page?: number; pageSize?: number }): Promise<VelocityPage<SubjectRule>> {
    return this.http.call('GET', `${BASE}/list-subject-rules`, { query: { ...params } });
  }

  /** @example const quota = await client.velocity.queryQuota({ organizationId, subjectType: 'CARD', subjectId: cardId, currency: 'USD' }); */
  queryQuota(params: { organizationId: string; subjectType: VelocitySubjectType; subjectId: string; currency?: VelocityCurrency }): Promise<Quota> {
    return this.http.call('GET', `${BASE}/query-quota`, { query: { ...params } });
  }
}
