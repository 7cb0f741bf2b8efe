-- notesd schema 014: a segment's notes table in a row of its own (issue 19).
--
-- A write that marks a note dead in a segment updates the segment's live set and live_count.
-- SQLite writes an updated row whole, so with the notes table (about 20 bytes a note: 2 MB for
-- the 96,000-note segment an import of 100,000 notes leaves) in the same row every API update
-- or delete of an imported note copied it, and every listing of the segments walked past it
-- on the overflow chain to read the live set: 237 updates/s at p50 74 ms. The notes table is
-- written once (when the segment is made or a merge publishes it) and read once per worker.
CREATE TABLE index_segment_notes (
    segment_id INTEGER PRIMARY KEY,
    notes BLOB NOT NULL
);
INSERT INTO index_segment_notes (segment_id, notes) SELECT id, notes FROM index_segments;
ALTER TABLE index_segments DROP COLUMN notes;
