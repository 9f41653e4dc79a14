import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/db.ts';
import { ApiError, paramInvalid } from '../errors.ts';
import {
  claimIdempotencyKey, completeIdempotencyKey, deleteExpiredIdempotencyKeys, findIdempotencyKey, releaseIdempotencyKey,
} from './idempotency-store.ts';

/**
 * Idempotency-Key on business POSTs (issue 14), with Stripe's semantics:
 * - the first request with a key claims it in the database (one INSERT ... ON CONFLICT) before the
 *   handler runs, and stores its answer (HTTP status and envelope text) when the handler ends;
 * - the same key with the same request (method, path, body bytes) within 24 hours answers the stored
 *   response, marked `Idempotent-Replayed: true`, without running the handler again;
 * - the same key with another request is IDEMPOTENCY_KEY_REUSED;
 * - a copy arriving while the first still runs waits for its answer (polling the row) and, if the
 *   first has not finished within IDEMPOTENCY_WAIT_MS, answers IDEMPOTENCY_KEY_IN_USE (HTTP 409,
 *   retryable).
 * Answers worth keeping are the ones the handler produced: success and business codes (HTTP 200).
 * A request refused before the handler (authentication, validation) never claims the key, and an
 * unexpected failure (5xx) releases it, so a retry executes again. Requests without the header pay
 * nothing: no statement, no hashing.
 */

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** How long a key holds its answer (Stripe: 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** A claim not completed within this is considered abandoned (its instance died) and may be taken over. */
export const IDEMPOTENCY_LOCK_MS = 60_000;
/** How long a concurrent copy waits for the first one's answer before IDEMPOTENCY_KEY_IN_USE. */
export const IDEMPOTENCY_WAIT_MS = 10_000;
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

export interface StoredAnswer {
  httpStatus: number;
  body: string;
  replayed: boolean;
}

export interface IdempotentRequest {
  partnerId: string;
  key: string;
  method: string;
  path: string;
  body: Buffer | null;
}

/** Reads and checks the header; undefined when absent. */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers[IDEMPOTENCY_HEADER];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !KEY_FORMAT.test(value)) {
    throw paramInvalid('Idempotency-Key', 'must be 1 to 255 visible ASCII characters, sent once');
  }
  return value;
}

export function requestHash(r: Pick<IdempotentRequest, 'method' | 'path' | 'body'>): string {
  return createHash('sha256').update(`${r.method} ${r.path}\n`).update(r.body ?? Buffer.alloc(0)).digest('hex');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class IdempotencyKeys {
  constructor(private readonly db: Db, private readonly clock: Clock, private readonly waitMs = IDEMPOTENCY_WAIT_MS) {}

  /**
   * Runs `execute` at most once per (partner, key) and request. `execute` answers the HTTP status
   * and the response text; an ApiError of HTTP 200 must be turned into its envelope by the caller
   * before it gets here (it is an answer), anything thrown releases the key and propagates.
   */
  async run(req: IdempotentRequest, execute: () => Promise<{ httpStatus: number; body: string }>): Promise<StoredAnswer> {
    const hash = requestHash(req);
    const claimToken = randomBytes(12).toString('hex');
    const deadline = Date.now() + this.waitMs;
    for (let pause = 25; ; pause = Math.min(pause * 2, 250)) {
      const nowMs = this.clock.now();
      const claimed = await claimIdempotencyKey(this.db, {
        partnerId: req.partnerId, key: req.key, requestHash: hash, claimToken,
        now: new Date(nowMs), lockedUntil: new Date(nowMs + IDEMPOTENCY_LOCK_MS), expiresAt: new Date(nowMs + IDEMPOTENCY_TTL_MS),
      });
      if (claimed) return this.executeClaimed(req, claimToken, execute);
      const row = await findIdempotencyKey(this.db, req.partnerId, req.key);
      if (row && row.requestHash !== hash) throw new ApiError('IDEMPOTENCY_KEY_REUSED');
      if (row?.state === 'DONE') return { httpStatus: row.httpStatus!, body: row.response!, replayed: true };
      // IN_PROGRESS (or gone between the two statements): wait for the first copy, then look again.
      if (Date.now() >= deadline) throw new ApiError('IDEMPOTENCY_KEY_IN_USE', undefined, { headers: { 'retry-after': '1' } });
      await sleep(pause);
    }
  }

  private async executeClaimed(
    req: IdempotentRequest, claimToken: string, execute: () => Promise<{ httpStatus: number; body: string }>,
  ): Promise<StoredAnswer> {
    const ids = { partnerId: req.partnerId, key: req.key, claimToken };
    let answer: { httpStatus: number; body: string };
    try {
      answer = await execute();
    } catch (err) {
      await releaseIdempotencyKey(this.db, ids).catch(() => undefined);
      throw err;
    }
    if (answer.httpStatus !== 200) {
      await releaseIdempotencyKey(this.db, ids);
    } else {
      await completeIdempotencyKey(this.db, { ...ids, httpStatus: answer.httpStatus, response: answer.body, now: new Date(this.clock.now()) });
    }
    return { ...answer, replayed: false };
  }
}

/** Deletes keys whose 24 hours ended before `beforeMs`: the periodic sweep (src/workers.ts). */
export function sweepIdempotencyKeys(db: Db, beforeMs: number): Promise<number> {
  return deleteExpiredIdempotencyKeys(db, new Date(beforeMs));
}
