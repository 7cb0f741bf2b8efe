-- notesd schema 010: index segments (issue 19); see sql/sqlite/010_segments.sql for what the
-- tables hold. The blobs are BYTEA, exchanged in PostgreSQL's hex text form
-- (Dialect::blob_param / blob_result). A sequence never hands out an id twice, so a worker may
-- cache a segment's decoded notes table by its id.
CREATE TABLE index_segments (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL,
    note_count BIGINT NOT NULL,
    live_count BIGINT NOT NULL,
    notes BYTEA NOT NULL,
    live BYTEA NOT NULL
);
CREATE INDEX index_segments_by_user ON index_segments (user_id, id);

CREATE TABLE segment_blocks (
    user_id BIGINT NOT NULL,
    term TEXT COLLATE "C" NOT NULL,
    segment_id BIGINT NOT NULL,
    first_ord BIGINT NOT NULL,
    last_ord BIGINT NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (user_id, term, segment_id, first_ord)
);
CREATE INDEX segment_blocks_by_segment ON segment_blocks (segment_id, term, first_ord);
