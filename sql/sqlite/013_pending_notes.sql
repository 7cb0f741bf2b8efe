-- notesd schema 013: pending index entries (issues 18 and 19, src/store/pending_notes.hpp).
--
-- An API write no longer writes a row per posting and a term_df row per term (about 260
-- scattered pages for a 2 KB note): it writes one index_pending row holding the note's current
-- version's terms (counts and positions, index/pending_terms.hpp) and the names of the terms
-- its folded version still counts in term_df (`minus`; the folded postings themselves are
-- marked dead in their segment or deleted at once). Searches merge the rows into every term
-- read and document frequency; the background merger folds them into segments and term_df.
-- note_id 0: the note is gone (deleted or trashed), only `minus` is left to fold. A row id is
-- never reused, so a worker may cache a decoded row by its id.
CREATE TABLE index_pending (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL,
    uid_hi BIGINT NOT NULL,
    uid_lo BIGINT NOT NULL,
    note_id BIGINT NOT NULL,
    updated_us BIGINT NOT NULL,
    created_us BIGINT NOT NULL,
    flags BIGINT NOT NULL,
    title_len BIGINT NOT NULL,
    body_len BIGINT NOT NULL,
    terms BLOB NOT NULL,
    minus BLOB NOT NULL
);
CREATE UNIQUE INDEX index_pending_by_note ON index_pending (user_id, uid_hi, uid_lo);
