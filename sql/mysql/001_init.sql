-- notesd schema 001 for MariaDB 10.11+ and MySQL 8, the same tables as sql/sqlite/001_init.sql.
-- Every table is InnoDB with utf8mb4 and the binary collation, so text compares byte by byte as
-- in SQLite; user names are VARBINARY, because utf8mb4_bin pads with spaces ('a' = 'a ').
-- TEXT-family columns have no DEFAULT (MySQL 8 allows only expression defaults on them); the
-- store always writes them. Indexes are declared inside CREATE TABLE and the tables with IF NOT
-- EXISTS, so a migration cut short by a lost connection (MySQL DDL commits implicitly) can run
-- again. Statements end with ';' at the end of a line (see split_sql).

CREATE TABLE IF NOT EXISTS schema_migrations (
    version BIGINT PRIMARY KEY,
    name TEXT NOT NULL,
    applied_us BIGINT NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS users (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name VARBINARY(200) NOT NULL,
    created_us BIGINT NOT NULL,
    note_count BIGINT NOT NULL DEFAULT 0,
    collection_count BIGINT NOT NULL DEFAULT 0,
    UNIQUE KEY users_name (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS tokens (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    token_hash VARCHAR(64) NOT NULL,
    prefix TEXT NOT NULL,
    label TEXT NOT NULL,
    created_us BIGINT NOT NULL,
    revoked_us BIGINT,
    UNIQUE KEY tokens_hash (token_hash),
    KEY tokens_user (user_id, id),
    CONSTRAINT tokens_user_fk FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS collections (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    uuid VARCHAR(36) NOT NULL,
    title MEDIUMTEXT NOT NULL,
    description MEDIUMTEXT,
    created_us BIGINT NOT NULL,
    updated_us BIGINT NOT NULL,
    note_count BIGINT NOT NULL DEFAULT 0,
    UNIQUE KEY collections_uuid (user_id, uuid),
    KEY collections_by_updated (user_id, updated_us, uuid),
    KEY collections_by_created (user_id, created_us, uuid),
    CONSTRAINT collections_user_fk FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The trailing columns make each index covering for COUNT(*) under any filter.
CREATE TABLE IF NOT EXISTS notes (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    uuid VARCHAR(36) NOT NULL,
    title MEDIUMTEXT NOT NULL,
    snippet MEDIUMTEXT NOT NULL,
    content LONGTEXT NOT NULL,
    created_us BIGINT NOT NULL,
    updated_us BIGINT NOT NULL,
    flags BIGINT NOT NULL DEFAULT 0,
    collection_uuids MEDIUMTEXT NOT NULL,
    audio_uuids MEDIUMTEXT NOT NULL,
    content_hash VARCHAR(64) NOT NULL,
    UNIQUE KEY notes_uuid (user_id, uuid),
    KEY notes_by_updated (user_id, updated_us, uuid, created_us, flags),
    KEY notes_by_created (user_id, created_us, uuid, updated_us, flags),
    CONSTRAINT notes_user_fk FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS note_collections (
    collection_id BIGINT NOT NULL,
    note_id BIGINT NOT NULL,
    note_uuid VARCHAR(36) NOT NULL,
    created_us BIGINT NOT NULL,
    updated_us BIGINT NOT NULL,
    flags BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (note_id, collection_id),
    KEY note_collections_by_updated (collection_id, updated_us, note_uuid, created_us, flags),
    KEY note_collections_by_created (collection_id, created_us, note_uuid, updated_us, flags),
    CONSTRAINT note_collections_coll_fk FOREIGN KEY (collection_id)
        REFERENCES collections (id) ON DELETE CASCADE,
    CONSTRAINT note_collections_note_fk FOREIGN KEY (note_id)
        REFERENCES notes (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS attachments (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    note_id BIGINT NOT NULL,
    uuid VARCHAR(36) NOT NULL,
    kind VARCHAR(8) NOT NULL,
    target MEDIUMTEXT NOT NULL,
    KEY attachments_by_note (note_id),
    CONSTRAINT attachments_kind CHECK (kind IN ('image', 'file', 'audio')),
    CONSTRAINT attachments_note_fk FOREIGN KEY (note_id) REFERENCES notes (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
