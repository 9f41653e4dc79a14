/**
 * The partner side of authorization forwarding (spec 5.6, D37, D50): a handler for your auth_url.
 * It decrypts the service's request with your private key, verifies the service's signature,
 * asks your `decide` function, and answers signed with your key and encrypted to the service key.
 *
 * @example
 * import http from 'node:http';
 * import { createAuthUrlHandler } from './sdk/index.ts';
 * const handle = createAuthUrlHandler({
 *   partnerPrivateKey: process.env.AUTH_PRIVATE_KEY!,              // Base64 PKCS#8 DER (or PEM)
 *   servicePublicKey: (await client.partner.servicePublicKey()).publicKey,
 *   decide: async (req) => ({ approved: Number(req.amount) <= 500, declineReason: 'OVER_LIMIT' }),
 * });
 * http.createServer(async (req, res) => {
 *   const chunks: Buffer[] = []; for await (const c of req) chunks.push(c as Buffer);
 *   const answer = await handle(Buffer.concat(chunks).toString('utf8'));
 *   res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
 * }).listen(8443);
 *
 * Node refuses PKCS#1 v1.5 private decryption (CVE-2023-46809): this helper decrypts with raw RSA
 * and checks the padding in constant time with implicit rejection, never with --security-revert.
 */
import {
  constants, createHash, createHmac, createPrivateKey, createPublicKey, privateDecrypt, publicEncrypt, sign, verify, type KeyObject,
} from 'node:crypto';

export interface AuthorizationRequest {
  transId: string;
  networkTransactionId: string;
  cardId: string;
  organizationId: string;
  subjectType: string;
  subjectId: string;
  authType: string;
  /** Exact decimal text, e.g. "12.50" (the JSON number's digits). */
  amount: string;
  currency: string;
  billingAmount: string;
  billingCurrency: string;
  merchantName: string | null;
  mcc: string | null;
  merchantCountry: string | null;
  channel: string | null;
  transactionTime: string;
  /** ISO-8601: answer before this. */
  deadline: string;
  [field: string]: unknown;
}

export interface AuthorizationAnswer {
  approved: boolean;
  declineReason?: string | null;
}

export interface AuthUrlHandlerOptions {
  /** Your RSA-2048 private key: Base64 PKCS#8 DER, PEM, or a KeyObject. */
  partnerPrivateKey: string | KeyObject;
  /** The service public key: Base64 X.509 SubjectPublicKeyInfo DER (GET /open-api/v1/service-public-key), or a KeyObject. */
  servicePublicKey: string | KeyObject;
  decide(request: AuthorizationRequest): Promise<AuthorizationAnswer> | AuthorizationAnswer;
}

const BLOCK = 256;
const PLAIN_BLOCK = BLOCK - 11;

function privateKeyOf(key: string | KeyObject): KeyObject {
  if (typeof key !== 'string') return key;
  return key.includes('BEGIN') ? createPrivateKey(key) : createPrivateKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'pkcs8' });
}
function publicKeyOf(key: string | KeyObject): KeyObject {
  if (typeof key !== 'string') return key;
  return key.includes('BEGIN') ? createPublicKey(key) : createPublicKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'spki' });
}

/** RSA/ECB/PKCS1Padding in 245-byte blocks, Base64 once over the concatenated 256-byte blocks (D50). */
export function rsaEncryptSegmented(publicKey: KeyObject, plaintext: Buffer): string {
  const out: Buffer[] = [];
  for (let at = 0; at < plaintext.length || at === 0; at += PLAIN_BLOCK) {
    out.push(publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_PADDING }, plaintext.subarray(at, at + PLAIN_BLOCK)));
  }
  return Buffer.concat(out).toString('base64');
}

const bit = (x: number) => ((x | -x) >>> 31) ^ 1; // 1 when the byte is 0
const pick = (b: number, x: number, y: number) => (x & -b) | (y & ~-b);

