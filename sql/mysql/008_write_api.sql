-- notesd schema 008: the write API; see sql/sqlite/008_write_api.sql for what each part is for.
-- The table is created IF NOT EXISTS, so a run cut short after it (DDL commits implicitly) can
-- be repeated once the ALTERs before it are undone by hand; back up before upgrading.
ALTER TABLE notes ADD COLUMN version BIGINT NOT NULL DEFAULT 1;

CREATE TABLE IF NOT EXISTS trashed_notes (
    user_id BIGINT NOT NULL,
    uuid VARCHAR(36) NOT NULL,
    trashed_us BIGINT NOT NULL,
    version BIGINT NOT NULL,
    title MEDIUMTEXT NOT NULL,
    snippet MEDIUMTEXT NOT NULL,
    content LONGTEXT NOT NULL,
    created_us BIGINT NOT NULL,
    updated_us BIGINT NOT NULL,
    flags BIGINT NOT NULL,
    collection_uuids MEDIUMTEXT NOT NULL,
    attachments MEDIUMTEXT NOT NULL,
    title_terms LONGTEXT NOT NULL,
    body_terms LONGTEXT NOT NULL,
    title_len BIGINT NOT NULL,
    body_len BIGINT NOT NULL,
    plain_text LONGTEXT NOT NULL,
    PRIMARY KEY (user_id, uuid),
    CONSTRAINT trashed_notes_user_fk FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

ALTER TABLE tokens ADD COLUMN scope VARCHAR(16) NOT NULL DEFAULT 'read-write';
