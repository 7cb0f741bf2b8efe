-- notesd schema 017: note_time_counts ordered by (user_id, shift, bucket, time_column, flags)
-- instead of (user_id, time_column, shift, bucket, flags).
--
-- A new note enters the newest bucket of every level in both time columns (created_us and
-- updated_us are the same moment): ten rows. Ordered by column first, they were the ends of ten
-- ranges, and an API create rewrote 7 leaf pages of this table, the most of any table (a write
-- transaction of 24.2 pages in all at 100,000 notes, tools/write_pages.py). With the two
-- columns side by side in each bucket, 3 pages (20.5 in all). A total still reads
-- one range of buckets per level, now with both columns' rows in it (at most 30 buckets a level).
-- SQLite cannot change a primary key in place: the rows are copied into a new table.
CREATE TABLE note_time_counts_017 (
    user_id BIGINT NOT NULL,
    time_column BIGINT NOT NULL,
    shift BIGINT NOT NULL,
    bucket BIGINT NOT NULL,
    flags BIGINT NOT NULL,
    notes BIGINT NOT NULL,
    PRIMARY KEY (user_id, shift, bucket, time_column, flags)
) WITHOUT ROWID;
INSERT INTO note_time_counts_017 (user_id, time_column, shift, bucket, flags, notes)
SELECT user_id, time_column, shift, bucket, flags, notes FROM note_time_counts
ORDER BY user_id, shift, bucket, time_column, flags;
DROP TABLE note_time_counts;
ALTER TABLE note_time_counts_017 RENAME TO note_time_counts;
