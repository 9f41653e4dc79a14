import { newId } from '../../platform/crypto/secrets.ts';
import type { Queryable } from '../../platform/db/db.ts';
import { invariant } from '../../platform/errors.ts';
import { deleteRestrictions, insertRestrictions, insertStatusChange, listRestrictionRows, listRestrictionRowsOf } from './restrictions-store.ts';

// Section 3 codes (RESTRICTION_CODES) and D19 sources (RESTRICTION_SOURCES) are wire values: the contract defines them.
import {
  RESTRICTION_CODES, RESTRICTION_SOURCES, type MergedStatus, type RestrictionCode, type RestrictionSource,
} from '../../../sdk/contract/organizations.ts';

export { RESTRICTION_CODES, RESTRICTION_SOURCES, type MergedStatus, type RestrictionCode, type RestrictionSource };
export type OperatorSource = Exclude<RestrictionSource, 'PARTNER'>;

export type SubjectType = 'CUSTOMER' | 'ORGANIZATION';

/** A company or an employee, the holders of restrictions and capabilities. */
export interface SubjectRef {
  subjectType: SubjectType;
  subjectId: string;
}

export interface Restriction {
  code: RestrictionCode;
  source: RestrictionSource;
}


export interface StatusInputs {
  lifecycle: 'ACTIVE' | 'TERMINATED';
  suspended: boolean;
  codes: Iterable<RestrictionCode>;
}

/**
 * D18 merged status: TERMINATED if the lifecycle ended; else SUSPENDED if an operator suspended
 * the subject; else FROZEN with ACCOUNT_FROZEN; else RESTRICTED with any other code; else ACTIVE.
 */
export function mergedStatus(s: StatusInputs): MergedStatus {
  if (s.lifecycle === 'TERMINATED') return 'TERMINATED';
  if (s.suspended) return 'SUSPENDED';
  const codes = new Set(s.codes);
  if (codes.has('ACCOUNT_FROZEN')) return 'FROZEN';
  if (codes.size > 0) return 'RESTRICTED';
  return 'ACTIVE';
}

/** Codes in the canonical order of section 3, without repeats. */
export function canonicalCodes(codes: Iterable<RestrictionCode>): RestrictionCode[] {
  const set = new Set(codes);
  return RESTRICTION_CODES.filter((c) => set.has(c));
}

/** Restrictions in a stable order: by code (section 3 order), then source. */
export async function listRestrictions(q: Queryable, subject: SubjectRef): Promise<Restriction[]> {
  return sortRestrictions(await listRestrictionRows(q, subject));
}

/** Restrictions of many subjects of one type at once (list endpoints). */
export async function listRestrictionsOf(q: Queryable, subjectType: SubjectType, subjectIds: string[]): Promise<Map<string, Restriction[]>> {
  const out = new Map<string, Restriction[]>(subjectIds.map((id) => [id, []]));
  if (subjectIds.length === 0) return out;
  const rows = await listRestrictionRowsOf(q, subjectType, subjectIds);
  for (const r of rows) out.get(r.subjectId)?.push({ code: r.code, source: r.source });
  for (const [id, list] of out) out.set(id, sortRestrictions(list));
  return out;
}

function sortRestrictions(list: Restriction[]): Restriction[] {
  return [...list].sort((a, b) =>
    RESTRICTION_CODES.indexOf(a.code) - RESTRICTION_CODES.indexOf(b.code)
    || RESTRICTION_SOURCES.indexOf(a.source) - RESTRICTION_SOURCES.indexOf(b.source));
}

export interface RestrictionChange {
  subject: SubjectRef;
  source: RestrictionSource;
  add: RestrictionCode[];
  remove: RestrictionCode[];
  remark: string | null;
  at: Date;
}

export interface RestrictionChangeResult {
  before: Restriction[];
  after: Restriction[];
  /** Codes asked to be removed that another source still holds (D19). */
  retained: RestrictionCode[];
  changed: boolean;
}

/**
 * Applies a set change for one source (idempotent: adding a held code or removing an absent one
 * changes nothing). A source only ever adds or removes its own rows, so a partner can never lift
 * a RISK, REGULATORY or JUDICIAL code (D19). The caller holds the subject's row lock.
 */
export async function applyRestrictionChange(q: Queryable, change: RestrictionChange): Promise<RestrictionChangeResult> {
  const { subject, source } = change;
  invariant(!change.add.some((c) => change.remove.includes(c)), 'a code is not both added and removed');
  const before = await listRestrictions(q, subject);
  const own = new Set(before.filter((r) => r.source === source).map((r) => r.code));
  const toAdd = change.add.filter((c) => !own.has(c));
  const toRemove = change.remove.filter((c) => own.has(c));
  if (toAdd.length > 0) {
    await insertRestrictions(q, { subject, codes: toAdd, source, remark: change.remark, at: change.at });
  }
  if (toRemove.length > 0) {
    await deleteRestrictions(q, subject, source, toRemove);
  }
  const after = await listRestrictions(q, subject);
  const heldAfter = new Set(after.map((r) => r.code));
  const retained = canonicalCodes(change.remove.filter((c) => heldAfter.has(c)));
  // Pair assertions: the source's own rows are exactly (own + add - remove).
  const ownAfter = new Set(after.filter((r) => r.source === source).map((r) => r.code));
  for (const c of change.add) invariant(ownAfter.has(c), `${c} held by ${source} after add`);
  for (const c of change.remove) invariant(!ownAfter.has(c), `${c} not held by ${source} after remove`);
  return { before, after, retained, changed: toAdd.length > 0 || toRemove.length > 0 };
}

export async function recordStatusChange(q: Queryable, c: {
  subject: SubjectRef;
  action: 'RESTRICTIONS' | 'SUSPEND' | 'UNSUSPEND' | 'TERMINATE';
  source: RestrictionSource | 'OPERATOR';
  add?: RestrictionCode[];
  remove?: RestrictionCode[];
  remark: string | null;
  statusBefore: MergedStatus;
  statusAfter: MergedStatus;
  at: Date;
}): Promise<void> {
  await insertStatusChange(q, {
    changeId: newId('sc'), subject: c.subject, action: c.action, source: c.source, add: c.add ?? [], remove: c.remove ?? [],
    remark: c.remark, statusBefore: c.statusBefore, statusAfter: c.statusAfter, at: c.at,
  });
}
