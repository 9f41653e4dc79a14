import type { Static } from 'typebox';
import { paginate, type CallOptions, type RequestOf, type SignedHttpClient } from '../client.ts';
import type {
  AmountLimitIn, AmountLimitOut, AmountQuota as AmountQuotaSchema, BindingChangeOut, BindingOut, BindingPageOut, BindRuleBody,
  CashAdvanceGroupIn, ChangeRuleStatusBody, ControlGroups, CountLimitsIn, CountLimitsOut, CountQuota as CountQuotaSchema, CreateRuleBody, PeriodWindowOut,
  CurrencyQuotaOut, FilterOut, LimitGroupIn, ListBindingsQuery, ListRulesQuery, QueryQuotaQuery, QuotaGroupOut, QuotaOut, RuleKeyQuery,
  RuleOut, RulePageOut, RuleSummaryOut, StatusChangeOut, SubjectQuery, SubjectRuleOut, SubjectRulePageOut, UpdateRuleBody,
  BINDABLE_SUBJECT_TYPES, CORPORATE_CURRENCIES, FILTER_TYPES, RULE_STATUSES, BacktestBody, BacktestKeyBody, BacktestOut, BacktestResultOut,
} from '../contract/velocity.ts';
import type { WireAmount } from '../contract/wire.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/velocity.ts).

/** An exact amount: build one with `decimal('100.50')`; responses carry LosslessNumber (or number). */
export type VelocityAmount = WireAmount;

export type VelocityCurrency = (typeof CORPORATE_CURRENCIES)[number];
export type VelocityRuleStatus = (typeof RULE_STATUSES)[number];
export type VelocitySubjectType = (typeof BINDABLE_SUBJECT_TYPES)[number];
export type VelocityFilterType = (typeof FILTER_TYPES)[number];

export type AmountLimitInput = Static<typeof AmountLimitIn>;
export type CountLimitsInput = Static<typeof CountLimitsIn>;
export type LimitControlInput = Static<typeof LimitGroupIn>;
/** `allowed: false` turns cash advance off; default true. */
export type CashAdvanceControlInput = Static<typeof CashAdvanceGroupIn>;
export type FilterControlInput = NonNullable<ControlGroupsInput['mccControl']>;
export type ControlGroupsInput = Static<typeof ControlGroups>;

export type CreateRuleParams = RequestOf<typeof CreateRuleBody>;
export type UpdateRuleParams = RequestOf<typeof UpdateRuleBody>;

export type AmountLimit = Static<typeof AmountLimitOut>;
export type CountLimits = NonNullable<Static<typeof CountLimitsOut>>;
export type LimitControl = NonNullable<VelocityRule['purchaseControl']>;
export type FilterControl = NonNullable<Static<typeof FilterOut>>;

/** A velocity rule (2.10); unconfigured groups are null; bindingCount is emitted as a string. */
export type VelocityRule = Static<typeof RuleOut>;
export type VelocityRuleSummary = Static<typeof RuleSummaryOut>;

/** The paging envelope (D9). */
export interface VelocityPage<T> {
  page: number;
  pageSize: number;
  total: number;
  result: T[];
}

export type RuleStatusChange = Static<typeof StatusChangeOut>;
/** subjectType CARD or CUSTOMER (another value is SUBJECT_TYPE_NOT_ALLOWED). */
export type BindParams = RequestOf<typeof BindRuleBody>;
/** `changed`: bindings actually created (bind) or removed (unbind). */
export type BindingChange = Static<typeof BindingChangeOut>;
export type RuleBinding = Static<typeof BindingOut>;
export type SubjectRule = Static<typeof SubjectRuleOut>;
export type AmountQuota = Static<typeof AmountQuotaSchema>;
export type CountQuota = Static<typeof CountQuotaSchema>;
export type CurrencyQuota = Static<typeof CurrencyQuotaOut>;
export type QuotaGroup = Static<typeof QuotaGroupOut>;
/** query-quota answer (2.11, 4.7, D46). */
export type Quota = Static<typeof QuotaOut>;
/** One velocity period of a quota: key, time zone, start and end with offset (issue 31). */
export type PeriodWindow = Static<typeof PeriodWindowOut>;

