import type { AuthenticatedPartner, IpWhitelist, SecureCardIvMode } from '../../platform/caller.ts';
import type { Queryable } from '../../platform/db/db.ts';

export type { IpWhitelist, SecureCardIvMode };

/** A partner row: the caller's settings (platform/caller.ts) with its credentials as stored and its times. */
export type Partner = Omit<AuthenticatedPartner, 'apiKey' | 'secretKey'> & {
  apiKey: string | null;
  /** The secret key sealed under the master key (never the plaintext). */
  secretKeyEnc: string | null;
  /** IANA zone of the partner's velocity periods (issue 31); UTC by default. */
  timeZone: string;
  createdAt: Date;
  updatedAt: Date;
};

const COLUMNS = `partner_id AS "partnerId", name, api_key AS "apiKey", secret_key_enc AS "secretKeyEnc",
  pci_certified AS "pciCertified", webhook_url AS "webhookUrl", auth_url AS "authUrl",
  external_public_key AS "externalPublicKey", ip_whitelist AS "ipWhitelist",
  secure_card_iv_mode AS "secureCardIvMode", time_zone AS "timeZone", status, created_at AS "createdAt", updated_at AS "updatedAt"`;

/**
 * The partner holding this API key, with its row version (`xmin`: every update of the row writes a
 * new version with a new one), which the replay store's statement reads again (recordNonces).
 */
export async function findPartnerByApiKey(q: Queryable, apiKey: string): Promise<(Partner & { rowVersion: string }) | null> {
  const rows = await q.query<Partner & { rowVersion: string }>(`SELECT ${COLUMNS}, xmin::text AS "rowVersion" FROM partners WHERE api_key = $1`, [apiKey]);
  return rows[0] ?? null;
}

export async function findPartnerById(q: Queryable, partnerId: string, forUpdate = false): Promise<Partner | null> {
  const rows = await q.query<Partner>(
    `SELECT ${COLUMNS} FROM partners WHERE partner_id = $1${forUpdate ? ' FOR UPDATE' : ''}`,
    [partnerId],
  );
  return rows[0] ?? null;
}

/** Several partners by id in one statement (for batched reads). */
export async function findPartnersByIds(q: Queryable, partnerIds: string[]): Promise<Partner[]> {
  return q.query<Partner>(`SELECT ${COLUMNS} FROM partners WHERE partner_id = ANY($1::text[])`, [partnerIds]);
}

/** What a new partner row is given; status and times come from the database defaults. */
export type NewPartner = Omit<Partner, 'status' | 'timeZone' | 'createdAt' | 'updatedAt'>;

