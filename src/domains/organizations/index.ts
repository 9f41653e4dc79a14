export { CAPABILITY_BLOCKERS } from './capabilities.ts';
export { isIsoCountry } from './countries.ts';
