import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../platform/db/db.ts';
import { runJobOnce, type JobDefinition, type JobFailure, type JobLog } from '../../platform/jobs.ts';
import { ApiError, invariant } from '../../platform/errors.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import { recordEvent } from '../events/index.ts';
import { drawCardData, expiryYymm } from './card-data.ts';
import { bindRulesToCard, isCountrySanctioned } from './deps.ts';
import { ensureCardsReady, type CardDeps } from './profiles.ts';
import { applyView, cardView, checkApplication, type CheckedApplication } from './service.ts';
import { applicationsBacklog, completeApplication, deferApplication, insertCard, leaseApplications, lockLeasedApplication, type Card, type CardApplication } from './store.ts';

/**
 * The asynchronous half of card application (D23, D24, D44): a leased job per application.
 *
 * Lease: one transaction moves due rows (PENDING, or PROCESSING with an expired lease) to
 * PROCESSING with this run's owner id and a lease deadline, using FOR UPDATE SKIP LOCKED, so any
 * number of instances lease disjoint rows. Then each application is decided in its own
 * transaction, which first re-locks the row and checks the lease is still ours (a slow worker
 * whose lease was taken over writes nothing). A worker that crashes leaves PROCESSING rows whose
 * lease expires; the next run takes them again. An unexpected failure is retried with backoff
 * (the row stays PROCESSING); an application that fails CARD_APPLY_MAX_ATTEMPTS times is rejected
 * with PROCESSING_FAILED rather than retried forever. The leasing, retries and logging are the job
 * runner's (src/platform/jobs.ts); this file is the job's definition.
 *
 * Deciding re-runs the checks of D44 (anything may have changed since apply: KYC, restrictions,
 * rules, profile), then screening, then creates the card, binds the rules and records CARD_CREATED;
 * or records REJECTED with the reason and CARD_REJECTED. Outcome and event commit together.
 */

/** A worker that holds an application longer than this is presumed dead; its lease is taken over. */
export const CARD_APPLY_LEASE_MS = 60_000;
/** Unexpected failures tolerated per application before it is rejected (a poison job must not loop). */
export const CARD_APPLY_MAX_ATTEMPTS = 5;
/** How often each instance looks for applications: a partner sees PENDING turn into a card within seconds. */
export const CARD_APPLY_POLL_INTERVAL_MS = 1000;
/** Applications leased per run by default: bounds one run's transaction and memory. */
export const CARD_APPLY_BATCH = 20;
/** PAN draws per card before giving up: a collision is ~1e-9 per draw on a fresh BIN. */
const MAX_PAN_DRAWS = 10;

/**
 * Reject reasons. Screening hits are reported only as SCREENING_REJECTED (no tipping-off of
 * which list matched); a check of D44 that no longer holds gives its error code.
 */
export const SCREENING_REJECTED = 'SCREENING_REJECTED';
export const PROCESSING_FAILED = 'PROCESSING_FAILED';

export type JobLogger = JobLog;

export interface ProcessResult {
  leased: number;
  succeeded: number;
  rejected: number;
  failed: number;
}

/** Leases due applications for `owner` (exposed so tests can simulate a worker that crashes after leasing). */
export async function leaseCardApplications(deps: CardDeps, options: { limit: number; owner?: string }): Promise<CardApplication[]> {
  const now = new Date(deps.clock.now());
  const owner = options.owner ?? randomUUID();
  return deps.db.tx((q) => leaseApplications(q, owner, now, new Date(now.getTime() + CARD_APPLY_LEASE_MS), options.limit));
}

/**
 * Sandbox screening, deterministic so tests and partners can produce a rejection: a cardholder
 * name containing "REJECT" (any case), or a company country or custodian address country on the
 * sanctioned list (D51), is a hit. Production plugs a screening provider in here.
 */
async function screen(q: Queryable, application: CardApplication, checked: CheckedApplication): Promise<string | null> {
  if (application.cardholderName && /reject/i.test(application.cardholderName)) return SCREENING_REJECTED;
  const countries = new Set([checked.organization.countryCode, ...checked.custodian.addressCountryCodes]);
  for (const country of countries) if (await isCountrySanctioned(q, country)) return SCREENING_REJECTED;
  return null;
}

async function reject(q: Queryable, application: CardApplication, rejectReason: string, now: Date): Promise<void> {
  const done = await completeApplication(q, application.cardApplyId, { status: 'REJECTED', rejectReason }, now);
  await recordEvent(q, {
    partnerId: done.partnerId, eventType: 'CARD_REJECTED', businessId: done.cardApplyId, data: applyView(done), createTime: now,
  });
}

