/**
 * Capability enforcement (D20): the one place that decides whether a company or an employee may
 * do something. Cards (apply, unblock, upgrade), authorization, deposits and withdrawals call it.
 *
 *   assertCapability(q, subject, capability)      throws CAPABILITY_FROZEN with data.errorCode
 *   assertCapabilities(q, subjects, capability)   the same for several subjects, in the order given
 *                                                 (e.g. [company, employee] for an employee card)
 *   capabilityDecision(q, subject, capability)    the decision without throwing (authorization
 *                                                 engine: a refusal becomes a decline)
 *   checkCapability(state, capability)            pure: the decision for a loaded SubjectState
 *   loadSubjectState(q, subject)                  lifecycle, suspension and restriction codes
 *
 * Capabilities and what refuses them (D20; TERMINATED and SUSPENDED refuse every capability):
 *   PAYMENT   spending, authorizations       PAYMENT_FROZEN, ACCOUNT_FROZEN
 *   CARD      card management (apply, ...)   CARD_FROZEN, ACCOUNT_FROZEN
 *   CASH_IN   deposits and top-ups           CASH_IN_FROZEN
 *   CASH_OUT  withdrawals, remittances,      CASH_OUT_FROZEN, ACCOUNT_FROZEN
 *             debits
 *   ACCOUNT   account-level changes          ACCOUNT_FROZEN
 * When several codes apply, the reported one is the first of: TERMINATED, SUSPENDED, the
 * capability's own code, ACCOUNT_FROZEN.
 */
import type { Queryable } from '../../platform/db/db.ts';
import { ApiError } from '../../platform/errors.ts';
import { mergedStatus, type MergedStatus, type RestrictionCode, type SubjectRef } from './restrictions.ts';
import { restrictionCodesOf } from './restrictions-store.ts';
import { organizationStateRow } from './store.ts';
import { employeeSubjects } from './subjects.ts';

export type Capability = 'PAYMENT' | 'CARD' | 'CASH_IN' | 'CASH_OUT' | 'ACCOUNT';

/** The codes that refuse each capability, most specific first (D20). */
export const CAPABILITY_BLOCKERS: Record<Capability, readonly RestrictionCode[]> = {
  PAYMENT: ['PAYMENT_FROZEN', 'ACCOUNT_FROZEN'],
  CARD: ['CARD_FROZEN', 'ACCOUNT_FROZEN'],
  CASH_IN: ['CASH_IN_FROZEN'],
  CASH_OUT: ['CASH_OUT_FROZEN', 'ACCOUNT_FROZEN'],
  ACCOUNT: ['ACCOUNT_FROZEN'],
};

export interface SubjectState extends SubjectRef {
  partnerId: string;
  lifecycle: 'ACTIVE' | 'TERMINATED';
  suspended: boolean;
  codes: Set<RestrictionCode>;
  status: MergedStatus;
}

/** What refused a capability: a restriction code, or the subject's lifecycle or suspension. */
export type DeclineDetail = RestrictionCode | 'TERMINATED' | 'SUSPENDED';

export type CapabilityDecision =
  | { allowed: true }
  | { allowed: false; declineReason: 'CAPABILITY_FROZEN'; declineDetail: DeclineDetail; subject: SubjectRef };

/** Pure D20 check on a loaded state. */
export function checkCapability(state: SubjectState, capability: Capability): CapabilityDecision {
  const subject = { subjectType: state.subjectType, subjectId: state.subjectId };
  const refuse = (declineDetail: DeclineDetail): CapabilityDecision => ({ allowed: false, declineReason: 'CAPABILITY_FROZEN', declineDetail, subject });
  if (state.lifecycle !== 'ACTIVE') return refuse('TERMINATED');
  if (state.suspended) return refuse('SUSPENDED');
  for (const code of CAPABILITY_BLOCKERS[capability]) {
    if (state.codes.has(code)) return refuse(code);
  }
  return { allowed: true };
}

/** The subject's state, or null when it does not exist. Ids are global: no partner filter here. */
export async function loadSubjectState(q: Queryable, subject: SubjectRef): Promise<SubjectState | null> {
  let row: { partnerId: string; lifecycle: 'ACTIVE' | 'TERMINATED'; suspended: boolean; codes: unknown } | null;
  if (subject.subjectType === 'ORGANIZATION') {
    row = await organizationStateRow(q, subject.subjectId); // one statement: the row and its codes
  } else {
    const employee = await employeeSubjects().find(q, subject.subjectId);
    row = employee && { ...employee, codes: await restrictionCodesOf(q, subject) };
  }
  if (!row) return null;
  const codes = new Set(parseTextArray(row.codes));
  return {
    ...subject,
    partnerId: row.partnerId,
    lifecycle: row.lifecycle,
    suspended: row.suspended,
    codes,
    status: mergedStatus({ lifecycle: row.lifecycle, suspended: row.suspended, codes }),
  };
}

/** text[] arrives as an array from pg and PGlite; tolerate the '{a,b}' text form too. */
function parseTextArray(value: unknown): RestrictionCode[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value as RestrictionCode[];
  const text = String(value).replace(/^\{|\}$/g, '');
  return text ? (text.split(',') as RestrictionCode[]) : [];
}

export async function capabilityDecision(q: Queryable, subject: SubjectRef, capability: Capability): Promise<CapabilityDecision> {
  const state = await loadSubjectState(q, subject);
  if (!state) return { allowed: false, declineReason: 'CAPABILITY_FROZEN', declineDetail: 'TERMINATED', subject };
  return checkCapability(state, capability);
}

/** The ApiError a refused call answers with (D20): CAPABILITY_FROZEN, data.errorCode = the code. */
export function capabilityError(decision: Extract<CapabilityDecision, { allowed: false }>): ApiError {
  const who = decision.subject.subjectType === 'CUSTOMER' ? 'Employee' : 'Organization';
  return new ApiError('CAPABILITY_FROZEN', `${who} ${decision.subject.subjectId} capability is frozen: ${decision.declineDetail}`, {
    data: { errorCode: decision.declineDetail, errorMsg: `${who} ${decision.subject.subjectId}: ${decision.declineDetail}` },
  });
}

/**
 * D20: throws CAPABILITY_FROZEN (data.errorCode = the refusing code) unless the subject may use
 * the capability. A subject that does not exist is refused as TERMINATED; callers check existence
 * and ownership first and answer ORGANIZATION_INVALID / CUSTOMER_INVALID themselves.
 */
export async function assertCapability(q: Queryable, subject: SubjectRef, capability: Capability): Promise<void> {
  const decision = await capabilityDecision(q, subject, capability);
  if (!decision.allowed) throw capabilityError(decision);
}
