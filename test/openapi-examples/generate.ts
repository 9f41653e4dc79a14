/**
 * Regenerates src/openapi-examples.json from real sandbox answers (issue 32, item 7):
 * `npm run openapi:examples`. Starts the service on a fresh embedded database, runs the example
 * flow (flow.ts) over every operation of its OpenAPI document, and writes each operation's
 * success and error answer. Commit the file with the change that made it differ.
 */
import { writeFileSync } from 'node:fs';
import { closeTestDatabase, startService } from '../helpers/service.ts';
import { EXAMPLES_FILE, WITHOUT_EXAMPLES, runExampleFlow, sanitize } from './flow.ts';

const svc = await startService();
try {
  const doc = await (await fetch(`${svc.baseUrl}/openapi.json`)).json();
  const recorded = await runExampleFlow(svc, doc);
  const out: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const key of Object.keys(recorded).sort()) {
    const { success, error } = recorded[key];
    if (!success) missing.push(`${key}: no success (${error ? `${error.status} ${String(error.body.code)}: ${String(error.body.message)}` : 'no answer'})`);
    if (!error) missing.push(`${key}: no error answer`);
    out[key] = sanitize({ success, error });
  }
  writeFileSync(EXAMPLES_FILE, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`wrote ${Object.keys(out).length} operations to ${EXAMPLES_FILE} (${Object.keys(WITHOUT_EXAMPLES).length} without examples by design)`);
  if (missing.length) {
    console.log(`incomplete: add a STEP in test/openapi-examples/flow.ts for:\n  ${missing.join('\n  ')}`);
    process.exitCode = 1;
  }
} finally {
  await svc.close();
  await closeTestDatabase();
}
