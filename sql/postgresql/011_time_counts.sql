-- notesd schema 011: note_time_counts, the counts of each user's notes per time bucket and flags
-- value, so the exact `total` of a note list filtered by dates and contains_* flags is a sum of a
-- few dozen rows plus two short index ranges instead of a COUNT over every note of the user.
-- Each note counts once per time column (time_column 0: created_us, 1: updated_us), per level
-- (shift: buckets of 2^shift microseconds, 2^32 = 72 minutes up to 2^48 = 8.9 years, each 16
-- times the previous one) and per its flags value, in bucket floor(time / 2^shift); rows that
-- reach zero are deleted. Every note write changes them in its own transaction
-- (src/store/time_counts.cpp, which also sums them); `notesctl check` recounts them. Like
-- term_df no foreign key: no operation deletes a user.
-- The rows for the notes already stored: floor division written out, as integer division and
-- the remainder truncate towards zero on every backend and a time may be negative.

CREATE TABLE note_time_counts (
    user_id BIGINT NOT NULL,
    time_column BIGINT NOT NULL,
    shift BIGINT NOT NULL,
    bucket BIGINT NOT NULL,
    flags BIGINT NOT NULL,
    notes BIGINT NOT NULL,
    PRIMARY KEY (user_id, time_column, shift, bucket, flags)
);

INSERT INTO note_time_counts (user_id, time_column, shift, bucket, flags, notes)
SELECT user_id, 0, 32, (created_us - ((created_us % 4294967296) + 4294967296) % 4294967296) / 4294967296, flags, COUNT(*) FROM notes
GROUP BY user_id, (created_us - ((created_us % 4294967296) + 4294967296) % 4294967296) / 4294967296, flags;

INSERT INTO note_time_counts (user_id, time_column, shift, bucket, flags, notes)
SELECT user_id, 0, 36, (created_us - ((created_us % 68719476736) + 68719476736) % 68719476736) / 68719476736, flags, COUNT(*) FROM notes
GROUP BY user_id, (created_us - ((created_us % 68719476736) + 68719476736) % 68719476736) / 68719476736, flags;

INSERT INTO note_time_counts (user_id, time_column, shift, bucket, flags, notes)
SELECT user_id, 0, 40, (created_us - ((created_us % 1099511627776) + 1099511627776) % 1099511627776) / 1099511627776, flags, COUNT(*) FROM notes
GROUP BY user_id, (created_us - ((created_us % 1099511627776) + 1099511627776) % 1099511627776) / 1099511627776, flags;

INSERT INTO note_time_counts (user_id, time_column, shift, bucket, flags, notes)
SELECT user_id, 0, 44, (created_us - ((created_us % 17592186044416) + 17592186044416) % 17592186044416) / 17592186044416, flags, COUNT(*) FROM notes
GROUP BY user_id, (created_us - ((created_us % 17592186044416) + 17592186044416) % 17592186044416) / 17592186044416, flags;

INSERT INTO note_time_counts (user_id, time_column, shift, bucket, flags, notes)
SELECT user_id, 0, 48, (created_us - ((created_us % 281474976710656) + 281474976710656) % 281474976710656) / 281474976710656, flags, COUNT(*) FROM notes
GROUP BY user_id, (created_us - ((created_us % 281474976710656) + 281474976710656) % 281474976710656) / 281474976710656, flags;

INSERT INTO note_time_counts (user_id, time_column, shift, bucket, flags, notes)
SELECT user_id, 1, 32, (updated_us - ((updated_us % 4294967296) + 4294967296) % 4294967296) / 4294967296, flags, COUNT(*) FROM notes
GROUP BY user_id, (updated_us - ((updated_us % 4294967296) + 4294967296) % 4294967296) / 4294967296, flags;

INSERT INTO note_time_counts (user_id, time_column, shift, bucket, flags, notes)
SELECT user_id, 1, 36, (updated_us - ((updated_us % 68719476736) + 68719476736) % 68719476736) / 68719476736, flags, COUNT(*) FROM notes
GROUP BY user_id, (updated_us - ((updated_us % 68719476736) + 68719476736) % 68719476736) / 68719476736, flags;

INSERT INTO note_time_counts (user_id, time_column, shift, bucket, flags, notes)
SELECT user_id, 1, 40, (updated_us - ((updated_us % 1099511627776) + 1099511627776) % 1099511627776) / 1099511627776, flags, COUNT(*) FROM notes
GROUP BY user_id, (updated_us - ((updated_us % 1099511627776) + 1099511627776) % 1099511627776) / 1099511627776, flags;

INSERT INTO note_time_counts (user_id, time_column, shift, bucket, flags, notes)
SELECT user_id, 1, 44, (updated_us - ((updated_us % 17592186044416) + 17592186044416) % 17592186044416) / 17592186044416, flags, COUNT(*) FROM notes
GROUP BY user_id, (updated_us - ((updated_us % 17592186044416) + 17592186044416) % 17592186044416) / 17592186044416, flags;

INSERT INTO note_time_counts (user_id, time_column, shift, bucket, flags, notes)
SELECT user_id, 1, 48, (updated_us - ((updated_us % 281474976710656) + 281474976710656) % 281474976710656) / 281474976710656, flags, COUNT(*) FROM notes
GROUP BY user_id, (updated_us - ((updated_us % 281474976710656) + 281474976710656) % 281474976710656) / 281474976710656, flags;
