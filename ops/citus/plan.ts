/**
 * The Citus distribution of the schema (issue 28 section 4, docs/scaling.md): which tables are
 * distributed by partner_id, which are reference tables, which stay on the coordinator, how the
 * children without a partner_id get one, and the partner filters the plpgsql functions need. Used by
 * ops/citus/spike.ts; the doc quotes it. Nothing here runs in production or in CI.
 */

/** Distribution column of every distributed table: one partner's rows live in one shard group. */
export const DISTRIBUTION_COLUMN = 'partner_id';

/**
 * Replicated to every node (read locally by a function running on any worker; a write is a
 * two-phase commit to all nodes, so only rarely-written tables). card_routes is new: the network
 * ingress' card -> partner lookup and the global PAN uniqueness the cards table can no longer hold.
 */
export const REFERENCE_TABLES = [
  'partners', 'assets', 'card_profiles', 'card_keys', 'service_rsa_keys', 'network_keys', 'sanctioned_countries',
  'credential_links', 'card_routes',
] as const;

/**
 * Left as plain tables on the coordinator: operator-side state no distributed function reads, and
 * global singletons (the audit chain's head, the migration list).
 */
export const COORDINATOR_TABLES = [
  'schema_migrations', 'schema_functions', 'outbox_mail', 'operators', 'operator_sessions', 'audit_trail', 'audit_trail_head',
  'ledger_audit_runs', 'user_stream_horizon',
] as const;

/** Distributed on its own key (not a partner's data: one row per signed request, keyed by API key). */
export const OWN_KEY_TABLES = [{ table: 'replay_nonces', column: 'api_key' }] as const;

/**
 * Children that have no partner_id today: the column to add, and how an existing database backfills
 * it from the parent (the spike's database is empty, so it only adds the column).
 */
export const CHILDREN: { table: string; backfill: string }[] = [
  { table: 'event_attempts', backfill: 'UPDATE event_attempts c SET partner_id = p.partner_id FROM event_deliveries p WHERE p.event_id = c.event_id' },
  { table: 'customer_addresses', backfill: 'UPDATE customer_addresses c SET partner_id = p.partner_id FROM customers p WHERE p.customer_id = c.customer_id' },
  { table: 'kyc_reviews', backfill: 'UPDATE kyc_reviews c SET partner_id = p.partner_id FROM customers p WHERE p.customer_id = c.customer_id' },
  {
    table: 'subject_restrictions',
    backfill: `UPDATE subject_restrictions c SET partner_id = COALESCE(
      (SELECT partner_id FROM customers WHERE c.subject_type = 'CUSTOMER' AND customer_id = c.subject_id),
      (SELECT partner_id FROM organizations WHERE c.subject_type = 'ORGANIZATION' AND organization_id = c.subject_id))`,
  },
  {
    table: 'subject_status_changes',
    backfill: `UPDATE subject_status_changes c SET partner_id = COALESCE(
      (SELECT partner_id FROM customers WHERE c.subject_type = 'CUSTOMER' AND customer_id = c.subject_id),
      (SELECT partner_id FROM organizations WHERE c.subject_type = 'ORGANIZATION' AND organization_id = c.subject_id))`,
  },
  { table: 'ledger_entries', backfill: 'UPDATE ledger_entries c SET partner_id = p.partner_id FROM ledger_postings p WHERE p.posting_id = c.posting_id' },
  { table: 'balance_alert_settings', backfill: 'UPDATE balance_alert_settings c SET partner_id = p.partner_id FROM organizations p WHERE p.organization_id = c.organization_id' },
  { table: 'balance_alert_emails', backfill: 'UPDATE balance_alert_emails c SET partner_id = p.partner_id FROM organizations p WHERE p.organization_id = c.organization_id' },
  { table: 'velocity_rule_amount_limits', backfill: 'UPDATE velocity_rule_amount_limits c SET partner_id = p.partner_id FROM velocity_rules p WHERE p.rule_id = c.rule_id' },
  { table: 'managed_user_restrictions', backfill: 'UPDATE managed_user_restrictions c SET partner_id = p.partner_id FROM managed_users p WHERE p.user_id = c.user_id' },
  { table: 'managed_user_contacts', backfill: 'UPDATE managed_user_contacts c SET partner_id = p.partner_id FROM managed_users p WHERE p.user_id = c.user_id' },
];

/** The new routing table (a reference table): card -> partner, and PANs unique across partners. */
export const CARD_ROUTES_DDL = `CREATE TABLE card_routes (
  card_id         text PRIMARY KEY,
  partner_id      text NOT NULL REFERENCES partners (partner_id),
  pan_fingerprint text NOT NULL UNIQUE
)`;

/**
 * Distributed functions: the hot-path entry points, each routed by its partner argument to the
 * worker holding that partner's shards (colocated with the distributed tables). Every other function
 * of the schema is distributed without an argument (only propagated to the workers).
 */
export const DISTRIBUTED_FUNCTIONS = [
  { name: 'card_authorize', arg: 'p_partner_id' },
  { name: 'user_asset_move', arg: 'p_partner_id' },
  { name: 'ledger_post', arg: 'p_partner_id' },
  { name: 'card_velocity_refusal', arg: 'p_partner_id' },
] as const;

/**
 * Partner filters the function bodies need (and the partner_id of the one child a function writes): a statement on a distributed table that does not name
 * the partner is a query over every shard (or a join Citus refuses), and an UPDATE of ledger_accounts
 * reaching another node's shard would not see ledger_post's transaction-local setting. Each entry is
 * applied to the function's current definition (pg_get_functiondef) and must match exactly `count`
 * times, so a migration that changes the text makes the spike fail by name instead of silently.
 */
