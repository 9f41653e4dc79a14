/**
 * Issue 27: the CPU of tracing one signed GET, in-process and without the rest of the request: the
 * four calls the app makes (startServerSpan, traceIdOf, inRequestTrace, endServerSpan) with every span
 * exported to a local OTLP receiver (the SDK, its worker, the serializer and the transport as in the
 * service), CPU per thread from /proc/self/task: the main thread, and the others (the export worker and
 * V8's GC helpers). Prints the median of 8 runs of TRACING_LOOP_N requests. A same-run A/B alternates
 * builds (each a copy of dist/), e.g.:
 *   for i in 1 2 3; do for d in /tmp/base /tmp/new; do node --max-semi-space-size=2 --heap-growing-percent=10 bench/tracing-loop.mjs $d/src/platform/tracing.js; done; done
 * A second argument samples that ratio of the requests (parentbased_traceidratio).
 */
import http from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const mod = path.resolve(process.argv[2] ?? 'dist/src/platform/tracing.js');
// The receiver runs on this main thread too (the same for every build compared).
const receiver = http.createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200).end()); });
await new Promise((ok) => receiver.listen(0, '127.0.0.1', ok));
process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${receiver.address().port}`;
process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/protobuf';
if (process.argv[3]) Object.assign(process.env, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: process.argv[3] });
const t = await import(mod);
const handle = await t.startTracing(process.env);
const headers = { host: '127.0.0.1:18193', 'x-dapi-key': 'k'.repeat(32), 'x-dapi-timestamp': '1764213000', 'x-dapi-sign': 's'.repeat(64), 'user-agent': 'autocannon' };
/** CPU ticks (1/100 s) of the main thread and of the whole process. */
function ticks() {
  let main = 0, all = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    const f = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
    const v = Number(f[11]) + Number(f[12]);
    all += v;
    if (tid === String(process.pid)) main = v;
  }
  return { main, all };
}
const N = Number(process.env.TRACING_LOOP_N ?? 60000);
const runs = [];
for (let r = 0; r < 12; r++) {
  const a = ticks();
  for (let b = 0; b < 10; b++) {
    for (let i = 0; i < N / 10; i++) {
      const req = { url: '/open-api/partner/v1/settings', method: 'GET', headers };
      t.startServerSpan(req);
      const id = t.traceIdOf(req);
      t.inRequestTrace(req, () => id);
      t.endServerSpan(req, '/open-api/partner/v1/settings', 200);
    }
    await new Promise((ok) => setImmediate(ok)); // the worker's posts and the receiver run between batches
  }
  await new Promise((ok) => setTimeout(ok, 150));
  const z = ticks();
  if (r >= 4) runs.push({ main: ((z.main - a.main) * 10_000) / N, other: ((z.all - z.main - (a.all - a.main)) * 10_000) / N });
}
const median = (xs) => xs.sort((x, y) => x - y)[xs.length >> 1];
console.log(`${mod}: main thread ${median(runs.map((x) => x.main)).toFixed(1)} µs/request, other threads ${median(runs.map((x) => x.other)).toFixed(1)} µs/request`);
await handle.shutdown();
receiver.close();
process.exit(0);
