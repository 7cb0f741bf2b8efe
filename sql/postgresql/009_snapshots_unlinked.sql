-- notesd schema 009: search snapshots no longer reference users by a foreign key.
-- Saving a snapshot is the one write of a search. Its foreign-key check took a KEY SHARE lock
-- on the user's row, and every write of the user holds that row FOR UPDATE for its whole
-- transaction, so a search waited for any write of the same user (an import batch: seconds)
-- and answered 503 past the statement timeout. Snapshots expire and are purged by age; no
-- operation deletes a user, so nothing is left behind that the cascade removed.
ALTER TABLE snapshots DROP CONSTRAINT IF EXISTS snapshots_user_id_fkey;
