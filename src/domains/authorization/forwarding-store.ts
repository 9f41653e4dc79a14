import type { Queryable } from '../../platform/db/db.ts';
import { Where } from '../../platform/db/where.ts';

/** SQL of authorization forwarding (migration 051): service keys, partner settings, the forwarding log. */

export interface ServiceKeyRow {
  keyId: string;
  publicKey: string;
  privateKeyEnc: string;
  status: 'ACTIVE' | 'RETIRED';
  createdAt: Date;
  retiredAt: Date | null;
}

const KEY_COLUMNS = `key_id AS "keyId", public_key AS "publicKey", private_key_enc AS "privateKeyEnc", status, created_at AS "createdAt",
  retired_at AS "retiredAt"`;

export async function findActiveServiceKey(q: Queryable): Promise<ServiceKeyRow | null> {
  const rows = await q.query<ServiceKeyRow>(`SELECT ${KEY_COLUMNS} FROM service_rsa_keys WHERE status = 'ACTIVE'`);
  return rows[0] ?? null;
}

export async function findServiceKey(q: Queryable, keyId: string): Promise<ServiceKeyRow | null> {
  const rows = await q.query<ServiceKeyRow>(`SELECT ${KEY_COLUMNS} FROM service_rsa_keys WHERE key_id = $1`, [keyId]);
  return rows[0] ?? null;
}

export async function listServiceKeys(q: Queryable): Promise<ServiceKeyRow[]> {
  return q.query<ServiceKeyRow>(`SELECT ${KEY_COLUMNS} FROM service_rsa_keys ORDER BY created_at DESC`);
}

