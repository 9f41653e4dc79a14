/**
 * Schema building blocks of the routes. They are defined in the wire contract shared with the SDK
 * (sdk/contract/wire.ts) and re-exported here for the service's code.
 */
export { IsoTime, Money, Nullable, Page, PagingQuery, WireNumber, type WireAmount } from '../../../sdk/contract/wire.ts';

export interface Paging {
  page: number;
  pageSize: number;
}

export function pageOf<T>(paging: Paging, total: number, result: T[]) {
  return { page: paging.page, pageSize: paging.pageSize, total, result };
}

/** D11: ISO-8601 UTC with milliseconds. */
export function isoTime(value: Date | string | null): string | null {
  if (value === null) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
