export { periodKeys } from './periods.ts';
export { releaseUsage } from './service.ts';
