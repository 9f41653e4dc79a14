/** The authorization engine's wire schemas live in the shared contract (sdk/contract/authorization.ts). */
export * from '../../../sdk/contract/authorization.ts';
