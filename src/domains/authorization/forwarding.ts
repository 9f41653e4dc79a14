/**
 * The partner-decision stage (D34, D37, D50): a partner with an auth_url decides its cards' spend.
 *
 *   request  POST auth_url {"data": Base64(RSA-2048 PKCS#1 v1.5, 245-byte blocks, partner key, UTF-8 JSON of
 *            the D50 business fields), "sign": Base64(SHA256withRSA over that JSON, service key)}; header
 *            X-DAPI-SERVICE-KEY-ID names the service key that signed (and that the answer must use)
 *   answer   the same shape from the partner: data encrypted with the service public key, sign by the
 *            partner's private key over the plaintext {transId, approved, declineReason}
 *
 * This stage only exchanges: it reports the partner's verified answer, or why there is none (late,
 * transport error, non-2xx, garbage, undecryptable, bad signature, another transId). The engine
 * (decision.ts) applies the stand-in, records the forwarding with the decision in one transaction,
 * and cleans every string relayed from the partner before it is stored or answered.
 */
import type { Config } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import {
  decryptSegmented, encryptSegmented, parseExternalPublicKey, RsaFormatError, signSha256, verifySha256,
} from '../../platform/crypto/rsa.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import type { Db } from '../../platform/db/db.ts';
import { stringifyJson } from '../../platform/http/json.ts';
import { partnersByIds } from '../partners/index.ts';
import { postToAuthUrl, type AuthUrlTarget } from './auth-url-http.ts';
import { decisionOf, type PartnerDecisionStage, type PartnerExchange } from './decision.ts';
import { findForwardingSettings, insertForwarding, type ForwardingOutcome, type StandInReason } from './forwarding-store.ts';
import type { TransactionView } from './schemas.ts';
import type { ServiceKeys } from './service-keys.ts';
import { traceHere, type TracePosition } from '../../platform/tracing.ts';

export type { StandInReason };

/** Header naming the service key of a forwarded request. */
export const SERVICE_KEY_HEADER = 'x-dapi-service-key-id';
/** A partner's settings (auth_url, key, deadline) are re-read after this long. */
const TARGET_CACHE_MS = 1_000;

interface ForwardTarget extends AuthUrlTarget {
  publicKey: ReturnType<typeof parseExternalPublicKey>;
  deadlineMs: number;
  standIn: 'APPROVE' | 'DECLINE';
}

/** What one exchange with the auth_url produced. */
export interface ExchangeReport {
  keyId: string;
  delivered: boolean;
  httpStatus: number | null;
  latencyMs: number;
  /** The partner's verified answer, or null. */
  answer: { approved: boolean; declineReason: string | null } | null;
  standInReason: StandInReason | null;
  error: string | null;
}

export type BusinessFields = Record<string, unknown> & { transId: string; networkTransactionId: string };

/** D50: the forwarded business fields of an authorization, with its answer deadline. */
export function businessFields(t: TransactionView, deadline: Date): BusinessFields {
  return {
    transId: t.transId,
    networkTransactionId: t.networkTransactionId,
    cardId: t.cardId,
    organizationId: t.organizationId,
    subjectType: t.subjectType,
    subjectId: t.subjectId,
    authType: t.authType,
    amount: t.amount,
    currency: t.currency,
    billingAmount: t.billingAmount,
    billingCurrency: t.billingCurrency,
    merchantName: t.merchantName,
    mcc: t.mcc,
    merchantCountry: t.merchantCountry,
    channel: t.channel,
    transactionTime: t.transactionTime,
    deadline: deadline.toISOString(),
  };
}

export class AuthUrlForwarder implements PartnerDecisionStage {
  private readonly targets = new Map<string, { target: ForwardTarget | null; until: number }>();
  /** Metric-ready counters per outcome since start (this instance). */
  readonly counters: Record<ForwardingOutcome, number> = { APPROVED: 0, DECLINED: 0, STAND_IN_APPROVED: 0, STAND_IN_DECLINED: 0 };

