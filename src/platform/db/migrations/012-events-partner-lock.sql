-- Every event insert checked its partner_id against partners with a foreign key, taking a KEY SHARE
-- lock on the partner's row; every concurrent authorization of one partner writes an event, so they
-- all locked the same row (a MultiXact per extra locker). Events are written only by the service's
-- own code for partners it has just read; the reference is not needed as a lock.
ALTER TABLE events DROP CONSTRAINT events_partner_id_fkey;
