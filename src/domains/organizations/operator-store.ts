import type { Queryable } from '../../platform/db/db.ts';

export interface RestrictionDetail {
  code: string;
  source: string;
  remark: string | null;
  createdAt: Date;
}

/** A subject's restrictions with their remark and time, for the operator console (issue 29). */
export async function restrictionDetailRows(q: Queryable, subjectType: string, subjectId: string): Promise<RestrictionDetail[]> {
  return q.query<RestrictionDetail>(
    `SELECT code, source, remark, created_at AS "createdAt" FROM subject_restrictions
     WHERE subject_type = $1 AND subject_id = $2 ORDER BY created_at, code, source`,
    [subjectType, subjectId],
  );
}
