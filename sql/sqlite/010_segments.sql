-- notesd schema 010: index segments (issue 19, src/index/segment.hpp, src/store/segments.hpp).
--
-- A batch of notes written together (an import batch, a fold of API writes, a merge) keeps its
-- postings as one segment instead of a row per posting: index_segments holds the segment's
-- notes table (each note's key, filter columns and field lengths, in candidate order) and which
-- of them are still live (a bitmap of dead ordinals, rewritten when a note of the segment is
-- updated, trashed or deleted); segment_blocks holds each term's postings in blocks of up to
-- 128, first_ord..last_ord being the ordinals a block covers. A note's postings are either in
-- the postings rows (API writes not folded yet, databases from before this schema) or in
-- exactly one segment where it is live; searches read both. AUTOINCREMENT: a segment id is
-- never reused, so a worker may cache a segment's decoded notes table by its id.
CREATE TABLE index_segments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL,
    note_count BIGINT NOT NULL,
    live_count BIGINT NOT NULL,
    notes BLOB NOT NULL,
    live BLOB NOT NULL
);
CREATE INDEX index_segments_by_user ON index_segments (user_id, id);

CREATE TABLE segment_blocks (
    user_id BIGINT NOT NULL,
    term TEXT NOT NULL,
    segment_id BIGINT NOT NULL,
    first_ord BIGINT NOT NULL,
    last_ord BIGINT NOT NULL,
    data BLOB NOT NULL
);
CREATE UNIQUE INDEX segment_blocks_by_term ON segment_blocks (user_id, term, segment_id, first_ord);
CREATE INDEX segment_blocks_by_segment ON segment_blocks (segment_id, term, first_ord);
