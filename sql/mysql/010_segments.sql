-- notesd schema 010: index segments (issue 19); see sql/sqlite/010_segments.sql for what the
-- tables hold. InnoDB keeps AUTO_INCREMENT across restarts (MariaDB 10.2.4+), so a segment id
-- is never reused and a worker may cache a segment's decoded notes table by its id.
CREATE TABLE IF NOT EXISTS index_segments (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    note_count BIGINT NOT NULL,
    live_count BIGINT NOT NULL,
    notes LONGBLOB NOT NULL,
    live LONGBLOB NOT NULL,
    KEY index_segments_by_user (user_id, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS segment_blocks (
    user_id BIGINT NOT NULL,
    term VARBINARY(768) NOT NULL,
    segment_id BIGINT NOT NULL,
    first_ord BIGINT NOT NULL,
    last_ord BIGINT NOT NULL,
    data LONGBLOB NOT NULL,
    PRIMARY KEY (user_id, term, segment_id, first_ord),
    KEY segment_blocks_by_segment (segment_id, term, first_ord)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
