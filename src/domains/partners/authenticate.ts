import { createSecretKey, type KeyObject } from 'node:crypto';
import type { Config } from '../../config.ts';
import type { AuthenticatedPartner } from '../../platform/caller.ts';
import type { Clock } from '../../platform/clock.ts';
import { unseal } from '../../platform/crypto/secrets.ts';
import type { Db } from '../../platform/db/db.ts';
import { ApiError } from '../../platform/errors.ts';
import { ipAllowed } from '../../platform/http/ip.ts';
import { API_KEY_FORMAT, verifySignedRequest, type SignedRequest } from '../../platform/http/signed-request.ts';
import { ReplayStore, type ReplayVerdict } from './replay-store.ts';
import { findPartnerByApiKey, type Partner } from './store.ts';

export type { SignedRequest };

export type { AuthenticatedPartner };


/**
 * Decrypted secret keys by their ciphertext (the ciphertext changes whenever the key does), each
 * with its HMAC key object, made once per key (issue 34).
 */
const secretCache = new Map<string, { secret: string; hmacKey: KeyObject }>();
const SECRET_CACHE_MAX = 10_000;

export function partnerSecretContext(partnerId: string): string {
  return `partner-secret:${partnerId}`;
}

/** The partner's secret key in the clear (signs its webhooks); throws if the master key cannot open it. */
export function revealPartnerSecret(masterKey: Buffer, partnerId: string, secretKeyEnc: string): string {
  return unseal(masterKey, secretKeyEnc, partnerSecretContext(partnerId));
}

function secretKeyOf(partner: Partner, masterKey: Buffer): { secret: string; hmacKey: KeyObject } {
  const sealed = partner.secretKeyEnc!;
  let entry = secretCache.get(sealed);
  if (entry === undefined) {
    const secret = unseal(masterKey, sealed, partnerSecretContext(partner.partnerId));
    entry = { secret, hmacKey: createSecretKey(Buffer.from(secret, 'utf8')) };
    if (secretCache.size >= SECRET_CACHE_MAX) secretCache.clear();
    secretCache.set(sealed, entry);
  }
  return entry;
}

/**
 * A partner as the cache holds it: the caller's settings with its decrypted secret, the whole row
 * (the settings read answers from it), and the row version it was read at.
 */
export type CachedPartner = AuthenticatedPartner & Omit<Partner, 'apiKey'> & { readonly rowVersion: string; readonly hmacKey: KeyObject };

/** The partner row a signed call was authenticated on (PartnerAuthenticator), when it has one. */
export function authenticatedRow(p: AuthenticatedPartner): CachedPartner | null {
  return typeof (p as Partial<CachedPartner>).rowVersion === 'string' ? (p as CachedPartner) : null;
}

/**
 * Partners by API key, kept for a short time so a signed call does not pay a database round trip to
 * find its caller. A settings or credential change reaches every instance within PARTNER_CACHE_TTL_MS;
 * a signed partner call also checks the row version in its replay-store statement (PartnerAuthenticator).
 */
export class PartnerCache {
  private readonly entries = new Map<string, { partner: CachedPartner | null; expiresAt: number }>();
  private static readonly MAX_ENTRIES = 10_000;

  constructor(private readonly db: Db, private readonly ttlMs: number, private readonly masterKey: Buffer) {}

  /** The active partner holding this API key, with its secret key decrypted; null if none. */
  async get(apiKey: string): Promise<CachedPartner | null> {
    const hit = this.fresh(apiKey);
    return hit !== undefined ? hit : this.reload(apiKey);
  }

  /** The cached answer for this API key while it is fresh (null: no active partner holds it); undefined when it must be read. */
  fresh(apiKey: string): CachedPartner | null | undefined {
    const hit = this.entries.get(apiKey);
    return hit && hit.expiresAt > Date.now() ? hit.partner : undefined;
  }

  /** Reads the partner again, whatever the cache holds (a newer row version was seen). */
  async reload(apiKey: string): Promise<CachedPartner | null> {
    const now = Date.now();
    const row = await findPartnerByApiKey(this.db, apiKey);
    let partner: CachedPartner | null = null;
    if (row && row.status === 'ACTIVE' && row.secretKeyEnc) {
      const { secret, hmacKey } = secretKeyOf(row, this.masterKey);
      partner = Object.freeze({ ...row, apiKey, secretKey: secret, hmacKey });
    }
    if (this.ttlMs > 0) {
      if (this.entries.size >= PartnerCache.MAX_ENTRIES) this.entries.clear();
      this.entries.set(apiKey, { partner, expiresAt: now + this.ttlMs });
    }
    return partner;
  }

