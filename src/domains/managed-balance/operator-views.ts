import type { Queryable } from '../../platform/db/db.ts';
import { managedUserRows, type ManagedUserHit } from './operator-store.ts';

/** The operator console's search (issue 29): managed users of any partner by user id or external user id. */
export function findManagedUsers(q: Queryable, id: string, limit = 20): Promise<ManagedUserHit[]> {
  return managedUserRows(q, id, limit);
}

export type { ManagedUserHit };
