import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type {
  ApplyCardParams, Card, CardApplication, CardServiceClient, CreatedPartner, Customer, Organization,
} from '../../sdk/index.ts';
import { processCardApplications } from '../../src/domains/cards/testing.ts';
import { revealCardSecretOf } from '../../src/domains/cards/testing.ts';
import { approvedEmployee, newCompany } from './companies.ts';
import type { TestService } from './service.ts';

/** Fixtures of the cards tests: everything through the public API, except running the job. */

export const ref = (prefix = 'apply') => `${prefix}-${randomBytes(5).toString('hex')}`;

export interface CardWorld {
  partner: CreatedPartner;
  client: CardServiceClient;
  org: Organization;
  employee: Customer;
}

/** A partner with a company (USD, HKD pools) and an employee with approved KYC. */
export async function cardWorld(svc: TestService, partnerInput: { pciCertified?: boolean; secureCardIvMode?: 'SHARED' | 'PER_FIELD' } = {}): Promise<CardWorld> {
  const { partner, client } = await svc.newPartner(partnerInput);
  const org = await newCompany(client);
  const employee = await approvedEmployee(client, org.organizationId);
  return { partner, client, org, employee };
}

/** Runs the application job until nothing is due (what the worker loop does every second). */
export async function runJobs(svc: TestService): Promise<{ succeeded: number; rejected: number }> {
  const total = { succeeded: 0, rejected: 0 };
  for (let i = 0; i < 20; i++) {
    const r = await processCardApplications(svc.ctx, { limit: 50 });
    total.succeeded += r.succeeded;
    total.rejected += r.rejected;
    if (r.leased === 0) return total;
  }
  assert.fail('the application job did not drain');
}

/** Applies, runs the job, and returns the final application (polled through query-apply). */
export async function applyAndProcess(svc: TestService, client: CardServiceClient, params: Omit<ApplyCardParams, 'cardApplyRef'> & { cardApplyRef?: string }): Promise<CardApplication> {
  const accepted = await client.cards.apply({ cardApplyRef: ref(), ...params });
  assert.equal(accepted.status, 'PENDING');
  await runJobs(svc);
  return client.cards.queryApply(accepted.cardApplyId);
}

/** An issued ACTIVE card of the world's employee (or a company card with the employee as custodian). */
export async function issueCard(
  svc: TestService,
  world: CardWorld,
  options: { profile?: string; company?: boolean; cardholderName?: string; ruleIds?: string[] } = {},
): Promise<Card> {
  const application = await applyAndProcess(svc, world.client, {
    organizationId: world.org.organizationId,
    cardProfileId: options.profile ?? 'sbx-visa-shared',
    ...(options.company
      ? { subjectType: 'ORGANIZATION', subjectId: world.org.organizationId, custodianCustomerId: world.employee.customerId }
      : { subjectType: 'CUSTOMER', subjectId: world.employee.customerId }),
    ...(options.cardholderName ? { cardholderName: options.cardholderName } : {}),
    ...(options.ruleIds ? { ruleIds: options.ruleIds } : {}),
  });
  assert.equal(application.status, 'SUCCESS', `application ${application.cardApplyId} rejected: ${application.rejectReason}`);
  return world.client.cards.query(application.cardId!);
}

/**
 * The plaintext card data as the service holds it (test-only, read through the cards domain), for
 * the leak scan. Never printed: assertions only compare it.
 */
export async function plaintextOf(svc: TestService, partnerId: string, cardId: string, consumer = false): Promise<{ pan: string; cvv2: string; expireDate: string }> {
  const secret = await revealCardSecretOf(svc.db, svc.config.masterKey, partnerId, cardId, consumer);
  assert.ok(secret, 'card data exists');
  return secret;
}

