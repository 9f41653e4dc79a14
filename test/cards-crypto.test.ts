// test-database: none (never opens the test database: `npm test` runs it in the embedded pass only; test/run.ts)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createDecipheriv } from 'node:crypto';
import { computeCvv, computeCvv2, desKeyCheckValue } from '../src/platform/crypto/cvv.ts';
import { binMatchesNetwork, generatePan, isLuhnValid, luhnCheckDigit, panFirst6, panLast4 } from '../src/platform/crypto/pan.ts';
import { encryptSecureCard, SECURE_CARD_IV_BYTES, SECURE_CARD_TAG_BYTES } from '../src/platform/crypto/secure-card.ts';
import { decryptSecureCard, SecureCardDecryptError } from '../sdk/index.ts';
import { luhnOk } from './helpers/cards.ts';

/**
 * Known answers and properties of the card cryptography (D26, D27). The end-to-end use of the same
 * code is covered in cards-manage.test.ts; these pin the algorithms to published values.
 */

// Test values only: a well-known demonstration CVK and a test PAN, never a real card.
const DEMO_CVK = Buffer.from('0123456789ABCDEFFEDCBA9876543210', 'hex');
const PARTNER_SECRET = 'Abcdefghijklmnopqrstuvwxyz012345';

describe('CVV with a double-length DES key (D26)', () => {
  it('matches the published Visa CVV test vectors', () => {
    assert.equal(computeCvv(DEMO_CVK, '4123456789012345', '8701', '101'), '561');
    assert.equal(computeCvv(DEMO_CVK, '4999988887777000', '9105', '111'), '245');
  });

  it('CVV2 is the same algorithm with service code 000, stable and dependent on every input', () => {
    const base = computeCvv2(DEMO_CVK, '4123456789012345', '8701');
    assert.equal(base, computeCvv(DEMO_CVK, '4123456789012345', '8701', '000'));
    assert.match(base, /^\d{3}$/);
    assert.equal(computeCvv2(DEMO_CVK, '4123456789012345', '8701'), base, 'deterministic');
    const variants = [
      computeCvv2(DEMO_CVK, '4123456789012345', '8702'),
      computeCvv2(DEMO_CVK, '4123456789012353', '8701'),
      computeCvv2(Buffer.from('0123456789ABCDEF0123456789ABCDEE', 'hex'), '4123456789012345', '8701'),
    ];
    assert.ok(variants.some((v) => v !== base), 'expiry, PAN and key feed the value');
  });

  it('names a key by its check value without revealing it', () => {
    assert.match(desKeyCheckValue(DEMO_CVK), /^[0-9A-F]{6}$/);
    assert.notEqual(desKeyCheckValue(DEMO_CVK), desKeyCheckValue(Buffer.from('00112233445566778899AABBCCDDEEFF', 'hex')));
  });
});

describe('PAN generation (D26)', () => {
  it('computes Luhn check digits (79927398713 is the textbook example)', () => {
    assert.equal(luhnCheckDigit('7992739871'), '3');
    assert.ok(isLuhnValid('79927398713'));
    assert.ok(!isLuhnValid('79927398710'));
  });

  it('draws 16-digit PANs under the BIN that pass an independent Luhn check', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const pan = generatePan('462263');
      assert.ok(/^462263\d{10}$/.test(pan), 'BIN prefix and 16 digits');
      assert.ok(luhnOk(pan), 'Luhn');
      assert.equal(panFirst6(pan), '462263');
      assert.equal(panLast4(pan), pan.slice(12));
      seen.add(pan);
    }
    assert.ok(seen.size > 1990, 'account digits are random');
    assert.ok(luhnOk(generatePan('53199412', 19)), '8-digit BIN, 19-digit PAN');
  });

  it('knows the network ranges of a BIN', () => {
    assert.ok(binMatchesNetwork('462263', 'VISA'));
    assert.ok(!binMatchesNetwork('462263', 'MASTERCARD'));
    assert.ok(binMatchesNetwork('531993', 'MASTERCARD'));
    assert.ok(binMatchesNetwork('222100', 'MASTERCARD'));
    assert.ok(binMatchesNetwork('272099', 'MASTERCARD'));
    assert.ok(!binMatchesNetwork('272100', 'MASTERCARD'));
    assert.ok(!binMatchesNetwork('601100', 'VISA'));
  });
});

describe('secure card encryption (2.6, D27)', () => {
  const plain = { cardId: 'cdtest', pan: '4622630000000000', cvv2: '123', expireDate: '11/29' };

  it('SHARED: one fresh 12-byte IV, each field Base64(ciphertext || 16-byte tag) as Java AES/GCM/NoPadding lays it out', () => {
    const out = encryptSecureCard(PARTNER_SECRET, plain, 'SHARED');
    assert.equal(Buffer.from(out.iv, 'base64').length, SECURE_CARD_IV_BYTES);
    assert.equal(out.cvv2Iv, undefined);
    assert.equal(out.expireDateIv, undefined);
    // Decrypt by hand, exactly as the docs describe: split the tag off the end.
    const field = Buffer.from(out.encryptedCvv2, 'base64');
    assert.equal(field.length, plain.cvv2.length + SECURE_CARD_TAG_BYTES);
    const d = createDecipheriv('aes-256-gcm', Buffer.from(PARTNER_SECRET, 'utf8'), Buffer.from(out.iv, 'base64'));
    d.setAuthTag(field.subarray(field.length - 16));
    assert.equal(Buffer.concat([d.update(field.subarray(0, field.length - 16)), d.final()]).toString('utf8'), plain.cvv2);
    assert.deepEqual(decryptSecureCard(PARTNER_SECRET, out), plain);
  });

  it('a fresh IV per call: two encryptions of the same card differ', () => {
    const a = encryptSecureCard(PARTNER_SECRET, plain, 'SHARED');
    const b = encryptSecureCard(PARTNER_SECRET, plain, 'SHARED');
    assert.notEqual(a.iv, b.iv);
    assert.notEqual(a.encryptedPan, b.encryptedPan);
  });

  it('PER_FIELD: three distinct IVs, decrypted by the same SDK helper', () => {
    const out = encryptSecureCard(PARTNER_SECRET, plain, 'PER_FIELD');
    assert.ok(out.cvv2Iv && out.expireDateIv);
    assert.equal(new Set([out.iv, out.cvv2Iv, out.expireDateIv]).size, 3);
    assert.deepEqual(decryptSecureCard(PARTNER_SECRET, out), plain);
  });

  it('a wrong key or a tampered field fails authentication', () => {
    const out = encryptSecureCard(PARTNER_SECRET, plain, 'SHARED');
    assert.throws(() => decryptSecureCard('Zbcdefghijklmnopqrstuvwxyz012345', out), SecureCardDecryptError);
    const raw = Buffer.from(out.encryptedPan, 'base64');
    raw[0] ^= 1;
    assert.throws(() => decryptSecureCard(PARTNER_SECRET, { ...out, encryptedPan: raw.toString('base64') }), SecureCardDecryptError);
  });
});
