/**
 * The local OTLP/HTTP receiver of the observability scenario (issue 27), in a process of its own as a
 * collector is: it counts the export requests and their bytes and answers 200. Run in the bench's own
 * process it shared the event loop of the load generator (autocannon), which the traced services'
 * exports then slowed and no other configuration's. Started with `fork`; it sends `{ port }` when
 * listening, and answers the message 'count' with `{ requests, bytes, cpuMs }` (cpuMs: its own CPU).
 */
import http from 'node:http';

const received = { requests: 0, bytes: 0 };
const server = http.createServer((req, res) => {
  received.requests++;
  req.on('data', (chunk) => { received.bytes += chunk.length; });
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (message) => {
  if (message !== 'count') return;
  const { user, system } = process.cpuUsage();
  process.send({ ...received, cpuMs: (user + system) / 1000 });
});
process.on('disconnect', () => process.exit(0));
