import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Static } from 'typebox';
import type { SignatureCheckBody, SignatureCheckReport } from '../../../sdk/contract/partners.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/db.ts';
import { isoTime } from '../../platform/http/schema.ts';
import { ipAllowed } from '../../platform/http/ip.ts';
import { API_KEY_FORMAT, NONCE_FORMAT, SIGN_FORMAT, TIMESTAMP_FORMAT } from '../../platform/http/signed-request.ts';
import type { PartnerCache } from './authenticate.ts';
import { nonceRecorded } from './store.ts';

/**
 * The signature self-check (issue 31, sandbox only): what a partner signed, checked step by step in
 * the order of D5 by the same rules as authentication (5.2-5.4, D5-D7), with enough detail to find
 * the mistake and nothing that helps forge a signature:
 * - the string to sign is described by its UTF-8 length and SHA-256 (a hash of the caller's own
 *   values: it needs no secret), per part too;
 * - the secret is used for one thing only, an HMAC of exactly the string the real authentication
 *   would sign, compared in constant time with the caller's candidate (an oracle only for someone
 *   who already holds a candidate, and charged as a failed authentication per call by the route);
 * - the expected signature, the secret, or an HMAC of anything else is never computed for output;
 * - an unknown key answers matches=false without computing anything with any key;
 * - the replay store is read, never written: a check never uses up the nonce of a real request.
 */

export interface SignatureCheckDeps {
  config: Config;
  db: Db;
  clock: Clock;
  partnerCache: PartnerCache;
}

type Input = Static<typeof SignatureCheckBody>;
type Report = Static<typeof SignatureCheckReport>;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const utf8 = (text: string) => Buffer.from(text, 'utf8');

const NONCE_RULE = 'An integer in [10000, 99999] (5 digits, no sign, no leading zero), fresh for each request';
const STRING_TO_SIGN_RULE = 'apiKey + timestamp + nonce + payload, concatenated with no separator, as UTF-8 bytes; '
  + 'payload = the query string after "?" for GET (empty when none), the exact body text for POST';

export async function checkSignature(deps: SignatureCheckDeps, input: Input, ip: string): Promise<Report> {
  const nowMs = deps.clock.now();
  const windowMs = deps.config.timestampWindowMs;

  const apiKeyFormatOk = API_KEY_FORMAT.test(input.apiKey);
  const partner = apiKeyFormatOk ? await deps.partnerCache.get(input.apiKey) : null;
  const ipOk = partner ? ipAllowed(partner.ipWhitelist.api, ip, deps.config.env) : null;

  const timestampFormatOk = TIMESTAMP_FORMAT.test(input.timestamp);
  const skewMs = timestampFormatOk ? Number(input.timestamp) - nowMs : null;
  const withinWindow = skewMs !== null && Math.abs(skewMs) <= windowMs;
  const nonceValid = NONCE_FORMAT.test(input.nonce);

  const parts = [input.apiKey, input.timestamp, input.nonce, input.payload].map(utf8);
  const stringToSign = Buffer.concat(parts);
  const signatureFormatOk = SIGN_FORMAT.test(input.signature);
  // The one use of the secret: the HMAC the real authentication computes, compared, never shown.
  const matches = partner !== null && signatureFormatOk
    && timingSafeEqual(createHmac('sha256', utf8(partner.secretKey)).update(stringToSign).digest(), Buffer.from(input.signature, 'hex'));

  const alreadyUsed = partner && timestampFormatOk && nonceValid
    ? await nonceRecorded(deps.db, { apiKey: input.apiKey, timestampMs: Number(input.timestamp), nonce: Number(input.nonce) })
    : null;

  // D5's order: the first failing check is what the real request would be refused with.
  const verdict = !partner ? 'DAPI_API_KEY_INVALID'
    : !ipOk ? 'DAPI_IP_NOT_ALLOWED'
      : !timestampFormatOk ? 'DAPI_TIMESTAMP_FORMAT_ERROR'
        : !withinWindow ? 'DAPI_TIMESTAMP_EXPIRED'
          : !nonceValid ? 'DAPI_NONCE_INVALID'
            : !matches ? 'DAPI_SIGN_INVALID'
              : alreadyUsed ? 'DAPI_NONCE_REPLAYED' : 'SYS_SUCCESS';

  return {
    serverTime: isoTime(new Date(nowMs))!,
    serverTimeMs: nowMs,
    verdict,
    apiKey: { formatOk: apiKeyFormatOk, known: partner !== null },
    ipAddress: { address: ip, allowed: ipOk },
    timestamp: { value: input.timestamp, formatOk: timestampFormatOk, withinWindow, skewMs, windowMs },
    nonce: { value: input.nonce, valid: nonceValid, rule: NONCE_RULE, alreadyUsed },
    stringToSign: {
      rule: STRING_TO_SIGN_RULE,
      length: stringToSign.length,
      sha256: sha256(stringToSign),
      parts: {
        apiKey: { length: parts[0].length },
        timestamp: { length: parts[1].length },
        nonce: { length: parts[2].length },
        payload: { length: parts[3].length, sha256: sha256(parts[3]) },
      },
    },
    signature: { formatOk: signatureFormatOk, matches },
    hints: hintsFor(input, { known: partner !== null, ipOk, skewMs, windowMs, matches, signatureFormatOk, alreadyUsed, ip }),
  };
}

