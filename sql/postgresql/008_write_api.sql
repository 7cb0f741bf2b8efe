-- notesd schema 008: the write API; see sql/sqlite/008_write_api.sql for what each part is for.
ALTER TABLE notes ADD COLUMN version BIGINT NOT NULL DEFAULT 1;

CREATE TABLE trashed_notes (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    uuid TEXT COLLATE "C" NOT NULL,
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
