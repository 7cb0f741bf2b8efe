-- notesd schema 018: notes_by_created_bucket (issue 19, filtered lists); see
-- sql/sqlite/018_created_buckets.sql for why. The bucket is a virtual column: InnoDB keeps it
-- in the index only. MariaDB's `>>` works on unsigned 64-bit values; the list reads this index
-- only for non-negative created times, where that is the same shift. One statement (MariaDB's
-- DDL commits at once), which can run again.
ALTER TABLE notes
    ADD COLUMN IF NOT EXISTS created_bucket BIGINT AS (created_us >> 40) VIRTUAL,
    ADD INDEX IF NOT EXISTS notes_by_created_bucket
        (user_id, created_bucket, updated_us, uuid, created_us, flags);
