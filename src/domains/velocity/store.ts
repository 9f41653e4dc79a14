import type { Queryable } from '../../platform/db/db.ts';
import { fromDb, toDb, type Amount } from '../../platform/money.ts';
import type {
  AmountLimit, BindableSubjectType, CashAdvanceGroup, CorporateCurrency, CountLimits, FilterGroup, LimitControl,
  LimitGroup, Period, RuleControls, RuleStatus, VelocityRule,
} from './model.ts';
import { PERIOD_COLUMN } from './periods.ts';
import type { UsageRow } from './merge.ts';

/** SQL only: plain objects in and out, no business decisions. */

/** A velocity_rules row: the rule without its amount limits (another table), bindingCount as BIGINT text, limit groups as jsonb. */
type RuleRow = Omit<VelocityRule, 'bindingCount' | 'purchaseControl' | 'cashAdvanceControl'> & {
  bindingCount: string;
  purchaseControl: { countLimits: CountLimits | null } | null;
  cashAdvanceControl: { allowed: boolean; countLimits: CountLimits | null } | null;
};

interface AmountLimitRow {
  ruleId: string;
  control: LimitControl;
  currency: CorporateCurrency;
  perTransaction: string | null;
  daily: string | null;
  monthly: string | null;
  quarterly: string | null;
  yearly: string | null;
}

const RULE_COLUMNS = `r.rule_id AS "ruleId", r.partner_id AS "partnerId", r.organization_id AS "organizationId",
  r.rule_ref AS "ruleRef", r.rule_name AS "ruleName", r.remark, r.status, r.rule_version AS "ruleVersion",
  (SELECT count(*) FROM velocity_rule_bindings b WHERE b.rule_id = r.rule_id) AS "bindingCount",
  r.purchase_control AS "purchaseControl", r.cash_advance_control AS "cashAdvanceControl",
  r.currency_control AS "currencyControl", r.mcc_control AS "mccControl", r.geographic_control AS "geographicControl",
  r.created_at AS "createdAt", r.updated_at AS "updatedAt"`;

