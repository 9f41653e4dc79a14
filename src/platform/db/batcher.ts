import { invariant } from '../errors.ts';

interface Waiting<I, O> {
  item: I;
  resolve(result: O): void;
  reject(err: unknown): void;
}

/**
 * Natural batching for database round trips. Items submitted during one event-loop turn are sent
 * together once the turn ends (setImmediate); while `maxInFlight` batches are out, new items wait
 * and go in the next batch. Alone, an item costs one round trip; under load, one round trip serves
 * every request parsed in the same turn. `run` answers one result per item, in order.
 */
export class Batcher<I, O> {
  private readonly queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  private flushScheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly limits: { maxBatch: number; maxInFlight: number },
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        this.flush();
      });
    });
  }

  private started(items: I[]): Promise<O[]> {
    try {
      return this.run(items);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private done(): void {
    this.inFlight--;
    this.flush();
  }

  private flush(): void {
    while (this.inFlight < this.limits.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.limits.maxBatch);
      this.inFlight++;
      // The next batch goes out before this one's callers go on: their continuations (answers, events)
      // run as microtasks at once, and the database would wait for all of them before its next call.
      // `started` never throws, so that starting the next batch cannot fail this one's callers.
      this.started(batch.map((w) => w.item)).then(
        (results) => {
          this.done();
          invariant(results.length === batch.length, 'batch answered a different number of results than items');
          batch.forEach((w, i) => w.resolve(results[i]));
        },
        (err: unknown) => {
          this.done();
          for (const w of batch) w.reject(err);
        },
      ).catch((err: unknown) => {
        for (const w of batch) w.reject(err);
      });
    }
  }
}
