/**
 * Velocity rules (2.10, 2.11, 4.7; D30-D32, D44-D47): rules, bindings, quotas and usage. The
 * public entry of the domain: other domains and the top level import only from here.
 *
 * For the cards domain: checkRulesForCard, bindRulesToCard (D44). For the authorization engine
 * (D31, D32): periodKeys for the UTC periods and releaseUsage to give usage back; the decision and
 * the increment are card_velocity_refusal / card_authorize in the database (docs/contributing.md).
 * Velocity reaches cards (a higher layer) only through the CardLookup port, passed in at wiring
 * time.
 */
export { velocityRoutes } from './routes.ts';
export { bindRulesToCard, checkRulesForCard, queryQuota, releaseUsage } from './service.ts';
export { periodKeys } from './periods.ts';
export type { CardLookup } from './subjects.ts';
