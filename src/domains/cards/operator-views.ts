import type { Queryable } from '../../platform/db/db.ts';
import { cardsByLast4, openApplicationCount, type CardHit } from './operator-store.ts';

/** The operator console's card search (issue 29): cards of any partner by the PAN's last four digits. */
export function findCardsByLast4(q: Queryable, last4: string, limit = 50): Promise<CardHit[]> {
  if (!/^[0-9]{4}$/.test(last4)) return Promise.resolve([]);
  return cardsByLast4(q, last4, limit);
}

/** The card application job's backlog (console ledger page). */
export function cardApplicationBacklog(q: Queryable): Promise<string> {
  return openApplicationCount(q);
}

export type { CardHit };
