/**
 * Segmented RSA of spec 5.6 with D37 and D50, interoperable with Java's JCE
 * (`RSA/ECB/PKCS1Padding`, `SHA256withRSA`, `X509EncodedKeySpec`):
 *
 *   encryptSegmented(publicKey, plaintext)  RSA-2048 PKCS#1 v1.5, 245-byte plaintext blocks, each
 *                                           256 bytes of ciphertext; Base64 once over the
 *                                           concatenation (D50)
 *   decryptSegmented(privateKey, base64)    the reverse, WITHOUT Node's refused PKCS#1 v1.5 private
 *                                           decryption (CVE-2023-46809): raw RSA (RSA_NO_PADDING)
 *                                           then a constant-time padding check with implicit
 *                                           rejection: a malformed block yields a pseudo-random
 *                                           message derived from the key and the ciphertext, never
 *                                           an error, so padding validity cannot be observed
 *   signSha256(privateKey, data) / verifySha256(publicKey, data, base64Signature)
 *   parseExternalPublicKey(base64)          single-line Base64 of an X.509 SubjectPublicKeyInfo DER
 *                                           of an RSA-2048 key (Java's PublicKey.getEncoded()), D50
 */
import {
  constants, createHash, createHmac, createPrivateKey, createPublicKey, privateDecrypt, publicEncrypt, sign, verify,
  type KeyObject,
} from 'node:crypto';

/** RSA-2048: 256-byte blocks; PKCS#1 v1.5 takes 11 bytes of padding, so 245 bytes of plaintext (5.6). */
export const RSA_BLOCK_BYTES = 256;
export const RSA_PLAINTEXT_BLOCK_BYTES = RSA_BLOCK_BYTES - 11;
/** Bound on a forwarded or answered message: 64 blocks (about 15 KiB of JSON). */
export const RSA_MAX_BLOCKS = 64;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export class RsaFormatError extends Error {}

export function encryptSegmented(publicKey: KeyObject, plaintext: Buffer): string {
  const blocks: Buffer[] = [];
  for (let at = 0; at < plaintext.length || at === 0; at += RSA_PLAINTEXT_BLOCK_BYTES) {
    blocks.push(publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_PADDING }, plaintext.subarray(at, at + RSA_PLAINTEXT_BLOCK_BYTES)));
    if (blocks.length > RSA_MAX_BLOCKS) throw new RsaFormatError(`plaintext exceeds ${RSA_MAX_BLOCKS} blocks`);
  }
  return Buffer.concat(blocks).toString('base64');
}

/** Implicit-rejection key of a private key: a hash of its DER, so synthetic messages are stable per key. */
const rejectionKeys = new WeakMap<KeyObject, Buffer>();
function rejectionKeyOf(privateKey: KeyObject): Buffer {
  let kdk = rejectionKeys.get(privateKey);
  if (!kdk) {
    kdk = createHash('sha256').update(privateKey.export({ format: 'der', type: 'pkcs8' })).digest();
    rejectionKeys.set(privateKey, kdk);
  }
  return kdk;
}

/** `len` pseudo-random bytes keyed by kdk over the ciphertext block (HMAC-SHA256 in counter mode). */
function prf(kdk: Buffer, label: string, block: Buffer, len: number): Buffer {
  const out = Buffer.alloc(Math.ceil(len / 32) * 32);
  for (let i = 0; i * 32 < len; i++) {
    createHmac('sha256', kdk).update(label).update(block).update(Buffer.from([i >> 8, i & 0xff])).digest().copy(out, i * 32);
  }
  return out.subarray(0, len);
}

/**
 * PKCS#1 v1.5 type 2 unpadding of a raw RSA block `em` (0x00 0x02 PS(>= 8 non-zero) 0x00 M) in
 * constant time with respect to the padding: every byte is visited, validity is a mask, and the
 * output is selected bytewise between the real message and a synthetic one. Returns the message;
 * a malformed block returns the synthetic message (implicit rejection), which the caller's
 * signature check then refuses like any other bad answer.
 */