  constructor(private readonly deps: { db: Db; config: Config; clock: Clock; keys: ServiceKeys }) {}

  /** The partner's forwarding target, or null when it has no auth_url (nothing to forward). */
  async targetOf(partnerId: string): Promise<ForwardTarget | null> {
    const hit = this.targets.get(partnerId);
    if (hit && hit.until > Date.now()) return hit.target;
    const [partner] = await partnersByIds(this.deps.db, [partnerId]);
    const settings = await findForwardingSettings(this.deps.db, partnerId);
    const target: ForwardTarget | null = partner?.authUrl
      ? {
        partnerId,
        url: partner.authUrl,
        allowList: partner.ipWhitelist.auth ?? [],
        blockPrivateAddresses: this.deps.config.env === 'production',
        publicKey: partner.externalPublicKey ? parseExternalPublicKey(partner.externalPublicKey) : null,
        deadlineMs: settings?.deadlineMs ?? this.deps.config.authForwardDeadlineMs,
        standIn: settings?.standIn ?? 'DECLINE',
      }
      : null;
    if (this.targets.size > 10_000) this.targets.clear();
    this.targets.set(partnerId, { target, until: Date.now() + TARGET_CACHE_MS });
    return target;
  }

  /** Forgets cached targets (after this instance changed a partner's settings). */
  forget(partnerId?: string): void {
    if (partnerId === undefined) this.targets.clear();
    else this.targets.delete(partnerId);
  }

  async forward(input: { partnerId: string; transaction: TransactionView; deadline: Date }): Promise<PartnerExchange | null> {
    // Issue 27: the auth_url request is a child of the caller's step (authorization.partner_decision).
    const here = traceHere();
    const target = await this.targetOf(input.partnerId);
    if (!target) return null;
    // The engine's deadline (the partner's setting when the hold was taken) bounds the wait.
    const deadlineMs = Math.max(1, input.deadline.getTime() - this.deps.clock.now());
    return exchangeOf(target, await this.exchange({ ...target, deadlineMs }, businessFields(input.transaction, input.deadline), here));
  }

  decided(outcome: ForwardingOutcome): void {
    this.counters[outcome]++;
  }

  /** One request and its verified answer (or why there is none). */
  async exchange(target: ForwardTarget, fields: BusinessFields, here: TracePosition = traceHere()): Promise<ExchangeReport> {
    const key = await this.deps.keys.activeKey();
    const base = { keyId: key.keyId, delivered: false, httpStatus: null, latencyMs: 0, answer: null };
    if (!target.publicKey) {
      return { ...base, standInReason: 'NOT_CONFIGURED', error: 'the partner has no valid externalPublicKey' };
    }
    const plaintext = Buffer.from(stringifyJson(fields), 'utf8');
    const body = JSON.stringify({ data: encryptSegmented(target.publicKey, plaintext), sign: signSha256(key.privateKey, plaintext) });
    const sent = await postToAuthUrl(target, body, { [SERVICE_KEY_HEADER]: key.keyId }, target.deadlineMs, here);
    if (!sent.ok) {
      return { ...base, delivered: sent.failure === 'HTTP_STATUS', httpStatus: sent.httpStatus, latencyMs: sent.latencyMs, standInReason: sent.failure, error: sent.error };
    }
    const delivered = { ...base, delivered: true, httpStatus: sent.httpStatus, latencyMs: sent.latencyMs };
    let envelope: unknown;
    try {
      envelope = JSON.parse(sent.body);
    } catch {
      return { ...delivered, standInReason: 'MALFORMED_ANSWER', error: 'answer is not JSON' };
    }
    const { data, sign } = (envelope ?? {}) as { data?: unknown; sign?: unknown };
    if (typeof data !== 'string' || typeof sign !== 'string') {
      return { ...delivered, standInReason: 'MALFORMED_ANSWER', error: 'answer lacks string data and sign' };
    }
    let answerText: Buffer;
    try {
      answerText = decryptSegmented(key.privateKey, data);
    } catch (err) {
      return { ...delivered, standInReason: err instanceof RsaFormatError ? 'MALFORMED_ANSWER' : 'DECRYPTION_FAILED', error: (err as Error).message };
    }
    // Implicit rejection: a bad padding decrypts to pseudo-random bytes, which no partner signed.
    if (!verifySha256(target.publicKey, answerText, sign)) {
      return { ...delivered, standInReason: 'SIGNATURE_INVALID', error: 'the answer is not signed by the partner key over its plaintext' };
    }
    let answer: { transId?: unknown; approved?: unknown; declineReason?: unknown };
    try {
      answer = JSON.parse(answerText.toString('utf8')) as typeof answer;
    } catch {
      return { ...delivered, standInReason: 'MALFORMED_ANSWER', error: 'the decrypted answer is not JSON' };
    }
    if (answer === null || typeof answer !== 'object' || typeof answer.approved !== 'boolean') {
      return { ...delivered, standInReason: 'MALFORMED_ANSWER', error: 'the answer has no boolean approved' };
    }
    if (answer.transId !== fields.transId) {
      return { ...delivered, standInReason: 'TRANS_ID_MISMATCH', error: `the answer is for transId ${String(answer.transId).slice(0, 40)}` };
    }
    const declineReason = typeof answer.declineReason === 'string' ? answer.declineReason : null;
    return { ...delivered, answer: { approved: answer.approved, declineReason }, standInReason: null, error: null };
  }

