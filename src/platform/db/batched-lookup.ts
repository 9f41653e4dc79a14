import { Batcher } from './batcher.ts';

/** Keys per statement: bounds the size of one `= ANY($1)` array. */
const MAX_BATCH = 256;

/**
 * Point reads by primary key outside a transaction, batched across concurrent requests (the
 * DataLoader pattern): reads started in one event-loop turn share one `WHERE key = ANY($1)`
 * statement. Results are never cached across batches.
 */
export class BatchedLookup<V> {
  private readonly batcher: Batcher<string, V | null>;

  constructor(fetchMany: (keys: string[]) => Promise<V[]>, keyOf: (row: V) => string) {
    this.batcher = new Batcher(async (keys) => {
      const rows = await fetchMany([...new Set(keys)]);
      const byKey = new Map(rows.map((r) => [keyOf(r), r]));
      return keys.map((k) => byKey.get(k) ?? null);
    }, { maxBatch: MAX_BATCH, maxInFlight: 1 });
  }

  load(key: string): Promise<V | null> {
    return this.batcher.submit(key);
  }
}
