-- notesd schema 014: a segment's notes table in a row of its own (issue 19); see
-- sql/sqlite/014_segment_notes.sql for why.
CREATE TABLE index_segment_notes (
    segment_id BIGINT PRIMARY KEY,
    notes BYTEA NOT NULL
);
INSERT INTO index_segment_notes (segment_id, notes) SELECT id, notes FROM index_segments;
ALTER TABLE index_segments DROP COLUMN notes;
