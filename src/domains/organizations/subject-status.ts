/**
 * Status changes of companies and employees (section 3, D18, D19, D21, D51): restrictions by
 * partners and operators, operator suspension, termination. Every change locks the subject row,
 * writes the history row and the status event in the caller's transaction.
 *
 * Domains above this one react to terminations through hooks run inside the same transaction:
 *   onCustomerTerminated(async (q, {partnerId, customerId, organizationId, at}) => cancel the cards)
 *   onOrganizationTerminated(async (q, {partnerId, organizationId, at}) => ...)
 * They are registered at wiring time by wireDomains() in src/app.ts, never by importing a module.
 */
import type { Queryable } from '../../platform/db/db.ts';
import { ApiError } from '../../platform/errors.ts';
import { recordEvent } from '../events/index.ts';
import {
  applyRestrictionChange, canonicalCodes, listRestrictions, mergedStatus, recordStatusChange,
  type MergedStatus, type Restriction, type RestrictionCode, type RestrictionSource, type SubjectRef,
} from './restrictions.ts';
import { lockOrganizationSubject, markOrganizationTerminated, setOrganizationSuspended, touchOrganization } from './store.ts';
import { employeeSubjects } from './subjects.ts';

export interface LockedSubject extends SubjectRef {
  partnerId: string;
  /** The company: the subject itself for an organization, the employer for an employee. */
  organizationId: string;
  lifecycle: 'ACTIVE' | 'TERMINATED';
  suspended: boolean;
}

export interface TerminationEvent {
  partnerId: string;
  customerId: string;
  organizationId: string;
  at: Date;
}

export type CustomerTerminationHook = (q: Queryable, e: TerminationEvent) => Promise<void>;
export type OrganizationTerminationHook = (q: Queryable, e: Omit<TerminationEvent, 'customerId'>) => Promise<void>;

const customerTerminationHooks: CustomerTerminationHook[] = [];
const organizationTerminationHooks: OrganizationTerminationHook[] = [];

/** Runs inside the terminate transaction of every employee (D16: "cards are cancelled"). */
export function onCustomerTerminated(hook: CustomerTerminationHook): void {
  if (!customerTerminationHooks.includes(hook)) customerTerminationHooks.push(hook);
}

export function onOrganizationTerminated(hook: OrganizationTerminationHook): void {
  if (!organizationTerminationHooks.includes(hook)) organizationTerminationHooks.push(hook);
}

function invalidCode(subject: SubjectRef): 'CUSTOMER_INVALID' | 'ORGANIZATION_INVALID' {
  return subject.subjectType === 'CUSTOMER' ? 'CUSTOMER_INVALID' : 'ORGANIZATION_INVALID';
}

/**
 * Locks the subject row. With a partnerId, another partner's subject is "not found"
 * (CUSTOMER_INVALID / ORGANIZATION_INVALID); without one (operators) any subject is found.
 */
export async function lockSubject(q: Queryable, subject: SubjectRef, partnerId: string | null): Promise<LockedSubject> {
  const row = subject.subjectType === 'CUSTOMER'
    ? await employeeSubjects().lock(q, subject.subjectId, partnerId)
    : await lockOrganizationSubject(q, subject.subjectId, partnerId);
  if (!row) throw new ApiError(invalidCode(subject));
  return { ...subject, ...row };
}

function statusOf(s: { lifecycle: 'ACTIVE' | 'TERMINATED'; suspended: boolean }, restrictions: Restriction[]): MergedStatus {
  return mergedStatus({ lifecycle: s.lifecycle, suspended: s.suspended, codes: restrictions.map((r) => r.code) });
}

async function emitStatusChanged(q: Queryable, subject: LockedSubject, data: Record<string, unknown>, at: Date): Promise<void> {
  const isCustomer = subject.subjectType === 'CUSTOMER';
  await recordEvent(q, {
    partnerId: subject.partnerId,
    // Section 6 and D21.
    eventType: isCustomer ? 'CUSTOMER_STATUS_CHANGED' : 'ORGANIZATION_STATUS_CHANGED',
    businessId: subject.subjectId,
    data: isCustomer
      ? { customerId: subject.subjectId, organizationId: subject.organizationId, ...data }
      : { organizationId: subject.subjectId, ...data },
    createTime: at,
  });
}

export interface RestrictionsUpdate {
  subject: SubjectRef;
  /** The calling partner; null for operators (D51). */
  partnerId: string | null;
  source: RestrictionSource;
  add: RestrictionCode[];
  remove: RestrictionCode[];
  remark: string | null;
  at: Date;
}

export interface RestrictionsOutcome {
  status: MergedStatus;
  restrictions: Restriction[];
  retainedRestrictions: RestrictionCode[];
  changed: boolean;
}

/**
 * update-restrictions (4.5 rule 4, 4.6, D18, D19) and the operator call of D51. Precedence after
 * the parameters: subject (CUSTOMER_INVALID / ORGANIZATION_INVALID), then STATUS_CONFLICT when the
 * lifecycle is not ACTIVE or (for partners) the subject is SUSPENDED. The event is written only
 * when the set changed (an idempotent repeat changes nothing and reports nothing).
 */
