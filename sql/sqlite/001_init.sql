-- notesd schema 001 for SQLite. Ids are integers, times UTC epoch microseconds (BIGINT),
-- uuids lowercase canonical TEXT (BINARY collation, so text order is byte order).
-- Statements end with ';' at the end of a line (see split_sql in src/store/migrations.cpp).

-- The store also creates this table before reading it; it is repeated here as documentation.
CREATE TABLE IF NOT EXISTS schema_migrations (
    version BIGINT PRIMARY KEY,
    name TEXT NOT NULL,
    applied_us BIGINT NOT NULL
);

-- note_count and collection_count are maintained by the store's writes, so the `total` of an
-- unfiltered list is one row read.
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_us BIGINT NOT NULL,
    note_count BIGINT NOT NULL DEFAULT 0,
    collection_count BIGINT NOT NULL DEFAULT 0
);

-- token_hash is the SHA-256 hex of the token; the raw token is never stored.
CREATE TABLE tokens (
    id INTEGER PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    created_us BIGINT NOT NULL,
    revoked_us BIGINT
);
CREATE INDEX tokens_user ON tokens (user_id, id);

CREATE TABLE collections (
    id INTEGER PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    uuid TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT,
    created_us BIGINT NOT NULL,
    updated_us BIGINT NOT NULL,
    note_count BIGINT NOT NULL DEFAULT 0,
    UNIQUE (user_id, uuid)
);
CREATE INDEX collections_by_updated ON collections (user_id, updated_us, uuid);
CREATE INDEX collections_by_created ON collections (user_id, created_us, uuid);

-- flags: kFlag* bits of src/model.hpp. collection_uuids and audio_uuids are comma-separated
-- lowercase uuids written with the note, so a page needs no extra query. content_hash covers
-- every written field, so an unchanged re-import is detected without comparing contents.
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    uuid TEXT NOT NULL,
    title TEXT NOT NULL,
    snippet TEXT NOT NULL,
    content TEXT NOT NULL,
    created_us BIGINT NOT NULL,
    updated_us BIGINT NOT NULL,
    flags BIGINT NOT NULL DEFAULT 0,
    collection_uuids TEXT NOT NULL DEFAULT '',
    audio_uuids TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL,
    UNIQUE (user_id, uuid)
);
-- The trailing columns make each index covering for COUNT(*) under any filter, so a count
-- never reads the wide note rows.
CREATE INDEX notes_by_updated ON notes (user_id, updated_us, uuid, created_us, flags);
CREATE INDEX notes_by_created ON notes (user_id, created_us, uuid, updated_us, flags);

-- A note's sort keys and flags are copied in (rewritten with the note), so one collection's
-- page is a keyset range scan as well and its filtered count reads only the index.
CREATE TABLE note_collections (
    collection_id BIGINT NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    note_id BIGINT NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    note_uuid TEXT NOT NULL,
    created_us BIGINT NOT NULL,
    updated_us BIGINT NOT NULL,
    flags BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (note_id, collection_id)
);
CREATE INDEX note_collections_by_updated
    ON note_collections (collection_id, updated_us, note_uuid, created_us, flags);
CREATE INDEX note_collections_by_created
    ON note_collections (collection_id, created_us, note_uuid, updated_us, flags);

CREATE TABLE attachments (
    id INTEGER PRIMARY KEY,
    note_id BIGINT NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    uuid TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('image', 'file', 'audio')),
    target TEXT NOT NULL
);
CREATE INDEX attachments_by_note ON attachments (note_id);
