/**
 * The client side of the host's floor (bench/scenarios/forwarding.ts, loopbackFloor), in its own process so
 * that the load generator's event loop is not part of it: sequential POSTs of a forwarding-sized body
 * (1 KiB) over one keep-alive connection to bench/lib/plain-server.ts on PORT, one every 1/RATE s, then
 * sends the parent the time of each exchange in ms.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

const port = Number(process.env.PORT);
const rate = Number(process.env.RATE);
const requests = Number(process.env.REQUESTS);
const agent = new http.Agent({ keepAlive: true });
const body = 'x'.repeat(1024);
const times: number[] = [];
for (let i = 0; i < requests; i++) {
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    req.on('error', reject);
    req.end(body);
  });
  times.push(performance.now() - started);
  await sleep(1000 / rate);
}
agent.destroy();
process.send?.(times, () => process.exit(0));