export const PARTNER_FILTERS: { fn: string; find: string; replace: string; count: number }[] = [
  // ledger_post (migration 088)
  { fn: 'ledger_post', find: 'WHERE a.account_id = v_ids[j] RETURNING', replace: 'WHERE a.partner_id = p_partner_id AND a.account_id = v_ids[j] RETURNING', count: 1 },
  // ledger_entries has a partner_id now (a child that had none): the writer fills it.
  { fn: 'ledger_post', find: 'INSERT INTO ledger_entries AS le (posting_id,', replace: 'INSERT INTO ledger_entries AS le (partner_id, posting_id,', count: 1 },
  { fn: 'ledger_post', find: 'SELECT p_posting_id, e.acc,', replace: 'SELECT p_partner_id, p_posting_id, e.acc,', count: 1 },
  { fn: 'ledger_post', find: 'JOIN managed_users u ON u.user_id = a.owner_id', replace: 'JOIN managed_users u ON u.partner_id = a.partner_id AND u.user_id = a.owner_id', count: 1 },
  { fn: 'ledger_post', find: 'WHERE a.account_id = ANY (v_ids)', replace: 'WHERE a.partner_id = p_partner_id AND a.account_id = ANY (v_ids)', count: 1 },
  // card_authorize (migration 089)
  { fn: 'card_authorize', find: 'FROM card_transactions WHERE network_transaction_id = p_network_id', replace: 'FROM card_transactions WHERE partner_id = p_partner_id AND network_transaction_id = p_network_id', count: 1 },
  { fn: 'card_authorize', find: 'FROM auth_decisions d WHERE d.trans_id = v_existing.trans_id', replace: 'FROM auth_decisions d WHERE d.partner_id = v_existing.partner_id AND d.trans_id = v_existing.trans_id', count: 1 },
  { fn: 'card_authorize', find: 'WHERE c.card_id = p_card_id', replace: 'WHERE c.partner_id = p_partner_id AND c.card_id = p_card_id', count: 1 },
  { fn: 'card_authorize', find: 'LEFT JOIN customers c ON c.customer_id = v_employee', replace: 'LEFT JOIN customers c ON c.partner_id = v_card.partner_id AND c.customer_id = v_employee', count: 1 },
  { fn: 'card_authorize', find: 'LEFT JOIN organizations o ON o.organization_id = v_card.organization_id', replace: 'LEFT JOIN organizations o ON o.partner_id = v_card.partner_id AND o.organization_id = v_card.organization_id', count: 1 },
  { fn: 'card_authorize', find: 'WHERE r.subject_type = s.kind', replace: 'WHERE r.partner_id = v_card.partner_id AND r.subject_type = s.kind', count: 1 },
  { fn: 'card_authorize', find: 'FROM managed_user_restrictions r WHERE r.user_id = v_card.subject_id', replace: 'FROM managed_user_restrictions r WHERE r.partner_id = v_card.partner_id AND r.user_id = v_card.subject_id', count: 1 },
  { fn: 'card_authorize', find: 'JOIN velocity_rules r ON r.rule_id = b.rule_id', replace: 'JOIN velocity_rules r ON r.partner_id = b.partner_id AND r.rule_id = b.rule_id', count: 1 },
  { fn: 'card_authorize', find: 'WHERE organization_id = v_card.organization_id AND currency = v_bcur', replace: 'WHERE partner_id = v_card.partner_id AND organization_id = v_card.organization_id AND currency = v_bcur', count: 2 },
  { fn: 'card_authorize', find: 'FROM ledger_entries e WHERE e.account_id = v_account.account_id', replace: 'FROM ledger_entries e WHERE e.partner_id = v_account.partner_id AND e.account_id = v_account.account_id', count: 1 },
  // card_velocity_refusal (migration 050)
  { fn: 'card_velocity_refusal', find: 'JOIN velocity_rules r ON r.rule_id = b.rule_id', replace: 'JOIN velocity_rules r ON r.partner_id = b.partner_id AND r.rule_id = b.rule_id', count: 3 },
  { fn: 'card_velocity_refusal', find: 'JOIN velocity_rule_amount_limits l ON l.rule_id = r.rule_id', replace: 'JOIN velocity_rule_amount_limits l ON l.partner_id = r.partner_id AND l.rule_id = r.rule_id', count: 1 },
  // card_transaction_json (migration 053)
  { fn: 'card_transaction_json', find: 'FROM auth_forwardings f WHERE f.trans_id = t.trans_id', replace: 'FROM auth_forwardings f WHERE f.partner_id = t.partner_id AND f.trans_id = t.trans_id', count: 1 },
  // user_asset_move (migration 093)
  { fn: 'user_asset_move', find: 'FROM managed_user_restrictions r WHERE r.user_id = v_user_id', replace: 'FROM managed_user_restrictions r WHERE r.partner_id = p_partner_id AND r.user_id = v_user_id', count: 2 },
  // push-stream triggers (migrations 083, 086)
  { fn: 'user_stream_card_transactions', find: 'FROM managed_users u WHERE u.user_id = NEW.subject_id', replace: 'FROM managed_users u WHERE u.partner_id = NEW.partner_id AND u.user_id = NEW.subject_id', count: 1 },
  { fn: 'user_stream_qr_payments', find: 'FROM managed_users u WHERE u.user_id = NEW.user_id', replace: 'FROM managed_users u WHERE u.partner_id = NEW.partner_id AND u.user_id = NEW.user_id', count: 1 },
];