  /** Called by this instance after it changed a partner; other instances see it after the TTL. */
  clear(): void {
    this.entries.clear();
  }
}

/**
 * 5.2-5.4 with D5-D7, checks in the order of D5: API key -> IP whitelist -> timestamp format ->
 * timestamp window -> nonce format -> signature -> replay. Only a correctly signed request reaches
 * the replay store, so unsigned traffic cannot poison it; every rejection writes nothing.
 */
export class PartnerAuthenticator {
  private readonly replayStore: ReplayStore;

  constructor(private readonly deps: { db: Db; config: Config; clock: Clock }, private readonly partners: PartnerCache) {
    this.replayStore = new ReplayStore(deps.db, { windowMs: deps.config.timestampWindowMs, now: () => deps.clock.now() });
  }

  /**
   * The partner as of this request: the replay-store statement also reads the partner's row
   * version (issue 34). When the cached row is older (a change committed on any instance), the
   * checks run again on the current row, in D5's order, before the replay verdict counts. So no
   * request is accepted on an outdated row, and the partner returned is the database's row as of
   * that statement (the settings read answers from it).
   */
  async authenticate(req: SignedRequest): Promise<CachedPartner> {
    const { deps } = this;
    const { apiKey } = req;
    if (!apiKey || !API_KEY_FORMAT.test(apiKey)) throw new ApiError('DAPI_API_KEY_INVALID');
    // A fresh cache entry is used without an await (issue 34: one promise and its ticks fewer per call).
    let partner = this.partners.fresh(apiKey);
    if (partner === undefined) partner = await this.partners.reload(apiKey);
    const replayKey = this.verify(partner, req, apiKey);
    const { verdict, partnerVersion } = await this.replayStore.record(replayKey);
    if (partnerVersion !== partner!.rowVersion) {
      partner = await this.partners.reload(apiKey);
      this.verify(partner, req, apiKey);
    }
    throwUnlessNew(verdict, deps.clock.now());
    return partner!;
  }

  /** D5's checks up to the signature on one row of the partner; the replay-store key of a valid request. */
  private verify(partner: CachedPartner | null, req: SignedRequest, apiKey: string) {
    const { deps } = this;
    if (!partner) throw new ApiError('DAPI_API_KEY_INVALID');
    if (!ipAllowed(partner.ipWhitelist.api, req.ip, deps.config.env)) throw new ApiError('DAPI_IP_NOT_ALLOWED');
    // req.apiKey is apiKey (checked by the caller): the request is passed as it is, not copied.
    return verifySignedRequest(req as SignedRequest & { apiKey: string }, partner.hmacKey, deps.clock.now(), deps.config.timestampWindowMs);
  }
}

/**
 * A replay-store verdict as D5's answer: a replay is DAPI_NONCE_REPLAYED. A timestamp the store
 * cannot vouch for (not later than its epoch plus the window, issue 34: the first seconds after a
 * crash of the database emptied the unlogged store) is SYS_UNAVAILABLE with Retry-After, the answer
 * to a database restart: a retry signed after the bound is accepted, a captured request never is.
 */
export function throwUnlessNew(verdict: ReplayVerdict, nowMs: number): void {
  if (verdict === 'NEW') return;
  if (verdict === 'REPLAYED') throw new ApiError('DAPI_NONCE_REPLAYED');
  const seconds = Math.max(1, Math.ceil((verdict.acceptsAfterMs + 1 - nowMs) / 1000));
  throw new ApiError('SYS_UNAVAILABLE', undefined, { headers: { 'retry-after': String(seconds) } });
}

/** The shared replay store (D5, D7) for another signed caller (the card network ingress). */
export interface ReplayGuard {
  record(key: { apiKey: string; timestampMs: number; nonce: number }): Promise<ReplayVerdict>;
}

export function newReplayGuard(deps: { db: Db; config: Config; clock: Clock }): ReplayGuard {
  const store = new ReplayStore(deps.db, { windowMs: deps.config.timestampWindowMs, now: () => deps.clock.now() });
  return { record: async (key) => (await store.record(key)).verdict };
}
