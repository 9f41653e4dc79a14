export { ReplayStore } from './replay-store.ts';
