-- notesd schema 017: note_time_counts ordered by (user_id, shift, bucket, time_column, flags)
-- instead of (user_id, time_column, shift, bucket, flags).
--
-- A new note enters the newest bucket of every level in both time columns (created_us and
-- updated_us are the same moment): ten rows. Ordered by column first, they were the ends of ten
-- ranges of the primary key's index; with the two columns side by side in each bucket a create
-- touches fewer than half its pages (SQLite: 7 -> 3). A total still reads one range of buckets
-- per level, now with both columns' rows in it.
ALTER TABLE note_time_counts DROP CONSTRAINT note_time_counts_pkey;
ALTER TABLE note_time_counts ADD PRIMARY KEY (user_id, shift, bucket, time_column, flags);
