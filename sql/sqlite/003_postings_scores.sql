-- notesd schema 003 for SQLite: rank from the postings alone (design section 5).
--
-- Each postings row also carries the term's count in the note's title and body (tfs) and the
-- note's two field lengths (lens), each pair packed as first * 2^32 + second. BM25F of every
-- term clause is then computed from the rows that find the candidates, with no note read.
-- The stored terms (for phrase and proximity checks) and the plain text (for snippets) move
-- from the wide notes row, where they sat behind the markdown content, into note_text, so
-- the few notes that need them are read in one short row each.
-- The store rebuilds the emptied postings table from note_text right after this script, in the
-- same transaction (SociStore::after_migration), because the counts need the text analysis.

CREATE TABLE note_text (
    note_id INTEGER PRIMARY KEY,
    user_id BIGINT NOT NULL,
    title_terms TEXT NOT NULL,
    body_terms TEXT NOT NULL,
    plain_text TEXT NOT NULL
);

INSERT INTO note_text (note_id, user_id, title_terms, body_terms, plain_text)
    SELECT id, user_id, title_terms, body_terms, plain_text FROM notes;

ALTER TABLE notes DROP COLUMN title_terms;
ALTER TABLE notes DROP COLUMN body_terms;
ALTER TABLE notes DROP COLUMN plain_text;

DELETE FROM postings;
ALTER TABLE postings ADD COLUMN tfs BIGINT NOT NULL DEFAULT 0;
ALTER TABLE postings ADD COLUMN lens BIGINT NOT NULL DEFAULT 0;
