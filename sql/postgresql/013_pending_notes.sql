-- notesd schema 013: pending index entries (issues 18 and 19); see
-- sql/sqlite/013_pending_notes.sql for what the table holds. The blobs are BYTEA in the hex
-- text form (Dialect::blob_param / blob_result); a sequence never hands out an id twice.
CREATE TABLE index_pending (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL,
    uid_hi BIGINT NOT NULL,
    uid_lo BIGINT NOT NULL,
    note_id BIGINT NOT NULL,
    updated_us BIGINT NOT NULL,
    created_us BIGINT NOT NULL,
    flags BIGINT NOT NULL,
    title_len BIGINT NOT NULL,
    body_len BIGINT NOT NULL,
    terms BYTEA NOT NULL,
    minus BYTEA NOT NULL
);
CREATE UNIQUE INDEX index_pending_by_note ON index_pending (user_id, uid_hi, uid_lo);