export async function insertPartner(q: Queryable, p: NewPartner): Promise<Partner> {
  const rows = await q.query<Partner>(
    `INSERT INTO partners (partner_id, name, api_key, secret_key_enc, pci_certified, webhook_url, auth_url,
       external_public_key, ip_whitelist, secure_card_iv_mode)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
    [p.partnerId, p.name, p.apiKey, p.secretKeyEnc, p.pciCertified, p.webhookUrl, p.authUrl, p.externalPublicKey,
      JSON.stringify(p.ipWhitelist), p.secureCardIvMode],
  );
  return rows[0];
}

export type PartnerSettings = Omit<NewPartner, 'partnerId' | 'apiKey' | 'secretKeyEnc'> & { status: Partner['status'] };

export async function updatePartnerSettings(q: Queryable, partnerId: string, s: PartnerSettings): Promise<Partner> {
  const rows = await q.query<Partner>(
    `UPDATE partners SET name = $2, pci_certified = $3, webhook_url = $4, auth_url = $5, external_public_key = $6,
       ip_whitelist = $7, secure_card_iv_mode = $8, status = $9, updated_at = now()
     WHERE partner_id = $1 RETURNING ${COLUMNS}`,
    [partnerId, s.name, s.pciCertified, s.webhookUrl, s.authUrl, s.externalPublicKey, JSON.stringify(s.ipWhitelist),
      s.secureCardIvMode, s.status],
  );
  return rows[0];
}

/** Issue 31: the partner's time zone setting (the velocity schedule is the velocity domain's). */
export async function setPartnerTimeZone(q: Queryable, partnerId: string, timeZone: string): Promise<Partner> {
  const rows = await q.query<Partner>(
    `UPDATE partners SET time_zone = $2, updated_at = now() WHERE partner_id = $1 RETURNING ${COLUMNS}`,
    [partnerId, timeZone],
  );
  return rows[0];
}

export async function setPartnerCredentials(q: Queryable, partnerId: string, apiKey: string, secretKeyEnc: string): Promise<void> {
  await q.query(
    `UPDATE partners SET api_key = $2, secret_key_enc = $3, updated_at = now() WHERE partner_id = $1`,
    [partnerId, apiKey, secretKeyEnc],
  );
}

export async function listPartners(q: Queryable, limit: number, offset: number): Promise<{ total: number; rows: Partner[] }> {
  const [{ total }] = await q.query<{ total: number }>('SELECT count(*)::int AS total FROM partners');
  const rows = await q.query<Partner>(
    `SELECT ${COLUMNS} FROM partners ORDER BY created_at DESC, partner_id DESC LIMIT $1 OFFSET $2`,
    [limit, offset],
  );
  return { total, rows };
}

export interface NonceKey {
  apiKey: string;
  timestampMs: number;
  nonce: number;
}

/**
 * Replay store (D7): inserts many distinct (apiKey, timestamp, nonce) keys in one statement and
 * returns the positions (0-based) of the keys that were already present (the replays), the
 * store's epoch (issue 34): the instant from which it holds every accepted key, null when the epoch
 * row is missing (the unlogged store was emptied by crash recovery: nothing was inserted then), and
 * the current row version of the partner holding each API key of the batch (issue 34: a partner
 * cached by an instance is checked against it in the same round trip; a key no partner holds is absent).
 * One round trip, one small row per API key in the normal case.
 */
export async function recordNonces(q: Queryable, keys: NonceKey[]): Promise<{ replayed: number[]; sinceMs: number | null; versions: Map<string, string> }> {
  const rows = await q.query<{ i: string | null; since: string | null; key: string | null }>(
    `WITH e AS (
       SELECT since_ms FROM replay_store_epoch WHERE id = 1
     ), k AS (
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::int[]) WITH ORDINALITY AS k(api_key, ts, nonce, i)
     ), ins AS (
       INSERT INTO replay_nonces (ts, api_key, nonce) SELECT ts, api_key, nonce FROM k WHERE EXISTS (SELECT 1 FROM e)
       ON CONFLICT DO NOTHING RETURNING api_key, ts, nonce
     )
     SELECT 0 AS i, since_ms::text AS since, NULL::text AS key FROM e
     UNION ALL
     SELECT k.i, NULL, NULL FROM k LEFT JOIN ins ON ins.api_key = k.api_key AND ins.ts = k.ts AND ins.nonce = k.nonce
     WHERE ins.nonce IS NULL AND EXISTS (SELECT 1 FROM e)
     UNION ALL
     SELECT NULL, p.xmin::text, p.api_key FROM partners p WHERE p.api_key = ANY ($1::text[])`,
    [keys.map((k) => k.apiKey), keys.map((k) => String(k.timestampMs)), keys.map((k) => k.nonce)],
  );
  const epoch = rows.find((r) => r.key === null && r.since !== null);
  return {
    replayed: rows.filter((r) => r.key === null && r.since === null).map((r) => Number(r.i) - 1),
    sinceMs: epoch ? Number(epoch.since) : null,
    versions: new Map(rows.filter((r) => r.key !== null).map((r) => [r.key!, r.since!])),
  };
}

/** Starts the replay store's epoch at `nowMs` unless another instance already did (issue 34). */
export async function startReplayEpoch(q: Queryable, nowMs: number): Promise<void> {
  await q.query('INSERT INTO replay_store_epoch (id, since_ms) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [String(nowMs)]);
}

/** Entries older than this can never be replayed: their timestamp is outside the window. */
export async function deleteNoncesBefore(q: Queryable, timestampMs: number): Promise<void> {
  await q.query('DELETE FROM replay_nonces WHERE ts < $1', [timestampMs]);
}

export interface CredentialLink {
  linkId: string;
  partnerId: string;
  email: string;
  retrievalIp: string;
  expireTime: Date;
  consumedAt: Date | null;
}

const LINK_COLUMNS = `link_id AS "linkId", partner_id AS "partnerId", email, retrieval_ip AS "retrievalIp",
  expire_time AS "expireTime", consumed_at AS "consumedAt"`;

export async function insertCredentialLink(
  q: Queryable,
  link: { linkId: string; partnerId: string; extractKeyHash: string; email: string; retrievalIp: string; expireTime: Date },
): Promise<void> {
  await q.query(
    `INSERT INTO credential_links (link_id, partner_id, extract_key_hash, email, retrieval_ip, expire_time)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [link.linkId, link.partnerId, link.extractKeyHash, link.email, link.retrievalIp, link.expireTime],
  );
}

