import { Type } from 'typebox';
import { CORPORATE_SCALE, IsoTime, Literals, Money, Page, PagingQuery, WireNumber } from './wire.ts';

/** Request and response schemas of the velocity routes (2.10, 2.11, 4.7, D30, D31). */

/** Currencies of corporate amount limits and quotas (2.11, 4.7). */
export const CORPORATE_CURRENCIES = ['USD', 'HKD'] as const;
export const RULE_STATUSES = ['ACTIVE', 'INACTIVE'] as const;
/** Subjects a rule can be bound to and quotas read for (D30, 4.7). */
export const BINDABLE_SUBJECT_TYPES = ['CARD', 'CUSTOMER'] as const;
export const FILTER_TYPES = ['WHITELIST', 'BLACKLIST'] as const;
/** Amount limits: positive, two decimals (D4). */
export const AMOUNT_RULES = { maxScale: CORPORATE_SCALE, sign: 'positive' } as const;
/** Rules named by one card application: a card needs few; the bound keeps the checks cheap. */
export const RULE_IDS_PER_CARD_MAX = 50;

// Bounds of section 8 and 4.7.
const ORGANIZATION_ID_MAX = 36; // 4.7: up to 36 on velocity endpoints
const RULE_ID_MAX = 32; // 2.10
const RULE_NAME_MAX = 64; // 2.10
const REMARK_MAX = 256; // 2.10
const RULE_REF_MAX = 64; // not shown in the spec; the partner's own identifier, like organizationRef
const SUBJECT_ID_MAX = 36; // 4.7 query-quota subjectId
const SUBJECT_TYPE_MAX = 32; // any word; values other than CARD / CUSTOMER are SUBJECT_TYPE_NOT_ALLOWED
/** Subjects per bind or unbind call: one request stays well under the 64 KiB body limit. */
export const SUBJECT_IDS_MAX = 100;
/** Count caps are integers; a billion transactions a period is effectively uncapped. */
const COUNT_LIMIT_MAX = 1_000_000_000;
/** ruleVersion is a PostgreSQL integer. */
const RULE_VERSION_MAX = 2_147_483_647;
/** Entries of amountLimits: only USD and HKD exist, so more than two is a duplicate; allow room for a clear message. */
const AMOUNT_LIMITS_MAX = 10;
/** Filter sizes: every MCC (about 1000 exist), every country, every ISO 4217 currency. */
const FILTER_VALUES_MAX = { currency: 300, mcc: 1000, country: 300 };

export const OrganizationId = Type.String({ minLength: 1, maxLength: ORGANIZATION_ID_MAX, description: 'Owning organization, up to 36 characters' });
export const RuleId = Type.String({ minLength: 1, maxLength: RULE_ID_MAX, description: 'Rule identifier, up to 32 characters' });
const RuleName = Type.String({ minLength: 1, maxLength: RULE_NAME_MAX, description: 'Up to 64 characters' });
const Remark = Type.Union([Type.String({ maxLength: REMARK_MAX }), Type.Null()], { description: 'Up to 256 characters; absent or null is stored as null' });
const RuleVersion = Type.Integer({ minimum: 1, maximum: RULE_VERSION_MAX, description: 'The current ruleVersion (optimistic lock)' });
export const SubjectTypeText = Type.String({ minLength: 1, maxLength: SUBJECT_TYPE_MAX, description: 'CARD or CUSTOMER; any other value is SUBJECT_TYPE_NOT_ALLOWED' });
const SubjectId = Type.String({ minLength: 1, maxLength: SUBJECT_ID_MAX });

const NullableMoney = Type.Union([Money(AMOUNT_RULES), Type.Null()]);
const NullableCount = Type.Union([Type.Integer({ minimum: 1, maximum: COUNT_LIMIT_MAX }), Type.Null()]);