  /**
   * Sandbox: sends a test authorization (nothing is booked) to the partner's auth_url and reports
   * what happened: delivered, answer verified, decision, latency.
   */
  async test(partnerId: string) {
    this.forget(partnerId);
    const target = await this.targetOf(partnerId);
    if (!target) return { configured: false, delivered: false, answerVerified: false, approved: null, declineReason: null, standInReason: 'NOT_CONFIGURED', httpStatus: null, latencyMs: 0, error: 'no authUrl registered' };
    const now = new Date(this.deps.clock.now());
    const fields: BusinessFields = {
      transId: newId('tst'), networkTransactionId: newId('tstnet'), cardId: 'test-card', organizationId: 'test-organization',
      subjectType: 'CUSTOMER', subjectId: 'test-customer', authType: 'EXPEND', amount: 1, currency: 'USD', billingAmount: 1,
      billingCurrency: 'USD', merchantName: 'Authorization forwarding test', mcc: '5999', merchantCountry: 'HK', channel: 'ECOM',
      transactionTime: now.toISOString(), deadline: new Date(now.getTime() + target.deadlineMs).toISOString(), test: true,
    };
    const report = await this.exchange(target, fields);
    const { outcome, record } = decisionOf(exchangeOf(target, report), target.standIn);
    await insertForwarding(this.deps.db, {
      ...record, partnerId: target.partnerId, transId: null, networkTransactionId: fields.networkTransactionId, test: true, createdAt: now,
    });
    this.decided(outcome);
    return {
      configured: true,
      transId: fields.transId,
      delivered: report.delivered,
      answerVerified: report.answer !== null,
      approved: report.answer?.approved ?? null,
      // As recorded: the partner's text cleaned and bounded before it is echoed.
      declineReason: record.declineReason,
      standInReason: record.standInReason,
      outcome,
      httpStatus: record.httpStatus,
      latencyMs: record.latencyMs,
      error: record.error,
    };
  }
}

/** What the engine records of an exchange. */
function exchangeOf(target: ForwardTarget, report: ExchangeReport): PartnerExchange {
  return {
    answer: report.answer, standInReason: report.standInReason, keyId: report.keyId, authUrl: target.url, httpStatus: report.httpStatus,
    latencyMs: report.latencyMs, error: report.error,
  };
}
