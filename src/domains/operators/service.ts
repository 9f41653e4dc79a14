import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../platform/context.ts';
import { OPERATOR_ROLES, type OperatorRole } from '../../platform/caller.ts';
import { newId, seal, sha256Hex, unseal, constantTimeEqual } from '../../platform/crypto/secrets.ts';
import { paramInvalid } from '../../platform/errors.ts';
import { hashPassword, newPassword, newTotpSecret, totpStepOf, totpUri, verifyPassword } from './credentials.ts';
import {
  endSession, endSessionsOf, findOperatorById, findOperatorByName, findSession, insertOperator, insertSession, listOperatorRows,
  recordLoginFailure, recordLoginSuccess, touchSession, updateOperatorRow, type OperatorRow,
} from './store.ts';

/**
 * Operator accounts and console sessions (issue 29; PCI DSS 8.2, 8.3, 8.4). A login needs the name,
 * the password and a fresh TOTP code; LOCKOUT_FAILURES failures in a row lock the account for
 * LOCKOUT_MS (a locked account is refused without checking anything). A session lives in the
 * database (the cookie carries 32 random bytes, the table their SHA-256) and ends after
 * IDLE_TIMEOUT_MS without a request, or SESSION_MAX_MS after login, whichever comes first.
 */
export const LOCKOUT_FAILURES = 5;
export const LOCKOUT_MS = 30 * 60_000;
export const IDLE_TIMEOUT_MS = 15 * 60_000;
export const SESSION_MAX_MS = 12 * 60 * 60_000;
export const OPERATOR_NAME = /^[a-z][a-z0-9._-]{1,39}$/;

const totpContext = (operatorId: string) => `operator-totp:${operatorId}`;

export interface OperatorView {
  operatorId: string;
  name: string;
  role: OperatorRole;
  status: 'ACTIVE' | 'DISABLED';
  lockedUntil: string | null;
  createdAt: string;
}

export function operatorView(o: OperatorRow, nowMs: number): OperatorView {
  return {
    operatorId: o.operatorId, name: o.name, role: o.role, status: o.status,
    lockedUntil: o.lockedUntil && o.lockedUntil.getTime() > nowMs ? o.lockedUntil.toISOString() : null,
    createdAt: o.createdAt.toISOString(),
  };
}

/** What a new (or reset) operator receives once: the password and the TOTP enrolment. */
export interface OperatorCredentials {
  password: string;
  totpSecret: string;
  totpUri: string;
}

function checkRole(role: unknown): OperatorRole {
  if (!OPERATOR_ROLES.includes(role as OperatorRole)) throw paramInvalid('role', `must be one of ${OPERATOR_ROLES.join(', ')}`);
  return role as OperatorRole;
}

export async function createOperator(ctx: AppContext, input: { name: string; role: string }): Promise<OperatorView & { credentials: OperatorCredentials }> {
  if (!OPERATOR_NAME.test(input.name)) throw paramInvalid('name', 'must be 2-40 characters: lower-case letters, digits, dot, dash or underscore, starting with a letter');
  const role = checkRole(input.role);
  const operatorId = newId('op_');
  const password = newPassword();
  const totpSecret = newTotpSecret();
  const now = new Date(ctx.clock.now());
  const created = await insertOperator(ctx.db, {
    operatorId, name: input.name, role, passwordHash: await hashPassword(password), totpSecretEnc: seal(ctx.config.masterKey, totpSecret, totpContext(operatorId)),
  }, now);
  if (!created) throw paramInvalid('name', 'an operator with this name exists');
  const row = (await findOperatorById(ctx.db, operatorId))!;
  return { ...operatorView(row, now.getTime()), credentials: { password, totpSecret, totpUri: totpUri(totpSecret, input.name) } };
}

export async function listOperators(ctx: AppContext): Promise<OperatorView[]> {
  const now = ctx.clock.now();
  return (await listOperatorRows(ctx.db)).map((o) => operatorView(o, now));
}

export interface OperatorUpdate {
  operatorId: string;
  role?: string;
  status?: 'ACTIVE' | 'DISABLED';
  /** Unlock a locked account (failures forgotten). */
  unlock?: boolean;
  /** New password and TOTP secret, returned once (a lost phone or a forgotten password). */
  resetCredentials?: boolean;
}

export async function updateOperator(ctx: AppContext, input: OperatorUpdate): Promise<OperatorView & { credentials?: OperatorCredentials }> {
  const role = input.role === undefined ? undefined : checkRole(input.role);
  const now = new Date(ctx.clock.now());
  let credentials: OperatorCredentials | undefined;
  const row = await ctx.db.tx(async (q) => {
    const o = await findOperatorById(q, input.operatorId, true);
    if (!o) throw paramInvalid('operatorId', 'no such operator');
    let passwordHash: string | undefined;
    let totpSecretEnc: string | undefined;
    if (input.resetCredentials) {
      const password = newPassword();
      const totpSecret = newTotpSecret();
      passwordHash = await hashPassword(password);
      totpSecretEnc = seal(ctx.config.masterKey, totpSecret, totpContext(o.operatorId));
      credentials = { password, totpSecret, totpUri: totpUri(totpSecret, o.name) };
    }
    await updateOperatorRow(q, o.operatorId, { role, status: input.status, passwordHash, totpSecretEnc, unlock: input.unlock }, now);
    // A changed role, a disabled account or new credentials end the operator's open sessions.
    if (role !== undefined || input.status === 'DISABLED' || input.resetCredentials) await endSessionsOf(q, o.operatorId, now);
    return (await findOperatorById(q, o.operatorId))!;
  });
  return { ...operatorView(row, now.getTime()), ...(credentials ? { credentials } : {}) };
}