async function issueCard(deps: CardDeps, q: Queryable, application: CardApplication, checked: CheckedApplication, now: Date): Promise<Card> {
  const expiry = expiryYymm(now, checked.profile.validityMonths);
  for (let draw = 0; draw < MAX_PAN_DRAWS; draw++) {
    const cardId = newId('cd');
    const data = await drawCardData(q, deps.config.masterKey, {
      cardId, bin: checked.profile.bin, panLength: checked.profile.panLength, expiry,
    });
    const card = await insertCard(q, {
      cardId,
      partnerId: application.partnerId,
      organizationId: application.organizationId,
      cardApplyId: application.cardApplyId,
      cardProfileId: checked.profile.cardProfileId,
      cardNetwork: checked.profile.cardNetwork,
      cardForm: checked.profile.cardForm,
      balanceMode: checked.profile.balanceMode,
      currency: checked.currency,
      settlementCurrencies: checked.profile.settlementCurrencies,
      subjectType: application.subjectType,
      subjectId: application.subjectId,
      custodianCustomerId: application.custodianCustomerId,
      cardholderName: application.cardholderName,
      ...data,
    }, now);
    if (card) return card;
  }
  invariant(false, `a unique PAN within ${MAX_PAN_DRAWS} draws under BIN of profile ${checked.profile.cardProfileId}`);
}

type Outcome = 'SUCCESS' | 'REJECTED' | 'LOST_LEASE';

/** The outcome transaction of one leased application (the runner opens it). */
async function decide(deps: CardDeps, q: Queryable, leased: CardApplication, owner: string): Promise<Outcome> {
  const application = await lockLeasedApplication(q, leased.cardApplyId, owner);
  if (!application) return 'LOST_LEASE';
  const now = new Date(deps.clock.now());
  let checked: CheckedApplication;
  try {
    checked = await checkApplication(q, application.partnerId, application, { lockRules: true });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    await reject(q, application, err.code, now);
    return 'REJECTED';
  }
  const hit = await screen(q, application, checked);
  if (hit) {
    await reject(q, application, hit, now);
    return 'REJECTED';
  }
  const card = await issueCard(deps, q, application, checked, now);
  await bindRulesToCard(q, {
    partnerId: application.partnerId, organizationId: application.organizationId, cardId: card.cardId,
    ruleIds: application.ruleIds, now,
  });
  const done = await completeApplication(q, application.cardApplyId, { status: 'SUCCESS', cardId: card.cardId }, now);
  // D49: the application record (its times and status win) plus the card fields; the card's own status is cardStatus.
  const { status: cardStatus, createTime: _cardCreateTime, modifyTime: _cardModifyTime, ...cardFields } = cardView(card);
  await recordEvent(q, {
    partnerId: done.partnerId,
    eventType: 'CARD_CREATED',
    businessId: card.cardId,
    data: { ...cardFields, ...applyView(done), cardStatus },
    createTime: now,
  });
  return 'SUCCESS';
}

/**
 * After an unexpected failure, if this worker still holds the lease: try again at `retryAt` (the
 * partner keeps seeing PROCESSING), or, after the last allowed attempt, reject with PROCESSING_FAILED.
 */
async function failApplication(deps: CardDeps, q: Queryable, leased: CardApplication, failure: JobFailure): Promise<string> {
  const application = await lockLeasedApplication(q, leased.cardApplyId, failure.lease.token);
  if (!application) return 'LOST_LEASE';
  if (failure.retryAt) {
    await deferApplication(q, application.cardApplyId, failure.retryAt);
    return 'RETRY';
  }
  await reject(q, application, PROCESSING_FAILED, new Date(deps.clock.now()));
  return 'REJECTED';
}

/** The card-application job (D23, D24) on the leased job runner (src/platform/jobs.ts). */
export function cardApplicationJob(deps: CardDeps): JobDefinition<CardApplication> {
  return {
    name: 'card-applications',
    intervalMs: CARD_APPLY_POLL_INTERVAL_MS,
    batchSize: CARD_APPLY_BATCH,
    leaseMs: CARD_APPLY_LEASE_MS,
    maxAttempts: CARD_APPLY_MAX_ATTEMPTS,
    // One at a time: each decision is one transaction that may lock the company's rules.
    concurrency: 1,
    identify: (a) => ({ id: a.cardApplyId, attempt: a.attempts }),
    claim: (q, lease) => leaseApplications(q, lease.token, lease.now, lease.until, lease.limit),
    // Card keys and sandbox profiles are provisioned in their own transaction, before the decision's.
    perform: async () => {
      await ensureCardsReady(deps);
      return undefined;
    },
    complete: async (q, application, _none, lease) => {
      const outcome = await decide(deps, q, application, lease.token);
      return { result: outcome, level: outcome === 'LOST_LEASE' ? 'warn' : 'info', fields: { partnerId: application.partnerId } };
    },
    fail: (q, application, failure) => failApplication(deps, q, application, failure),
    backlog: (q, now) => applicationsBacklog(q, now),
  };
}

/** One run of the card-application job; tests call it directly, src/workers.ts runs it on the job runner. */
export async function processCardApplications(
  deps: CardDeps,
  options: { limit?: number; log?: JobLogger } = {},
): Promise<ProcessResult> {
  const run = await runJobOnce(cardApplicationJob(deps), { db: deps.db, clock: deps.clock, log: options.log }, { limit: options.limit });
  return {
    leased: run.claimed,
    succeeded: run.items.filter((i) => i.result === 'SUCCESS').length,
    rejected: run.items.filter((i) => i.result === 'REJECTED').length,
    failed: run.items.filter((i) => i.failed).length,
  };
}
