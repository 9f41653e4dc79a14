import { createCipheriv } from 'node:crypto';
import { invariant } from '../errors.ts';

/**
 * Card verification values with the classic Visa CVV algorithm (the one issuer HSMs implement),
 * keyed by a double-length DES card-verification key (CVK = KA | KB, 16 bytes):
 *
 *   1. data = PAN || expiry YYMM || service code, right-padded with '0' to 32 hex digits;
 *   2. B1, B2 = the two 8-byte halves of data;
 *   3. R = DES-encrypt(KA, B1) XOR B2;
 *   4. R = 3DES-EDE-encrypt(KA|KB, R)   (encrypt KA, decrypt KB, encrypt KA);
 *   5. decimalize the 16 hex digits of R: first the decimal digits left to right, then the
 *      letters A-F as 0-5, left to right; the CVV is the first three.
 *
 * CVV2 (the printed code, D26) is this value with service code 000. OpenSSL 3 refuses single DES
 * (legacy provider), so single-DES encryption under KA is DES-EDE3 with KA|KA|KA, which is the
 * same permutation (E_KA(D_KA(E_KA(x))) = E_KA(x)), and step 4 is DES-EDE3 with KA|KB|KA.
 */

export const CVK_BYTES = 16;
/** Service code of the printed CVV2 (D26). */
export const CVV2_SERVICE_CODE = '000';

function desEde3Ecb(key24: Buffer, block: Buffer): Buffer {
  const cipher = createCipheriv('des-ede3-ecb', key24, null);
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(block), cipher.final()]);
}

export function computeCvv(cvk: Buffer, pan: string, expiryYymm: string, serviceCode: string): string {
  invariant(cvk.length === CVK_BYTES, 'CVK is a double-length DES key');
  invariant(/^\d{12,19}$/.test(pan), 'PAN is 12-19 digits');
  invariant(/^\d{4}$/.test(expiryYymm), 'expiry is YYMM');
  invariant(/^\d{3}$/.test(serviceCode), 'service code is 3 digits');
  const ka = cvk.subarray(0, 8);
  const kb = cvk.subarray(8, 16);
  const data = (pan + expiryYymm + serviceCode).padEnd(32, '0');
  const b1 = Buffer.from(data.slice(0, 16), 'hex');
  const b2 = Buffer.from(data.slice(16, 32), 'hex');
  const r1 = desEde3Ecb(Buffer.concat([ka, ka, ka]), b1);
  for (let i = 0; i < 8; i++) r1[i] ^= b2[i];
  const r2 = desEde3Ecb(Buffer.concat([ka, kb, ka]), r1).toString('hex').toUpperCase();
  let digits = '';
  for (const ch of r2) if (ch >= '0' && ch <= '9') digits += ch;
  for (const ch of r2) if (ch >= 'A' && ch <= 'F') digits += String(ch.charCodeAt(0) - 65);
  return digits.slice(0, 3);
}

/** The printed CVV2 of a card (service code 000); derived on demand, never stored. */
export function computeCvv2(cvk: Buffer, pan: string, expiryYymm: string): string {
  return computeCvv(cvk, pan, expiryYymm, CVV2_SERVICE_CODE);
}

/** Key check value: the first 3 bytes of the key encrypting a zero block, as hex (names a key without revealing it). */
export function desKeyCheckValue(cvk: Buffer): string {
  invariant(cvk.length === CVK_BYTES, 'CVK is a double-length DES key');
  const key24 = Buffer.concat([cvk.subarray(0, 8), cvk.subarray(8, 16), cvk.subarray(0, 8)]);
  return desEde3Ecb(key24, Buffer.alloc(8)).subarray(0, 3).toString('hex').toUpperCase();
}
