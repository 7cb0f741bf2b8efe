-- notesd schema 009: search snapshots no longer reference users by a foreign key.
-- Saving a snapshot is the one write of a search. Its foreign-key check took a shared lock on
-- the user's row, and every write of the user holds that row FOR UPDATE for its whole
-- transaction, so a search waited for any write of the same user (an import batch: seconds)
-- and answered 503 past the lock wait timeout. Snapshots expire and are purged by age; no
-- operation deletes a user, so nothing is left behind that the cascade removed.
ALTER TABLE snapshots DROP FOREIGN KEY snapshots_user_fk;
