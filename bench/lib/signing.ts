import { createHmac } from 'node:crypto';

/** Sequential nonces per millisecond, so no two requests of a run share (timestamp, nonce). */
let lastTs = 0;
let seq = 0;

/** The four headers of 5.2-5.3 for a payload (the query string of a GET, the body otherwise). */
export function signedHeaders(signer: { apiKey: string; secretKey: string }, payload = ''): Record<string, string> {
  const now = Date.now();
  if (now !== lastTs) {
    lastTs = now;
    seq = 0;
  }
  const nonce = String(10000 + (seq++ % 90000));
  const timestamp = String(now);
  const sign = createHmac('sha256', signer.secretKey).update(signer.apiKey + timestamp + nonce).update(payload).digest('hex');
  return { 'X-DAPI-API-KEY': signer.apiKey, 'X-DAPI-TIMESTAMP': timestamp, 'X-DAPI-NONCE': nonce, 'X-DAPI-SIGN': sign };
}
