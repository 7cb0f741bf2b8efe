-- notesd schema 004 for SQLite: word positions in the postings (src/positions.hpp).
--
-- pos holds the term's positions in the note's title and body, so phrase and proximity
-- clauses are counted from the rows that find the candidates, without reading note_text.
-- Empty means unknown (a term with more than kMaxStoredPositions occurrences in the note):
-- the ranker then reads the stored terms as before.
-- The store rebuilds the emptied postings table from note_text right after this script, in the
-- same transaction (SociStore::after_migration).

DELETE FROM postings;
ALTER TABLE postings ADD COLUMN pos TEXT NOT NULL DEFAULT '';
