#include "store/dialect.hpp"

#include <soci/mysql/soci-mysql.h>
#include <soci/postgresql/soci-postgresql.h>
#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>

#include <algorithm>
#include <cctype>
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
        } else if (o.key == "readonly" || o.key == "nocreate" || o.key == "vfs" ||
                   o.key == "shared_cache") {
            passed += " " + o.text;
        } else {
            throw std::invalid_argument("unknown SQLite connection option: " + o.key);
        }
    }
    if (db.empty()) throw std::invalid_argument("SQLite connection string names no file (db=)");
    if (db.find('"') != std::string::npos)
        throw std::invalid_argument("SQLite file name must not contain '\"'");
    t.soci_params = "db=\"" + db + "\"" + passed;
    return t;
}

// Server backends take libpq / MySQL keywords as they are; only our `timeout=` is taken out.
DbTarget parse_server(Backend b, const std::string& rest) {
    DbTarget t;
    t.backend = b;
    bool has_charset = false;
    for (const Option& o : parse_options(rest)) {
        if (o.key == "timeout") {
            t.busy_timeout_ms = timeout_ms(o.value);
            continue;
        }
        if (o.key == "charset") has_charset = true;
        t.soci_params += (t.soci_params.empty() ? "" : " ") + o.text;
    }
    if (b == Backend::MySql && !has_charset) t.soci_params += " charset=utf8mb4";
    return t;
}

