import type { Queryable } from '../../platform/db/db.ts';
import type { OperatorRole } from '../../platform/caller.ts';

export interface OperatorRow {
  operatorId: string;
  name: string;
  role: OperatorRole;
  status: 'ACTIVE' | 'DISABLED';
  passwordHash: string;
  totpSecretEnc: string;
  totpLastStep: string;
  failedAttempts: number;
  lockedUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS = `operator_id AS "operatorId", name, role, status, password_hash AS "passwordHash", totp_secret_enc AS "totpSecretEnc",
  totp_last_step AS "totpLastStep", failed_attempts AS "failedAttempts", locked_until AS "lockedUntil", created_at AS "createdAt", updated_at AS "updatedAt"`;

export async function insertOperator(q: Queryable, o: Pick<OperatorRow, 'operatorId' | 'name' | 'role' | 'passwordHash' | 'totpSecretEnc'>, now: Date): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO operators (operator_id, name, role, status, password_hash, totp_secret_enc, created_at, updated_at)
     VALUES ($1, $2, $3, 'ACTIVE', $4, $5, $6, $6) ON CONFLICT (name) DO NOTHING RETURNING operator_id`,
    [o.operatorId, o.name, o.role, o.passwordHash, o.totpSecretEnc, now],
  );
  return rows.length === 1;
}

export async function findOperatorByName(q: Queryable, name: string, forUpdate = false): Promise<OperatorRow | null> {
  const rows = await q.query<OperatorRow>(`SELECT ${COLUMNS} FROM operators WHERE name = $1${forUpdate ? ' FOR UPDATE' : ''}`, [name]);
  return rows[0] ?? null;
}

export async function findOperatorById(q: Queryable, operatorId: string, forUpdate = false): Promise<OperatorRow | null> {
  const rows = await q.query<OperatorRow>(`SELECT ${COLUMNS} FROM operators WHERE operator_id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [operatorId]);
  return rows[0] ?? null;
}

export async function listOperatorRows(q: Queryable): Promise<OperatorRow[]> {
  return q.query<OperatorRow>(`SELECT ${COLUMNS} FROM operators ORDER BY name`);
}

export async function recordLoginFailure(q: Queryable, operatorId: string, failedAttempts: number, lockedUntil: Date | null, now: Date): Promise<void> {
  await q.query('UPDATE operators SET failed_attempts = $2, locked_until = $3, updated_at = $4 WHERE operator_id = $1', [operatorId, failedAttempts, lockedUntil, now]);
}

export async function recordLoginSuccess(q: Queryable, operatorId: string, totpStep: number, now: Date): Promise<void> {
  await q.query(
    'UPDATE operators SET failed_attempts = 0, locked_until = NULL, totp_last_step = $2, updated_at = $3 WHERE operator_id = $1',
    [operatorId, totpStep, now],
  );
}

export async function updateOperatorRow(
  q: Queryable,
  operatorId: string,
  changes: { role?: OperatorRole; status?: 'ACTIVE' | 'DISABLED'; passwordHash?: string; totpSecretEnc?: string; unlock?: boolean },
  now: Date,
): Promise<void> {
  await q.query(
    `UPDATE operators SET role = COALESCE($2, role), status = COALESCE($3, status), password_hash = COALESCE($4, password_hash),
       totp_secret_enc = COALESCE($5, totp_secret_enc), totp_last_step = CASE WHEN $5::text IS NULL THEN totp_last_step ELSE 0 END,
       failed_attempts = CASE WHEN $6 THEN 0 ELSE failed_attempts END, locked_until = CASE WHEN $6 THEN NULL ELSE locked_until END,
       updated_at = $7
     WHERE operator_id = $1`,
    [operatorId, changes.role ?? null, changes.status ?? null, changes.passwordHash ?? null, changes.totpSecretEnc ?? null, changes.unlock === true, now],
  );
}

export interface SessionRow {
  sessionHash: string;
  operatorId: string;
  csrfToken: string;
  createdAt: Date;
  lastSeenAt: Date;
  endedAt: Date | null;
}

export async function insertSession(q: Queryable, s: Pick<SessionRow, 'sessionHash' | 'operatorId' | 'csrfToken'>, now: Date): Promise<void> {
  await q.query(
    'INSERT INTO operator_sessions (session_hash, operator_id, csrf_token, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $4)',
    [s.sessionHash, s.operatorId, s.csrfToken, now],
  );
}

export async function findSession(q: Queryable, sessionHash: string): Promise<SessionRow | null> {
  const rows = await q.query<SessionRow>(
    `SELECT session_hash AS "sessionHash", operator_id AS "operatorId", csrf_token AS "csrfToken", created_at AS "createdAt",
       last_seen_at AS "lastSeenAt", ended_at AS "endedAt"
     FROM operator_sessions WHERE session_hash = $1`,
    [sessionHash],
  );
  return rows[0] ?? null;
}

export async function touchSession(q: Queryable, sessionHash: string, now: Date): Promise<void> {
  await q.query('UPDATE operator_sessions SET last_seen_at = $2 WHERE session_hash = $1 AND ended_at IS NULL', [sessionHash, now]);
}

export async function endSession(q: Queryable, sessionHash: string, now: Date): Promise<void> {
  await q.query('UPDATE operator_sessions SET ended_at = $2 WHERE session_hash = $1 AND ended_at IS NULL', [sessionHash, now]);
}

export async function endSessionsOf(q: Queryable, operatorId: string, now: Date): Promise<void> {
  await q.query('UPDATE operator_sessions SET ended_at = $2 WHERE operator_id = $1 AND ended_at IS NULL', [operatorId, now]);
}
