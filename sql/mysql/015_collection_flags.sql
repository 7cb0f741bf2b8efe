-- notesd schema 015: note_collections_by_flags (issue 19); see
-- sql/sqlite/015_collection_flags.sql for why.
CREATE INDEX note_collections_by_flags
    ON note_collections (collection_id, flags, updated_us, created_us);