/** jsonb may arrive parsed (pg, PGlite) or as text; both are accepted. */
function json<T>(value: unknown): T | null {
  if (value === null || value === undefined) return null;
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

function amountOrNull(value: string | null): Amount | null {
  return value === null ? null : fromDb(value);
}

async function withAmountLimits(q: Queryable, rows: RuleRow[]): Promise<VelocityRule[]> {
  if (rows.length === 0) return [];
  const limits = await q.query<AmountLimitRow>(
    `SELECT rule_id AS "ruleId", control, currency, per_transaction::text AS "perTransaction", daily::text AS daily,
       monthly::text AS monthly, quarterly::text AS quarterly, yearly::text AS yearly
     FROM velocity_rule_amount_limits WHERE rule_id = ANY($1::text[]) ORDER BY rule_id, control, position`,
    [rows.map((r) => r.ruleId)],
  );
  const limitsOf = (ruleId: string, control: LimitControl): AmountLimit[] =>
    limits.filter((l) => l.ruleId === ruleId && l.control === control).map((l) => ({
      currency: l.currency,
      perTransaction: amountOrNull(l.perTransaction),
      daily: amountOrNull(l.daily),
      monthly: amountOrNull(l.monthly),
      quarterly: amountOrNull(l.quarterly),
      yearly: amountOrNull(l.yearly),
    }));
  return rows.map((row) => {
    const purchase = json<RuleRow['purchaseControl']>(row.purchaseControl);
    const cash = json<RuleRow['cashAdvanceControl']>(row.cashAdvanceControl);
    return {
      ruleId: row.ruleId,
      partnerId: row.partnerId,
      organizationId: row.organizationId,
      ruleRef: row.ruleRef,
      ruleName: row.ruleName,
      remark: row.remark,
      status: row.status,
      ruleVersion: Number(row.ruleVersion),
      bindingCount: Number(row.bindingCount),
      purchaseControl: purchase ? { amountLimits: limitsOf(row.ruleId, 'PURCHASE'), countLimits: purchase.countLimits ?? null } : null,
      cashAdvanceControl: cash
        ? { allowed: cash.allowed, amountLimits: limitsOf(row.ruleId, 'CASH_ADVANCE'), countLimits: cash.countLimits ?? null }
        : null,
      currencyControl: json<FilterGroup>(row.currencyControl),
      mccControl: json<FilterGroup>(row.mccControl),
      geographicControl: json<FilterGroup>(row.geographicControl),
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    };
  });
}

function controlColumns(c: RuleControls): (string | null)[] {
  const limitJson = (g: LimitGroup | null) => (g ? JSON.stringify({ countLimits: g.countLimits }) : null);
  const cashJson = (g: CashAdvanceGroup | null) => (g ? JSON.stringify({ allowed: g.allowed, countLimits: g.countLimits }) : null);
  const filterJson = (g: FilterGroup | null) => (g ? JSON.stringify({ filterType: g.filterType, values: g.values }) : null);
  return [limitJson(c.purchaseControl), cashJson(c.cashAdvanceControl), filterJson(c.currencyControl),
    filterJson(c.mccControl), filterJson(c.geographicControl)];
}

async function insertAmountLimits(q: Queryable, ruleId: string, c: RuleControls): Promise<void> {
  const groups: [LimitControl, LimitGroup | null][] = [['PURCHASE', c.purchaseControl], ['CASH_ADVANCE', c.cashAdvanceControl]];
  for (const [control, group] of groups) {
    for (const [position, l] of (group?.amountLimits ?? []).entries()) {
      const db = (v: Amount | null) => (v === null ? null : toDb(v));
      await q.query(
        `INSERT INTO velocity_rule_amount_limits (rule_id, control, currency, position, per_transaction, daily, monthly, quarterly, yearly)
         VALUES ($1, $2, $3, $4, $5::numeric, $6::numeric, $7::numeric, $8::numeric, $9::numeric)`,
        [ruleId, control, l.currency, position, db(l.perTransaction), db(l.daily), db(l.monthly), db(l.quarterly), db(l.yearly)],
      );
    }
  }
}

/** What a new rule row is given: the rule's identity and names, its controls, and the time (status ACTIVE, version 1). */
export type NewRule = Pick<VelocityRule, 'ruleId' | 'partnerId' | 'organizationId' | 'ruleRef' | 'ruleName' | 'remark'> & {
  controls: RuleControls;
  now: Date;
};

/** Inserts a rule at version 1, ACTIVE; false when (partner, organization, ruleRef) already exists. */
export async function insertRule(q: Queryable, r: NewRule): Promise<boolean> {
  const inserted = await q.query(
    `INSERT INTO velocity_rules (rule_id, partner_id, organization_id, rule_ref, rule_name, remark, status, rule_version,
       purchase_control, cash_advance_control, currency_control, mcc_control, geographic_control, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'ACTIVE', 1, $7::jsonb, $8::jsonb, $9::jsonb, $10::jsonb, $11::jsonb, $12, $12)
     ON CONFLICT (partner_id, organization_id, rule_ref) DO NOTHING
     RETURNING 1 AS ok`,
    [r.ruleId, r.partnerId, r.organizationId, r.ruleRef, r.ruleName, r.remark, ...controlColumns(r.controls), r.now],
  );
  if (inserted.length === 0) return false;
  await insertAmountLimits(q, r.ruleId, r.controls);
  return true;
}

export interface RuleKey {
  partnerId: string;
  organizationId: string;
  ruleId: string;
}

export type RowLock = 'none' | 'share' | 'update';

function lockClause(lock: RowLock): string {
  return lock === 'update' ? ' FOR UPDATE OF r' : lock === 'share' ? ' FOR SHARE OF r' : '';
}

/** A rule of this partner under this organization (tenant isolation: anything else is "none"). */
export async function findRule(q: Queryable, key: RuleKey, lock: RowLock = 'none'): Promise<VelocityRule | null> {
  const rows = await q.query<RuleRow>(
    `SELECT ${RULE_COLUMNS} FROM velocity_rules r
     WHERE r.rule_id = $1 AND r.partner_id = $2 AND r.organization_id = $3${lockClause(lock)}`,
    [key.ruleId, key.partnerId, key.organizationId],
  );
  return (await withAmountLimits(q, rows))[0] ?? null;
}

/** The rules among ruleIds that belong to this partner and organization, in a stable order. */
export async function findRules(
  q: Queryable, partnerId: string, organizationId: string, ruleIds: string[], lock: RowLock = 'none',
): Promise<VelocityRule[]> {
  if (ruleIds.length === 0) return [];
  const rows = await q.query<RuleRow>(
    `SELECT ${RULE_COLUMNS} FROM velocity_rules r
     WHERE r.rule_id = ANY($1::text[]) AND r.partner_id = $2 AND r.organization_id = $3
     ORDER BY r.rule_id${lockClause(lock)}`,
    [ruleIds, partnerId, organizationId],
  );
  return withAmountLimits(q, rows);
}

export async function listRules(
  q: Queryable, f: { partnerId: string; organizationId: string; status: RuleStatus | null; limit: number; offset: number },
): Promise<{ total: number; rows: VelocityRule[] }> {
  const where = `r.partner_id = $1 AND r.organization_id = $2 AND ($3::text IS NULL OR r.status = $3::text)`;
  const [{ total }] = await q.query<{ total: number }>(
    `SELECT count(*)::int AS total FROM velocity_rules r WHERE ${where}`,
    [f.partnerId, f.organizationId, f.status],
  );
  const rows = await q.query<RuleRow>(
    `SELECT ${RULE_COLUMNS} FROM velocity_rules r WHERE ${where}
     ORDER BY r.created_at DESC, r.rule_id DESC LIMIT $4 OFFSET $5`,
    [f.partnerId, f.organizationId, f.status, f.limit, f.offset],
  );
  return { total, rows: await withAmountLimits(q, rows) };
}

/**
 * Full replacement of a rule's name, remark and control groups, only if its version is still
 * `expectedVersion` (the optimistic lock of 4.7 rule 4). Two writers with the same version: the
 * second waits on the row lock, re-checks the WHERE clause after the first commits, and matches
 * nothing. Returns false when nothing matched.
 */
export async function replaceRuleIfVersion(
  q: Queryable, key: RuleKey, expectedVersion: number,
  r: { ruleName: string; remark: string | null; controls: RuleControls; now: Date },
): Promise<boolean> {
  const updated = await q.query(
    `UPDATE velocity_rules SET rule_name = $5, remark = $6, purchase_control = $7::jsonb, cash_advance_control = $8::jsonb,
       currency_control = $9::jsonb, mcc_control = $10::jsonb, geographic_control = $11::jsonb,
       rule_version = rule_version + 1, updated_at = $12
     WHERE rule_id = $1 AND partner_id = $2 AND organization_id = $3 AND rule_version = $4
     RETURNING 1 AS ok`,
    [key.ruleId, key.partnerId, key.organizationId, expectedVersion, r.ruleName, r.remark, ...controlColumns(r.controls), r.now],
  );
  if (updated.length === 0) return false;
  await q.query('DELETE FROM velocity_rule_amount_limits WHERE rule_id = $1', [key.ruleId]);
  await insertAmountLimits(q, key.ruleId, r.controls);
  return true;
}

/** Sets the status if the version still matches and the status actually changes. */
export async function setStatusIfVersion(
  q: Queryable, key: RuleKey, expectedVersion: number, status: RuleStatus, now: Date,
): Promise<boolean> {
  const updated = await q.query(
    `UPDATE velocity_rules SET status = $5, rule_version = rule_version + 1, updated_at = $6
     WHERE rule_id = $1 AND partner_id = $2 AND organization_id = $3 AND rule_version = $4 AND status <> $5
     RETURNING 1 AS ok`,
    [key.ruleId, key.partnerId, key.organizationId, expectedVersion, status, now],
  );
  return updated.length === 1;
}

// ---- Bindings ----

export interface SubjectRef {
  subjectType: BindableSubjectType;
  subjectId: string;
}

/** Binds; subjects already bound are left as they are. Returns how many bindings were new. */
export async function insertBindings(
  q: Queryable, b: { ruleId: string; partnerId: string; subjectType: BindableSubjectType; subjectIds: string[]; now: Date },
): Promise<number> {
  if (b.subjectIds.length === 0) return 0;
  const rows = await q.query(
    `INSERT INTO velocity_rule_bindings (rule_id, subject_type, subject_id, partner_id, created_at)
     SELECT $1, $2, s, $3, $4 FROM unnest($5::text[]) AS s
     ON CONFLICT (rule_id, subject_type, subject_id) DO NOTHING
     RETURNING 1 AS ok`,
    [b.ruleId, b.subjectType, b.partnerId, b.now, b.subjectIds],
  );
  return rows.length;
}

export async function deleteBindings(
  q: Queryable, b: { ruleId: string; subjectType: BindableSubjectType; subjectIds: string[] },
): Promise<number> {
  const rows = await q.query(
    `DELETE FROM velocity_rule_bindings WHERE rule_id = $1 AND subject_type = $2 AND subject_id = ANY($3::text[])
     RETURNING 1 AS ok`,
    [b.ruleId, b.subjectType, b.subjectIds],
  );
  return rows.length;
}

export interface BindingRow {
  subjectType: BindableSubjectType;
  subjectId: string;
  bindTime: Date;
}

export async function listBindings(
  q: Queryable, f: { ruleId: string; subjectType: BindableSubjectType | null; limit: number; offset: number },
): Promise<{ total: number; rows: BindingRow[] }> {
  const where = `rule_id = $1 AND ($2::text IS NULL OR subject_type = $2::text)`;
  const [{ total }] = await q.query<{ total: number }>(
    `SELECT count(*)::int AS total FROM velocity_rule_bindings WHERE ${where}`, [f.ruleId, f.subjectType]);
  const rows = await q.query<BindingRow>(
    `SELECT subject_type AS "subjectType", subject_id AS "subjectId", created_at AS "bindTime"
     FROM velocity_rule_bindings WHERE ${where}
     ORDER BY created_at DESC, subject_type, subject_id DESC LIMIT $3 OFFSET $4`,
    [f.ruleId, f.subjectType, f.limit, f.offset],
  );
  return { total, rows };
}

/** Rules bound directly to one subject, with the binding time; newest binding first. */
export async function listSubjectRules(
  q: Queryable, f: { partnerId: string; organizationId: string; subject: SubjectRef; limit: number; offset: number },
): Promise<{ total: number; rows: { rule: VelocityRule; bindTime: Date }[] }> {
  const where = `b.partner_id = $1 AND b.subject_type = $2 AND b.subject_id = $3 AND r.organization_id = $4`;
  const params = [f.partnerId, f.subject.subjectType, f.subject.subjectId, f.organizationId];
  const [{ total }] = await q.query<{ total: number }>(
    `SELECT count(*)::int AS total FROM velocity_rule_bindings b JOIN velocity_rules r ON r.rule_id = b.rule_id WHERE ${where}`,
    params,
  );
  const rows = await q.query<RuleRow & { bindTime: Date }>(
    `SELECT ${RULE_COLUMNS}, b.created_at AS "bindTime"
     FROM velocity_rule_bindings b JOIN velocity_rules r ON r.rule_id = b.rule_id
     WHERE ${where} ORDER BY b.created_at DESC, r.rule_id DESC LIMIT $5 OFFSET $6`,
    [...params, f.limit, f.offset],
  );
  const rules = await withAmountLimits(q, rows);
  return { total, rows: rules.map((rule, i) => ({ rule, bindTime: rows[i].bindTime })) };
}

/** Every rule bound to any of these subjects (all statuses), with the subject it is bound to; oldest rule first. */
export async function rulesBoundTo(
  q: Queryable, partnerId: string, subjects: SubjectRef[],
): Promise<{ rule: VelocityRule; subjectType: BindableSubjectType }[]> {
  if (subjects.length === 0) return [];
  const rows = await q.query<RuleRow & { boundType: BindableSubjectType }>(
    `SELECT ${RULE_COLUMNS}, b.subject_type AS "boundType"
     FROM velocity_rule_bindings b JOIN velocity_rules r ON r.rule_id = b.rule_id
     JOIN unnest($2::text[], $3::text[]) AS s(subject_type, subject_id)
       ON s.subject_type = b.subject_type AND s.subject_id = b.subject_id
     WHERE b.partner_id = $1
     ORDER BY r.created_at, r.rule_id, b.subject_type`,
    [partnerId, subjects.map((s) => s.subjectType), subjects.map((s) => s.subjectId)],
  );
  const rules = await withAmountLimits(q, rows);
  return rules.map((rule, i) => ({ rule, subjectType: rows[i].boundType }));
}

// ---- Usage counters (D32) ----

/** What an authorization gave to the usage counters, to give back (its card, holder and periods). */
export interface UsageGiveBack {
  partnerId: string;
  cardId: string;
  /** The card's holder when it was authorized: an employee (CUSTOMER) counts too (D45). */
  holderType: string;
  holderId: string;
  control: LimitControl;
  currency: string;
  amount: Amount;
  count: number;
  /** The original authorization's time: its periods (in the partner's zone schedule then) give back. */
  at: Date;
}

/**
 * Gives usage back through velocity_usage_give_back (src/domains/velocity/sql/velocity_usage_give_back.sql), the database's counterpart
 * of card_authorize's increment: the arithmetic of usage lives in the database both ways.
 */
export async function giveBackUsage(q: Queryable, d: UsageGiveBack): Promise<void> {
  await q.query(
    `SELECT velocity_usage_give_back($1, $2, $3, $4, $5, $6, $7::numeric, $8::bigint, $9)`,
    [d.partnerId, d.cardId, d.holderType, d.holderId, d.control, d.currency, toDb(d.amount), d.count, d.at],
  );
}

/** Usage rows of these subjects in these periods (every control and currency). */
export async function readUsage(
  q: Queryable, partnerId: string, subjects: SubjectRef[], keys: Record<Period, string>,
): Promise<UsageRow[]> {
  if (subjects.length === 0) return [];
  const periods = Object.keys(keys) as Period[];
  const rows = await q.query<{ subjectType: BindableSubjectType; control: LimitControl; currency: string; period: string; usedAmount: string; usedCount: string }>(
    `SELECT u.subject_type AS "subjectType", u.control, u.currency, u.period, u.used_amount::text AS "usedAmount",
       u.used_count AS "usedCount"
     FROM velocity_usage u
     JOIN unnest($2::text[], $3::text[]) AS s(subject_type, subject_id) ON s.subject_type = u.subject_type AND s.subject_id = u.subject_id
     JOIN unnest($4::text[], $5::text[]) AS p(period, period_key) ON p.period = u.period AND p.period_key = u.period_key
     WHERE u.partner_id = $1`,
    [partnerId, subjects.map((s) => s.subjectType), subjects.map((s) => s.subjectId),
      periods.map((p) => PERIOD_COLUMN[p]), periods.map((p) => keys[p])],
  );
  const periodOf = Object.fromEntries(periods.map((p) => [PERIOD_COLUMN[p], p])) as Record<string, Period>;
  return rows.map((r) => ({
    subjectType: r.subjectType,
    control: r.control,
    currency: r.currency,
    period: periodOf[r.period],
    usedAmount: fromDb(r.usedAmount),
    usedCount: Number(r.usedCount),
  }));
}

// ---- Periods and the partner's time zone schedule (issue 31) ----

export type PeriodColumn = (typeof PERIOD_COLUMN)[Period];

export interface PeriodRow {
  period: PeriodColumn;
  periodKey: string;
  timeZone: string;
  startsAt: Date;
  endsAt: Date;
}

/** The partner's four periods at an instant (velocity_periods, src/domains/velocity/sql/velocity_periods.sql). */
export async function readPeriods(q: Queryable, partnerId: string, at: Date): Promise<PeriodRow[]> {
  const rows = await q.query<PeriodRow>(
    `SELECT period, period_key AS "periodKey", time_zone AS "timeZone", starts_at AS "startsAt", ends_at AS "endsAt"
     FROM velocity_periods($1, $2)`,
    [partnerId, at],
  );
  return rows.map((r) => ({ ...r, startsAt: new Date(r.startsAt), endsAt: new Date(r.endsAt) }));
}

/** Whether the database knows the zone (its own copy of the zone rules computes the periods). */
export async function databaseKnowsZone(q: Queryable, zone: string): Promise<boolean> {
  const rows = await q.query('SELECT 1 AS ok FROM pg_timezone_names WHERE name = $1', [zone]);
  return rows.length > 0;
}

/** Removes the partner's zone changes that have not taken effect yet (effective after `now`). */
export async function deletePendingZones(q: Queryable, partnerId: string, now: Date): Promise<void> {
  await q.query('DELETE FROM velocity_period_zones WHERE partner_id = $1 AND effective_from > $2', [partnerId, now]);
}

export async function insertZoneChange(
  q: Queryable, z: { partnerId: string; period: PeriodColumn; effectiveFrom: Date; timeZone: string; now: Date },
): Promise<void> {
  await q.query(
    `INSERT INTO velocity_period_zones (partner_id, period, effective_from, time_zone, created_at) VALUES ($1, $2, $3, $4, $5)`,
    [z.partnerId, z.period, z.effectiveFrom, z.timeZone, z.now],
  );
}
