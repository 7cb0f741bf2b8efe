-- notesd schema 004 for MariaDB/MySQL: word positions in the postings (src/positions.hpp).
--
-- pos holds the term's positions in the note's title and body, so phrase and proximity
-- clauses are counted from the rows that find the candidates, without reading note_text.
-- Empty means unknown (a term with more than kMaxStoredPositions occurrences in the note):
-- the ranker then reads the stored terms as before. At most 64 positions: a short column,
-- kept in the clustered row.
-- The store rebuilds the emptied postings table from note_text right after this script, in the
-- same transaction (SociStore::after_migration).

DELETE FROM postings;
ALTER TABLE postings ADD COLUMN pos VARCHAR(1024) NOT NULL DEFAULT '';
