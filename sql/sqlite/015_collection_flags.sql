-- notesd schema 015: note_collections_by_flags, so the exact `total` of a collection's note list
-- filtered by contains_* flags counts only the matching notes (issue 19).
--
-- A collection's total is a COUNT over its note_collections range. With a flag filter that range
-- was the whole collection, each row's flags tested: 1.4 ms for a collection of 18,391 notes, 5.7x
-- the unfiltered first page. This index orders a collection's rows by flags value, so the count
-- reads the ranges of the few values that have one of the asked bits (soci_read.cpp,
-- ReadStatements::flagged_collection_count); the time columns make it cover the dates too.
CREATE INDEX note_collections_by_flags
    ON note_collections (collection_id, flags, updated_us, created_us);