export const AmountLimitIn = Type.Object({
  currency: Type.Enum([...CORPORATE_CURRENCIES], { description: 'USD or HKD, unique within amountLimits' }),
  perTransaction: Type.Optional(NullableMoney),
  daily: Type.Optional(NullableMoney),
  monthly: Type.Optional(NullableMoney),
  quarterly: Type.Optional(NullableMoney),
  yearly: Type.Optional(NullableMoney),
});

export const CountLimitsIn = Type.Object({
  daily: Type.Optional(NullableCount),
  monthly: Type.Optional(NullableCount),
  quarterly: Type.Optional(NullableCount),
  yearly: Type.Optional(NullableCount),
});

export const LimitGroupIn = Type.Object({
  amountLimits: Type.Optional(Type.Union([Type.Array(AmountLimitIn, { maxItems: AMOUNT_LIMITS_MAX }), Type.Null()])),
  countLimits: Type.Optional(Type.Union([CountLimitsIn, Type.Null()])),
});

export const CashAdvanceGroupIn = Type.Object({
  allowed: Type.Optional(Type.Union([Type.Boolean({ description: 'false turns cash advance off; default true' }), Type.Null()])),
  amountLimits: LimitGroupIn.properties.amountLimits,
  countLimits: LimitGroupIn.properties.countLimits,
});

export function FilterGroupIn(maxItems: number, description: string) {
  return Type.Object({
    filterType: Type.Enum([...FILTER_TYPES]),
    values: Type.Array(Type.String({ minLength: 1, maxLength: 8 }), { minItems: 1, maxItems, description }),
  });
}

export const ControlGroupsIn = {
  purchaseControl: Type.Optional(Type.Union([LimitGroupIn, Type.Null()])),
  cashAdvanceControl: Type.Optional(Type.Union([CashAdvanceGroupIn, Type.Null()])),
  currencyControl: Type.Optional(Type.Union([FilterGroupIn(FILTER_VALUES_MAX.currency, 'ISO 4217 alphabetic codes, unique'), Type.Null()])),
  mccControl: Type.Optional(Type.Union([FilterGroupIn(FILTER_VALUES_MAX.mcc, '4-digit MCC strings, unique'), Type.Null()])),
  geographicControl: Type.Optional(Type.Union([FilterGroupIn(FILTER_VALUES_MAX.country, 'ISO 3166-1 alpha-2 merchant countries, unique'), Type.Null()])),
};

/** The five control groups of a rule as one object (the SDK's ControlGroupsInput). */
export const ControlGroups = Type.Object(ControlGroupsIn);

export const CreateRuleBody = Type.Object({
  organizationId: OrganizationId,
  ruleRef: Type.String({ minLength: 1, maxLength: RULE_REF_MAX, description: "Partner's reference, unique per organization, up to 64" }),
  ruleName: RuleName,
  remark: Type.Optional(Remark),
  ...ControlGroupsIn,
});

export const UpdateRuleBody = Type.Object({
  organizationId: OrganizationId,
  ruleId: RuleId,
  ruleVersion: RuleVersion,
  ruleName: RuleName,
  remark: Type.Optional(Remark),
  ...ControlGroupsIn,
});

export const ChangeRuleStatusBody = Type.Object({
  organizationId: OrganizationId,
  ruleId: RuleId,
  status: Type.Enum([...RULE_STATUSES]),
  ruleVersion: RuleVersion,
});

export const RuleKeyQuery = Type.Object({ organizationId: OrganizationId, ruleId: RuleId });

export const ListRulesQuery = Type.Object({
  organizationId: OrganizationId,
  status: Type.Optional(Type.Enum([...RULE_STATUSES])),
  ...PagingQuery,
});

export const BindRuleBody = Type.Object({
  organizationId: OrganizationId,
  ruleId: RuleId,
  subjectType: SubjectTypeText,
  subjectIds: Type.Array(SubjectId, { minItems: 1, maxItems: SUBJECT_IDS_MAX, description: `1 to ${SUBJECT_IDS_MAX} distinct ids` }),
});

export const ListBindingsQuery = Type.Object({
  organizationId: OrganizationId,
  ruleId: RuleId,
  subjectType: Type.Optional(Type.Enum(['CARD', 'CUSTOMER'])),
  ...PagingQuery,
});

