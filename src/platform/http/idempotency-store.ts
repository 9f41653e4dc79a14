import type { Queryable } from '../db/db.ts';

/** SQL of the Idempotency-Key store (migration 070); plain objects in and out, no rules. */

export interface IdempotencyRow {
  requestHash: string;
  state: 'IN_PROGRESS' | 'DONE';
  claimToken: string;
  lockedUntil: Date;
  httpStatus: number | null;
  response: string | null;
  expiresAt: Date;
}

export interface ClaimArgs {
  partnerId: string;
  key: string;
  requestHash: string;
  claimToken: string;
  now: Date;
  lockedUntil: Date;
  expiresAt: Date;
}

/**
 * Claims the key for this request in one statement: a new key is inserted IN_PROGRESS; an expired
 * row, or an IN_PROGRESS claim of the same request whose holder let its lock run out, is taken
 * over. Answers true when this request now holds the key. The primary key decides between
 * concurrent copies on every instance.
 */
export async function claimIdempotencyKey(q: Queryable, a: ClaimArgs): Promise<boolean> {
  const rows = await q.query<{ claimToken: string }>(
    `INSERT INTO idempotency_keys (partner_id, idempotency_key, request_hash, state, claim_token, locked_until, created_at, expires_at)
     VALUES ($1, $2, $3, 'IN_PROGRESS', $4, $5, $6, $7)
     ON CONFLICT (partner_id, idempotency_key) DO UPDATE
        SET request_hash = EXCLUDED.request_hash, state = 'IN_PROGRESS', claim_token = EXCLUDED.claim_token,
            locked_until = EXCLUDED.locked_until, http_status = NULL, response = NULL,
            created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
      WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
         OR (idempotency_keys.state = 'IN_PROGRESS' AND idempotency_keys.locked_until <= EXCLUDED.created_at
             AND idempotency_keys.request_hash = EXCLUDED.request_hash)
     RETURNING claim_token AS "claimToken"`,
    [a.partnerId, a.key, a.requestHash, a.claimToken, a.lockedUntil, a.now, a.expiresAt],
  );
  return rows.length === 1 && rows[0].claimToken === a.claimToken;
}

export async function findIdempotencyKey(q: Queryable, partnerId: string, key: string): Promise<IdempotencyRow | null> {
  const rows = await q.query<IdempotencyRow>(
    `SELECT request_hash AS "requestHash", state, claim_token AS "claimToken", locked_until AS "lockedUntil",
            http_status AS "httpStatus", response, expires_at AS "expiresAt"
       FROM idempotency_keys WHERE partner_id = $1 AND idempotency_key = $2`,
    [partnerId, key],
  );
  return rows[0] ?? null;
}

/** Stores the answer, only while this request still holds the claim. */
export async function completeIdempotencyKey(
  q: Queryable, a: { partnerId: string; key: string; claimToken: string; httpStatus: number; response: string; now: Date },
): Promise<boolean> {
  const rows = await q.query(
    `UPDATE idempotency_keys SET state = 'DONE', http_status = $4, response = $5, locked_until = $6
      WHERE partner_id = $1 AND idempotency_key = $2 AND claim_token = $3 RETURNING 1 AS done`,
    [a.partnerId, a.key, a.claimToken, a.httpStatus, a.response, a.now],
  );
  return rows.length === 1;
}

/** Frees the key (the request ended without an answer worth keeping), only while this request holds it. */
export async function releaseIdempotencyKey(q: Queryable, a: { partnerId: string; key: string; claimToken: string }): Promise<void> {
  await q.query(
    `DELETE FROM idempotency_keys WHERE partner_id = $1 AND idempotency_key = $2 AND claim_token = $3 AND state = 'IN_PROGRESS'`,
    [a.partnerId, a.key, a.claimToken],
  );
}

/** Deletes keys that expired before `before`; answers how many. */
export async function deleteExpiredIdempotencyKeys(q: Queryable, before: Date): Promise<number> {
  const rows = await q.query(`DELETE FROM idempotency_keys WHERE expires_at < $1 RETURNING 1 AS gone`, [before]);
  return rows.length;
}
