-- notesd schema 013: pending index entries (issues 18 and 19); see
-- sql/sqlite/013_pending_notes.sql for what the table holds. InnoDB keeps AUTO_INCREMENT across
-- restarts (MariaDB 10.2.4+), so a row id is never reused.
CREATE TABLE IF NOT EXISTS index_pending (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    uid_hi BIGINT NOT NULL,
    uid_lo BIGINT NOT NULL,
    note_id BIGINT NOT NULL,
    updated_us BIGINT NOT NULL,
    created_us BIGINT NOT NULL,
    flags BIGINT NOT NULL,
    title_len BIGINT NOT NULL,
    body_len BIGINT NOT NULL,
    terms LONGBLOB NOT NULL,
    minus LONGBLOB NOT NULL,
    UNIQUE KEY index_pending_by_note (user_id, uid_hi, uid_lo)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