export const SubjectQuery = Type.Object({
  organizationId: OrganizationId,
  subjectType: SubjectTypeText,
  subjectId: SubjectId,
  ...PagingQuery,
});

export const QueryQuotaQuery = Type.Object({
  organizationId: OrganizationId,
  subjectType: SubjectTypeText,
  subjectId: SubjectId,
  currency: Type.Optional(Type.String({ minLength: 1, maxLength: 16, description: 'USD or HKD; another ISO code is UNSUPPORTED_CURRENCY; omitted: every relevant currency' })),
});

// ---- Responses (documentation) ----

const Decimal = WireNumber({ description: 'Exact decimal (JSON number with its exact digits)' });
const NullableDecimal = Type.Union([Decimal, Type.Null()]);
const NullableInt = Type.Union([Type.Integer(), Type.Null()]);

const RuleStatusOut = Literals(RULE_STATUSES);
const SubjectTypeOut = Literals(BINDABLE_SUBJECT_TYPES);
const CurrencyOut = Literals(CORPORATE_CURRENCIES);

export const AmountLimitOut = Type.Object({
  currency: CurrencyOut,
  perTransaction: NullableDecimal,
  daily: NullableDecimal,
  monthly: NullableDecimal,
  quarterly: NullableDecimal,
  yearly: NullableDecimal,
});
export const CountLimitsOut = Type.Union([Type.Object({ daily: NullableInt, monthly: NullableInt, quarterly: NullableInt, yearly: NullableInt }), Type.Null()]);
export const FilterOut = Type.Union([Type.Object({ filterType: Literals(FILTER_TYPES), values: Type.Array(Type.String()) }), Type.Null()]);

export const RuleOut = Type.Object({
  ruleId: Type.String(),
  ruleRef: Type.String(),
  organizationId: Type.String(),
  ruleName: Type.String(),
  remark: Type.Union([Type.String(), Type.Null()]),
  status: RuleStatusOut,
  ruleVersion: Type.Integer(),
  bindingCount: Type.String({ description: 'Number of bound subjects, emitted as a string' }),
  createTime: IsoTime,
  modifyTime: IsoTime,
  purchaseControl: Type.Union([Type.Object({ amountLimits: Type.Array(AmountLimitOut), countLimits: CountLimitsOut }), Type.Null()]),
  cashAdvanceControl: Type.Union([Type.Object({ allowed: Type.Boolean(), amountLimits: Type.Array(AmountLimitOut), countLimits: CountLimitsOut }), Type.Null()]),
  currencyControl: FilterOut,
  mccControl: FilterOut,
  geographicControl: FilterOut,
});

export const RuleSummaryOut = Type.Object({
  ruleId: Type.String(), ruleName: Type.String(), status: RuleStatusOut, bindingCount: Type.String(), modifyTime: IsoTime,
});
export const RulePageOut = Page(RuleSummaryOut);

export const StatusChangeOut = Type.Object({
  ruleId: Type.String(), ruleName: Type.String(), status: RuleStatusOut, ruleVersion: Type.Integer(), bindingCount: Type.String(),
  modifyTime: IsoTime,
});

export const BindingChangeOut = Type.Object({
  ruleId: Type.String(), subjectType: SubjectTypeOut, subjectIds: Type.Array(Type.String()),
  changed: Type.Integer({ description: 'Bindings actually created (bind) or removed (unbind)' }),
  bindingCount: Type.String(),
});

export const BindingOut = Type.Object({ subjectType: SubjectTypeOut, subjectId: Type.String(), bindTime: IsoTime });
export const BindingPageOut = Page(BindingOut);

export const SubjectRuleOut = Type.Object({
  ruleId: Type.String(), ruleRef: Type.String(), ruleName: Type.String(), status: RuleStatusOut, ruleVersion: Type.Integer(),
  bindingCount: Type.String(), modifyTime: IsoTime, bindTime: IsoTime,
});
export const SubjectRulePageOut = Page(SubjectRuleOut);