class SqliteDialect final : public Dialect {
public:
    const char* name() const override { return "sqlite"; }
    const soci::backend_factory& factory() const override { return *soci::factory_sqlite3(); }
    std::vector<std::string> session_setup(const DbTarget& t) const override {
        // WAL lets readers run beside the one writer; the busy timeout makes a writer wait for
        // the lock instead of failing at once; foreign keys are off by default in SQLite.
        // busy_timeout first: switching to WAL takes a lock that other processes may hold.
        return {"PRAGMA busy_timeout=" + std::to_string(t.busy_timeout_ms),
                "PRAGMA journal_mode=WAL", "PRAGMA synchronous=" + t.sqlite_synchronous,
                "PRAGMA foreign_keys=ON"};
    }
    // IMMEDIATE takes the write lock at BEGIN (waiting up to the busy timeout): a deferred
    // transaction that reads first could not wait when it later upgrades (SQLITE_BUSY at once).
    std::string begin_write() const override { return "BEGIN IMMEDIATE"; }
    std::string lock_user() const override { return "SELECT id FROM users WHERE id = :u"; }
    bool insert_returns_id() const override { return false; }
    std::string count_star() const override { return "CAST(COUNT(*) AS BIGINT)"; }
    std::string table_exists() const override {
        return "SELECT CAST(COUNT(*) AS BIGINT) FROM sqlite_master WHERE type = 'table' AND "
               "name = :name";
    }
    ErrorClass classify(const soci::soci_error& e) const override {
        const auto* s = dynamic_cast<const soci::sqlite3_soci_error*>(&e);
        if (!s) return ErrorClass::Other;
        switch (s->result() & 0xff) {
            case SQLITE_BUSY: case SQLITE_LOCKED: case SQLITE_IOERR: case SQLITE_FULL:
            case SQLITE_CANTOPEN: case SQLITE_PROTOCOL: case SQLITE_NOMEM:
                return ErrorClass::Unavailable;
            case SQLITE_CONSTRAINT:
                return ErrorClass::Constraint;
            default:
                return ErrorClass::Other;
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
    const soci::backend_factory& factory() const override { return *soci::factory_mysql(); }
    std::vector<std::string> session_setup(const DbTarget& t) const override {
        const int s = std::max(1, (t.busy_timeout_ms + 999) / 1000);
        return {"SET NAMES utf8mb4", "SET SESSION time_zone = '+00:00'",
                "SET SESSION innodb_lock_wait_timeout = " + std::to_string(s)};
    }
    std::string begin_write() const override { return "START TRANSACTION"; }
    std::string lock_user() const override { return "SELECT id FROM users WHERE id = :u FOR UPDATE"; }
    bool insert_returns_id() const override { return false; }
    // MariaDB's optimizer does not always turn a row-value comparison into a range.
    std::string keyset_before(const std::string& col, const std::string& id) const override {
        return "(" + col + " < :k OR (" + col + " = :k2 AND " + id + " < :kid))";
    }
    std::string count_star() const override { return "CAST(COUNT(*) AS SIGNED)"; }
    std::string table_exists() const override {
        return "SELECT CAST(COUNT(*) AS SIGNED) FROM information_schema.tables WHERE "
               "table_schema = DATABASE() AND table_name = :name";
    }
    ErrorClass classify(const soci::soci_error& e) const override {
        const auto* m = dynamic_cast<const soci::mysql_soci_error*>(&e);
        if (!m) return e.get_error_category() == soci::soci_error::connection_error
                           ? ErrorClass::ConnectionLost : ErrorClass::Other;
        switch (m->err_num_) {
            case 2002: case 2003: case 2006: case 2013: case 2055: case 1927:
                return ErrorClass::ConnectionLost;
            case 1040: case 1203: case 1205: case 1213: case 3024: case 1969:
                return ErrorClass::Unavailable;
            case 1062: case 1451: case 1452:
                return ErrorClass::Constraint;
            default:
                return ErrorClass::Other;
        }
    }
    // MySQL messages quote values ("Duplicate entry 'x'"): only the number is logged.
    std::string describe(const soci::soci_error& e) const override {
        const auto* m = dynamic_cast<const soci::mysql_soci_error*>(&e);
        return "mysql error " + std::to_string(m ? static_cast<long long>(m->err_num_) : -1);
    }
};

class PostgresDialect final : public Dialect {
public:
    const char* name() const override { return "postgresql"; }
    const soci::backend_factory& factory() const override { return *soci::factory_postgresql(); }
    std::vector<std::string> session_setup(const DbTarget& t) const override {
        return {"SET TIME ZONE 'UTC'", "SET client_encoding = 'UTF8'",
                "SET lock_timeout = " + std::to_string(t.busy_timeout_ms)};
    }
    std::string begin_write() const override { return "BEGIN"; }
    std::string lock_user() const override { return "SELECT id FROM users WHERE id = :u FOR UPDATE"; }
    bool insert_returns_id() const override { return true; }
    std::string count_star() const override { return "CAST(COUNT(*) AS BIGINT)"; }
    std::string table_exists() const override {
        return "SELECT CAST(COUNT(*) AS BIGINT) FROM information_schema.tables WHERE "
               "table_schema = current_schema() AND table_name = :name";
    }
    ErrorClass classify(const soci::soci_error& e) const override {
        const auto* p = dynamic_cast<const soci::postgresql_soci_error*>(&e);
        if (!p) return e.get_error_category() == soci::soci_error::connection_error
                           ? ErrorClass::ConnectionLost : ErrorClass::Other;
        const std::string st = p->sqlstate();
        if (st.compare(0, 2, "08") == 0 || st == "57P01" || st == "57P02" || st == "57P03")
            return ErrorClass::ConnectionLost;
        if (st.compare(0, 2, "53") == 0 || st == "40001" || st == "40P01" || st == "55P03" ||
            st == "57014")
            return ErrorClass::Unavailable;
        if (st.compare(0, 2, "23") == 0) return ErrorClass::Constraint;
        return ErrorClass::Other;
    }
    // The first line only: a DETAIL line can quote row values.
    std::string describe(const soci::soci_error& e) const override {
        const auto* p = dynamic_cast<const soci::postgresql_soci_error*>(&e);
        std::string msg = e.get_error_message();
        msg = msg.substr(0, msg.find('\n'));
        return "postgresql error " + (p ? p->sqlstate() : std::string("?")) + ": " + msg;
    }
};

}  // namespace

std::string Dialect::keyset_before(const std::string& col, const std::string& id) const {
    return "(" + col + ", " + id + ") < (:k, :kid)";
}

std::string Dialect::limit_clause() const { return " LIMIT :lim"; }

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
    switch (b) {
        case Backend::MySql: return std::make_unique<MySqlDialect>();
        case Backend::PostgreSql: return std::make_unique<PostgresDialect>();
        case Backend::Sqlite: break;
    }
    return std::make_unique<SqliteDialect>();
}

}  // namespace notesd
