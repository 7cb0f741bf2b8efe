-- notesd schema 003 for PostgreSQL: rank from the postings alone. See
-- sql/sqlite/003_postings_scores.sql for the reasons; the same columns and meaning here.
-- The primary key index also carries the new columns, so reading postings stays index-only.

CREATE TABLE note_text (
    note_id BIGINT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    title_terms TEXT NOT NULL,
    body_terms TEXT NOT NULL,
    plain_text TEXT NOT NULL
);

INSERT INTO note_text (note_id, user_id, title_terms, body_terms, plain_text)
    SELECT id, user_id, title_terms, body_terms, plain_text FROM notes;

ALTER TABLE notes
    DROP COLUMN title_terms,
    DROP COLUMN body_terms,
    DROP COLUMN plain_text;

DELETE FROM postings;
ALTER TABLE postings DROP CONSTRAINT postings_pkey;
ALTER TABLE postings
    ADD COLUMN tfs BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN lens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE postings ADD PRIMARY KEY (user_id, term, updated_us, uid_hi, uid_lo)
    INCLUDE (note_id, created_us, flags, tfs, lens);
