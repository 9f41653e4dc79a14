import { Batcher } from '../../platform/db/batcher.ts';
import type { Db } from '../../platform/db/db.ts';
import { invariant } from '../../platform/errors.ts';
import { recordNonces, startReplayEpoch, type NonceKey } from './store.ts';

/** Keys per statement: bounds the statement's size and its lock footprint. */
const MAX_BATCH = 512;

/**
 * What the store says of a key: new (the request may proceed), a replay, or signed too early for the
 * store to know (issue 34: its timestamp is not later than the store's epoch plus the window, so a
 * copy may have been accepted before a crash emptied the unlogged store); `acceptsAfterMs` is that
 * bound, the store vouches for later timestamps.
 */
export type ReplayVerdict = 'NEW' | 'REPLAYED' | { acceptsAfterMs: number };

/** A key's verdict and the current row version of the partner holding its API key (null: none holds it). */
export interface ReplayAnswer {
  verdict: ReplayVerdict;
  partnerVersion: string | null;
}

/**
 * The shared replay store (D5, D7) as a table every instance writes to, batched: the keys of every
 * request authenticated in one event-loop turn go in one INSERT, which answers only the keys that
 * were already present. One round trip and one commit serve many requests, and the table's primary
 * key decides, across all instances, which of two identical requests was first. The table is
 * unlogged (issue 34); its epoch guards what a crash took (docs/security.md).
 */
export class ReplayStore {
  private readonly batcher: Batcher<NonceKey, ReplayAnswer>;

  constructor(db: Db, guard: { windowMs: number; now: () => number }) {
    this.batcher = new Batcher((keys) => insertBatch(db, keys, guard), { maxBatch: MAX_BATCH, maxInFlight: 1 });
  }

  /** The key's verdict with the partner's row version read in the same statement (PartnerAuthenticator). */
  record(key: NonceKey): Promise<ReplayAnswer> {
    return this.batcher.submit(key);
  }
}

async function insertBatch(db: Db, keys: NonceKey[], guard: { windowMs: number; now: () => number }): Promise<ReplayAnswer[]> {
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
  let answer = await recordNonces(db, distinct);
  if (answer.sinceMs === null) {
    // The epoch row is gone with the rest of the store (crash recovery of the unlogged tables): the
    // store is complete from now on. Another instance may start it first; then its instant counts.
    await startReplayEpoch(db, guard.now());
    answer = await recordNonces(db, distinct);
    invariant(answer.sinceMs !== null, 'replay store epoch missing right after it was started');
  }
  const { replayed, sinceMs, versions } = answer;
  invariant(replayed.every((i) => i >= 0 && i < distinct.length), 'replay store answered a position outside the batch');
  const replays = new Set(replayed);
  const acceptsAfterMs = (sinceMs ?? 0) + guard.windowMs;
  return keys.map((k, n) => {
    const slot = slotOf[n];
    const partnerVersion = versions.get(k.apiKey) ?? null;
    if (k.timestampMs <= acceptsAfterMs) return { verdict: { acceptsAfterMs }, partnerVersion };
    return { verdict: slot !== -1 && !replays.has(slot) ? 'NEW' : 'REPLAYED', partnerVersion };
  });
}
