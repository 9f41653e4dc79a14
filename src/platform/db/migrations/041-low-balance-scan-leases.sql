-- Low-balance scans run on the leased job runner (src/platform/jobs.ts, issue 9): each alert
-- setting is a job item, due at next_scan_at and scanned every LOW_BALANCE_SCAN_INTERVAL_MS. A run
-- leases due settings with FOR UPDATE SKIP LOCKED, moving next_scan_at to the lease expiry and
-- stamping lease_token, so two instances never scan one setting at once and a crashed worker's
-- lease simply runs out. scan_attempts counts unexpected failures of the current scan (bounded).
ALTER TABLE balance_alert_settings ADD COLUMN next_scan_at timestamptz NOT NULL DEFAULT '1970-01-01T00:00:00Z';
ALTER TABLE balance_alert_settings ADD COLUMN lease_token text;
ALTER TABLE balance_alert_settings ADD COLUMN scan_attempts integer NOT NULL DEFAULT 0;
CREATE INDEX balance_alert_settings_due ON balance_alert_settings (next_scan_at);
