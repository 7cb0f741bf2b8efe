-- notesd schema 002 for SQLite: the search index (contract section 5, design section 5).
-- Notes are indexed as the analysed terms of src/text.hpp; the database finds candidates and
-- keeps per-user statistics, ranking happens in C++. Every count here is maintained exactly by
-- the store's write path in the same transaction as the note, so nothing is ever rebuilt.
-- Terms compare bytewise (SQLite's default BINARY collation), as on the other backends.

-- The stored analysis of each note: space-joined terms in position order, their counts, and
-- the body as plain text for query-aware snippets. All are part of content_hash.
ALTER TABLE notes ADD COLUMN title_terms TEXT NOT NULL DEFAULT '';
ALTER TABLE notes ADD COLUMN body_terms TEXT NOT NULL DEFAULT '';
ALTER TABLE notes ADD COLUMN title_len BIGINT NOT NULL DEFAULT 0;
ALTER TABLE notes ADD COLUMN body_len BIGINT NOT NULL DEFAULT 0;
ALTER TABLE notes ADD COLUMN plain_text TEXT NOT NULL DEFAULT '';

-- With users.note_count these are the per-user corpus statistics (SearchCorpus).
ALTER TABLE users ADD COLUMN title_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN body_tokens BIGINT NOT NULL DEFAULT 0;

-- Document frequency: how many of the user's notes contain the term (title or body). Rows
-- that reach 0 are deleted, so a prefix scan lists only terms that still occur.
CREATE TABLE term_df (
    user_id BIGINT NOT NULL,
    term TEXT NOT NULL,
    df BIGINT NOT NULL,
    PRIMARY KEY (user_id, term)
) WITHOUT ROWID;

-- One row per (note, distinct term). The key is the candidate order itself: a term's notes
-- most recently updated first, ties by note uuid descending. uid_hi/uid_lo are the uuid's two
-- halves as 64-bit integers with the sign bit flipped, so their signed order is the uuid's text
-- order on every backend (internal note ids differ between backends), the key is unique even
-- for uuids sharing their first half, and the uuid is read back without joining notes.
-- created_us and flags are copies (rewritten with the note) so filters need no join.
-- No foreign keys: SQLite would scan this table on every note delete to check them; the
-- store deletes a note's rows by key in the note's own transaction.
CREATE TABLE postings (
    user_id BIGINT NOT NULL,
    term TEXT NOT NULL,
    updated_us BIGINT NOT NULL,
    uid_hi BIGINT NOT NULL,
    uid_lo BIGINT NOT NULL,
    note_id BIGINT NOT NULL,
    created_us BIGINT NOT NULL,
    flags BIGINT NOT NULL,
    PRIMARY KEY (user_id, term, updated_us, uid_hi, uid_lo)
) WITHOUT ROWID;

-- Stored search result windows. id is a random uuid; note_ids the ranked note uuids,
-- space-joined. Expired rows are removed in small batches through the expiry index.
CREATE TABLE snapshots (
    id TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    fingerprint TEXT NOT NULL,
    created_us BIGINT NOT NULL,
    expires_us BIGINT NOT NULL,
    note_ids TEXT NOT NULL
);
CREATE INDEX snapshots_by_expiry ON snapshots (expires_us);