/** Inserts an ACTIVE key unless one is active already (several instances starting at once); true when inserted. */
export async function insertActiveKeyIfNone(q: Queryable, k: Omit<ServiceKeyRow, 'status' | 'retiredAt'>): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO service_rsa_keys (key_id, public_key, private_key_enc, status, created_at)
     SELECT $1, $2, $3, 'ACTIVE', $4 WHERE NOT EXISTS (SELECT 1 FROM service_rsa_keys WHERE status = 'ACTIVE')
     ON CONFLICT DO NOTHING RETURNING 1`,
    [k.keyId, k.publicKey, k.privateKeyEnc, k.createdAt],
  );
  return rows.length > 0;
}

/** Rotation: the active key retires and the new one becomes active, in the caller's transaction. */
export async function replaceActiveKey(q: Queryable, k: Omit<ServiceKeyRow, 'status' | 'retiredAt'>): Promise<void> {
  await q.query(`UPDATE service_rsa_keys SET status = 'RETIRED', retired_at = $1 WHERE status = 'ACTIVE'`, [k.createdAt]);
  await q.query(
    `INSERT INTO service_rsa_keys (key_id, public_key, private_key_enc, status, created_at) VALUES ($1, $2, $3, 'ACTIVE', $4)`,
    [k.keyId, k.publicKey, k.privateKeyEnc, k.createdAt],
  );
}

export interface ForwardingSettingsRow {
  partnerId: string;
  deadlineMs: number;
  standIn: 'APPROVE' | 'DECLINE';
}

export async function findForwardingSettings(q: Queryable, partnerId: string): Promise<ForwardingSettingsRow | null> {
  const rows = await q.query<ForwardingSettingsRow>(
    `SELECT partner_id AS "partnerId", deadline_ms AS "deadlineMs", stand_in AS "standIn" FROM auth_forwarding_settings WHERE partner_id = $1`,
    [partnerId],
  );
  return rows[0] ?? null;
}

export async function upsertForwardingSettings(q: Queryable, s: ForwardingSettingsRow, at: Date): Promise<void> {
  await q.query(
    `INSERT INTO auth_forwarding_settings (partner_id, deadline_ms, stand_in, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (partner_id) DO UPDATE SET deadline_ms = excluded.deadline_ms, stand_in = excluded.stand_in, updated_at = excluded.updated_at`,
    [s.partnerId, s.deadlineMs, s.standIn, at],
  );
}

export type ForwardingOutcome = 'APPROVED' | 'DECLINED' | 'STAND_IN_APPROVED' | 'STAND_IN_DECLINED';
/** Why no valid answer applied the stand-in (D37); SERVICE_ERROR: the service failed between the hold and the decision (issue 26). */
export const STAND_IN_REASONS = ['TIMEOUT', 'TRANSPORT_ERROR', 'BLOCKED', 'HTTP_STATUS', 'MALFORMED_ANSWER', 'DECRYPTION_FAILED',
  'SIGNATURE_INVALID', 'TRANS_ID_MISMATCH', 'NOT_CONFIGURED', 'SERVICE_ERROR'] as const;
export type StandInReason = (typeof STAND_IN_REASONS)[number];

export interface ForwardingRow {
  forwardingId: string;
  partnerId: string;
  transId: string | null;
  networkTransactionId: string;
  /** Null for a SERVICE_ERROR stand-in (the request may never have been built). */
  keyId: string | null;
  authUrl: string | null;
  outcome: ForwardingOutcome;
  standInReason: StandInReason | null;
  declineReason: string | null;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
  test: boolean;
  createdAt: Date;
}

export async function insertForwarding(q: Queryable, f: Omit<ForwardingRow, 'forwardingId'>): Promise<string> {
  const rows = await q.query<{ id: string }>(
    `INSERT INTO auth_forwardings (partner_id, trans_id, network_transaction_id, key_id, auth_url, outcome, stand_in_reason, decline_reason,
       http_status, latency_ms, error, test, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING forwarding_id::text AS id`,
    [f.partnerId, f.transId, f.networkTransactionId, f.keyId, f.authUrl, f.outcome, f.standInReason, f.declineReason, f.httpStatus,
      f.latencyMs, f.error, f.test, f.createdAt],
  );
  return rows[0].id;
}

/**
 * Issue 26: an approval recorded by the request that holds the awaited decision, in one statement:
 * the claim deleted and the forwarding record inserted together. False (nothing written) when the
 * token no longer holds it: decided already, or taken over after its due time.
 */
export async function insertApprovalForwarding(
  q: Queryable, claim: { transId: string; token: string },
  f: Omit<ForwardingRow, 'forwardingId' | 'partnerId' | 'transId' | 'networkTransactionId' | 'test'>,
): Promise<boolean> {
  const rows = await q.query(
    `WITH claimed AS (
       DELETE FROM auth_decisions d USING card_transactions t
        WHERE d.trans_id = $1 AND d.lease_token = $2 AND t.trans_id = d.trans_id
       RETURNING d.partner_id, t.network_transaction_id)
     INSERT INTO auth_forwardings (partner_id, trans_id, network_transaction_id, key_id, auth_url, outcome, stand_in_reason, decline_reason,
       http_status, latency_ms, error, test, created_at)
     SELECT c.partner_id, $1, c.network_transaction_id, $3::text, $4::text, $5::text, $6::text, $7::text, $8::integer, $9::integer, $10::text,
            false, $11::timestamptz
       FROM claimed c
     RETURNING 1`,
    [claim.transId, claim.token, f.keyId, f.authUrl, f.outcome, f.standInReason, f.declineReason, f.httpStatus, f.latencyMs, f.error, f.createdAt],
  );
  return rows.length > 0;
}

const FORWARDING_COLUMNS = `forwarding_id::text AS "forwardingId", partner_id AS "partnerId", trans_id AS "transId",
  network_transaction_id AS "networkTransactionId", key_id AS "keyId", auth_url AS "authUrl", outcome, stand_in_reason AS "standInReason",
  decline_reason AS "declineReason", http_status AS "httpStatus", latency_ms AS "latencyMs", error, test, created_at AS "createdAt"`;

export async function listForwardings(
  q: Queryable, f: { partnerId: string | null; transId: string | null }, limit: number, offset: number,
): Promise<{ total: number; rows: ForwardingRow[] }> {
  const w = new Where();
  w.eq('partner_id', f.partnerId);
  w.eq('trans_id', f.transId);
  const [{ total }] = await q.query<{ total: number }>(`SELECT count(*)::int AS total FROM auth_forwardings WHERE ${w.sql}`, w.params);
  const rows = await q.query<ForwardingRow>(
    `SELECT ${FORWARDING_COLUMNS} FROM auth_forwardings WHERE ${w.sql} ORDER BY created_at DESC, forwarding_id DESC LIMIT ${w.next()} OFFSET ${w.next(1)}`,
    [...w.params, limit, offset],
  );
  return { total, rows };
}