export function unpadPkcs1v15(em: Buffer, kdk: Buffer, ciphertext: Buffer): Buffer {
  const k = em.length;
  const synthetic = prf(kdk, 'message', ciphertext, k);
  const lengthBytes = prf(kdk, 'length', ciphertext, 2);
  const maxLen = k - 11;
  const syntheticLen = ((lengthBytes[0] << 8) | lengthBytes[1]) % (maxLen + 1);

  // good = em[0] == 0 && em[1] == 2, as an all-ones (1) or zero (0) bit.
  let good = isZero(em[0]) & isZero(em[1] ^ 2);
  // The first zero byte at index >= 2, found without branching on the data.
  let found = 0;
  let zeroIndex = 0;
  for (let i = 2; i < k; i++) {
    const zero = isZero(em[i]) & (found ^ 1);
    zeroIndex = select(zero, i, zeroIndex);
    found |= zero;
  }
  good &= found & (1 ^ isLess(zeroIndex, 10)); // at least 8 bytes of PS
  const realLen = k - zeroIndex - 1;
  const outLen = select(good, realLen, syntheticLen);
  const mask = -good & 0xff;
  const merged = Buffer.alloc(k);
  for (let i = 0; i < k; i++) merged[i] = (em[i] & mask) | (synthetic[i] & ~mask & 0xff);
  return Buffer.from(merged.subarray(k - outLen));
}

/** 1 when x (a byte) is 0, else 0, without branching. */
function isZero(x: number): number {
  return ((x | -x) >>> 31) ^ 1;
}
/** 1 when a < b (small non-negative integers), else 0. */
function isLess(a: number, b: number): number {
  return ((a - b) >>> 31) & 1;
}
/** bit ? a : b without branching (bit is 0 or 1). */
function select(bit: number, a: number, b: number): number {
  const m = -bit;
  return (a & m) | (b & ~m);
}

export function decryptSegmented(privateKey: KeyObject, base64: string): Buffer {
  if (!BASE64.test(base64)) throw new RsaFormatError('data is not Base64');
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length === 0 || bytes.length % RSA_BLOCK_BYTES !== 0) throw new RsaFormatError(`data is not a whole number of ${RSA_BLOCK_BYTES}-byte blocks`);
  if (bytes.length / RSA_BLOCK_BYTES > RSA_MAX_BLOCKS) throw new RsaFormatError(`data exceeds ${RSA_MAX_BLOCKS} blocks`);
  const kdk = rejectionKeyOf(privateKey);
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += RSA_BLOCK_BYTES) {
    const block = bytes.subarray(at, at + RSA_BLOCK_BYTES);
    let em: Buffer;
    try {
      em = privateDecrypt({ key: privateKey, padding: constants.RSA_NO_PADDING }, block);
    } catch {
      // A block not below the modulus: no RSA value at all (public information, not padding).
      throw new RsaFormatError('block is not an RSA ciphertext for this key');
    }
    parts.push(unpadPkcs1v15(em, kdk, block));
  }
  return Buffer.concat(parts);
}

export function signSha256(privateKey: KeyObject, data: Buffer): string {
  return sign('sha256', data, { key: privateKey, padding: constants.RSA_PKCS1_PADDING }).toString('base64');
}

export function verifySha256(publicKey: KeyObject, data: Buffer, signatureBase64: string): boolean {
  if (!BASE64.test(signatureBase64)) return false;
  try {
    return verify('sha256', data, { key: publicKey, padding: constants.RSA_PKCS1_PADDING }, Buffer.from(signatureBase64, 'base64'));
  } catch {
    return false;
  }
}

/** D50: single-line Base64 of an X.509 SubjectPublicKeyInfo DER holding an RSA-2048 key; null when it is anything else. */
export function parseExternalPublicKey(base64: string): KeyObject | null {
  if (!BASE64.test(base64)) return null;
  try {
    const key = createPublicKey({ key: Buffer.from(base64, 'base64'), format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'rsa' || key.asymmetricKeyDetails?.modulusLength !== 2048) return null;
    // Canonical: re-encoding gives the same bytes (no trailing garbage, no alternative encodings).
    if (!key.export({ format: 'der', type: 'spki' }).equals(Buffer.from(base64, 'base64'))) return null;
    return key;
  } catch {
    return null;
  }
}

/** The SPKI Base64 of a public key, or of a private key's public half. */
export function publicKeyBase64(key: KeyObject): string {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  return publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
}

export function privateKeyFromPkcs8(der: Buffer): KeyObject {
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}
