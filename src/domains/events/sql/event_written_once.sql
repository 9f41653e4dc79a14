-- An event is written once and never changed (migration 157): what a partner was sent, or will be,
-- stays what was recorded with the change that caused it (D38). Its delivery state changes in
-- event_deliveries. A trigger on UPDATE only: an insert pays nothing for it.
CREATE OR REPLACE FUNCTION event_written_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events: an event is written once and never changed (its delivery state is in event_deliveries)'
    USING ERRCODE = 'check_violation';
END $$;
CREATE OR REPLACE TRIGGER events_written_once BEFORE UPDATE ON events
  FOR EACH ROW EXECUTE FUNCTION event_written_once();
