-- notesd schema 018: notes_by_created_bucket (issue 19, filtered lists); see
-- sql/sqlite/018_created_buckets.sql for why. PostgreSQL 15 generates stored columns only.
ALTER TABLE notes ADD COLUMN created_bucket BIGINT GENERATED ALWAYS AS (created_us >> 40) STORED;
CREATE INDEX notes_by_created_bucket
    ON notes (user_id, created_bucket, updated_us, uuid, created_us, flags);
