import type { Queryable } from '../../platform/db/db.ts';
import { restrictionDetailRows, type RestrictionDetail } from './operator-store.ts';
import type { SubjectRef } from './restrictions.ts';

/** The operator console (issue 29): a subject's restrictions with source, remark and time. */
export function restrictionDetails(q: Queryable, subject: SubjectRef): Promise<RestrictionDetail[]> {
  return restrictionDetailRows(q, subject.subjectType, subject.subjectId);
}

export type { RestrictionDetail };