export async function findCredentialLinkForUpdate(q: Queryable, extractKeyHash: string): Promise<CredentialLink | null> {
  const rows = await q.query<CredentialLink>(
    `SELECT ${LINK_COLUMNS} FROM credential_links WHERE extract_key_hash = $1 FOR UPDATE`,
    [extractKeyHash],
  );
  return rows[0] ?? null;
}

export async function consumeCredentialLink(q: Queryable, linkId: string, at: Date): Promise<void> {
  await q.query('UPDATE credential_links SET consumed_at = $2 WHERE link_id = $1', [linkId, at]);
}

// ---- webhook signing secrets (migration 071) ----

export interface WebhookSecretRow {
  secretId: string;
  partnerId: string;
  secretEnc: string;
  createdAt: Date;
  expiresAt: Date | null;
}

/**
 * Which webhook secrets sign (issue 14): those not expired at the instant in $2, newest first. The one
 * condition of both reads below; its columns are partner_webhook_secrets' (the innermost table).
 */
const VALID_SECRETS_AT_2 = `(expires_at IS NULL OR expires_at > $2) ORDER BY created_at DESC, secret_id DESC`;

/** What the webhook delivery worker needs of a partner, its valid webhook secrets included (newest first). */
export interface WebhookTargetRow {
  partnerId: string;
  status: string;
  apiKey: string | null;
  secretKeyEnc: string | null;
  webhookUrl: string | null;
  ipWhitelist: { webhook?: string[] } | null;
  webhookSecretsEnc: string[];
}

/** The delivery settings of these partners and their secrets valid at `now`, in one statement (issue 34). */
export async function findWebhookTargets(q: Queryable, partnerIds: string[], now: Date): Promise<WebhookTargetRow[]> {
  if (partnerIds.length === 0) return [];
  return q.query<WebhookTargetRow>(
    `SELECT p.partner_id AS "partnerId", p.status, p.api_key AS "apiKey", p.secret_key_enc AS "secretKeyEnc",
            p.webhook_url AS "webhookUrl", p.ip_whitelist AS "ipWhitelist",
            ARRAY(SELECT secret_enc FROM partner_webhook_secrets
                   WHERE partner_id = p.partner_id AND ${VALID_SECRETS_AT_2}) AS "webhookSecretsEnc"
       FROM partners p WHERE p.partner_id = ANY($1::text[])`,
    [partnerIds, now],
  );
}

/** Secrets still valid at `now` of these partners, newest first. */
export async function findValidWebhookSecrets(q: Queryable, partnerIds: string[], now: Date): Promise<WebhookSecretRow[]> {
  if (partnerIds.length === 0) return [];
  return q.query<WebhookSecretRow>(
    `SELECT secret_id AS "secretId", partner_id AS "partnerId", secret_enc AS "secretEnc", created_at AS "createdAt", expires_at AS "expiresAt"
       FROM partner_webhook_secrets
      WHERE partner_id = ANY($1::text[]) AND ${VALID_SECRETS_AT_2}`,
    [partnerIds, now],
  );
}

/**
 * A rotation's writes: expired rows go, every valid older secret but the current one ends now, the
 * current one ends at `previousUntil`, and the new one becomes current.
 */
export async function rotateWebhookSecretRows(
  q: Queryable, a: { partnerId: string; secretId: string; secretEnc: string; now: Date; previousUntil: Date },
): Promise<void> {
  await q.query(`DELETE FROM partner_webhook_secrets WHERE partner_id = $1 AND expires_at IS NOT NULL AND expires_at <= $2`, [a.partnerId, a.now]);
  await q.query(`UPDATE partner_webhook_secrets SET expires_at = $2 WHERE partner_id = $1 AND expires_at IS NOT NULL`, [a.partnerId, a.now]);
  await q.query(`UPDATE partner_webhook_secrets SET expires_at = $2 WHERE partner_id = $1 AND expires_at IS NULL`, [a.partnerId, a.previousUntil]);
  await q.query(
    `INSERT INTO partner_webhook_secrets (secret_id, partner_id, secret_enc, created_at) VALUES ($1, $2, $3, $4)`,
    [a.secretId, a.partnerId, a.secretEnc, a.now],
  );
}

/** Whether a request with this key was already accepted (the signature self-check reads, never writes). */
export async function nonceRecorded(q: Queryable, key: NonceKey): Promise<boolean> {
  const rows = await q.query<{ one: number }>('SELECT 1 AS one FROM replay_nonces WHERE api_key = $1 AND ts = $2 AND nonce = $3',
    [key.apiKey, String(key.timestampMs), key.nonce]);
  return rows.length > 0;
}
