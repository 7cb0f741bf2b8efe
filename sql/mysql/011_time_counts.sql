-- notesd schema 011: note_time_counts, the counts of each user's notes per time bucket and flags
-- value, so the exact `total` of a note list filtered by dates and contains_* flags is a sum of a
-- few dozen rows plus two short index ranges instead of a COUNT over every note of the user.
-- Each note counts once per time column (time_column 0: created_us, 1: updated_us), per level
-- (shift: buckets of 2^shift microseconds, 2^32 = 72 minutes up to 2^48 = 8.9 years, each 16
-- times the previous one) and per its flags value, in bucket floor(time / 2^shift); rows that
-- reach zero are deleted. Every note write changes them in its own transaction
-- (src/store/time_counts.cpp, which also sums them); `notesctl check` recounts them. Like
-- term_df no foreign key: no operation deletes a user.
-- The rows of the notes already stored, every level in one grouped scan (l: the levels); the
-- floor division is written out, as integer division and the remainder truncate towards zero
-- on every backend and a time may be negative.

CREATE TABLE note_time_counts (
    user_id BIGINT NOT NULL,
    time_column BIGINT NOT NULL,
    shift BIGINT NOT NULL,
    bucket BIGINT NOT NULL,
    flags BIGINT NOT NULL,
    notes BIGINT NOT NULL,
    PRIMARY KEY (user_id, time_column, shift, bucket, flags)
) ENGINE = InnoDB;

INSERT INTO note_time_counts (user_id, time_column, shift, bucket, flags, notes)
SELECT user_id, time_column, shift, (t - ((t % width) + width) % width) DIV width, flags, COUNT(*)
FROM (SELECT n.user_id, l.time_column, l.shift, l.width, n.flags,
             CASE l.time_column WHEN 0 THEN n.created_us ELSE n.updated_us END AS t
      FROM notes n CROSS JOIN (SELECT 0 AS time_column, 32 AS shift, 4294967296 AS width
        UNION ALL SELECT 0, 36, 68719476736
        UNION ALL SELECT 0, 40, 1099511627776
        UNION ALL SELECT 0, 44, 17592186044416
        UNION ALL SELECT 0, 48, 281474976710656
        UNION ALL SELECT 1, 32, 4294967296
        UNION ALL SELECT 1, 36, 68719476736
        UNION ALL SELECT 1, 40, 1099511627776
        UNION ALL SELECT 1, 44, 17592186044416
        UNION ALL SELECT 1, 48, 281474976710656) l) x
GROUP BY user_id, time_column, shift, (t - ((t % width) + width) % width) DIV width, flags;
