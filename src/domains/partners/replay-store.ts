import { Batcher } from '../../platform/db/batcher.ts';
import type { Db } from '../../platform/db/db.ts';
import { invariant } from '../../platform/errors.ts';
import { recordNonces, type NonceKey } from './store.ts';

/** Keys per statement: bounds the statement's size and its lock footprint. */
const MAX_BATCH = 512;

/**
 * The shared replay store (D5, D7) as a table every instance writes to, batched: the keys of every
 * request authenticated in one event-loop turn go in one INSERT, which answers only the keys that
 * were already present. One round trip and one commit serve many requests, and the table's primary
 * key decides, across all instances, which of two identical requests was first.
 */
export class ReplayStore {
  private readonly batcher: Batcher<NonceKey, boolean>;

  constructor(db: Db) {
    this.batcher = new Batcher((keys) => insertBatch(db, keys), { maxBatch: MAX_BATCH, maxInFlight: 1 });
  }

  /** Resolves true when the key was new (the request may proceed), false for a replay. */
  record(key: NonceKey): Promise<boolean> {
    return this.batcher.submit(key);
  }
}

async function insertBatch(db: Db, keys: NonceKey[]): Promise<boolean[]> {
  // A key twice in one batch: its first request goes to the database, the others are replays.
  const firstIndexOf = new Map<string, number>();
  const distinct: NonceKey[] = [];
  const slotOf = keys.map((k) => {
    const id = `${k.apiKey}:${k.timestampMs}:${k.nonce}`;
    const seen = firstIndexOf.get(id);
    if (seen !== undefined) return -1;
    firstIndexOf.set(id, distinct.length);
    distinct.push(k);
    return distinct.length - 1;
  });
  const replayed = new Set(await recordNonces(db, distinct));
  invariant([...replayed].every((i) => i >= 0 && i < distinct.length), 'replay store answered a position outside the batch');
  return slotOf.map((slot) => slot !== -1 && !replayed.has(slot));
}