export async function updateRestrictions(q: Queryable, u: RestrictionsUpdate): Promise<RestrictionsOutcome> {
  const subject = await lockSubject(q, u.subject, u.partnerId);
  if (subject.lifecycle !== 'ACTIVE') throw new ApiError('STATUS_CONFLICT', `Subject is ${subject.lifecycle}`);
  if (u.partnerId !== null && subject.suspended) throw new ApiError('STATUS_CONFLICT', 'Subject is SUSPENDED');
  const add = canonicalCodes(u.add);
  const remove = canonicalCodes(u.remove);
  const result = await applyRestrictionChange(q, { subject: u.subject, source: u.source, add, remove, remark: u.remark, at: u.at });
  const statusBefore = statusOf(subject, result.before);
  const statusAfter = statusOf(subject, result.after);
  if (result.changed) {
    await recordStatusChange(q, {
      subject: u.subject, action: 'RESTRICTIONS', source: u.source, add, remove, remark: u.remark, statusBefore, statusAfter, at: u.at,
    });
    await touchSubject(q, u.subject, u.at);
    await emitStatusChanged(q, subject, {
      addRestrictions: add,
      removeRestrictions: remove,
      remark: u.remark,
      source: u.source,
      status: statusAfter,
      restrictions: result.after,
      retainedRestrictions: result.retained,
    }, u.at);
  }
  return { status: statusAfter, restrictions: result.after, retainedRestrictions: result.retained, changed: result.changed };
}

async function touchSubject(q: Queryable, subject: SubjectRef, at: Date): Promise<void> {
  if (subject.subjectType === 'CUSTOMER') await employeeSubjects().touch(q, subject.subjectId, at);
  else await touchOrganization(q, subject.subjectId, at);
}

/** Operator suspension (D18 SUSPENDED overlay). Idempotent; an event only when it changed. */
export async function setSuspended(q: Queryable, s: { subject: SubjectRef; suspended: boolean; remark: string | null; at: Date }) {
  const subject = await lockSubject(q, s.subject, null);
  if (subject.lifecycle !== 'ACTIVE') throw new ApiError('STATUS_CONFLICT', `Subject is ${subject.lifecycle}`);
  const restrictions = await listRestrictions(q, s.subject);
  const statusBefore = statusOf(subject, restrictions);
  const statusAfter = statusOf({ ...subject, suspended: s.suspended }, restrictions);
  if (subject.suspended !== s.suspended) {
    if (s.subject.subjectType === 'CUSTOMER') await employeeSubjects().setSuspended(q, s.subject.subjectId, s.suspended, s.at);
    else await setOrganizationSuspended(q, s.subject.subjectId, s.suspended, s.at);
    await recordStatusChange(q, {
      subject: s.subject, action: s.suspended ? 'SUSPEND' : 'UNSUSPEND', source: 'OPERATOR', remark: s.remark, statusBefore, statusAfter, at: s.at,
    });
    await emitStatusChanged(q, subject, {
      addRestrictions: [], removeRestrictions: [], remark: s.remark, source: 'OPERATOR', status: statusAfter, restrictions,
    }, s.at);
  }
  return { status: statusAfter, restrictions };
}

/**
 * Ends an employee's lifecycle (D16): TERMINATED, the termination hooks run (cards cancelled),
 * CUSTOMER_STATUS_CHANGED. The caller has checked ownership; an already terminated employee is
 * CUSTOMER_INVALID (an update of a subject not in a valid state, D43).
 */
export async function terminateCustomer(q: Queryable, t: { customerId: string; partnerId: string | null; remark: string | null; at: Date }) {
  const subjectRef: SubjectRef = { subjectType: 'CUSTOMER', subjectId: t.customerId };
  const subject = await lockSubject(q, subjectRef, t.partnerId);
  if (subject.lifecycle !== 'ACTIVE') throw new ApiError('CUSTOMER_INVALID', 'Employee is already TERMINATED');
  const restrictions = await listRestrictions(q, subjectRef);
  const statusBefore = statusOf(subject, restrictions);
  await employeeSubjects().markTerminated(q, t.customerId, t.at);
  await recordStatusChange(q, {
    subject: subjectRef, action: 'TERMINATE', source: t.partnerId ? 'PARTNER' : 'OPERATOR', remark: t.remark,
    statusBefore, statusAfter: 'TERMINATED', at: t.at,
  });
  for (const hook of customerTerminationHooks) {
    await hook(q, { partnerId: subject.partnerId, customerId: t.customerId, organizationId: subject.organizationId, at: t.at });
  }
  await emitStatusChanged(q, subject, {
    addRestrictions: [], removeRestrictions: [], remark: t.remark, source: t.partnerId ? 'PARTNER' : 'OPERATOR', status: 'TERMINATED', restrictions,
  }, t.at);
}

/** Operator closure of a company: its employees are terminated first, then the company. */
export async function terminateOrganization(q: Queryable, t: { organizationId: string; remark: string | null; at: Date }) {
  const subjectRef: SubjectRef = { subjectType: 'ORGANIZATION', subjectId: t.organizationId };
  const subject = await lockSubject(q, subjectRef, null);
  if (subject.lifecycle !== 'ACTIVE') throw new ApiError('STATUS_CONFLICT', 'Organization is already TERMINATED');
  const employees = await employeeSubjects().listActive(q, t.organizationId);
  for (const customerId of employees) await terminateCustomer(q, { customerId, partnerId: null, remark: t.remark, at: t.at });
  const restrictions = await listRestrictions(q, subjectRef);
  const statusBefore = statusOf(subject, restrictions);
  await markOrganizationTerminated(q, t.organizationId, t.at);
  await recordStatusChange(q, {
    subject: subjectRef, action: 'TERMINATE', source: 'OPERATOR', remark: t.remark, statusBefore, statusAfter: 'TERMINATED', at: t.at,
  });
  for (const hook of organizationTerminationHooks) await hook(q, { partnerId: subject.partnerId, organizationId: t.organizationId, at: t.at });
  await emitStatusChanged(q, subject, {
    addRestrictions: [], removeRestrictions: [], remark: t.remark, source: 'OPERATOR', status: 'TERMINATED', restrictions,
  }, t.at);
  return { terminatedCustomers: employees.length };
}
