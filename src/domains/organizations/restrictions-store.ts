import type { Queryable } from '../../platform/db/db.ts';
import type { Restriction, RestrictionCode, RestrictionSource, SubjectRef, SubjectType } from './restrictions.ts';

/** SQL of restrictions (D19) and the status history of companies and employees (D18, D21). */

export async function listRestrictionRows(q: Queryable, subject: SubjectRef): Promise<Restriction[]> {
  return q.query<Restriction>(
    'SELECT code, source FROM subject_restrictions WHERE subject_type = $1 AND subject_id = $2',
    [subject.subjectType, subject.subjectId],
  );
}

export async function listRestrictionRowsOf(q: Queryable, subjectType: SubjectType, subjectIds: string[]): Promise<Array<Restriction & { subjectId: string }>> {
  return q.query<Restriction & { subjectId: string }>(
    `SELECT subject_id AS "subjectId", code, source FROM subject_restrictions WHERE subject_type = $1 AND subject_id = ANY($2::text[])`,
    [subjectType, subjectIds],
  );
}

/** The distinct codes in force on a subject, whatever their source. */
export async function restrictionCodesOf(q: Queryable, subject: SubjectRef): Promise<RestrictionCode[]> {
  const rows = await q.query<{ code: RestrictionCode }>(
    'SELECT DISTINCT code FROM subject_restrictions WHERE subject_type = $1 AND subject_id = $2',
    [subject.subjectType, subject.subjectId],
  );
  return rows.map((r) => r.code);
}

export async function insertRestrictions(
  q: Queryable,
  r: { subject: SubjectRef; codes: RestrictionCode[]; source: RestrictionSource; remark: string | null; at: Date },
): Promise<void> {
  await q.query(
    `INSERT INTO subject_restrictions (subject_type, subject_id, code, source, remark, created_at)
     SELECT $1, $2, code, $4, $5, $6 FROM unnest($3::text[]) AS code
     ON CONFLICT DO NOTHING`,
    [r.subject.subjectType, r.subject.subjectId, r.codes, r.source, r.remark, r.at],
  );
}

export async function deleteRestrictions(q: Queryable, subject: SubjectRef, source: RestrictionSource, codes: RestrictionCode[]): Promise<void> {
  await q.query(
    `DELETE FROM subject_restrictions WHERE subject_type = $1 AND subject_id = $2 AND source = $3 AND code = ANY($4::text[])`,
    [subject.subjectType, subject.subjectId, source, codes],
  );
}

export interface NewStatusChange {
  changeId: string;
  subject: SubjectRef;
  action: 'RESTRICTIONS' | 'SUSPEND' | 'UNSUSPEND' | 'TERMINATE';
  source: RestrictionSource | 'OPERATOR';
  add: RestrictionCode[];
  remove: RestrictionCode[];
  remark: string | null;
  statusBefore: string;
  statusAfter: string;
  at: Date;
}

export async function insertStatusChange(q: Queryable, c: NewStatusChange): Promise<void> {
  await q.query(
    `INSERT INTO subject_status_changes (change_id, subject_type, subject_id, action, source, add_restrictions,
       remove_restrictions, remark, status_before, status_after, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [c.changeId, c.subject.subjectType, c.subject.subjectId, c.action, c.source, JSON.stringify(c.add),
      JSON.stringify(c.remove), c.remark, c.statusBefore, c.statusAfter, c.at],
  );
}
