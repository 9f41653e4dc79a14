-- Issue 31 section 3: a backtest start counts the partner's unfinished backtests (at most
-- BACKTEST_MAX_PENDING_PER_PARTNER, src/domains/authorization/backtest.ts). Backtests are kept after
-- they end, so the count reads only the unfinished ones of the partner: one index probe, whatever the
-- partner's history.
CREATE INDEX rule_backtests_partner_unfinished ON rule_backtests (partner_id) WHERE status IN ('PENDING', 'RUNNING');
