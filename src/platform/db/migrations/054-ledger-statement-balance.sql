-- Ledger invariant checks per statement instead of per entry (issue 10 performance).
--
-- Migration 021 checked a posting's balance at commit once per entry and once more per posting
-- (three runs of the same query for a two-entry posting). Every posting's entries are written by
-- one statement (src/domains/ledger/postings-store.ts insertEntries; card_authorize), so the check
-- now runs once per statement, right after it, over every posting the statement touched: each has
-- at least two entries and its entries sum to zero per currency. This is stricter than before (an
-- unbalanced posting is refused at the statement, not at commit). The deferred per-posting check
-- stays: a posting left without entries is refused at commit.
DROP TRIGGER ledger_entries_balanced ON ledger_entries;

CREATE FUNCTION ledger_check_statement_postings() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_posting text;
  v_entries bigint;
BEGIN
  -- LATERAL: the planner cannot size a transition table, so the per-posting lookup is spelled as
  -- an index probe (ledger_entries_posting) instead of leaving it a join that may scan the table.
  SELECT p.posting_id, g.n INTO v_posting, v_entries
    FROM (SELECT DISTINCT posting_id FROM new_entries) p
    CROSS JOIN LATERAL (SELECT sum(c.n) AS n, bool_or(c.total <> 0) AS unbalanced
                          FROM (SELECT count(*) AS n, sum(e.amount) AS total
                                  FROM ledger_entries e WHERE e.posting_id = p.posting_id
                                 GROUP BY e.currency) c) g
   WHERE g.n < 2 OR g.unbalanced
   LIMIT 1;
  IF v_posting IS NULL THEN
    RETURN NULL;
  END IF;
  IF v_entries < 2 THEN
    RAISE EXCEPTION 'ledger: posting % has fewer than two entries', v_posting USING ERRCODE = 'check_violation';
  END IF;
  RAISE EXCEPTION 'ledger: posting % is not balanced', v_posting USING ERRCODE = 'check_violation';
END $$;

CREATE TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
  REFERENCING NEW TABLE AS new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_check_statement_postings();
