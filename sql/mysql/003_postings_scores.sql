-- notesd schema 003 for MariaDB/MySQL: rank from the postings alone. See
-- sql/sqlite/003_postings_scores.sql for the reasons; the same columns and meaning here.
-- (MySQL commits each DDL statement by itself; the store rebuilds postings afterwards.)

CREATE TABLE IF NOT EXISTS note_text (
    note_id BIGINT NOT NULL PRIMARY KEY,
    user_id BIGINT NOT NULL,
    title_terms MEDIUMTEXT NOT NULL,
    body_terms LONGTEXT NOT NULL,
    plain_text LONGTEXT NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

INSERT INTO note_text (note_id, user_id, title_terms, body_terms, plain_text)
    SELECT id, user_id, title_terms, body_terms, plain_text FROM notes;

ALTER TABLE notes
    DROP COLUMN title_terms,
    DROP COLUMN body_terms,
    DROP COLUMN plain_text;

DELETE FROM postings;
ALTER TABLE postings
    ADD COLUMN tfs BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN lens BIGINT NOT NULL DEFAULT 0;
