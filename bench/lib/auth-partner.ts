/**
 * A partner's auth_url for the forwarding benchmark, in its own process (so its RSA work does not
 * stall the load generator's event loop): the SDK handler, approving at once. Talks to its parent
 * over IPC: sends {url, publicKey} when listening; answers 'report' with, per transId, its handler's
 * time (decrypt, verify, decide, sign, encrypt) and its whole time from the request's arrival in its
 * HTTP server (headers parsed) to the answer written.
 */
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createAuthUrlHandler } from '../../sdk/index.ts';

const servicePublicKey = process.env.SERVICE_PUBLIC_KEY ?? '';
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ownMs: Record<string, number> = {};
const wholeMs: Record<string, number> = {};
let current = '';
const handle = createAuthUrlHandler({
  partnerPrivateKey: keys.privateKey,
  servicePublicKey,
  decide: (r) => {
    current = r.transId;
    return { approved: true };
  },
});
const server = http.createServer(async (req, res) => {
  const arrived = performance.now();
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const started = performance.now();
  const answer = await handle(Buffer.concat(chunks).toString('utf8'));
  const transId = current;
  ownMs[transId] = performance.now() - started;
  res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body, () => {
    wholeMs[transId] = performance.now() - arrived;
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth`,
    publicKey: keys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
  });
});
process.on('message', (msg) => {
  if (msg === 'report') process.send?.({ ownMs, wholeMs });
  if (msg === 'stop') server.close(() => process.exit(0));
});
