import { randomInt } from 'node:crypto';
import { invariant } from '../errors.ts';

/**
 * Primary account numbers (D26): the profile's BIN, random account digits, and a Luhn (mod 10)
 * check digit. Uniqueness is the caller's job (the cards store keeps a keyed fingerprint with a
 * unique index). Nothing here logs or formats a PAN for display.
 */

/** ISO/IEC 7812: PANs are 12 to 19 digits; the networks this service issues on use 16. */
export const DEFAULT_PAN_LENGTH = 16;
const MIN_PAN_LENGTH = 12;
const MAX_PAN_LENGTH = 19;

/** The check digit that makes `partial + digit` pass the Luhn test. */
export function luhnCheckDigit(partial: string): string {
  invariant(/^\d+$/.test(partial), 'Luhn input is digits');
  let sum = 0;
  // Walking from the right of the partial number, the first digit is the one doubled (the check
  // digit will take the rightmost, undoubled position).
  for (let i = partial.length - 1, double = true; i >= 0; i--, double = !double) {
    let d = partial.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}

export function isLuhnValid(pan: string): boolean {
  if (!/^\d{2,}$/.test(pan)) return false;
  return luhnCheckDigit(pan.slice(0, -1)) === pan.slice(-1);
}

/** A random PAN under `bin`: BIN + uniformly random account digits + Luhn check digit. */
export function generatePan(bin: string, length: number = DEFAULT_PAN_LENGTH): string {
  invariant(/^\d{6,8}$/.test(bin), 'BIN is 6 to 8 digits');
  invariant(Number.isInteger(length) && length >= MIN_PAN_LENGTH && length <= MAX_PAN_LENGTH, 'PAN length within ISO 7812');
  invariant(length - bin.length >= 7, 'at least 6 account digits after the BIN');
  let account = '';
  for (let i = bin.length; i < length - 1; i++) account += String(randomInt(10));
  const partial = bin + account;
  const pan = partial + luhnCheckDigit(partial);
  invariant(isLuhnValid(pan), 'generated PAN passes Luhn');
  return pan;
}

export function panFirst6(pan: string): string {
  return pan.slice(0, 6);
}

export function panLast4(pan: string): string {
  return pan.slice(-4);
}

/** Network of a BIN by its leading digits: VISA 4; MASTERCARD 51-55 and 2221-2720. */
export function binMatchesNetwork(bin: string, network: 'VISA' | 'MASTERCARD'): boolean {
  if (network === 'VISA') return bin.startsWith('4');
  const two = Number(bin.slice(0, 2));
  const four = Number(bin.slice(0, 4));
  return (two >= 51 && two <= 55) || (four >= 2221 && four <= 2720);
}
