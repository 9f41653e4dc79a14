import { createPublicKey } from 'node:crypto';
import type { Static } from 'typebox';
import type { UpdatePartnerBody } from '../../../sdk/contract/partners.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import { newApiKey, newId, newSecretKey, seal, sha256Hex, unseal } from '../../platform/crypto/secrets.ts';
import type { Db, Queryable } from '../../platform/db/db.ts';
import { ApiError, paramInvalid } from '../../platform/errors.ts';
import { canonicalTimeZone } from '../../platform/time-zone.ts';
import { isValidWhitelistEntry, normalizeIp } from '../../platform/http/ip.ts';
import type { Mailer } from '../../platform/mail.ts';
import { partnerSecretContext, type PartnerCache } from './authenticate.ts';
import { assertCallbackUrlAllowed } from '../../platform/http/ssrf.ts';
import {
  findValidWebhookSecrets, findWebhookTargets, rotateWebhookSecretRows,
  consumeCredentialLink, deleteNoncesBefore, findCredentialLinkForUpdate, findPartnerById, findPartnersByIds, insertCredentialLink, insertPartner,
  setPartnerCredentials, setPartnerTimeZone, updatePartnerSettings, type IpWhitelist, type Partner,
} from './store.ts';

export interface PartnerDeps {
  config: Config;
  db: Db;
  clock: Clock;
  mailer: Mailer;
  partnerCache: PartnerCache;
  /**
   * Called in the same transaction when what webhook delivery needs changed (webhook_url, status,
   * credentials): the composition root lets the events domain retry the partner's waiting events.
   */
  onDeliverySettingsChanged?: (q: Queryable, partnerId: string) => Promise<void>;
  /**
   * Issue 31: called in the same transaction (partner row locked) when the partner's time zone
   * changes: the composition root lets the velocity domain schedule its periods' switch.
   */
  onTimeZoneChanged?: (q: Queryable, partnerId: string, timeZone: string, now: Date) => Promise<unknown>;
}

/** The settings a create or update carries: the update route's body without the partner id (sdk/contract/partners.ts). */
export type PartnerInput = Omit<Static<typeof UpdatePartnerBody>, 'partnerId'>;

const WHITELIST_KINDS = ['api', 'webhook', 'auth', 'retrieval'] as const;
const EXTRACT_KEY_LENGTH = 48;
export const SECRET_EXTRACT_PATH = '/internal/open-api/v1/secret-extract/';

function checkWhitelist(list: Partial<IpWhitelist> | undefined, base: IpWhitelist): IpWhitelist {
  const merged: IpWhitelist = { ...base };
  for (const kind of WHITELIST_KINDS) {
    const entries = list?.[kind];
    if (entries === undefined) continue;
    for (const entry of entries) {
      if (!isValidWhitelistEntry(entry)) throw paramInvalid(`ipWhitelist.${kind}`, `"${entry}" is not an IP address or CIDR block`);
    }
    merged[kind] = [...new Set(entries)];
  }
  return merged;
}

