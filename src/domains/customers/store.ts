import type { Queryable } from '../../platform/db/db.ts';

export type KycStatus = 'PENDING' | 'APPROVED' | 'REJECTED';
export type AddressType = 'SHIPPING_ADDRESS';

export interface Customer {
  customerId: string;
  partnerId: string;
  organizationId: string;
  customerRef: string;
  firstName: string;
  middleName: string | null;
  lastName: string;
  phoneCountryCode: string | null;
  phoneNumber: string | null;
  email: string | null;
  lifecycle: 'ACTIVE' | 'TERMINATED';
  suspended: boolean;
  kycStatus: KycStatus;
  kycReason: string | null;
  kycUpdatedAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

export interface Address {
  addressType: AddressType;
  postalCode: string | null;
  addressLine1: string;
  addressLine2: string | null;
  addressLine3: string | null;
  city: string;
  state: string;
  addressCountryCode: string;
}

const COLUMNS = `customer_id AS "customerId", partner_id AS "partnerId", organization_id AS "organizationId",
  customer_ref AS "customerRef", first_name AS "firstName", middle_name AS "middleName", last_name AS "lastName",
  phone_country_code AS "phoneCountryCode", phone_number AS "phoneNumber", email, lifecycle, suspended,
  kyc_status AS "kycStatus", kyc_reason AS "kycReason", kyc_updated_at AS "kycUpdatedAt",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

const ADDRESS_COLUMNS = `address_type AS "addressType", postal_code AS "postalCode", address_line1 AS "addressLine1",
  address_line2 AS "addressLine2", address_line3 AS "addressLine3", city, state, address_country_code AS "addressCountryCode"`;

/** What a new employee row is given; lifecycle, suspension and KYC start at their defaults. */
export type NewCustomer = Omit<Customer, 'lifecycle' | 'suspended' | 'kycStatus' | 'kycReason' | 'kycUpdatedAt' | 'updatedAt'>;

/** Inserts the employee (KYC PENDING); null when customerRef is taken in the organization (D48). */
export async function insertCustomer(q: Queryable, c: NewCustomer): Promise<Customer | null> {
  const rows = await q.query<Customer>(
    `INSERT INTO customers (customer_id, partner_id, organization_id, customer_ref, first_name, middle_name, last_name,
       phone_country_code, phone_number, email, kyc_status, kyc_updated_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'PENDING', $11, $11, $11)
     ON CONFLICT (organization_id, customer_ref) DO NOTHING
     RETURNING ${COLUMNS}`,
    [c.customerId, c.partnerId, c.organizationId, c.customerRef, c.firstName, c.middleName, c.lastName,
      c.phoneCountryCode, c.phoneNumber, c.email, c.createdAt],
  );
  return rows[0] ?? null;
}

/** The partner's employee or null: another partner's id behaves exactly like an unknown one. */
export async function findCustomer(q: Queryable, partnerId: string | null, customerId: string, forUpdate = false): Promise<Customer | null> {
  const rows = await q.query<Customer>(
    `SELECT ${COLUMNS} FROM customers WHERE customer_id = $1 AND ($2::text IS NULL OR partner_id = $2)${forUpdate ? ' FOR UPDATE' : ''}`,
    [customerId, partnerId],
  );
  return rows[0] ?? null;
}

export async function customerRefTaken(q: Queryable, organizationId: string, customerRef: string): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM customers WHERE organization_id = $1 AND customer_ref = $2', [organizationId, customerRef]);
  return rows.length > 0;
}

export async function listCustomers(
  q: Queryable,
  partnerId: string,
  organizationId: string,
  filter: { customerRef?: string },
  limit: number,
  offset: number,
): Promise<{ total: number; rows: Customer[] }> {
  const ref = filter.customerRef ?? null;
  const [{ total }] = await q.query<{ total: number }>(
    `SELECT count(*)::int AS total FROM customers
     WHERE partner_id = $1 AND organization_id = $2 AND ($3::text IS NULL OR customer_ref = $3)`,
    [partnerId, organizationId, ref],
  );
  const rows = await q.query<Customer>(
    `SELECT ${COLUMNS} FROM customers WHERE partner_id = $1 AND organization_id = $2 AND ($3::text IS NULL OR customer_ref = $3)
     ORDER BY created_at DESC, seq DESC LIMIT $4 OFFSET $5`,
    [partnerId, organizationId, ref, limit, offset],
  );
  return { total, rows };
}

export async function setName(q: Queryable, customerId: string, name: { firstName: string; middleName: string | null; lastName: string }, at: Date): Promise<void> {
  await q.query(
    'UPDATE customers SET first_name = $2, middle_name = $3, last_name = $4, updated_at = $5 WHERE customer_id = $1',
    [customerId, name.firstName, name.middleName, name.lastName, at],
  );
}

export async function setPhone(q: Queryable, customerId: string, phoneCountryCode: string, phoneNumber: string, at: Date): Promise<void> {
  await q.query(
    'UPDATE customers SET phone_country_code = $2, phone_number = $3, updated_at = $4 WHERE customer_id = $1',
    [customerId, phoneCountryCode, phoneNumber, at],
  );
}

export async function setEmail(q: Queryable, customerId: string, email: string, at: Date): Promise<void> {
  await q.query('UPDATE customers SET email = $2, updated_at = $3 WHERE customer_id = $1', [customerId, email, at]);
}

export async function setKycStatus(q: Queryable, customerId: string, status: KycStatus, reason: string | null, at: Date): Promise<void> {
  await q.query(
    'UPDATE customers SET kyc_status = $2, kyc_reason = $3, kyc_updated_at = $4, updated_at = $4 WHERE customer_id = $1',
    [customerId, status, reason, at],
  );
}

/** Replaces whole address objects per addressType (4.5 rule 3); other types are untouched. */
export async function upsertAddresses(q: Queryable, customerId: string, addresses: Address[], at: Date): Promise<void> {
  for (const a of addresses) {
    await q.query(
      `INSERT INTO customer_addresses (customer_id, address_type, postal_code, address_line1, address_line2, address_line3,
         city, state, address_country_code, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (customer_id, address_type) DO UPDATE SET postal_code = excluded.postal_code,
         address_line1 = excluded.address_line1, address_line2 = excluded.address_line2,
         address_line3 = excluded.address_line3, city = excluded.city, state = excluded.state,
         address_country_code = excluded.address_country_code, updated_at = excluded.updated_at`,
      [customerId, a.addressType, a.postalCode, a.addressLine1, a.addressLine2, a.addressLine3, a.city, a.state, a.addressCountryCode, at],
    );
  }
}

/** Addresses of many employees, by customerId; every requested id maps to an array (2.7). */
export async function listAddresses(q: Queryable, customerIds: string[]): Promise<Map<string, Address[]>> {
  const out = new Map<string, Address[]>(customerIds.map((id) => [id, []]));
  if (customerIds.length === 0) return out;
  const rows = await q.query<Address & { customerId: string }>(
    `SELECT customer_id AS "customerId", ${ADDRESS_COLUMNS} FROM customer_addresses
     WHERE customer_id = ANY($1::text[]) ORDER BY customer_id, address_type`,
    [customerIds],
  );
  for (const { customerId, ...address } of rows) out.get(customerId)?.push(address);
  return out;
}

/** Bumps the employee's modifyTime (a change held in another table, e.g. addresses). */
export async function touchCustomer(q: Queryable, customerId: string, at: Date): Promise<void> {
  await q.query('UPDATE customers SET updated_at = $2 WHERE customer_id = $1', [customerId, at]);
}

// ---------------------------------------------------------------------------------------------
// KYC reviews (D17)

export interface NewKycReview {
  reviewId: string;
  customerId: string;
  openedBy: 'CREATE' | 'NAME_CHANGE' | 'RESUBMIT';
  openedAt: Date;
}

export async function insertKycReview(q: Queryable, r: NewKycReview): Promise<void> {
  await q.query(
    `INSERT INTO kyc_reviews (review_id, customer_id, opened_by, status, opened_at) VALUES ($1, $2, $3, 'PENDING', $4)`,
    [r.reviewId, r.customerId, r.openedBy, r.openedAt],
  );
}

/** Closes the employee's PENDING reviews with the decision; returns how many were closed. */
export async function closeOpenKycReviews(
  q: Queryable,
  customerId: string,
  d: { status: 'APPROVED' | 'REJECTED'; reason: string | null; decidedBy: string; decidedAt: Date },
): Promise<number> {
  const closed = await q.query(
    `UPDATE kyc_reviews SET status = $2, reason = $3, decided_by = $4, decided_at = $5
     WHERE customer_id = $1 AND status = 'PENDING' RETURNING review_id`,
    [customerId, d.status, d.reason, d.decidedBy, d.decidedAt],
  );
  return closed.length;
}

// ---------------------------------------------------------------------------------------------
// The employee as a subject of restrictions and status changes (D16, D18-D21)

export interface CustomerSubjectRow {
  partnerId: string;
  organizationId: string;
  lifecycle: Customer['lifecycle'];
  suspended: boolean;
}

/** Locks the employee row; with a partnerId, another partner's employee is null. */
export async function lockCustomerSubject(q: Queryable, customerId: string, partnerId: string | null): Promise<CustomerSubjectRow | null> {
  const rows = await q.query<CustomerSubjectRow>(
    `SELECT partner_id AS "partnerId", organization_id AS "organizationId", lifecycle, suspended
       FROM customers WHERE customer_id = $1 AND ($2::text IS NULL OR partner_id = $2) FOR UPDATE`,
    [customerId, partnerId],
  );
  return rows[0] ?? null;
}

export async function findCustomerSubject(q: Queryable, customerId: string): Promise<CustomerSubjectRow | null> {
  const rows = await q.query<CustomerSubjectRow>(
    `SELECT partner_id AS "partnerId", organization_id AS "organizationId", lifecycle, suspended FROM customers WHERE customer_id = $1`,
    [customerId],
  );
  return rows[0] ?? null;
}

export async function setCustomerSuspended(q: Queryable, customerId: string, suspended: boolean, at: Date): Promise<void> {
  await q.query('UPDATE customers SET suspended = $2, updated_at = $3 WHERE customer_id = $1', [customerId, suspended, at]);
}

export async function markCustomerTerminated(q: Queryable, customerId: string, at: Date): Promise<void> {
  await q.query(`UPDATE customers SET lifecycle = 'TERMINATED', terminated_at = $2, updated_at = $2 WHERE customer_id = $1`, [customerId, at]);
}

/** The company's employees whose lifecycle is ACTIVE, in id order. */
export async function listActiveCustomerIds(q: Queryable, organizationId: string): Promise<string[]> {
  const rows = await q.query<{ customerId: string }>(
    `SELECT customer_id AS "customerId" FROM customers WHERE organization_id = $1 AND lifecycle = 'ACTIVE' ORDER BY customer_id`,
    [organizationId],
  );
  return rows.map((r) => r.customerId);
}
