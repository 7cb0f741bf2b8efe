-- notesd schema 014: a segment's notes table in a row of its own (issue 19); see
-- sql/sqlite/014_segment_notes.sql for why.
CREATE TABLE IF NOT EXISTS index_segment_notes (
    segment_id BIGINT NOT NULL PRIMARY KEY,
    notes LONGBLOB NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
INSERT INTO index_segment_notes (segment_id, notes) SELECT id, notes FROM index_segments;
ALTER TABLE index_segments DROP COLUMN notes;
