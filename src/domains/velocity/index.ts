/**
 * Velocity rules (2.10, 2.11, 4.7; D30-D32, D44-D47): rules, bindings, quotas and usage. The
 * public entry of the domain: other domains and the top level import only from here.
 *
 * For the cards domain: checkRulesForCard, bindRulesToCard (D44). For the authorization engine
 * (D31, D32): releaseUsage to give usage back; the periods, the decision and the increment are
 * velocity_periods / card_velocity_refusal / card_authorize in the database (docs/contributing.md).
 * For the composition root (issue 31): scheduleTimeZone, called when a partner's time zone changes.
 * For backtests of a draft rule (issue 31 section 3, run by the authorization engine): checkDraft.
 * Velocity reaches cards (a higher layer) only through the CardLookup port, passed in at wiring
 * time.
 */
export { velocityRoutes } from './routes.ts';
export { bindRulesToCard, checkDraft, checkRulesForCard, DRAFT_RULE_ID, queryQuota, releaseUsage, scheduleTimeZone } from './service.ts';
export type { CardLookup } from './subjects.ts';