/** 5.6 and D50: the single-line Base64 of an X.509 SubjectPublicKeyInfo of a 2048-bit RSA key. */
function checkExternalPublicKey(value: string | null | undefined): void {
  if (value === null || value === undefined) return;
  try {
    const key = createPublicKey({ key: Buffer.from(value, 'base64'), format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'rsa' || key.asymmetricKeyDetails?.modulusLength !== 2048) {
      throw new Error('not RSA-2048');
    }
  } catch {
    throw paramInvalid('externalPublicKey', 'must be the Base64 X.509 SubjectPublicKeyInfo of a 2048-bit RSA key');
  }
}

export function partnerView(p: Partner) {
  return {
    partnerId: p.partnerId,
    name: p.name,
    apiKey: p.apiKey,
    pciCertified: p.pciCertified,
    webhookUrl: p.webhookUrl,
    authUrl: p.authUrl,
    externalPublicKey: p.externalPublicKey,
    ipWhitelist: p.ipWhitelist,
    secureCardIvMode: p.secureCardIvMode,
    timeZone: p.timeZone,
    status: p.status,
    createTime: p.createdAt.toISOString(),
    modifyTime: p.updatedAt.toISOString(),
  };
}

/** D13: sandbox hands out credentials at once; production only through the retrieval link (4.1). */
export async function createPartner(deps: PartnerDeps, input: PartnerInput & { name: string }) {
  checkExternalPublicKey(input.externalPublicKey);
  // D38: in production, URLs reaching loopback, private or link-local addresses are refused (SSRF).
  await assertCallbackUrlAllowed(deps.config.env, 'webhookUrl', input.webhookUrl);
  await assertCallbackUrlAllowed(deps.config.env, 'authUrl', input.authUrl);
  const ipWhitelist = checkWhitelist(input.ipWhitelist, { api: [], webhook: [], auth: [], retrieval: [] });
  const timeZone = input.timeZone === undefined ? null : checkTimeZone(input.timeZone);
  const partnerId = newId('pt');
  const direct = deps.config.env === 'sandbox';
  const apiKey = direct ? newApiKey() : null;
  const secretKey = direct ? newSecretKey() : null;
  const partner = await deps.db.tx(async (q) => {
    const created = await insertPartner(q, {
    partnerId,
    name: input.name,
    apiKey,
    secretKeyEnc: secretKey ? seal(deps.config.masterKey, secretKey, partnerSecretContext(partnerId)) : null,
    pciCertified: input.pciCertified ?? false,
    webhookUrl: input.webhookUrl ?? null,
    authUrl: input.authUrl ?? null,
    externalPublicKey: input.externalPublicKey ?? null,
    ipWhitelist,
    secureCardIvMode: input.secureCardIvMode ?? 'SHARED',
    });
    return timeZone === null || timeZone === 'UTC' ? created : changeTimeZone(deps, q, created, timeZone);
  });
  return { ...partnerView(partner), partnerId, apiKey, secretKey };
}

export async function updatePartner(deps: PartnerDeps, partnerId: string, input: PartnerInput) {
  checkExternalPublicKey(input.externalPublicKey);
  // D38: in production, URLs reaching loopback, private or link-local addresses are refused (SSRF).
  await assertCallbackUrlAllowed(deps.config.env, 'webhookUrl', input.webhookUrl);
  await assertCallbackUrlAllowed(deps.config.env, 'authUrl', input.authUrl);
  const timeZone = input.timeZone === undefined ? null : checkTimeZone(input.timeZone);
  return deps.db.tx(async (q) => {
    const current = await findPartnerById(q, partnerId, true);
    if (!current) throw new ApiError('PARTNER_INVALID');
    let updated = await updatePartnerSettings(q, partnerId, {
      name: input.name ?? current.name,
      pciCertified: input.pciCertified ?? current.pciCertified,
      webhookUrl: input.webhookUrl !== undefined ? input.webhookUrl : current.webhookUrl,
      authUrl: input.authUrl !== undefined ? input.authUrl : current.authUrl,
      externalPublicKey: input.externalPublicKey !== undefined ? input.externalPublicKey : current.externalPublicKey,
      ipWhitelist: checkWhitelist(input.ipWhitelist, current.ipWhitelist),
      secureCardIvMode: input.secureCardIvMode ?? current.secureCardIvMode,
      status: input.status ?? current.status,
    });
    if (timeZone !== null && timeZone !== current.timeZone) updated = await changeTimeZone(deps, q, updated, timeZone);
    if (updated.webhookUrl !== current.webhookUrl || updated.status !== current.status) {
      await deps.onDeliverySettingsChanged?.(q, partnerId);
    }
    return partnerView(updated);
  }).finally(() => deps.partnerCache.clear());
}

/** Issue 31: an IANA zone name, canonicalized ('asia/hong_kong' -> 'Asia/Hong_Kong'); else DAPI_PARAM_INVALID. */
function checkTimeZone(value: string): string {
  const zone = canonicalTimeZone(value);
  if (zone === null) {
    throw paramInvalid('timeZone', `"${value}" is not an IANA time zone name; use a name such as Asia/Hong_Kong, America/New_York or UTC`);
  }
  return zone;
}

/** Sets the zone (partner row locked by the caller) and lets velocity schedule its periods' switch. */
async function changeTimeZone(deps: PartnerDeps, q: Queryable, partner: Partner, timeZone: string): Promise<Partner> {
  const updated = await setPartnerTimeZone(q, partner.partnerId, timeZone);
  await deps.onTimeZoneChanged?.(q, partner.partnerId, timeZone, new Date(deps.clock.now()));
  return updated;
}

/**
 * Issue 31: the calling partner sets its own time zone (the partner settings route). The periods of
 * velocity limits switch at their next boundary (docs/velocity.md).
 */
export async function setOwnTimeZone(deps: PartnerDeps, partnerId: string, value: string) {
  const timeZone = checkTimeZone(value);
  return deps.db.tx(async (q) => {
    const current = await findPartnerById(q, partnerId, true);
    if (!current) throw new ApiError('DAPI_API_KEY_INVALID');
    const updated = current.timeZone === timeZone ? current : await changeTimeZone(deps, q, current, timeZone);
    return partnerView(updated);
  }).finally(() => deps.partnerCache.clear());
}

function howToUse(extractUrl: string): string {
  return `Call GET ${extractUrl}{extractSecretKey} once, from the retrieval IP you registered. ` +
    'The answer carries your apiKey and secretKey; the link then stops working.';
}

const RETRIEVAL_NOTES =
  'Store the secretKey in a secret manager; it is never sent in a request, only used to sign. ' +
  'If retrieval fails, the link may already be consumed and the credentials compromised: contact the service team ' +
  'to have new credentials issued through a new link.';

/** 4.1 and D14: creates a one-time retrieval link and mails it to the partner's secure address. */
export async function createCredentialLink(deps: PartnerDeps, input: { partnerId: string; email: string; retrievalIp: string }) {
  if (!isValidWhitelistEntry(input.retrievalIp) || input.retrievalIp.includes('/')) {
    throw paramInvalid('retrievalIp', 'must be a single IP address');
  }
  // Without a mail transport the message (and its extract key) would wait in the outbox, readable by
  // operators; in production operators never see credentials, so no link is made at all.
  if (deps.config.env === 'production' && !deps.config.smtpUrl) {
    throw new ApiError('MAIL_TRANSPORT_REQUIRED', 'In production a credential link is sent only by email: configure SMTP_URL');
  }
  const extractSecretKey = newSecretKey(EXTRACT_KEY_LENGTH);
  const extractUrl = deps.config.publicBaseUrl + SECRET_EXTRACT_PATH;
  const expireTime = new Date(deps.clock.now() + deps.config.credentialLinkTtlMs);
  const linkId = newId('cl');
  const mailId = await deps.db.tx(async (q) => {
    const partner = await findPartnerById(q, input.partnerId);
    if (!partner) throw new ApiError('PARTNER_INVALID');
    await insertCredentialLink(q, {
      linkId, partnerId: partner.partnerId, extractKeyHash: sha256Hex(extractSecretKey), email: input.email,
      retrievalIp: normalizeIp(input.retrievalIp), expireTime,
    });
    return deps.mailer.enqueue(q, {
      to: input.email,
      subject: 'Your card-issuing API credentials: one-time retrieval link',
      body: [
        `extractUrl: ${extractUrl}`,
        `extractSecretKey: ${extractSecretKey}`,
        `expireTime: ${expireTime.toISOString()}`,
        `retrieval IP: ${normalizeIp(input.retrievalIp)}`,
        '',
        howToUse(extractUrl),
        RETRIEVAL_NOTES,
      ].join('\n'),
    });
  });
  await deps.mailer.deliver(mailId);
  return { linkId, partnerId: input.partnerId, email: input.email, retrievalIp: normalizeIp(input.retrievalIp), expireTime: expireTime.toISOString(), extractUrl };
}

/**
 * 4.1 and D14: the partner presents the extract key from the registered IP once. A wrong IP does not
 * consume the link (so a leaked link cannot be burnt from elsewhere); success issues fresh credentials,
 * which replace any earlier ones.
 */
export async function extractCredentials(deps: PartnerDeps, extractSecretKey: string, ip: string) {
  if (!/^[A-Za-z0-9]{1,128}$/.test(extractSecretKey)) throw new ApiError('SECRET_EXTRACT_INVALID');
  const now = new Date(deps.clock.now());
  // Cleared after commit, so no request can cache the old credentials in between.
  return deps.db.tx(async (q) => {
    const link = await findCredentialLinkForUpdate(q, sha256Hex(extractSecretKey));
    if (!link) throw new ApiError('SECRET_EXTRACT_INVALID');
    if (normalizeIp(ip) !== link.retrievalIp) throw new ApiError('DAPI_IP_NOT_ALLOWED');
    if (link.consumedAt) throw new ApiError('SECRET_EXTRACT_INVALID');
    if (link.expireTime.getTime() <= now.getTime()) throw new ApiError('SECRET_EXTRACT_EXPIRED');
    const apiKey = newApiKey();
    const secretKey = newSecretKey();
    await setPartnerCredentials(q, link.partnerId, apiKey, seal(deps.config.masterKey, secretKey, partnerSecretContext(link.partnerId)));
    await consumeCredentialLink(q, link.linkId, now);
    await deps.onDeliverySettingsChanged?.(q, link.partnerId);
    const extractUrl = deps.config.publicBaseUrl + SECRET_EXTRACT_PATH;
    return {
      apiKey,
      secretKey,
      expireTime: link.expireTime.toISOString(),
      extractSecretKey,
      extractUrl,
      howToUse: howToUse(extractUrl),
      notes: RETRIEVAL_NOTES,
    };
  }).finally(() => deps.partnerCache.clear());
}

/** Whether a partner with this id exists (any status): operators name partners in other domains' settings. */
export async function partnerExists(q: Queryable, partnerId: string): Promise<boolean> {
  return (await findPartnerById(q, partnerId)) !== null;
}

/** Several partners by id in one statement (the webhook worker reads its targets this way). */
export async function partnersByIds(q: Queryable, partnerIds: string[]): Promise<Partner[]> {
  if (partnerIds.length === 0) return [];
  return findPartnersByIds(q, [...new Set(partnerIds)]);
}

/** D7: replay-store entries older than `timestampMs` can never be replayed again; removes them. */
export async function sweepReplayStore(q: Queryable, timestampMs: number): Promise<void> {
  await deleteNoncesBefore(q, timestampMs);
}

// ---- webhook signing secrets (issue 14) ----

/** Overlap of a rotation when none is asked for (the contract bounds it: at most 7 days). */
export const WEBHOOK_SECRET_DEFAULT_OVERLAP_S = 86_400;

function webhookSecretContext(partnerId: string): string {
  return `webhook-secret:${partnerId}`;
}

/** A webhook secret in the clear, to sign a delivery; throws if the master key cannot open it. */
export function revealWebhookSecret(masterKey: Buffer, partnerId: string, sealed: string): string {
  return unseal(masterKey, sealed, webhookSecretContext(partnerId));
}

/**
 * Creates the partner's webhook signing secret, or rotates it: the new secret is current at once,
 * the previous one keeps signing for `overlapSeconds` (so the receiver can switch without losing an
 * event), older ones stop. The secret is in this answer only (sealed at rest, D8).
 */
export async function rotateWebhookSecret(deps: Pick<PartnerDeps, 'db' | 'clock' | 'config'>, partnerId: string, overlapSeconds: number) {
  const now = new Date(deps.clock.now());
  const secret = `whsec_${newSecretKey(32)}`;
  const previousUntil = new Date(now.getTime() + overlapSeconds * 1000);
  await deps.db.tx(async (q) => {
    const partner = await findPartnerById(q, partnerId, true);
    if (!partner) throw new ApiError('DAPI_API_KEY_INVALID');
    await rotateWebhookSecretRows(q, {
      partnerId, secretId: newId('ws'), secretEnc: seal(deps.config.masterKey, secret, webhookSecretContext(partnerId)), now, previousUntil,
    });
  });
  const secrets = await findValidWebhookSecrets(deps.db, [partnerId], now);
  const previous = secrets.find((s) => s.expiresAt !== null);
  return {
    webhookSecret: secret,
    createTime: now.toISOString(),
    previousSecretExpireTime: previous?.expiresAt ? new Date(previous.expiresAt).toISOString() : null,
  };
}

/** The partner's valid webhook secrets (no material): when each was made and until when it signs. */
export async function webhookSecretStatus(deps: Pick<PartnerDeps, 'db' | 'clock'>, partnerId: string) {
  const rows = await findValidWebhookSecrets(deps.db, [partnerId], new Date(deps.clock.now()));
  return {
    configured: rows.length > 0,
    secrets: rows.map((r) => ({ createTime: new Date(r.createdAt).toISOString(), expireTime: r.expiresAt ? new Date(r.expiresAt).toISOString() : null })),
  };
}

/** What the delivery worker signs and dials with, per partner (status, credentials, webhook_url, webhook whitelist, valid webhook secrets newest first). */
export interface WebhookTarget {
  partnerStatus: string;
  apiKey: string | null;
  secretKeyEnc: string | null;
  webhookUrl: string | null;
  /** The partner's valid webhook signing secrets, sealed, newest first (issue 14); empty when none. */
  webhookSecretsEnc: string[];
  /** 5.5, D56: the partner's webhook IP whitelist; the address dialled must be on it. */
  webhookWhitelist: string[];
}

/** The webhook targets of these partners, read in one statement (issue 34: one round trip per delivery batch). */
export async function webhookTargetsOf(q: Queryable, partnerIds: string[], now: Date): Promise<Map<string, WebhookTarget>> {
  const rows = await findWebhookTargets(q, [...new Set(partnerIds)], now);
  return new Map(rows.map((r) => [r.partnerId, {
    partnerStatus: r.status, apiKey: r.apiKey, secretKeyEnc: r.secretKeyEnc, webhookUrl: r.webhookUrl,
    webhookSecretsEnc: r.webhookSecretsEnc ?? [], webhookWhitelist: r.ipWhitelist?.webhook ?? [],
  }]));
}