/** A backtest of a draft rule: the draft (a create-rule body), its subjects, the window and the mode. */
export type BacktestParams = RequestOf<typeof BacktestBody>;
/** A backtest with its progress and its figures (final once status is COMPLETED). */
export type Backtest = Static<typeof BacktestOut>;
export type BacktestResult = Static<typeof BacktestResultOut>;

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
  createRule(params: CreateRuleParams, options?: CallOptions): Promise<VelocityRule> {
    return this.http.call('POST', `${BASE}/create-rule`, { body: params }, options);
  }

  /** @example const rule = await client.velocity.queryRule({ organizationId, ruleId }); */
  queryRule(params: Static<typeof RuleKeyQuery>, options?: CallOptions): Promise<VelocityRule> {
    return this.http.call('GET', `${BASE}/query-rule`, { query: { ...params } }, options);
  }

  /** @example const page = await client.velocity.listRules({ organizationId, status: 'ACTIVE', page: 1, pageSize: 20 }); */
  listRules(params: Static<typeof ListRulesQuery>, options?: CallOptions): Promise<Static<typeof RulePageOut>> {
    return this.http.call('GET', `${BASE}/list-rules`, { query: { ...params } }, options);
  }
  /** Every rule of a company, page after page (async iterator). */
  listAllRules(params: Omit<Static<typeof ListRulesQuery>, 'page'>, options?: CallOptions) {
    return paginate((page) => this.listRules({ ...params, page, pageSize: params.pageSize ?? 100 }, options));
  }


  /**
   * Replaces the rule as a whole: absent groups are deleted, an absent remark is cleared.
   * @example const updated = await client.velocity.updateRule({ organizationId, ruleId, ruleVersion: rule.ruleVersion, ruleName: 'Travel', mccControl: { filterType: 'BLACKLIST', values: ['7995'] } });
   */
  updateRule(params: UpdateRuleParams, options?: CallOptions): Promise<VelocityRule> {
    return this.http.call('POST', `${BASE}/update-rule`, { body: params }, options);
  }

  /** @example await client.velocity.changeRuleStatus({ organizationId, ruleId, status: 'INACTIVE', ruleVersion: 2 }); */
  changeRuleStatus(params: RequestOf<typeof ChangeRuleStatusBody>, options?: CallOptions): Promise<RuleStatusChange> {
    return this.http.call('POST', `${BASE}/change-rule-status`, { body: params }, options);
  }

  /** @example await client.velocity.bindRule({ organizationId, ruleId, subjectType: 'CARD', subjectIds: [cardId] }); */
  bindRule(params: BindParams, options?: CallOptions): Promise<BindingChange> {
    return this.http.call('POST', `${BASE}/bind-rule`, { body: params }, options);
  }

  /** @example await client.velocity.unbindRule({ organizationId, ruleId, subjectType: 'CUSTOMER', subjectIds: [customerId] }); */
  unbindRule(params: BindParams, options?: CallOptions): Promise<BindingChange> {
    return this.http.call('POST', `${BASE}/unbind-rule`, { body: params }, options);
  }

  /** @example const page = await client.velocity.listBindings({ organizationId, ruleId }); */
  listBindings(params: Static<typeof ListBindingsQuery>, options?: CallOptions): Promise<Static<typeof BindingPageOut>> {
    return this.http.call('GET', `${BASE}/list-bindings`, { query: { ...params } }, options);
  }

  /** @example const page = await client.velocity.listSubjectRules({ organizationId, subjectType: 'CARD', subjectId: cardId }); */
  listSubjectRules(params: Static<typeof SubjectQuery>, options?: CallOptions): Promise<Static<typeof SubjectRulePageOut>> {
    return this.http.call('GET', `${BASE}/list-subject-rules`, { query: { ...params } }, options);
  }

  /** @example const quota = await client.velocity.queryQuota({ organizationId, subjectType: 'CARD', subjectId: cardId, currency: 'USD' }); */
  queryQuota(params: Static<typeof QueryQuotaQuery>, options?: CallOptions): Promise<Quota> {
    return this.http.call('GET', `${BASE}/query-quota`, { query: { ...params } }, options);
  }

  /**
   * Backtests a draft rule: replays the recorded authorizations of the subjects over a past window
   * (up to 90 days) and reports what the draft would have declined. Nothing is created or changed.
   * The backtest runs as a job: poll `backtestDetail` until `status` is COMPLETED (or FAILED).
   * At most 5 of your backtests (the service's BACKTEST_MAX_PENDING_PER_PARTNER) may be PENDING or
   * RUNNING: one more throws SYS_RATE_LIMITED (HTTP 429, Retry-After 60 s, beyond the default
   * maxRetryDelayMs so not retried) and creates nothing; start it again once one has finished.
   * @example
   * const bt = await client.velocity.backtest({
   *   rule: { organizationId, ruleRef: 'draft-travel', ruleName: 'Travel', purchaseControl: { amountLimits: [{ currency: 'USD', daily: decimal('300.00') }] } },
   *   bindings: [{ subjectType: 'CARD', subjectIds: [cardId] }],
   *   startTime: '2026-10-01T00:00:00.000Z', endTime: '2026-11-01T00:00:00.000Z', mode: 'COMBINED',
   * });
   */
  backtest(params: BacktestParams, options?: CallOptions): Promise<Backtest> {
    return this.http.call('POST', `${BASE}/backtest`, { body: params }, options);
  }

  /** @example const detail = await client.velocity.backtestDetail({ backtestId: bt.backtestId }); */
  backtestDetail(params: RequestOf<typeof BacktestKeyBody>, options?: CallOptions): Promise<Backtest> {
    return this.http.call('POST', `${BASE}/backtest-detail`, { body: params }, options);
  }
}