export type LoginOutcome =
  | { ok: true; operator: OperatorRow; sessionToken: string; csrfToken: string }
  | { ok: false; reason: 'WRONG' | 'LOCKED' | 'DISABLED'; operator: OperatorRow | null; lockedNow: boolean };

/**
 * One login attempt. The three factors are checked together and a failure says only that one of
 * them was wrong (or that the account is locked or disabled), never which.
 */
export async function login(ctx: AppContext, input: { name: string; password: string; code: string },
  record: (outcome: LoginOutcome) => Promise<void> = async () => {}): Promise<LoginOutcome> {
  const nowMs = ctx.clock.now();
  const now = new Date(nowMs);
  const o = OPERATOR_NAME.test(input.name) ? await findOperatorByName(ctx.db, input.name) : null;
  const refused = async (outcome: LoginOutcome) => {
    await record(outcome);
    return outcome;
  };
  if (!o) {
    // Same work as a real check, so a wrong name takes as long as a wrong password.
    await verifyPassword(input.password, DUMMY_HASH);
    return refused({ ok: false, reason: 'WRONG', operator: null, lockedNow: false });
  }
  if (o.lockedUntil && o.lockedUntil.getTime() > nowMs) return refused({ ok: false, reason: 'LOCKED', operator: o, lockedNow: false });
  const passwordOk = await verifyPassword(input.password, o.passwordHash);
  const step = totpStepOf(unseal(ctx.config.masterKey, o.totpSecretEnc, totpContext(o.operatorId)), input.code.trim(), nowMs);
  // The session (or the failure counted toward the lockout) commits with its audit entry (`record`,
  // issue 29); the password hash is checked before, outside the transaction.
  return ctx.db.atomic(async () => {
    const outcome = await decideLogin(ctx, o.operatorId, passwordOk, step, now);
    await record(outcome);
    return outcome;
  });
}

/** The checked factors decide the attempt: a session, or a failure counted toward the lockout. */
async function decideLogin(ctx: AppContext, operatorId: string, passwordOk: boolean, step: number | null, now: Date): Promise<LoginOutcome> {
  const nowMs = now.getTime();
  return ctx.db.tx(async (q): Promise<LoginOutcome> => {
    const locked = (await findOperatorById(q, operatorId, true))!;
    // The lock is decided again on the locked row: attempts sent together all pass the check made
    // before the password hash was computed, and without this one each of them would be counted
    // (a burst of N guesses for the lockout's 5), and a right one among them would open a session
    // on an account the burst had just locked (PCI DSS 8.3.4).
    if (locked.lockedUntil && locked.lockedUntil.getTime() > nowMs) return { ok: false, reason: 'LOCKED', operator: locked, lockedNow: false };
    // RFC 6238 5.2: a code is accepted once; a replayed (or older) step counts as a failure.
    const fresh = step !== null && step > Number(locked.totpLastStep);
    if (!passwordOk || !fresh) {
      const failures = locked.failedAttempts + 1;
      const lockNow = failures >= LOCKOUT_FAILURES;
      await recordLoginFailure(q, operatorId, lockNow ? 0 : failures, lockNow ? new Date(nowMs + LOCKOUT_MS) : null, now);
      return { ok: false, reason: 'WRONG', operator: locked, lockedNow: lockNow };
    }
    if (locked.status !== 'ACTIVE') return { ok: false, reason: 'DISABLED', operator: locked, lockedNow: false };
    await recordLoginSuccess(q, operatorId, step, now);
    const sessionToken = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(32).toString('base64url');
    await insertSession(q, { sessionHash: sha256Hex(sessionToken), operatorId: operatorId, csrfToken }, now);
    return { ok: true, operator: locked, sessionToken, csrfToken };
  });
}

const DUMMY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

export interface OperatorSession {
  operator: OperatorRow;
  csrfToken: string;
  sessionHash: string;
}

export type SessionCheck = { ok: true; session: OperatorSession } | { ok: false; reason: 'NONE' | 'EXPIRED' };

/** The session a cookie names, if it is open; touching it restarts the idle timer. */
export async function checkSession(ctx: AppContext, sessionToken: string | undefined): Promise<SessionCheck> {
  if (!sessionToken || sessionToken.length > 100) return { ok: false, reason: 'NONE' };
  const nowMs = ctx.clock.now();
  const sessionHash = sha256Hex(sessionToken);
  const s = await findSession(ctx.db, sessionHash);
  if (!s || s.endedAt) return { ok: false, reason: s ? 'EXPIRED' : 'NONE' };
  if (nowMs - s.lastSeenAt.getTime() > IDLE_TIMEOUT_MS || nowMs - s.createdAt.getTime() > SESSION_MAX_MS) {
    await endSession(ctx.db, sessionHash, new Date(nowMs));
    return { ok: false, reason: 'EXPIRED' };
  }
  const operator = await findOperatorById(ctx.db, s.operatorId);
  if (!operator || operator.status !== 'ACTIVE') return { ok: false, reason: 'EXPIRED' };
  await touchSession(ctx.db, sessionHash, new Date(nowMs));
  return { ok: true, session: { operator, csrfToken: s.csrfToken, sessionHash } };
}

export async function logout(ctx: AppContext, session: OperatorSession): Promise<void> {
  await endSession(ctx.db, session.sessionHash, new Date(ctx.clock.now()));
}

/** CSRF (synchronizer token): the token of the session, compared in constant time. */
export function csrfMatches(session: OperatorSession, given: unknown): boolean {
  return typeof given === 'string' && constantTimeEqual(given, session.csrfToken);
}


