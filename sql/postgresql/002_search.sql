-- notesd schema 002 for PostgreSQL: the search index, as sql/sqlite/002_search.sql.
-- Terms use COLLATE "C" (bytewise, as in SQLite). The postings key carries the filter columns
-- as INCLUDE columns, so a term's candidates are an index-only scan once vacuumed (SQLite's
-- WITHOUT ROWID table and InnoDB's clustered key hold them in the key order already).
-- Adding a column with a constant default rewrites nothing (PostgreSQL 11+).

ALTER TABLE users
    ADD COLUMN title_tokens BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN body_tokens BIGINT NOT NULL DEFAULT 0;

ALTER TABLE notes
    ADD COLUMN title_terms TEXT NOT NULL DEFAULT '',
    ADD COLUMN body_terms TEXT NOT NULL DEFAULT '',
    ADD COLUMN title_len BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN body_len BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN plain_text TEXT NOT NULL DEFAULT '';

CREATE TABLE term_df (
    user_id BIGINT NOT NULL,
    term TEXT COLLATE "C" NOT NULL,
    df BIGINT NOT NULL,
    PRIMARY KEY (user_id, term)
);

CREATE TABLE postings (
    user_id BIGINT NOT NULL,
    term TEXT COLLATE "C" NOT NULL,
    updated_us BIGINT NOT NULL,
    uid_hi BIGINT NOT NULL,
    uid_lo BIGINT NOT NULL,
    note_id BIGINT NOT NULL,
    created_us BIGINT NOT NULL,
    flags BIGINT NOT NULL,
    PRIMARY KEY (user_id, term, updated_us, uid_hi, uid_lo) INCLUDE (note_id, created_us, flags)
);

CREATE TABLE snapshots (
    id TEXT COLLATE "C" PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    fingerprint TEXT COLLATE "C" NOT NULL,
    created_us BIGINT NOT NULL,
    expires_us BIGINT NOT NULL,
    note_ids TEXT NOT NULL
);
CREATE INDEX snapshots_by_expiry ON snapshots (expires_us);
