-- notesd schema 018: notes_by_created_bucket, so a note list ordered by updated time and bounded
-- by created time reads a page's rows and few others (issue 19, filtered lists).
--
-- Such a page read notes_by_updated from the newest update back until it had found the page's
-- notes created in the range. A note is rarely updated long after it was created, so for a
-- created range a year back that scan passed every note written since: 26,988 index rows for
-- the first page of a 3-month window at 100,000 notes, 11-19x the unfiltered first page. This
-- index orders each 2^40 us (12.7 days) bucket of created time by updated time: the page is the
-- merge of one short range per bucket the created range touches (soci_read.cpp,
-- SociStore::list_by_created_buckets). The bucket is a virtual generated column, computed
-- from created_us by SQLite itself, so no write and no `PATCH .../created-at` can disagree.
ALTER TABLE notes ADD COLUMN created_bucket INTEGER
    GENERATED ALWAYS AS (created_us >> 40) VIRTUAL;
CREATE INDEX notes_by_created_bucket
    ON notes (user_id, created_bucket, updated_us, uuid, created_us, flags);
