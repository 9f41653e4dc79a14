import { invariant } from '../errors.ts';

/** Keys per statement: bounds the size of one `= ANY($1)` array. */
const MAX_BATCH = 256;

/**
 * Point reads by primary key outside a transaction, batched across concurrent requests (the
 * DataLoader pattern): the first read goes out at once; reads that arrive while a statement is in
 * flight share the next one, `WHERE key = ANY($1)`. Under load one round trip answers many
 * requests; alone, a read costs what a plain query costs. Results are never cached across batches.
 */
export class BatchedLookup<V> {
  private readonly queue = new Map<string, { resolve(v: V | null): void; reject(e: unknown): void }[]>();
  private inFlight = false;
  private flushScheduled = false;

  constructor(
    private readonly fetchMany: (keys: string[]) => Promise<V[]>,
    private readonly keyOf: (row: V) => string,
  ) {}

  load(key: string): Promise<V | null> {
    return new Promise((resolve, reject) => {
      const waiting = this.queue.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.queue.set(key, [{ resolve, reject }]);
      this.scheduleFlush();
    });
  }

  /** Flushes once the current event-loop turn has queued every read it started. */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.inFlight || this.queue.size === 0) return;
    const keys = [...this.queue.keys()].slice(0, MAX_BATCH);
    const batch = keys.map((k) => [k, this.queue.get(k)!] as const);
    for (const k of keys) this.queue.delete(k);
    this.inFlight = true;
    void this.fetchMany(keys)
      .then((rows) => {
        invariant(rows.length <= keys.length, 'batched lookup returned more rows than keys');
        const byKey = new Map(rows.map((r) => [this.keyOf(r), r]));
        for (const [k, waiters] of batch) for (const w of waiters) w.resolve(byKey.get(k) ?? null);
      })
      .catch((err) => {
        for (const [, waiters] of batch) for (const w of waiters) w.reject(err);
      })
      .finally(() => {
        this.inFlight = false;
        this.flush();
      });
  }
}