const rejectionKeys = new WeakMap<KeyObject, Buffer>();
/** The implicit-rejection key of a private key (a hash of its DER), computed once per key. */
function rejectionKeyOf(privateKey: KeyObject): Buffer {
  let kdk = rejectionKeys.get(privateKey);
  if (!kdk) {
    kdk = createHash('sha256').update(privateKey.export({ format: 'der', type: 'pkcs8' })).digest();
    rejectionKeys.set(privateKey, kdk);
  }
  return kdk;
}

/** Raw RSA then a constant-time PKCS#1 v1.5 check with implicit rejection (a bad block yields pseudo-random bytes). */
export function rsaDecryptSegmented(privateKey: KeyObject, base64: string): Buffer {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length === 0 || bytes.length % BLOCK !== 0) throw new Error('data is not a whole number of 256-byte blocks');
  const kdk = rejectionKeyOf(privateKey);
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += BLOCK) {
    const block = bytes.subarray(at, at + BLOCK);
    const em = privateDecrypt({ key: privateKey, padding: constants.RSA_NO_PADDING }, block);
    const synthetic = Buffer.concat([0, 1, 2, 3, 4, 5, 6, 7].map((i) => createHmac('sha256', kdk).update('message').update(block).update(Buffer.from([0, i])).digest()));
    const l = createHmac('sha256', kdk).update('length').update(block).update(Buffer.from([0, 0])).digest();
    const syntheticLen = ((l[0] << 8) | l[1]) % (BLOCK - 10);
    let good = bit(em[0]) & bit(em[1] ^ 2);
    let found = 0;
    let zero = 0;
    for (let i = 2; i < BLOCK; i++) {
      const z = bit(em[i]) & (found ^ 1);
      zero = pick(z, i, zero);
      found |= z;
    }
    good &= found & (1 ^ (((zero - 10) >>> 31) & 1));
    const len = pick(good, BLOCK - zero - 1, syntheticLen);
    const mask = -good & 0xff;
    const merged = Buffer.alloc(BLOCK);
    for (let i = 0; i < BLOCK; i++) merged[i] = (em[i] & mask) | (synthetic[i] & ~mask & 0xff);
    parts.push(merged.subarray(BLOCK - len));
  }
  return Buffer.concat(parts);
}

/** Reads JSON numbers as their exact digit text, so amounts never pass through a float. */
function parseExact(text: string): AuthorizationRequest {
  const quoted = text.replace(/("(?:[^"\\]|\\.)*")|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g, (m, str: string | undefined) => (str ? m : JSON.stringify(m)));
  return JSON.parse(quoted) as AuthorizationRequest;
}

export class AuthUrlRequestError extends Error {}

/**
 * Returns `(body) => {status, body}`: 200 with the signed, encrypted answer; 400 for a request that
 * does not decrypt or is not signed by the service (never answer those).
 */
export function createAuthUrlHandler(options: AuthUrlHandlerOptions): (body: string) => Promise<{ status: number; body: string }> {
  const partnerKey = privateKeyOf(options.partnerPrivateKey);
  const serviceKey = publicKeyOf(options.servicePublicKey);
  return async (body: string) => {
    let request: AuthorizationRequest;
    try {
      const { data, sign: signature } = JSON.parse(body) as { data?: unknown; sign?: unknown };
      if (typeof data !== 'string' || typeof signature !== 'string') throw new AuthUrlRequestError('request lacks data and sign');
      const plaintext = rsaDecryptSegmented(partnerKey, data);
      if (!verify('sha256', plaintext, serviceKey, Buffer.from(signature, 'base64'))) throw new AuthUrlRequestError('request is not signed by the service');
      request = parseExact(plaintext.toString('utf8'));
    } catch (err) {
      return { status: 400, body: JSON.stringify({ error: err instanceof AuthUrlRequestError ? err.message : 'request does not decrypt' }) };
    }
    const decision = await options.decide(request);
    const answer = Buffer.from(JSON.stringify({ transId: request.transId, approved: decision.approved, declineReason: decision.approved ? null : decision.declineReason ?? null }), 'utf8');
    return {
      status: 200,
      body: JSON.stringify({ data: rsaEncryptSegmented(serviceKey, answer), sign: sign('sha256', answer, partnerKey).toString('base64') }),
    };
  };
}
