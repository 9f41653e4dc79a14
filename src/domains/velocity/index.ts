/**
 * Velocity rules (2.10, 2.11, 4.7; D30-D32, D44-D47): rules, bindings, quotas and usage. The
 * public entry of the domain: other domains and the top level import only from here.
 *
 * For the cards domain: checkRulesForCard, bindRulesToCard (D44). For the authorization engine
 * (D31, D32): periodKeys for the UTC periods and releaseUsage to give usage back; the decision and
 * the increment are card_velocity_refusal / card_authorize in the database (docs/contributing.md). Velocity reaches cards (a higher layer)
 * only through the CardLookup port passed in with VelocityDeps at wiring time.
 */
export { velocityRoutes } from './routes.ts';
export {
  bindRule, bindRulesToCard, changeRuleStatus, checkRulesForCard, createRule, listBindings, listRules,
  listSubjectRules, queryQuota, queryRule, releaseUsage, unbindRule, updateRule, RULE_IDS_PER_CARD_MAX,
  type BindInput, type CheckRulesInput, type CreateRuleInput, type UpdateRuleInput, type UsageInput, type VelocityDeps,
} from './service.ts';
export { mergeQuota, relevantCurrencies, UsageBook, utilizationRate } from './merge.ts';
export type { AppliedRule, QuotaInput, UsageRow } from './merge.ts';
export { periodKeys, PERIOD_COLUMN } from './periods.ts';
export {
  amountLimitCurrencies, controlsFromWire, ruleSummaryView, ruleView, AMOUNT_RULES, BINDABLE_SUBJECT_TYPES, CONTROL_GROUPS,
  CORPORATE_CURRENCIES, FILTER_TYPES, PERIODS, RULE_STATUSES,
  type AmountLimit, type BindableSubjectType, type CashAdvanceGroup, type CorporateCurrency, type CountLimits, type FilterGroup,
  type FilterType, type LimitControl, type LimitGroup, type Period, type RuleControls, type RuleStatus, type VelocityRule,
  type WireControls,
} from './model.ts';
export type { CardFacts, CardLookup, EmployeeFacts, OrganizationFacts } from './subjects.ts';
