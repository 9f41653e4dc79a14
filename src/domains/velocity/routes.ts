import { route, type RouteDef } from '../../platform/http/router.ts';
import {
  BindingChangeOut, BindingPageOut, BindRuleBody, ChangeRuleStatusBody, CreateRuleBody, ListBindingsQuery, ListRulesQuery,
  QueryQuotaQuery, QuotaOut, RuleKeyQuery, RuleOut, RulePageOut, StatusChangeOut, SubjectQuery, SubjectRulePageOut,
  UpdateRuleBody,
} from '../../../sdk/contract/velocity.ts';
import {
  bindRule, changeRuleStatus, createRule, listBindings, listRules, listSubjectRules, queryQuota, queryRule, unbindRule,
  updateRule, type VelocityDeps,
} from './service.ts';

const BASE = '/open-api-corp/velocity/v1';
const TAG = 'Velocity rules';

/**
 * Request examples of the rule routes (the generated ones put placeholder text where a currency, an
 * MCC or a subject type goes, which the routes refuse): the five control groups of one rule.
 */
const RULE_CONTROLS_EXAMPLE = {
  ruleName: 'Travel and meals',
  remark: 'requested by finance',
  purchaseControl: { amountLimits: [{ currency: 'USD', perTransaction: 500, daily: 1000, monthly: 5000 }], countLimits: { daily: 20, monthly: 200 } },
  cashAdvanceControl: { allowed: false },
  currencyControl: { filterType: 'WHITELIST', values: ['USD', 'HKD'] },
  mccControl: { filterType: 'BLACKLIST', values: ['7995'] },
  geographicControl: { filterType: 'WHITELIST', values: ['HK', 'SG'] },
};
const BINDING_EXAMPLE = { organizationId: 'orgmwxdk8zq49621f23a', ruleId: 'vrmwxdk8zrfc8dd4f18e', subjectType: 'CARD', subjectIds: ['cdmwxdk8zr3fa53eaf45'] };

/** Velocity rule routes (4.7, D30): thin, one service call each. */
export function velocityRoutes(deps: VelocityDeps): RouteDef[] {
  return [
    route({
      method: 'POST',
      url: `${BASE}/create-rule`,
      auth: 'partner',
      tag: TAG,
      summary: 'Create a velocity rule: ACTIVE, ruleVersion 1',
      description: 'At least one of the five control groups must be configured. `ruleRef` is unique per organization.',
      body: CreateRuleBody,
      example: { organizationId: 'orgmwxdk8zq49621f23a', ruleRef: 'travel-0001', ...RULE_CONTROLS_EXAMPLE },
      data: RuleOut,
      errors: ['ORGANIZATION_INVALID', 'VELOCITY_RULE_REF_DUPLICATE'],
      handler: ({ body, partner }) => createRule(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: `${BASE}/query-rule`,
      auth: 'partner',
      tag: TAG,
      summary: 'Read one rule',
      querystring: RuleKeyQuery,
      data: RuleOut,
      errors: ['VELOCITY_RULE_NOT_FOUND'],
      handler: ({ query, partner }) => queryRule(deps, partner.partnerId, query),
    }),
    route({
      method: 'GET',
      url: `${BASE}/list-rules`,
      auth: 'partner',
      tag: TAG,
      summary: 'List rules of an organization, newest first',
      querystring: ListRulesQuery,
      data: RulePageOut,
      errors: ['ORGANIZATION_INVALID'],
      handler: ({ query, partner }) => listRules(deps, partner.partnerId, query),
    }),
    route({
      method: 'POST',
      url: `${BASE}/update-rule`,
      auth: 'partner',
      tag: TAG,
      summary: 'Replace a rule as a whole',
      description: 'Full replacement: an absent control group is deleted, an absent remark cleared, absent currencies of '
        + 'amountLimits deleted; at least one group must remain. `ruleVersion` must be the current one.',
      body: UpdateRuleBody,
      example: { organizationId: 'orgmwxdk8zq49621f23a', ruleId: 'vrmwxdk8zrfc8dd4f18e', ruleVersion: 1, ...RULE_CONTROLS_EXAMPLE },
      data: RuleOut,
      errors: ['VELOCITY_RULE_NOT_FOUND', 'VELOCITY_RULE_VERSION_CONFLICT'],
      handler: ({ body, partner }) => updateRule(deps, partner.partnerId, body),
    }),
    route({
      method: 'POST',
      url: `${BASE}/change-rule-status`,
      auth: 'partner',
      tag: TAG,
      summary: 'Switch a rule between ACTIVE and INACTIVE',
      body: ChangeRuleStatusBody,
      data: StatusChangeOut,
      errors: ['VELOCITY_RULE_NOT_FOUND', 'VELOCITY_RULE_VERSION_CONFLICT', 'VELOCITY_RULE_STATUS_INVALID'],
      handler: ({ body, partner }) => changeRuleStatus(deps, partner.partnerId, body),
    }),
    route({
      method: 'POST',
      url: `${BASE}/bind-rule`,
      auth: 'partner',
      tag: TAG,
      summary: 'Bind an ACTIVE rule to cards or employees of the organization; all or nothing, idempotent',
      body: BindRuleBody,
      example: BINDING_EXAMPLE,
      data: BindingChangeOut,
      errors: ['SUBJECT_TYPE_NOT_ALLOWED', 'VELOCITY_RULE_NOT_FOUND', 'VELOCITY_RULE_STATUS_INVALID', 'SUBJECT_INVALID',
        'VELOCITY_RULE_CURRENCY_MISMATCH'],
      handler: ({ body, partner }) => bindRule(deps, partner.partnerId, body),
    }),
    route({
      method: 'POST',
      url: `${BASE}/unbind-rule`,
      auth: 'partner',
      tag: TAG,
      summary: 'Unbind a rule from cards or employees; idempotent',
      body: BindRuleBody,
      example: BINDING_EXAMPLE,
      data: BindingChangeOut,
      errors: ['SUBJECT_TYPE_NOT_ALLOWED', 'VELOCITY_RULE_NOT_FOUND'],
      handler: ({ body, partner }) => unbindRule(deps, partner.partnerId, body),
    }),
    route({
      method: 'GET',
      url: `${BASE}/list-bindings`,
      auth: 'partner',
      tag: TAG,
      summary: 'Subjects a rule is bound to, newest binding first',
      querystring: ListBindingsQuery,
      data: BindingPageOut,
      errors: ['VELOCITY_RULE_NOT_FOUND'],
      handler: ({ query, partner }) => listBindings(deps, partner.partnerId, query),
    }),
    route({
      method: 'GET',
      url: `${BASE}/list-subject-rules`,
      auth: 'partner',
      tag: TAG,
      summary: 'Rules bound directly to a card or an employee, any status',
      querystring: SubjectQuery,
      data: SubjectRulePageOut,
      errors: ['SUBJECT_TYPE_NOT_ALLOWED', 'SUBJECT_INVALID'],
      handler: ({ query, partner }) => listSubjectRules(deps, partner.partnerId, query),
    }),
    route({
      method: 'GET',
      url: `${BASE}/query-quota`,
      auth: 'partner',
      tag: TAG,
      summary: 'Merged effective quota and current usage of a card or an employee',
      querystring: QueryQuotaQuery,
      data: QuotaOut,
      errors: ['SUBJECT_TYPE_NOT_ALLOWED', 'UNSUPPORTED_CURRENCY', 'SUBJECT_INVALID'],
      handler: ({ query, partner }) => queryQuota(deps, partner.partnerId, query),
    }),
  ];
}
