/**
 * The test entry of the velocity domain (issue 33): what tests need beyond the public entry
 * (index.ts), which exports only what other domains and the top level use. Production code never
 * imports this file (test/architecture-boundaries.test.ts).
 */
export { mergeQuota, relevantCurrencies, UsageBook, utilizationRate } from './merge.ts';
export type { AppliedRule } from './merge.ts';
export { controlsFromWire, ruleView, type VelocityRule } from './model.ts';
export { periodKeys } from './periods.ts';
