import type { Queryable } from '../../platform/db/db.ts';

/** SQL of physical card upgrades (issue 30, D52): rows as stored, no business rules. */

export type UpgradeStatus = 'PENDING' | 'PRODUCING' | 'SHIPPED' | 'DELIVERED' | 'ACTIVATED' | 'REJECTED' | 'CANCELLED';

export interface ShippingAddress {
  postalCode: string | null;
  addressLine1: string;
  addressLine2: string | null;
  addressLine3: string | null;
  city: string;
  state: string;
  addressCountryCode: string;
}

/** A fee charged at acceptance; `accountId` is where it came from (and where a refund goes). */
export interface FeeLine {
  type: 'CARD_PRINTING_FEE' | 'CARD_POSTAL_FEE';
  currency: string;
  amount: string;
  accountId: string;
  /** The asset movement of a consumer fee, the posting of a corporate one. */
  transactionId: string;
}

export interface UpgradeRow {
  upgradeId: string;
  partnerId: string;
  upgradeRef: string;
  cardId: string;
  cardProfileId: string;
  status: UpgradeStatus;
  shippingAddress: ShippingAddress;
  phoneCountryCode: string | null;
  phoneNumber: string;
  carrier: string | null;
  trackingNumber: string | null;
  rejectReason: string | null;
  fees: FeeLine[];
  refundedAt: Date | null;
  activationCodeHmac: string | null;
  activationFailures: number;
  activationLocked: boolean;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS = `u.upgrade_id AS "upgradeId", u.partner_id AS "partnerId", u.upgrade_ref AS "upgradeRef", u.card_id AS "cardId",
  u.card_profile_id AS "cardProfileId", u.status, u.shipping_address AS "shippingAddress", u.phone_country_code AS "phoneCountryCode",
  u.phone_number AS "phoneNumber", u.carrier, u.tracking_number AS "trackingNumber", u.reject_reason AS "rejectReason", u.fees,
  u.refunded_at AS "refundedAt", u.activation_code_hmac AS "activationCodeHmac", u.activation_failures AS "activationFailures",
  u.activation_locked AS "activationLocked", u.created_at AS "createdAt", u.updated_at AS "updatedAt"`;

export const OPEN_STATUSES: readonly UpgradeStatus[] = ['PENDING', 'PRODUCING', 'SHIPPED', 'DELIVERED'];

/** The card facts an upgrade needs, for any family (corporate or consumer), locked when asked. */
export interface UpgradeCardRow {
  cardId: string;
  partnerId: string;
  organizationId: string | null;
  subjectType: 'ORGANIZATION' | 'CUSTOMER' | 'USER';
  subjectId: string;
  custodianCustomerId: string | null;
  cardNetwork: string;
  cardForm: 'VIRTUAL' | 'PHYSICAL';
  balanceMode: 'SHARED' | 'DEDICATED' | 'ASSET';
  currency: string;
  fundingAsset: string | null;
  status: 'ACTIVE' | 'BLOCKED' | 'CANCELLED';
}

/** Which cards a caller may touch: a corporate partner's cards, or one managed user's. */
export type CardScope = { family: 'CORPORATE' } | { family: 'CONSUMER'; userId: string };

function scopeClause(scope: CardScope, param: number): { sql: string; params: unknown[] } {
  return scope.family === 'CORPORATE'
    ? { sql: `c.subject_type <> 'USER'`, params: [] }
    : { sql: `c.subject_type = 'USER' AND c.subject_id = $${param}`, params: [scope.userId] };
}

export async function findUpgradeCard(q: Queryable, partnerId: string, cardId: string, scope: CardScope | null, forUpdate: boolean): Promise<UpgradeCardRow | null> {
  const s = scope ? scopeClause(scope, 3) : { sql: 'true', params: [] };
  const rows = await q.query<UpgradeCardRow>(
    `SELECT c.card_id AS "cardId", c.partner_id AS "partnerId", c.organization_id AS "organizationId", c.subject_type AS "subjectType",
            c.subject_id AS "subjectId", c.custodian_customer_id AS "custodianCustomerId", c.card_network AS "cardNetwork",
            c.card_form AS "cardForm", c.balance_mode AS "balanceMode", c.currency, c.funding_asset AS "fundingAsset", c.status
       FROM cards c WHERE c.partner_id = $1 AND c.card_id = $2 AND ${s.sql}${forUpdate ? ' FOR UPDATE' : ''}`,
    [partnerId, cardId, ...s.params],
  );
  return rows[0] ?? null;
}

export type NewUpgrade = Pick<UpgradeRow, 'upgradeId' | 'partnerId' | 'upgradeRef' | 'cardId' | 'cardProfileId' | 'shippingAddress'
  | 'phoneCountryCode' | 'phoneNumber'>;

/** Inserts a PENDING upgrade; null when the partner already used the upgradeRef (race-safe). */
export async function insertUpgrade(q: Queryable, u: NewUpgrade, now: Date): Promise<UpgradeRow | null> {
  const rows = await q.query<UpgradeRow>(
    `INSERT INTO card_upgrades AS u (upgrade_id, partner_id, upgrade_ref, card_id, card_profile_id, status, shipping_address,
       phone_country_code, phone_number, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, 'PENDING', $6::jsonb, $7, $8, $9, $9)
     ON CONFLICT (partner_id, upgrade_ref) DO NOTHING RETURNING ${COLUMNS}`,
    [u.upgradeId, u.partnerId, u.upgradeRef, u.cardId, u.cardProfileId, JSON.stringify(u.shippingAddress), u.phoneCountryCode, u.phoneNumber, now],
  );
  return rows[0] ?? null;
}

export async function upgradeRefTaken(q: Queryable, partnerId: string, upgradeRef: string): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM card_upgrades WHERE partner_id = $1 AND upgrade_ref = $2', [partnerId, upgradeRef]);
  return rows.length > 0;
}

