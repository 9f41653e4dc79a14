import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Batcher } from '../src/platform/db/batcher.ts';

/** A run the test completes by hand: the items of each call, and how to answer it. */
function controlledRun() {
  const calls: { items: number[]; answer(results: string[]): void; fail(err: Error): void }[] = [];
  const run = (items: number[]) => new Promise<string[]>((resolve, reject) => {
    calls.push({ items, answer: resolve, fail: reject });
  });
  return { calls, run };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('Batcher (the lanes and the replay store, issue 34)', () => {
  it('sends the items of one event-loop turn together, and those arriving meanwhile in the next call', async () => {
    const { calls, run } = controlledRun();
    const batcher = new Batcher(run, { maxBatch: 32, maxInFlight: 1 });
    const first = [1, 2, 3].map((n) => batcher.submit(n));
    await turn();
    assert.deepEqual(calls.map((c) => c.items), [[1, 2, 3]]);
    const second = [4, 5].map((n) => batcher.submit(n));
    await turn();
    assert.equal(calls.length, 1, 'one call in flight at a time');
    calls[0].answer(['a', 'b', 'c']);
    assert.deepEqual(await Promise.all(first), ['a', 'b', 'c']);
    assert.deepEqual(calls.map((c) => c.items), [[1, 2, 3], [4, 5]]);
    calls[1].answer(['d', 'e']);
    assert.deepEqual(await Promise.all(second), ['d', 'e']);
  });

  it('sends the next call before the answered callers go on, so the database does not wait for their work', async () => {
    const { calls, run } = controlledRun();
    const batcher = new Batcher(run, { maxBatch: 32, maxInFlight: 1 });
    const first = batcher.submit(1);
    await turn();
    const second = batcher.submit(2);
    await turn();
    let callsWhenFirstWentOn = -1;
    const firstGoesOn = first.then(() => { callsWhenFirstWentOn = calls.length; });
    calls[0].answer(['a']);
    await firstGoesOn;
    assert.equal(callsWhenFirstWentOn, 2, 'the waiting item was already sent when the first caller went on');
    calls[1].answer(['b']);
    assert.equal(await second, 'b');
  });

  it('fails only the items of a failed call, and goes on with the next one', async () => {
    const { calls, run } = controlledRun();
    const batcher = new Batcher(run, { maxBatch: 32, maxInFlight: 1 });
    const first = [1, 2].map((n) => batcher.submit(n));
    await turn();
    const later = batcher.submit(3);
    await turn();
    calls[0].fail(new Error('refused'));
    for (const p of first) await assert.rejects(p, /refused/);
    assert.deepEqual(calls[1].items, [3]);
    calls[1].answer(['c']);
    assert.equal(await later, 'c');
  });

  it('a next call that throws at once fails only its own items, not the answered ones before it', async () => {
    let calls = 0;
    let answerFirst: (results: string[]) => void = () => {};
    const batcher = new Batcher<number, string>((items) => {
      calls++;
      if (calls === 1) return new Promise<string[]>((resolve) => { answerFirst = resolve; });
      throw new Error(`cannot send ${items.join()}`);
    }, { maxBatch: 32, maxInFlight: 1 });
    const first = batcher.submit(1);
    await turn();
    const second = batcher.submit(2);
    await turn();
    answerFirst(['a']);
    assert.equal(await first, 'a');
    await assert.rejects(second, /cannot send 2/);
  });

  it('a call that answers a different number of results than items fails its items', async () => {
    const { calls, run } = controlledRun();
    const batcher = new Batcher(run, { maxBatch: 32, maxInFlight: 1 });
    const items = [1, 2].map((n) => batcher.submit(n));
    await turn();
    calls[0].answer(['only one']);
    for (const p of items) await assert.rejects(p, /different number of results/);
  });

  it('splits a queue longer than maxBatch and keeps at most maxInFlight calls out', async () => {
    const { calls, run } = controlledRun();
    const batcher = new Batcher(run, { maxBatch: 2, maxInFlight: 2 });
    const all = [1, 2, 3, 4, 5].map((n) => batcher.submit(n));
    await turn();
    assert.deepEqual(calls.map((c) => c.items), [[1, 2], [3, 4]]);
    calls[1].answer(['c', 'd']);
    await all[3];
    assert.deepEqual(calls.map((c) => c.items), [[1, 2], [3, 4], [5]]);
    calls[0].answer(['a', 'b']);
    calls[2].answer(['e']);
    assert.deepEqual(await Promise.all(all), ['a', 'b', 'c', 'd', 'e']);
  });
});
