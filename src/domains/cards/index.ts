export { findCardById, type Card } from './store.ts';
