import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { EXAMPLES_FILE, WITHOUT_EXAMPLES, operationsOf, runExampleFlow, sanitize, shapeOf, type Answer } from './openapi-examples/flow.ts';

/**
 * Issue 32, item 7: every operation of the API reference shows a real success and a real error
 * answer (src/openapi-examples.json, from `npm run openapi:examples`), and they stay true: the
 * sandbox flow that made them is replayed here and must answer with the same fields and codes.
 */
const REGENERATE = 'run `npm run openapi:examples` (and if its generic request fails, add a STEP in test/openapi-examples/flow.ts)';

type Json = Record<string, unknown>;

describe('OpenAPI response examples from real sandbox answers (issue 32)', () => {
  let svc: TestService;
  let doc: Json;
  const stored = JSON.parse(readFileSync(EXAMPLES_FILE, 'utf8')) as Record<string, { success?: Answer; error?: Answer }>;

  before(async () => {
    svc = await startService();
    doc = await (await fetch(`${svc.baseUrl}/openapi.json`)).json() as Json;
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('every operation of the document has a success and an error response example', () => {
    const ops = operationsOf(doc);
    assert.ok(ops.length >= 100, `operations: ${ops.length}`);
    const missing: string[] = [];
    for (const { key, op } of ops) {
      if (key in WITHOUT_EXAMPLES) continue;
      const examples = Object.entries(op.responses as Record<string, Json>).flatMap(([status, res]) => Object.values(
        ((res.content as Record<string, Json> | undefined)?.['application/json']?.examples ?? {}) as Record<string, { value: Json }>,
      ).map((e) => ({ status, code: e.value?.code })));
      if (!examples.some((e) => e.status === '200' && e.code === 'SYS_SUCCESS')) missing.push(`${key}: no success example`);
      if (!examples.some((e) => typeof e.code === 'string' && e.code !== 'SYS_SUCCESS')) missing.push(`${key}: no error example`);
    }
    assert.deepEqual(missing, [], REGENERATE);
    const known = new Set(ops.map((o) => o.key));
    assert.deepEqual(Object.keys(stored).filter((k) => !known.has(k)), [], `examples of operations that no longer exist: ${REGENERATE}`);
  });

  it('the examples are what the service answers now: the flow replayed gives the same fields, statuses and codes', { timeout: 600_000 }, async () => {
    const replayed = await runExampleFlow(svc, doc);
    const differences: string[] = [];
    for (const [key, now] of Object.entries(replayed)) {
      const then = stored[key];
      if (!then) {
        differences.push(`${key}: no stored example`);
        continue;
      }
      for (const kind of ['success', 'error'] as const) {
        const a = then[kind];
        const b = now[kind] ? sanitize(now[kind]) as Answer : undefined;
        if (!a || !b) {
          if (a || b) differences.push(`${key} ${kind}: ${a ? 'no longer answered' : 'answered now, not stored'}`);
          continue;
        }
        if (a.status !== b.status || a.body.code !== b.body.code) differences.push(`${key} ${kind}: was ${a.status} ${String(a.body.code)}, now ${b.status} ${String(b.body.code)}`);
        const [was, is] = [shapeOf(a.body), shapeOf(b.body)];
        const gone = was.filter((f) => !is.includes(f));
        const added = is.filter((f) => !was.includes(f));
        if (gone.length || added.length) differences.push(`${key} ${kind}: fields gone ${JSON.stringify(gone)}, new ${JSON.stringify(added)}`);
      }
    }
    assert.deepEqual(differences, [], `the stored examples no longer match the service: ${REGENERATE}`);
  });

  it('a field that changed is caught (negative control of the shape comparison)', () => {
    const answer = { code: 'SYS_SUCCESS', data: { cardId: 'cd1', pools: [{ currency: 'USD', available: 1 }] } };
    const changed = { code: 'SYS_SUCCESS', data: { cardId: 'cd1', pools: [{ currency: 'USD', availableAmount: 1 }] } };
    assert.notDeepEqual(shapeOf(answer), shapeOf(changed));
    assert.deepEqual(shapeOf(answer), shapeOf({ code: 'X', data: { pools: [{ available: 2, currency: 'HKD' }], cardId: 'cd2' } }));
  });
});