/** Row counts of every table a card operation may write: a rejected call must leave them all unchanged. */
export async function footprint(svc: TestService): Promise<Record<string, number>> {
  const tables = ['card_applications', 'cards', 'deposit_accounts', 'card_transfers', 'ledger_postings', 'ledger_entries', 'ledger_accounts',
    'events', 'velocity_rule_bindings'];
  const out: Record<string, number> = {};
  for (const table of tables) {
    const [{ n }] = await svc.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
    out[table] = n;
  }
  const [{ state }] = await svc.db.query<{ state: string }>(
    `SELECT coalesce(string_agg(card_id || ':' || status || ':' || updated_at::text, ',' ORDER BY card_id), '') AS state FROM cards`);
  out[`cards-state:${state}`] = 1;
  return out;
}

/** Events of a type for a business id, from the outbox table, oldest first, payload parsed. */
export async function outboxEvents(svc: TestService, eventType: string, businessId: string): Promise<{ eventId: string; data: Record<string, unknown> }[]> {
  const rows = await svc.db.query<{ eventId: string; payload: string }>(
    `SELECT event_id AS "eventId", payload FROM events WHERE event_type = $1 AND business_id = $2 ORDER BY sequence`,
    [eventType, businessId],
  );
  return rows.map((r) => ({ eventId: r.eventId, data: JSON.parse(r.payload) as Record<string, unknown> }));
}

/** Luhn check, written independently of the service's implementation. */
export function luhnOk(pan: string): boolean {
  let sum = 0;
  for (let i = 0; i < pan.length; i++) {
    let d = Number(pan[pan.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * D26: no plaintext PAN or CVV2 anywhere in the database (every text-like column of every table)
 * or in the service's log lines. A PAN is searched as 16 digits and grouped by 4; a 3-digit CVV2
 * cannot be searched alone (any 3 digits match somewhere), so the scan looks for a cvv key with a
 * value (JSON `"cvv2":` or `cvv2=3`) in stored values and log lines, and the PAN next to its CVV2.
 */
export async function assertNoCardDataLeak(svc: TestService, secrets: { pan: string; cvv2: string; encrypted?: string[] }[]): Promise<{ columns: number; logLines: number }> {
  assert.ok(secrets.length > 0, 'there are cards to look for');
  const columns = await svc.db.query<{ table: string; column: string }>(
    `SELECT c.table_name AS "table", c.column_name AS "column" FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
       AND c.data_type IN ('text', 'character varying', 'character', 'jsonb', 'json', 'ARRAY')`,
  );
  assert.ok(columns.length > 20, 'the scan sees the schema');
  const needles: string[] = [];
  for (const s of secrets) needles.push(s.pan, s.pan.replace(/(\d{4})(?=\d)/g, '$1 '), s.pan.replace(/(\d{4})(?=\d)/g, '$1-'));
  for (const { table, column } of columns) {
    const hits = await svc.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${table}" WHERE "${column}"::text LIKE ANY ($1::text[]) OR "${column}"::text ~* 'cvv2?"\\s*:|cvv2?\\s*=\\s*[0-9]'`,
      [needles.map((n) => `%${n}%`)],
    );
    assert.equal(hits[0].n, 0, `column ${table}.${column} holds plaintext card data`);
  }
  const cvvKeyed = /cvv2?["']?\s*[:=]\s*["']?\d{3}/i;
  for (const line of svc.logs) {
    for (const s of secrets) {
      assert.ok(!line.includes(s.pan) && !line.includes(s.pan.replace(/(\d{4})(?=\d)/g, '$1 ')), 'a log line holds a PAN');
      assert.ok(!line.includes(s.pan + s.cvv2) && !(line.includes(s.pan.slice(-4)) && line.includes(`${s.cvv2}`) && /cvv/i.test(line)), 'a log line holds a CVV2');
      for (const e of s.encrypted ?? []) assert.ok(!line.includes(e), 'a log line holds secure-card ciphertext');
    }
    assert.ok(!cvvKeyed.test(line), 'a log line holds a cvv value');
  }
  return { columns: columns.length, logLines: svc.logs.length };
}
