#include "store/dialect.hpp"

#include <soci/mysql/soci-mysql.h>
#include <soci/postgresql/soci-postgresql.h>
#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>  // declares sqlite3.h in namespace sqlite_api

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <stdexcept>

namespace notesd {
namespace {

struct Option {
    std::string key;
    std::string value;  // unquoted
    std::string text;   // the token as written, quotes included
};

// Splits `key=value key2='quoted value'` on blanks outside quotes.
std::vector<Option> parse_options(const std::string& s) {
    std::vector<Option> out;
    std::size_t i = 0;
    while (i < s.size()) {
        if (std::isspace(static_cast<unsigned char>(s[i]))) { ++i; continue; }
        const std::size_t start = i;
        Option o;
        while (i < s.size() && s[i] != '=' && !std::isspace(static_cast<unsigned char>(s[i])))
            o.key += s[i++];
        if (i >= s.size() || s[i] != '=' || o.key.empty())
            throw std::invalid_argument("connection string option without '=': " + o.key);
        ++i;
        if (i < s.size() && (s[i] == '"' || s[i] == '\'')) {
            const char q = s[i];
            const std::size_t end = s.find(q, i + 1);
            if (end == std::string::npos)
                throw std::invalid_argument("unterminated quote in connection string");
            o.value = s.substr(i + 1, end - i - 1);
            i = end + 1;
        } else {
            while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) o.value += s[i++];
        }
        o.text = s.substr(start, i - start);
        out.push_back(std::move(o));
    }
    return out;
}

int timeout_ms(const std::string& seconds) {
    if (seconds.empty() || seconds.size() > 5 ||
        !std::all_of(seconds.begin(), seconds.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw std::invalid_argument("connection string timeout must be whole seconds (0-86400)");
    const int s = std::stoi(seconds);
    if (s > 86400) throw std::invalid_argument("connection string timeout must be 0-86400 seconds");
    return s * 1000;
}

DbTarget parse_sqlite(const std::string& rest) {
    DbTarget t;
    t.backend = Backend::Sqlite;
    if (rest.find('=') == std::string::npos) {
        if (rest.empty()) throw std::invalid_argument("SQLite connection string names no file");
        if (rest.find('"') != std::string::npos)
            throw std::invalid_argument("SQLite file name must not contain '\"'");
        t.soci_params = "db=\"" + rest + "\"";
        t.sqlite_file = rest;
        return t;
    }
    std::string db;
    std::string passed;
    for (const Option& o : parse_options(rest)) {
        if (o.key == "db" || o.key == "dbname") db = o.value;
        else if (o.key == "timeout") t.busy_timeout_ms = timeout_ms(o.value);
        else if (o.key == "synchronous") {
            std::string v = o.value;
            std::transform(v.begin(), v.end(), v.begin(), ::toupper);
            if (v != "OFF" && v != "NORMAL" && v != "FULL" && v != "EXTRA")
                throw std::invalid_argument("synchronous must be off, normal, full or extra");
            t.sqlite_synchronous = v;
        } else if (o.key == "mmap_mb") {
            if (o.value.empty() || o.value.size() > 7 ||
                o.value.find_first_not_of("0123456789") != std::string::npos ||
                std::stoi(o.value) > 1048576)
                throw std::invalid_argument("mmap_mb must be 0-1048576 (MiB of the file mapped)");
            t.sqlite_mmap_mb = std::stoi(o.value);
        } else if (o.key == "cache_mb") {
            if (o.value.empty() || o.value.size() > 6 ||
                o.value.find_first_not_of("0123456789") != std::string::npos ||
                std::stoi(o.value) > 65536)
                throw std::invalid_argument("cache_mb must be 0-65536 (MiB of page cache)");
            t.sqlite_cache_mb = std::stoi(o.value);
            t.sqlite_cache_set = true;
        } else if (o.key == "readonly" || o.key == "nocreate" || o.key == "vfs" ||
                   o.key == "shared_cache") {
            passed += " " + o.text;
            if (o.key == "readonly") t.sqlite_readonly = true;  // as SOCI reads it, whatever the value
        } else {
            throw std::invalid_argument("unknown SQLite connection option: " + o.key);
        }
    }
    if (db.empty()) throw std::invalid_argument("SQLite connection string names no file (db=)");
    if (db.find('"') != std::string::npos)
        throw std::invalid_argument("SQLite file name must not contain '\"'");
    t.soci_params = "db=\"" + db + "\"" + passed;
    t.sqlite_file = db;
    return t;
}

// Server backends take libpq / MySQL keywords as they are; only our `timeout=` is taken out.
DbTarget parse_server(Backend b, const std::string& rest) {
    DbTarget t;
    t.backend = b;
    bool has_charset = false;
    bool has_connect_timeout = false;
    for (const Option& o : parse_options(rest)) {
        if (o.key == "timeout") {
            t.busy_timeout_ms = timeout_ms(o.value);
            continue;
        }
        if (o.key == "charset") has_charset = true;
        if (o.key == "connect_timeout") has_connect_timeout = true;
        t.soci_params += (t.soci_params.empty() ? "" : " ") + o.text;
    }
    if (b == Backend::MySql && !has_charset) t.soci_params += " charset=utf8mb4";
    // Both client libraries wait for an unreachable host as long as TCP does (minutes).
    if (!has_connect_timeout) t.soci_params += " connect_timeout=5";
    return t;
}

class SqliteDialect final : public Dialect {
public:
    std::string blob_value(const std::string& param) const override {
        return "CAST(" + param + " AS BLOB)";
    }
    const char* name() const override { return "sqlite"; }
    std::string ordered_join() const override { return "CROSS JOIN"; }
    // Without ANALYZE statistics SQLite's planner takes the index whose order matches ORDER BY:
    // a page of one created-time bucket ordered by updated time read notes_by_updated instead
    // of notes_by_created_bucket (66 ms instead of 0.3 at 100,000 notes).
    std::string force_index(const std::string& index) const override {
        return " INDEXED BY " + index;
    }
    const soci::backend_factory& factory() const override { return *soci::factory_sqlite3(); }
    std::vector<std::string> session_setup(const DbTarget& t) const override {
        // WAL lets readers run beside the one writer; the busy timeout makes a writer wait for
        // the lock instead of failing at once; foreign keys are off by default in SQLite.
        // busy_timeout first: switching to WAL takes a lock that other processes may hold.
        std::vector<std::string> out = {
            "PRAGMA busy_timeout=" + std::to_string(t.busy_timeout_ms), "PRAGMA journal_mode=WAL",
            "PRAGMA synchronous=" + t.sqlite_synchronous, "PRAGMA foreign_keys=ON"};
        if (t.sqlite_wal_autocheckpoint > 0)
            out.push_back("PRAGMA wal_autocheckpoint=" + std::to_string(t.sqlite_wal_autocheckpoint));
        // a negative cache_size is in KiB
        if (t.sqlite_cache_mb > 0)
            out.push_back("PRAGMA cache_size=-" + std::to_string(t.sqlite_cache_mb * 1024LL));
        // Mapped pages (mmap_mb, off by default) are read without a copy while the file is
        // unchanged; a commit by another connection unmaps them all. The main file only, which
        // searches do not write (the snapshots file, attached by SqliteIndex, gets SQLite's
        // default: off).
        out.push_back("PRAGMA main.mmap_size=" + std::to_string(t.sqlite_mmap_mb * 1048576LL));
        return out;
    }
    // IMMEDIATE takes the write lock at BEGIN (waiting up to the busy timeout): a deferred
    // transaction that reads first could not wait when it later upgrades (SQLITE_BUSY at once).
    std::vector<std::string> begin_write() const override { return {"BEGIN IMMEDIATE"}; }
    std::string lock_user() const override { return "SELECT id FROM users WHERE id = :u"; }
    bool insert_returns_id() const override { return false; }
    std::string count_star() const override { return "CAST(COUNT(*) AS BIGINT)"; }
    std::string table_exists() const override {
        return "SELECT CAST(COUNT(*) AS BIGINT) FROM sqlite_master WHERE type = 'table' AND "
               "name = :name";
    }
    // By the primary code (the low byte), so that every extended code counts.
    std::optional<StoreFault> fault_of(const soci::soci_error& e) const override {
        const auto* s = dynamic_cast<const soci::sqlite3_soci_error*>(&e);
        if (!s) {
            if (e.get_error_category() == soci::soci_error::connection_error)
                return StoreFault::CannotOpen;
            return std::nullopt;
        }
        switch (s->result() & 0xff) {
            // PROTOCOL: a WAL lock race that outlasted SQLite's own retries
            case SQLITE_BUSY: case SQLITE_LOCKED: case SQLITE_PROTOCOL: return StoreFault::Busy;
            case SQLITE_FULL: return StoreFault::DiskFull;
            // a file or directory that may not be written (the connection then has the file
            // open read-only), or that was moved or replaced under it (READONLY_DBMOVED)
            case SQLITE_READONLY: case SQLITE_PERM: return StoreFault::ReadOnly;
            case SQLITE_IOERR: return StoreFault::IoError;
            case SQLITE_CANTOPEN: return StoreFault::CannotOpen;
            case SQLITE_NOMEM: return StoreFault::OutOfResources;
            default: return std::nullopt;  // CORRUPT, NOTADB, misuse...: not the environment's
        }
    }
    // SQLite's messages name tables and columns, never values.
    std::string describe(const soci::soci_error& e) const override {
        const auto* s = dynamic_cast<const soci::sqlite3_soci_error*>(&e);
        return "sqlite error " + std::to_string(s ? s->result() : -1) + ": " +
               e.get_error_message();
    }
};

class MySqlDialect final : public Dialect {
public:
    const char* name() const override { return "mysql"; }
    std::string ordered_join() const override { return "STRAIGHT_JOIN"; }
    std::string df_upsert() const override { return " ON DUPLICATE KEY UPDATE df = df + VALUES(df)"; }
    std::string upsert_add(const std::string&, const std::string&,
                           const std::string& column) const override {
        return " ON DUPLICATE KEY UPDATE " + column + " = " + column + " + VALUES(" + column + ")";
    }
    std::string as_bigint(const std::string& expr) const override {
        return "CAST(" + expr + " AS SIGNED)";
    }
    const soci::backend_factory& factory() const override { return *soci::factory_mysql(); }
    // utf8mb4_bin for literals too, so `uuid < 'g'` compares bytes as SQLite does; strict mode
    // turns truncation into an error. REPEATABLE READ is the read views' level (each would
    // otherwise cost a SET TRANSACTION round trip); write transactions set READ COMMITTED for
    // themselves (begin_write). A statement outside both is a transaction of its own.
    std::vector<std::string> session_setup(const DbTarget& t) const override {
        std::vector<std::string> v = {
            "SET NAMES utf8mb4 COLLATE utf8mb4_bin",
            "SET SESSION time_zone = '+00:00', sql_mode = 'STRICT_ALL_TABLES,"
            "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION,ONLY_FULL_GROUP_BY'",
            "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"};
        for (std::string& s : wait_limits(t.busy_timeout_ms)) v.push_back(std::move(s));
        return v;
    }
    // max_statement_time is MariaDB's (10.1+); the /*M! ... */ part is a comment to MySQL 8,
    // whose max_execution_time covers only SELECT. Connection options read_timeout= and
    // write_timeout= bound a hung server on either.
    std::vector<std::string> wait_limits(int ms) const override {
        const int lock_s = ms <= 0 ? 86400 : std::max(1, (ms + 999) / 1000);
        char stmt[32];
        std::snprintf(stmt, sizeof stmt, "%.3f", ms <= 0 ? 0.0 : ms / 1000.0);
        return {"SET SESSION innodb_lock_wait_timeout = " + std::to_string(lock_s) +
                " /*M!100108 , max_statement_time = " + stmt + " */"};
    }
    // READ COMMITTED: each statement sees the commits before it, as on PostgreSQL and SQLite,
    // and an UPDATE or DELETE locks the rows it changes, not the gaps between other users' rows.
    std::vector<std::string> begin_write() const override {
        return {"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "START TRANSACTION"};
    }
    // At the session's REPEATABLE READ: one snapshot, taken at once, for the whole transaction.
    std::vector<std::string> begin_read_view() const override {
        return {"START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"};
    }
    std::string lock_user() const override { return "SELECT id FROM users WHERE id = :u FOR UPDATE"; }
    bool insert_returns_id() const override { return false; }
    // MariaDB's optimizer does not turn a row-value comparison into an index range (EXPLAIN
    // shows a full index scan); the expanded form is two ranges.
    std::string keyset_before(const std::string& col, const std::string& id) const override {
        return "(" + col + " < :k OR (" + col + " = :k2 AND " + id + " < :kid))";
    }
    std::string count_star() const override { return "CAST(COUNT(*) AS SIGNED)"; }
    // For a keyset page ORDER BY ... DESC LIMIT n, MariaDB prefers a table scan over the range
    // (it is not covering) and then reads the user's whole index range in order from the newest
    // note, filtering up to the cursor: deep pages read most of the user's rows. Forced, the
    // index gives the range, a page's rows and no more.
    std::string force_index(const std::string& index) const override {
        return " FORCE INDEX (" + index + ")";
    }
    // MariaDB refuses LIMIT inside an IN subquery (error 1235); a single-table DELETE takes it.
    std::string delete_expired_snapshots() const override {
        return "DELETE FROM snapshots WHERE expires_us <= :now ORDER BY expires_us" +
               limit_clause();
    }
    std::string table_exists() const override {
        return "SELECT CAST(COUNT(*) AS SIGNED) FROM information_schema.tables WHERE "
               "table_schema = DATABASE() AND table_name = :name";
    }
    // Server error numbers (mysqld_error.h) and the client library's (errmsg.h, 2xxx).
    std::optional<StoreFault> fault_of(const soci::soci_error& e) const override {
        const auto* m = dynamic_cast<const soci::mysql_soci_error*>(&e);
        if (!m) {
            if (e.get_error_category() == soci::soci_error::connection_error)
                return StoreFault::ConnectionLost;
            return std::nullopt;
        }
        switch (m->err_num_) {
            // can't connect, server gone, lost during a query, server shutting down,
            // connection killed (MariaDB), network errors, disconnected for inactivity (MySQL 8)
            case 2002: case 2003: case 2006: case 2013: case 2055: case 1053: case 1927:
            case 1158: case 1159: case 1160: case 1161: case 4031:
                return StoreFault::ConnectionLost;
            case 1205: case 1213: return StoreFault::Busy;  // lock wait timeout, deadlock
            // max_statement_time (MariaDB), max_execution_time (MySQL 8), interrupted
            case 1969: case 3024: case 1317: return StoreFault::Timeout;
            case 1021: case 1114: return StoreFault::DiskFull;  // disk full, table full
            // --read-only (and other options preventing a statement), read-only mode,
            // read-only transaction, a table opened read-only
            case 1290: case 1836: case 1792: case 1036: return StoreFault::ReadOnly;
            // the storage engine's error (e.g. errno 28), reading or writing a file
            case 1030: case 1024: case 1026: return StoreFault::IoError;
            // too many connections (all, or the user's), out of memory
            case 1040: case 1203: case 1037: case 1038: case 1041:
                return StoreFault::OutOfResources;
            default: return std::nullopt;
        }
    }
    // MySQL messages quote values ("Duplicate entry 'x'"): only the number is logged, but for
    // client-side (2xxx) and access errors, which name only hosts, sockets, users, databases.
    std::string describe(const soci::soci_error& e) const override {
        const auto* m = dynamic_cast<const soci::mysql_soci_error*>(&e);
        const long long n = m ? static_cast<long long>(m->err_num_) : -1;
        std::string out = "mysql error " + std::to_string(n);
        if (n >= 2000 || n == 1044 || n == 1045 || n == 1049 || n == 1040)
            out += ": " + e.get_error_message();
        return out;
    }
};

class PostgresDialect final : public Dialect {
public:
    const char* name() const override { return "postgresql"; }
    // BYTEA's hex form ("\\x" then two digits a byte), which bytea_output = hex (the default)
    // also returns.
    std::string blob_param(std::string_view raw) const override {
        static const char kDigits[] = "0123456789abcdef";
        std::string out = "\\x";
        out.reserve(2 + 2 * raw.size());
        for (unsigned char c : raw) {
            out.push_back(kDigits[c >> 4]);
            out.push_back(kDigits[c & 15]);
        }
        return out;
    }
    bool blob_result(std::string& s) const override {
        auto digit = [](char c) {
            return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        };
        if (s.size() < 2 || s[0] != '\\' || s[1] != 'x' || s.size() % 2) return false;
        std::size_t o = 0;
        for (std::size_t i = 2; i < s.size(); i += 2) {
            const int h = digit(s[i]), l = digit(s[i + 1]);
            if (h < 0 || l < 0) return false;
            s[o++] = static_cast<char>(h << 4 | l);
        }
        s.resize(o);
        return true;
    }
    const soci::backend_factory& factory() const override { return *soci::factory_postgresql(); }
    std::vector<std::string> session_setup(const DbTarget& t) const override {
        // Notices ("relation already exists, skipping") would go to stderr through libpq.
        std::vector<std::string> v = {"SET TIME ZONE 'UTC'", "SET client_encoding = 'UTF8'",
                                      "SET client_min_messages = warning"};
        for (std::string& s : wait_limits(t.busy_timeout_ms)) v.push_back(std::move(s));
        return v;
    }
    std::vector<std::string> wait_limits(int ms) const override {
        const std::string v = std::to_string(std::max(0, ms));
        return {"SET statement_timeout = " + v, "SET lock_timeout = " + v};
    }
    std::vector<std::string> begin_write() const override { return {"BEGIN"}; }
    // REPEATABLE READ: one snapshot, taken at the first statement, for the whole transaction
    // (READ COMMITTED, the default, takes one per statement). A read-only one never fails to
    // serialise.
    std::vector<std::string> begin_read_view() const override {
        return {"START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"};
    }
    std::string lock_user() const override { return "SELECT id FROM users WHERE id = :u FOR UPDATE"; }
    bool insert_returns_id() const override { return true; }
    // After five executions a prepared statement may switch to a generic plan, which estimates
    // few rows per (user, term): postings_at's IN lists then become a filter over all of a
    // frequent term's rows, and a plain VALUES join a hash join; only the lateral form keeps
    // one seek per listed key.
    bool joins_key_lists() const override { return true; }
    std::string count_star() const override { return "CAST(COUNT(*) AS BIGINT)"; }
    std::string table_exists() const override {
        return "SELECT CAST(COUNT(*) AS BIGINT) FROM information_schema.tables WHERE "
               "table_schema = current_schema() AND table_name = :name";
    }
    // SQLSTATE codes (PostgreSQL's Appendix A), by class where the whole class is one fault.
    std::optional<StoreFault> fault_of(const soci::soci_error& e) const override {
        const auto* p = dynamic_cast<const soci::postgresql_soci_error*>(&e);
        if (!p) {
            if (e.get_error_category() == soci::soci_error::connection_error || failed_connect(e))
                return StoreFault::ConnectionLost;
            return std::nullopt;
        }
        const std::string st = p->sqlstate();
        const std::string cls = st.substr(0, 2);
        // A result lost with the connection carries no SQLSTATE (SOCI reports blanks); 26000
        // is a prepared statement the server no longer has (reconnected, or DISCARD ALL);
        // 57P01-03 shutdown, crash, starting up; 57P05 and 25P03 idle-session timeouts.
        if (cls == "08" || st == "57P01" || st == "57P02" || st == "57P03" || st == "57P05" ||
            st == "25P03" || st == "26000" ||
            st.find_first_not_of(std::string(" \0", 2)) == std::string::npos)
            return StoreFault::ConnectionLost;
        // serialization failure, deadlock, lock_timeout
        if (st == "40001" || st == "40P01" || st == "55P03") return StoreFault::Busy;
        if (st == "57014") return StoreFault::Timeout;  // statement_timeout (query_canceled)
        if (st == "53100") return StoreFault::DiskFull;
        if (cls == "53") return StoreFault::OutOfResources;  // memory, connections, limits
        if (st == "25006") return StoreFault::ReadOnly;  // hot standby, read-only transaction
        if (cls == "58") return StoreFault::IoError;  // system errors: I/O, missing files
        return std::nullopt;
    }
    // The first line only: a DETAIL line can quote row values. libpq's reason for a failed
    // connection (host, socket, user, database; never the password) is kept, on one line.
    std::string describe(const soci::soci_error& e) const override {
        const auto* p = dynamic_cast<const soci::postgresql_soci_error*>(&e);
        std::string msg = e.get_error_message();
        if (!p && failed_connect(e)) {
            std::replace(msg.begin(), msg.end(), '\n', ' ');
        } else {
            msg = msg.substr(0, msg.find('\n'));
        }
        return "postgresql error " + (p ? p->sqlstate() : std::string("?")) + ": " + msg;
    }

private:
    // SOCI 4.0 reports a failed PQconnectdb as a plain soci_error with only this text.
    static bool failed_connect(const soci::soci_error& e) {
        return e.get_error_message().rfind("Cannot establish connection", 0) == 0;
    }
};

}  // namespace

std::string Dialect::keyset_before(const std::string& col, const std::string& id) const {
    return "(" + col + ", " + id + ") < (:k, :kid)";
}

std::string Dialect::limit_clause() const { return " LIMIT :lim"; }

// SQLite and PostgreSQL have no DELETE ... LIMIT (SQLite only as a compile-time option).
std::string Dialect::delete_expired_snapshots() const {
    return "DELETE FROM snapshots WHERE id IN (SELECT id FROM snapshots WHERE expires_us <= :now "
           "ORDER BY expires_us" + limit_clause() + ")";
}

std::vector<std::string> Dialect::wait_limits(int) const { return {}; }

// Search snapshots are written on every search; in the main file each such commit would make
// every other connection drop its page cache (SQLite resets it whenever the WAL has changed
// since its last read), so they live in a file of their own.
std::string sqlite_snapshots_file(const DbTarget& t) {
    const std::string& db = t.sqlite_file;
    if (db == ":memory:" || db.rfind("file::memory:", 0) == 0) return ":memory:";
    return db + "-snapshots";
}

DbTarget parse_connection_string(const std::string& conn) {
    const std::size_t sep = conn.find("://");
    if (sep == std::string::npos) return parse_sqlite(conn);
    const std::string scheme = conn.substr(0, sep);
    const std::string rest = conn.substr(sep + 3);
    if (scheme == "sqlite3" || scheme == "sqlite") return parse_sqlite(rest);
    if (scheme == "mysql" || scheme == "mariadb") return parse_server(Backend::MySql, rest);
    if (scheme == "postgresql" || scheme == "postgres")
        return parse_server(Backend::PostgreSql, rest);
    throw std::invalid_argument("unknown database scheme '" + scheme +
                                "' (use sqlite3://, mysql:// or postgresql://)");
}

std::unique_ptr<Dialect> make_dialect(Backend b) {
    // No connection is used by two threads at once (workers and the merger are single-threaded;
    // notesctl's import hands its connection to a writer thread one batch at a time, and the
    // importing thread meanwhile only prepares, NoteWriter::prepare_batch): SQLite then needs
    // no mutex per call, a cost on every call. Only possible before SQLite
    // initialises; later calls fail harmlessly and keep the default.
    static const bool multithread_mode =
        sqlite_api::sqlite3_config(SQLITE_CONFIG_MULTITHREAD) == SQLITE_OK;
    (void)multithread_mode;
    switch (b) {
        case Backend::MySql: return std::make_unique<MySqlDialect>();
        case Backend::PostgreSql: return std::make_unique<PostgresDialect>();
        case Backend::Sqlite: break;
    }
    return std::make_unique<SqliteDialect>();
}

}  // namespace notesd
