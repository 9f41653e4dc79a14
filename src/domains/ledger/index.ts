export { post, getOrCreateAccount, findAccount, type EntryInput } from './ledger.ts';
