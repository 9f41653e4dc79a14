import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';

/**
 * Issue 34 (migration 154): the single-column CHECK constraints of the tables every approval writes
 * are domains. The columns must still refuse exactly what their table constraints refused: each
 * column has its domain, each domain refuses the values outside its condition with SQLSTATE 23514
 * and takes the ones inside, and a write through the real table is refused.
 */
const COLUMNS: [table: string, column: string, domain: string][] = [
  ['card_transactions', 'status', 'card_transaction_status'],
  ['card_transactions', 'message_type', 'card_message_type'],
  ['card_transactions', 'subject_type', 'card_subject_type'],
  ['card_transactions', 'auth_type', 'card_auth_type'],
  ['card_transactions', 'channel', 'card_channel'],
  ['card_transactions', 'funds_scale', 'asset_scale'],
  ['card_transactions', 'source', 'card_transaction_source'],
  ['card_transactions', 'debit_credit_indicator', 'debit_credit_indicator'],
  ['card_transactions', 'amount', 'positive_amount'],
  ['card_transactions', 'billing_amount', 'positive_amount'],
  ['card_transactions', 'hold_amount', 'nonnegative_amount'],
  ['card_transactions', 'hold_funds', 'positive_amount'],
  ['card_transactions', 'funds_rate', 'positive_amount'],
  ['card_transactions', 'funds_hold', 'nonnegative_amount'],
  ['card_transactions', 'merchant_country', 'country_code'],
  ['card_transactions', 'mcc', 'merchant_category_code'],
  ['card_transactions', 'currency', 'currency_code'],
  ['card_transactions', 'billing_currency', 'currency_code'],
  ['velocity_counters', 'control', 'velocity_control'],
  ['velocity_counters', 'subject_type', 'velocity_subject_type'],
  ...(['daily', 'monthly', 'quarterly', 'yearly'] as const).flatMap((p): [string, string, string][] => [
    ['velocity_counters', `${p}_amount`, 'nonnegative_amount'],
    ['velocity_counters', `${p}_count`, 'nonnegative_count'],
  ]),
  ['ledger_accounts', 'owner_type', 'ledger_owner_type'],
  ['ledger_accounts', 'currency', 'asset_code'],
  ['event_deliveries', 'status', 'event_status'],
];

/** Per domain: values its column refused before (and must now), and values it took. */
const VALUES: Record<string, { refused: string[]; taken: string[] }> = {
  currency_code: { refused: ['usd', 'US', 'USDT', '', 'U$D'], taken: ['USD', 'HKD'] },
  asset_code: { refused: ['u', 'usdt', 'A-B', 'ABCDEFGHIJKLM'], taken: ['USD', 'USDT', 'AB', 'ABCDEFGHIJKL'] },
  country_code: { refused: ['sg', 'SGP', 'S'], taken: ['SG'] },
  merchant_category_code: { refused: ['541', '54111', '54a1'], taken: ['5411', '0000'] },
  positive_amount: { refused: ['0', '-0.01'], taken: ['0.01', '99999999999999999999.99'] },
  nonnegative_amount: { refused: ['-0.000001'], taken: ['0', '12.34'] },
  nonnegative_count: { refused: ['-1'], taken: ['0', '9007199254740993'] },
  asset_scale: { refused: ['-1', '19'], taken: ['0', '18'] },
  card_transaction_status: { refused: ['pending', 'OPEN'], taken: ['PENDING', 'CLEARED', 'REVERSED', 'EXPIRED', 'DECLINED', 'POSTED'] },
  card_message_type: { refused: ['AUTH'], taken: ['AUTHORIZATION', 'CLEARING', 'REVERSAL', 'REFUND'] },
  card_subject_type: { refused: ['CARD'], taken: ['ORGANIZATION', 'CUSTOMER', 'USER'] },
  card_auth_type: { refused: ['CREDIT'], taken: ['EXPEND', 'REFUND', 'REVERSAL'] },
  card_channel: { refused: ['MOTO'], taken: ['ECOM', 'POS', 'ATM'] },
  card_transaction_source: { refused: ['TEST'], taken: ['NETWORK', 'SANDBOX'] },
  debit_credit_indicator: { refused: ['X', 'd'], taken: ['D', 'C'] },
  velocity_control: { refused: ['ATM'], taken: ['PURCHASE', 'CASH_ADVANCE'] },
  velocity_subject_type: { refused: ['ORGANIZATION'], taken: ['CARD', 'CUSTOMER'] },
  event_status: { refused: ['SENT'], taken: ['PENDING', 'DELIVERED', 'FAILED'] },
  ledger_owner_type: { refused: ['USER'], taken: ['ORGANIZATION_POOL', 'CARD', 'MANAGED_USER', 'EXTERNAL', 'CLEARING', 'FEE_INCOME'] },
};

