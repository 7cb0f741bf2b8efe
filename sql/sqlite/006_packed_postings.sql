-- notesd schema 006 for SQLite: packed postings (src/store/sqlite_packed.hpp).
--
-- A read-optimised copy of the postings rows: runs of up to 128 rows of one (user, term)
-- encoded into one blob, so a search decodes a term's list instead of stepping SQLite through
-- it row by row (about 4x less time per posting). The rows stay the truth; a block is a copy of
-- exactly the rows whose key (updated_us, uid_hi, uid_lo) lies in [lo, hi), and the blocks of a
-- term tile its key space without overlap. Every write of a postings row deletes the block
-- covering its key in the same transaction, so a block is never stale: a reader takes the rows
-- of any range no block covers (a gap) from the postings table. `notesctl` packs the gaps after
-- it writes; the store migration packs everything right after this script.
CREATE TABLE postings_packed (
    id INTEGER PRIMARY KEY,
    user_id BIGINT NOT NULL,
    term TEXT NOT NULL,
    lo_us BIGINT NOT NULL,
    lo_hi BIGINT NOT NULL,
    lo_lo BIGINT NOT NULL,
    hi_us BIGINT NOT NULL,
    hi_hi BIGINT NOT NULL,
    hi_lo BIGINT NOT NULL,
    n BIGINT NOT NULL,
    data BLOB NOT NULL
);
-- The blocks of a term newest first, with their ranges (gap checks read only this index).
CREATE UNIQUE INDEX postings_packed_by_key ON postings_packed
    (user_id, term, lo_us, lo_hi, lo_lo, hi_us, hi_hi, hi_lo);
