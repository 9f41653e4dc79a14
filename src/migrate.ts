import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './platform/db/db.ts';
import { migrate as applySchema, type MigrationResult, type RepeatableSql } from './platform/db/migrate.ts';

/**
 * The database schema of the whole service (issue 33; docs/contributing.md "Where each kind of rule
 * lives"): the platform's numbered migrations, then every domain's database functions and triggers.
 * The one call of every caller (src/main.ts, the tests, bench, ops).
 */

const DOMAINS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'domains');

/**
 * The repeatable SQL files (`<domain>/sql/<function>.sql`), in the order they are applied: domains in
 * layer order (a function calls or a trigger reads only what an earlier file defines), and inside a
 * domain what is used before its user. A new file is added here (test/architecture-boundaries.test.ts
 * checks that every file under src/domains/<d>/sql/ is listed exactly once).
 */
export const DATABASE_FUNCTIONS: readonly string[] = [
  'events/sql/event_record.sql',
  'events/sql/event_written_once.sql',
  'ledger/sql/ledger_account_insert_guard.sql',
  'ledger/sql/ledger_account_update_guard.sql',
  'ledger/sql/ledger_account_kept.sql',
  'ledger/sql/ledger_append_only.sql',
  'ledger/sql/ledger_refuse_direct_write.sql',
  'ledger/sql/ledger_user_balance_lines.sql',
  'ledger/sql/ledger_post.sql',
  'ledger/sql/ledger_hold.sql',
  'ledger/sql/ledger_hold_rows.sql',
  'velocity/sql/velocity_periods.sql',
  'velocity/sql/velocity_refusal.sql',
  'velocity/sql/velocity_bound_rules.sql',
  'velocity/sql/velocity_rules_bound_by.sql',
  'velocity/sql/card_velocity_refusal.sql',
  'velocity/sql/velocity_usage_give_back.sql',
  'authorization/sql/card_transaction_json.sql',
  'authorization/sql/card_transaction_event.sql',
  'authorization/sql/card_authorize.sql',
  'authorization/sql/card_authorize_batch.sql',
  'authorization/sql/velocity_backtest_tally.sql',
  'authorization/sql/velocity_backtest_step.sql',
  'managed-balance/sql/asset_movement_json.sql',
  'managed-balance/sql/user_asset_move.sql',
  'managed-balance/sql/user_asset_move_batch.sql',
  'managed-balance/sql/qr_payment_json.sql',
  'managed-balance/sql/user_stream_card_transactions.sql',
  'managed-balance/sql/user_stream_qr_payments.sql',
  'managed-balance/sql/user_stream_sequence.sql',
];

export function databaseFunctions(): RepeatableSql[] {
  return DATABASE_FUNCTIONS.map((name) => ({ name, file: path.join(DOMAINS_DIR, ...name.split('/')) }));
}

/** Applies the pending numbered migrations, then the database functions that changed. */
export function migrate(db: Db): Promise<MigrationResult> {
  return applySchema(db, databaseFunctions());
}
