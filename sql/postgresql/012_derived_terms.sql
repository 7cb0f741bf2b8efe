-- notesd schema 012: the stored terms go. A note's terms are the analysis of its title and plain
-- text (src/index/note_index.hpp), which stay stored, so the store derives them again wherever
-- it needs them (an old version's postings to remove, compaction, check, the candidates whose
-- phrases and proximity need the whole field) instead of keeping a second copy of every note's
-- text: about 40% of note_text. A trashed note's terms and field lengths go the same way.

ALTER TABLE note_text DROP COLUMN title_terms, DROP COLUMN body_terms;
ALTER TABLE trashed_notes DROP COLUMN title_terms, DROP COLUMN body_terms, DROP COLUMN title_len,
    DROP COLUMN body_len;