describe('schema: the approval tables\' column conditions as domains (issue 34, migration 154)', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService();
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  it('every converted column has its domain, and no single-column CHECK is left on those tables but the ones kept', async () => {
    const rows = await svc.db.query<{ table: string; column: string; domain: string | null }>(
      `SELECT table_name AS "table", column_name AS "column", domain_name AS "domain" FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name IN ('card_transactions', 'velocity_counters', 'ledger_accounts', 'event_deliveries')`,
    );
    for (const [table, column, domain] of COLUMNS) {
      const row = rows.find((r) => r.table === table && r.column === column);
      assert.equal(row?.domain, domain, `${table}.${column} is of domain ${domain}`);
    }
    const checks = await svc.db.query<{ name: string }>(
      `SELECT conname AS name FROM pg_constraint
        WHERE contype = 'c' AND conrelid IN ('card_transactions'::regclass, 'velocity_counters'::regclass, 'ledger_accounts'::regclass, 'event_deliveries'::regclass)
        ORDER BY conname`,
    );
    // Conditions over several columns, the transaction id's length and the pending balance (read by the generated total) stay.
    assert.deepEqual(checks.map((c) => c.name), [
      'card_transactions_check', 'card_transactions_check1', 'card_transactions_funds_shape', 'card_transactions_hold_complete',
      'card_transactions_trans_id_check', 'event_deliveries_pending_has_due_time', 'ledger_accounts_pending_check',
    ]);
  });

  it('each domain refuses what the table constraint refused (23514) and takes what it took', async () => {
    for (const [domain, { refused, taken }] of Object.entries(VALUES)) {
      for (const value of taken) {
        const [row] = await svc.db.query<{ v: string }>(`SELECT $1::${domain}::text AS v`, [value]);
        assert.equal(row.v, value, `${domain} takes ${value}`);
      }
      for (const value of refused) {
        await assert.rejects(svc.db.query(`SELECT $1::${domain}`, [value]), (err: { code?: string }) => {
          assert.equal(err.code, '23514', `${domain} refuses ${JSON.stringify(value)} as a check violation`);
          return true;
        }, `${domain} refuses ${JSON.stringify(value)}`);
      }
    }
    assert.deepEqual(Object.keys(VALUES).sort(), [...new Set(COLUMNS.map(([, , d]) => d))].sort(), 'every domain is tried');
  });

  it('a write through the table is refused and leaves nothing: an event whose status is outside the list', async () => {
    const { partner } = await svc.newPartner();
    await assert.rejects(
      svc.db.query(
        `WITH e AS (INSERT INTO events (event_id, partner_id, event_type, business_id, sequence, payload, create_time)
                    VALUES ('ev-domain-test', $1, 'CARD_TRANSACTION', 'b', 1, '{}', now()) RETURNING event_id, partner_id)
         INSERT INTO event_deliveries (event_id, partner_id, status, next_attempt_at) SELECT event_id, partner_id, 'SENT', now() FROM e`,
        [partner.partnerId],
      ),
      (err: { code?: string }) => err.code === '23514',
    );
    const [{ n }] = await svc.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE event_id = 'ev-domain-test'`);
    assert.equal(n, 0);
  });
});