/** Likely mistakes, read from the caller's own values only (nothing here depends on the secret but `matches`). */
function hintsFor(input: Input, seen: {
  known: boolean; ipOk: boolean | null; skewMs: number | null; windowMs: number; matches: boolean; signatureFormatOk: boolean;
  alreadyUsed: boolean | null; ip: string;
}): string[] {
  const hints: string[] = [];
  const { apiKey, timestamp, nonce, payload, signature, method } = input;
  if (apiKey.trim() !== apiKey) hints.push('apiKey has leading or trailing whitespace');
  else if (/^[0-9A-Fa-f]{32}$/.test(apiKey) && apiKey !== apiKey.toLowerCase()) hints.push('apiKey is lowercase hexadecimal: yours has uppercase letters');
  else if (!API_KEY_FORMAT.test(apiKey)) hints.push('apiKey must be the 32 lowercase hexadecimal characters you were issued');
  else if (!seen.known) hints.push('No active partner holds this apiKey in this environment: sandbox and production keys differ');
  if (seen.ipOk === false) hints.push(`Your address ${seen.ip} is not on the API whitelist of this key`);

  if (/^\d{10}$/.test(timestamp)) hints.push('timestamp looks like seconds: send epoch milliseconds (13 digits)');
  else if (!TIMESTAMP_FORMAT.test(timestamp)) hints.push('timestamp must be the 13-digit epoch milliseconds, as text, with nothing around it');
  else if (seen.skewMs !== null && Math.abs(seen.skewMs) > seen.windowMs) {
    hints.push(`timestamp is ${Math.abs(seen.skewMs)} ms ${seen.skewMs > 0 ? 'ahead of' : 'behind'} the service clock (at most ${seen.windowMs} ms are accepted): `
      + 'sync your clock (NTP) and sign just before sending');
  }

  if (!NONCE_FORMAT.test(nonce)) hints.push(`nonce: ${NONCE_RULE}`);
  if (seen.alreadyUsed) hints.push('A request with this apiKey, timestamp and nonce was already accepted: use a fresh nonce (and timestamp) per request');

  if (/^[0-9A-F]{64}$/.test(signature) && /[A-F]/.test(signature)) hints.push('signature must be lowercase hexadecimal: yours has uppercase letters');
  else if (/^[A-Za-z0-9+/]{43}=$/.test(signature) || /^[A-Za-z0-9_-]{43}$/.test(signature)) hints.push('signature looks like Base64: send the HMAC as 64 lowercase hexadecimal characters');
  else if (signature.trim() !== signature) hints.push('signature has leading or trailing whitespace');
  else if (!seen.signatureFormatOk) hints.push('signature must be 64 lowercase hexadecimal characters (HMAC-SHA256)');

  if (method === 'GET') {
    if (payload.startsWith('?')) hints.push('For GET, sign the query string without the leading "?"');
    else if (/^(https?:\/\/|\/)/.test(payload)) hints.push('For GET, sign only the query string (what follows "?"), not the path or the URL');
    if (/[^\x21-\x7e]/.test(payload)) hints.push('For GET, sign the query string exactly as it appears on the wire (percent-encoded): it contains spaces or non-ASCII characters');
  } else {
    if (payload === '') hints.push('For POST, sign the exact body you send; an empty body is rarely right (the SDK sends {} for no fields)');
    else if (!isJson(payload)) hints.push('For POST, the payload is the body text exactly as sent: this one is not JSON');
  }

  if (seen.known && seen.signatureFormatOk && !seen.matches) {
    hints.push('The signature does not match: compute the SHA-256 of your own string to sign (UTF-8). If it differs from stringToSign.sha256, '
      + 'compare the parts to find which one; if it is equal, you signed with another secretKey (keyed with its UTF-8 bytes)');
  }
  return hints;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
