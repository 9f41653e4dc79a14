-- card_transactions.partner_id is copied from the card's row (which keeps its foreign key to
-- partners); its own foreign key only made every authorization take a KEY SHARE lock on the one
-- partner row that every concurrent authorization of the partner locks too.
ALTER TABLE card_transactions DROP CONSTRAINT card_transactions_partner_id_fkey;