export const AmountQuota = Type.Object({
  limitAmount: NullableDecimal, usedAmount: Decimal, remainingAmount: NullableDecimal, utilizationRate: NullableDecimal,
  periodKey: Type.String(), sourceRuleId: Type.Union([Type.String(), Type.Null()]),
});
export const CountQuota = Type.Object({
  limitCount: NullableInt, usedCount: Type.Integer(), remainingCount: NullableInt, utilizationRate: NullableDecimal,
  periodKey: Type.String(), sourceRuleId: Type.Union([Type.String(), Type.Null()]),
});
export const QuotaGroup = {
  countLimits: Type.Object({ daily: CountQuota, monthly: CountQuota, quarterly: CountQuota, yearly: CountQuota }),
  amountLimits: Type.Array(Type.Object({
    currency: CurrencyOut,
    effective: Type.Boolean(),
    ineffectiveReason: Type.Union([Type.Literal('NOT_CARD_SETTLEMENT_CURRENCY'), Type.Null()]),
    perTransaction: Type.Object({ limitAmount: NullableDecimal, sourceRuleId: Type.Union([Type.String(), Type.Null()]) }),
    daily: AmountQuota, monthly: AmountQuota, quarterly: AmountQuota, yearly: AmountQuota,
  })),
};

export const QuotaGroupOut = Type.Object(QuotaGroup);
export const CurrencyQuotaOut = QuotaGroupOut.properties.amountLimits.items;

/** One velocity period as it is counted now, in the partner's time zone (issue 31). */
export const PeriodWindowOut = Type.Object({
  periodKey: Type.String({ description: 'The key usage is counted under: YYYYMMDD, YYYYMM, YYYYQn or YYYY of the local date, followed by @ and the zone for a zone other than UTC', examples: ['20261126@Asia/Hong_Kong'] }),
  timeZone: Type.String({ description: 'IANA time zone the period follows', examples: ['Asia/Hong_Kong'] }),
  startTime: Type.String({ description: 'First instant counted, local time with offset', examples: ['2026-11-26T00:00:00.000+08:00'] }),
  endTime: Type.String({ description: 'Where the next period starts (exclusive), local time with offset', examples: ['2026-11-27T00:00:00.000+08:00'] }),
});

export const QuotaOut = Type.Object({
  subjectType: SubjectTypeOut,
  subjectId: Type.String(),
  asOfTime: IsoTime,
  periods: Type.Object({ daily: PeriodWindowOut, monthly: PeriodWindowOut, quarterly: PeriodWindowOut, yearly: PeriodWindowOut }, {
    description: "The current period of each length in the partner's time zone, with start and end",
  }),
  purchase: Type.Object(QuotaGroup),
  cashAdvance: Type.Object({ allowed: Type.Boolean(), sourceRuleId: Type.Union([Type.String(), Type.Null()]), ...QuotaGroup }),
  appliedRules: Type.Array(Type.Object({ ruleId: Type.String(), ruleName: Type.String(), status: Type.Literal('ACTIVE') })),
});

// ---- Backtests of a draft rule (issue 31 section 3) ----

/** Longest window a backtest replays. */
export const BACKTEST_WINDOW_MAX_DAYS = 90;
/** Whether the draft is judged with the rules bound at each authorization's time, or alone. */
export const BACKTEST_MODES = ['COMBINED', 'ALONE'] as const;
export const BACKTEST_STATUSES = ['PENDING', 'RUNNING', 'COMPLETED', 'FAILED'] as const;
/** Entries of the top lists and of the sample transIds in a backtest's result. */
export const BACKTEST_TOP_MAX = 10;
export const BACKTEST_SAMPLES_MAX = 20;
const BacktestId = Type.String({ minLength: 1, maxLength: 20, description: 'Backtest identifier', examples: ['btmwxdk8zq49621f23ab'] });

