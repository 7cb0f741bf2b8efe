-- notesd schema 002 for MariaDB/MySQL: the search index, as sql/sqlite/002_search.sql.
-- Terms are VARBINARY: compared byte by byte with no trailing-space padding, and any byte
-- string (such as a prefix scan's upper bound) is a valid value. 768 bytes hold the longest
-- term (48 code points of at most 4 bytes) with room to spare, and keep the keys under
-- InnoDB's 3072-byte limit. InnoDB clusters rows by primary key, as SQLite's WITHOUT ROWID.
-- TEXT-family columns have no DEFAULT (MySQL 8); existing rows get '' when they are added.

ALTER TABLE users
    ADD COLUMN title_tokens BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN body_tokens BIGINT NOT NULL DEFAULT 0;

ALTER TABLE notes
    ADD COLUMN title_terms MEDIUMTEXT NOT NULL,
    ADD COLUMN body_terms LONGTEXT NOT NULL,
    ADD COLUMN title_len BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN body_len BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN plain_text LONGTEXT NOT NULL;

CREATE TABLE IF NOT EXISTS term_df (
    user_id BIGINT NOT NULL,
    term VARBINARY(768) NOT NULL,
    df BIGINT NOT NULL,
    PRIMARY KEY (user_id, term)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS postings (
    user_id BIGINT NOT NULL,
    term VARBINARY(768) NOT NULL,
    updated_us BIGINT NOT NULL,
    uid_hi BIGINT NOT NULL,
    uid_lo BIGINT NOT NULL,
    note_id BIGINT NOT NULL,
    created_us BIGINT NOT NULL,
    flags BIGINT NOT NULL,
    PRIMARY KEY (user_id, term, updated_us, uid_hi, uid_lo)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS snapshots (
    id VARCHAR(64) NOT NULL PRIMARY KEY,
    user_id BIGINT NOT NULL,
    fingerprint TEXT NOT NULL,
    created_us BIGINT NOT NULL,
    expires_us BIGINT NOT NULL,
    note_ids MEDIUMTEXT NOT NULL,
    KEY snapshots_by_expiry (expires_us),
    CONSTRAINT snapshots_user_fk FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
