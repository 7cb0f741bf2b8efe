-- notesd schema 008: the write API (contract section 10).
-- notes.version: optimistic concurrency, 1 on insert, +1 per content update.
-- trashed_notes: a trashed note leaves the live tables (notes, note_text, note_collections,
-- attachments, postings, term_df and every count) exactly as a delete would, so the read and
-- search paths never see it; this row keeps what a read by id and a restore need. Ids stay
-- unique per user across both tables (the store checks both inside the writer's lock).
-- tokens.scope: 'read-write' (the default) or 'read-only'.
ALTER TABLE notes ADD COLUMN version BIGINT NOT NULL DEFAULT 1;

CREATE TABLE trashed_notes (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    uuid TEXT NOT NULL,
    trashed_us BIGINT NOT NULL,
    version BIGINT NOT NULL,
    title TEXT NOT NULL,
    snippet TEXT NOT NULL,
    content TEXT NOT NULL,
    created_us BIGINT NOT NULL,
    updated_us BIGINT NOT NULL,
    flags BIGINT NOT NULL,
    collection_uuids TEXT NOT NULL,
    attachments TEXT NOT NULL,
    title_terms TEXT NOT NULL,
    body_terms TEXT NOT NULL,
    title_len BIGINT NOT NULL,
    body_len BIGINT NOT NULL,
    plain_text TEXT NOT NULL,
    PRIMARY KEY (user_id, uuid)
);

ALTER TABLE tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'read-write';