export const BacktestBody = Type.Object({
  // The draft rule: a create-rule body, validated as create-rule validates it; nothing is created.
  rule: CreateRuleBody,
  bindings: Type.Array(Type.Object({
    subjectType: SubjectTypeText,
    subjectIds: BindRuleBody.properties.subjectIds,
  }), { minItems: 1, maxItems: 2, description: 'The subjects the draft would be bound to, as bind-rule takes them (CARD, CUSTOMER)' }),
  startTime: Type.String({ format: 'date-time', description: 'First instant replayed (inclusive)', examples: ['2026-10-01T00:00:00.000Z'] }),
  endTime: Type.String({ format: 'date-time', description: `End of the window (exclusive): not in the future, at most ${BACKTEST_WINDOW_MAX_DAYS} days after startTime`, examples: ['2026-11-01T00:00:00.000Z'] }),
  mode: Type.Optional(Type.Enum([...BACKTEST_MODES], {
    description: 'COMBINED (default): the draft together with the rules that were bound to each subject at the time; ALONE: the draft only',
  })),
});

export const BacktestKeyBody = Type.Object({ backtestId: BacktestId });

/** Declined amounts per billing currency. */
export const BacktestAmountsOut = Type.Array(Type.Object({ currency: Type.String(), amount: Decimal }), {
  description: 'Declined amounts per billing currency',
});
const AmountsOut = BacktestAmountsOut;
export const BacktestSubjectOut = Type.Object({ subjectId: Type.String(), declinedCount: Type.Integer(), amounts: AmountsOut });
const SubjectDeclines = BacktestSubjectOut;

export const BacktestResultOut = Type.Object({
  evaluated: Type.Integer({ description: 'Recorded authorizations replayed (approved when they were recorded)' }),
  alreadyDeclined: Type.Integer({ description: 'Authorizations of the subjects declined when they were recorded: not replayed' }),
  declined: Type.Integer({ description: 'Replayed authorizations that would have been declined' }),
  declinedAmounts: AmountsOut,
  byReason: Type.Array(Type.Object({
    reason: Type.String({ description: 'The decline reason an authorization would have had', examples: ['VELOCITY_LIMIT_EXCEEDED'] }),
    ruleId: Type.Union([Type.String(), Type.Null()], { description: 'The bound rule that declines; null for the draft' }),
    limit: Type.Union([Type.String(), Type.Null()], { description: 'For VELOCITY_LIMIT_EXCEEDED: the cap (PER_TRANSACTION, DAILY, ..., DAILY_COUNT, ...)' }),
    count: Type.Integer(),
    amounts: AmountsOut,
  })),
  byDay: Type.Array(Type.Object({ day: Type.String({ description: 'UTC day, YYYY-MM-DD' }), count: Type.Integer(), amounts: AmountsOut })),
  topCards: Type.Array(SubjectDeclines, { description: `Up to ${BACKTEST_TOP_MAX} cards with the most declines` }),
  topEmployees: Type.Array(SubjectDeclines, { description: `Up to ${BACKTEST_TOP_MAX} employees with the most declines` }),
  sampleTransIds: Type.Array(Type.String(), { description: `The first ${BACKTEST_SAMPLES_MAX} authorizations that would have been declined` }),
});

export const BacktestOut = Type.Object({
  backtestId: Type.String(),
  organizationId: Type.String(),
  status: Literals(BACKTEST_STATUSES),
  mode: Literals(BACKTEST_MODES),
  startTime: IsoTime,
  endTime: IsoTime,
  progress: Type.Object({
    processed: Type.Integer({ description: 'Recorded authorizations of the subjects read so far' }),
    total: Type.Union([Type.Integer(), Type.Null()], { description: 'Recorded authorizations of the subjects in the window; null until the job starts' }),
  }),
  result: Type.Union([BacktestResultOut, Type.Null()], { description: 'The figures so far while RUNNING, final once COMPLETED; null while PENDING' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why a FAILED backtest stopped' }),
  createTime: IsoTime,
  completeTime: Type.Union([IsoTime, Type.Null()]),
});