/** The partner's upgrade by its ref, limited to the scope's cards; locked when asked. */
export async function findUpgradeByRef(q: Queryable, partnerId: string, upgradeRef: string, scope: CardScope | null, forUpdate: boolean): Promise<UpgradeRow | null> {
  const s = scope ? scopeClause(scope, 3) : { sql: 'true', params: [] };
  const rows = await q.query<UpgradeRow>(
    `SELECT ${COLUMNS} FROM card_upgrades u JOIN cards c ON c.card_id = u.card_id
      WHERE u.partner_id = $1 AND u.upgrade_ref = $2 AND ${s.sql}${forUpdate ? ' FOR UPDATE OF u' : ''}`,
    [partnerId, upgradeRef, ...s.params],
  );
  return rows[0] ?? null;
}

/** The card's open upgrade (at most one), locked when asked. */
export async function findOpenUpgrade(q: Queryable, cardId: string, forUpdate: boolean): Promise<UpgradeRow | null> {
  const rows = await q.query<UpgradeRow>(
    `SELECT ${COLUMNS} FROM card_upgrades u WHERE u.card_id = $1 AND u.status = ANY ($2::text[])${forUpdate ? ' FOR UPDATE' : ''}`,
    [cardId, OPEN_STATUSES],
  );
  return rows[0] ?? null;
}

/** Open upgrades of several cards at once (card list pages). */
export async function findOpenUpgrades(q: Queryable, cardIds: string[]): Promise<UpgradeRow[]> {
  if (cardIds.length === 0) return [];
  return q.query<UpgradeRow>(
    `SELECT ${COLUMNS} FROM card_upgrades u WHERE u.card_id = ANY ($1::text[]) AND u.status = ANY ($2::text[])`,
    [cardIds, OPEN_STATUSES],
  );
}

export async function setUpgradeFees(q: Queryable, upgradeId: string, fees: FeeLine[]): Promise<UpgradeRow> {
  const rows = await q.query<UpgradeRow>(
    `UPDATE card_upgrades u SET fees = $2::jsonb WHERE upgrade_id = $1 RETURNING ${COLUMNS}`,
    [upgradeId, JSON.stringify(fees)],
  );
  return rows[0];
}

/** A state change with the fields that come with it (null leaves a field as it is). */
export async function setUpgradeStatus(
  q: Queryable,
  upgradeId: string,
  change: {
    status: UpgradeStatus; carrier?: string | null; trackingNumber?: string | null; rejectReason?: string | null;
    activationCodeHmac?: string | null; refundedAt?: Date | null;
  },
  now: Date,
): Promise<UpgradeRow> {
  const rows = await q.query<UpgradeRow>(
    `UPDATE card_upgrades u SET status = $2, carrier = COALESCE($3, carrier), tracking_number = COALESCE($4, tracking_number),
       reject_reason = COALESCE($5, reject_reason), activation_code_hmac = COALESCE($6, activation_code_hmac),
       refunded_at = COALESCE($7, refunded_at), updated_at = $8
     WHERE upgrade_id = $1 RETURNING ${COLUMNS}`,
    [upgradeId, change.status, change.carrier ?? null, change.trackingNumber ?? null, change.rejectReason ?? null,
      change.activationCodeHmac ?? null, change.refundedAt ?? null, now],
  );
  return rows[0];
}

/** Counts a wrong activation code; locks the activation when the count reaches `lockAt`. */
export async function countActivationFailure(q: Queryable, upgradeId: string, lockAt: number, now: Date): Promise<UpgradeRow> {
  const rows = await q.query<UpgradeRow>(
    `UPDATE card_upgrades u SET activation_failures = activation_failures + 1, activation_locked = (activation_failures + 1 >= $2),
       updated_at = $3 WHERE upgrade_id = $1 RETURNING ${COLUMNS}`,
    [upgradeId, lockAt, now],
  );
  return rows[0];
}

export async function unlockActivationRow(q: Queryable, upgradeId: string, now: Date): Promise<UpgradeRow> {
  const rows = await q.query<UpgradeRow>(
    `UPDATE card_upgrades u SET activation_failures = 0, activation_locked = false, updated_at = $2 WHERE upgrade_id = $1 RETURNING ${COLUMNS}`,
    [upgradeId, now],
  );
  return rows[0];
}

/** On activation the card becomes PHYSICAL under the upgrade's profile; everything else stays. */
export async function setCardPhysical(q: Queryable, cardId: string, cardProfileId: string, now: Date): Promise<void> {
  await q.query(`UPDATE cards SET card_form = 'PHYSICAL', card_profile_id = $2, updated_at = $3 WHERE card_id = $1`, [cardId, cardProfileId, now]);
}
