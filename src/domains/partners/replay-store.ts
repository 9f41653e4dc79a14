import type { Db } from '../../platform/db/db.ts';
import { invariant } from '../../platform/errors.ts';
import { recordNonces, type NonceKey } from './store.ts';

interface Pending {
  key: NonceKey;
  resolve(isNew: boolean): void;
  reject(err: unknown): void;
}

/** Statements in flight at once; more requests wait and go in the next batch. */
const MAX_IN_FLIGHT = 1;
/** Keys per statement: bounds the statement's size and its lock footprint. */
const MAX_BATCH = 512;

/**
 * The shared replay store (D5, D7) as a table every instance writes to, with natural batching: a
 * lone request is inserted at once; under load, requests that arrive while statements are in
 * flight are inserted together in the next statement. One round trip and one commit serve many
 * requests, and the database's primary key decides, across all instances, which request was first.
 */
export class ReplayStore {
  private readonly queue: Pending[] = [];
  private inFlight = 0;
  private flushScheduled = false;

  constructor(private readonly db: Db) {}

  /** Resolves true when the key was new (the request may proceed), false for a replay. */
  record(key: NonceKey): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.queue.push({ key, resolve, reject });
      this.scheduleFlush();
    });
  }

  /** Flushes once the current event-loop turn has queued every request it parsed. */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < MAX_IN_FLIGHT && this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.inFlight++;
      void this.insert(batch).finally(() => {
        this.inFlight--;
        this.flush();
      });
    }
  }

  private async insert(batch: Pending[]): Promise<void> {
    // A key twice in one batch: the first request goes to the database, the others are replays.
    const firstOfKey = new Map<string, Pending>();
    const repeats: Pending[] = [];
    for (const p of batch) {
      const id = `${p.key.apiKey}:${p.key.timestampMs}:${p.key.nonce}`;
      if (firstOfKey.has(id)) repeats.push(p);
      else firstOfKey.set(id, p);
    }
    const distinct = [...firstOfKey.values()];
    try {
      const replayed = await recordNonces(this.db, distinct.map((p) => p.key));
      invariant(replayed.every((i) => i >= 0 && i < distinct.length), 'replay store answered a position outside the batch');
      const replays = new Set(replayed);
      distinct.forEach((p, i) => p.resolve(!replays.has(i)));
      for (const p of repeats) p.resolve(false);
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}
