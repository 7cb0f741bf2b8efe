// What differs per database backend, in one place: the SOCI store asks its Dialect and never
// tests the backend itself. Adding a backend means a Dialect body plus sql/<name>/ migrations.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/fault.hpp"

namespace soci {
class backend_factory;
class session;
class soci_error;
}  // namespace soci

namespace notesd {

enum class Backend { Sqlite, MySql, PostgreSql };

constexpr int kDefaultBusyTimeoutMs = 3000;

/// A parsed connection string.
struct DbTarget {
    Backend backend = Backend::Sqlite;
    std::string soci_params;            // what the SOCI backend gets, e.g. `db="/var/x.db"`
    int busy_timeout_ms = kDefaultBusyTimeoutMs;  // SQLite busy timeout; lock wait on servers
    /// FULL: in WAL mode it syncs the WAL at every commit, so a write that answered 200 (and a
    /// batch notesctl reported) survives a power cut; NORMAL syncs only at checkpoints.
    std::string sqlite_synchronous = "FULL";
    /// The index's merge and fold steps sync the WAL after each transaction as API writes do
    /// (FULL only; soci_compact.cpp step_write). A notesd merger does, so that the API writers'
    /// syncs beside it do not carry its pages; notesctl (open_store_for_bulk) does not.
    bool sync_index_steps = true;
    /// Threads a merge of segments uses (merge_segments): notesctl's compactions run alone and
    /// take the cores (open_store_for_bulk); notesd's merger keeps one beside the workers.
    unsigned merge_threads = 1;
    int sqlite_cache_mb = 0;  ///< SQLite page cache per connection; 0: SQLite's default (2 MB)
    /// WAL pages after which a commit checkpoints; 0: SQLite's default (1,000).
    int sqlite_wal_autocheckpoint = 0;
    bool sqlite_cache_set = false;  ///< the connection string set cache_mb= (open_store's defaults yield)
    /// SQLite memory-mapped I/O of the main file, MiB; 0: off (the default). SQLite caps it
    /// (2 GiB in Debian's build). Off by default because SQLite unmaps the whole mapping at the
    /// start of any transaction that follows another connection's commit: under API writes every
    /// worker paid an munmap and a page fault per page touched again, and writes ran at half
    /// the rate (doc/benchmarks.md, "Memory-mapped reads off").
    int sqlite_mmap_mb = 0;
    std::string sqlite_file;       ///< SQLite: the main file as given (db=)
    bool sqlite_readonly = false;  ///< SOCI's readonly option: no snapshots file (searches fail)
};

/// SQLite: the file of the search snapshots, attached as `snap` beside the main file
/// (FILE-snapshots; ":memory:" for an in-memory main database).
std::string sqlite_snapshots_file(const DbTarget& t);

/// Parses "sqlite3://db=/p timeout=5", "sqlite://...", a plain file path, "mysql://db=x user=y",
/// "postgresql://dbname=x". `timeout=` is in seconds. Throws std::invalid_argument when malformed.
DbTarget parse_connection_string(const std::string& conn);

class Dialect {
public:
    virtual ~Dialect() = default;
    /// The directory under sql/ and EmbeddedMigration::backend ("sqlite", "mysql", "postgresql").
    virtual const char* name() const = 0;
    virtual const soci::backend_factory& factory() const = 0;
    /// Statements run on every new or reconnected session (PRAGMAs, SET ...).
    virtual std::vector<std::string> session_setup(const DbTarget& t) const = 0;
    /// Statements limiting how long one statement may run or wait for a lock (0: no limit);
    /// empty where the backend has no such setting (SQLite's busy timeout is in session_setup).
    virtual std::vector<std::string> wait_limits(int ms) const;
    /// Start a write transaction (run in order).
    virtual std::vector<std::string> begin_write() const = 0;
    /// Starts a read-only transaction whose reads all see one committed state of the database
    /// (a ReadScope on the server backends; SQLite's is SqliteIndex's own BEGIN).
    virtual std::vector<std::string> begin_read_view() const { return {}; }
    /// Locks one user's row (`:u`) so that user's writers are serialised; returns the id.
    virtual std::string lock_user() const = 0;
    /// True when INSERT ... RETURNING id yields the new id; otherwise session::get_last_insert_id.
    virtual bool insert_returns_id() const = 0;
    /// `(col, id) < (:k, :kid)` in a form this backend's planner turns into an index range.
    virtual std::string keyset_before(const std::string& col, const std::string& id) const;
    /// Row-limit clause with the placeholder `:lim`.
    virtual std::string limit_clause() const;
    /// An inner join operator that keeps the written table order (left table outer), for a
    /// join whose best order the planner cannot see from its statistics.
    virtual std::string ordered_join() const { return "JOIN"; }
    /// Tail of `INSERT INTO term_df (user_id, term, df) VALUES ...` that adds `df` to the row
    /// of an existing (user_id, term) instead of failing.
    virtual std::string df_upsert() const {
        return " ON CONFLICT (user_id, term) DO UPDATE SET df = term_df.df + excluded.df";
    }
    /// Tail of a multi-row `INSERT INTO table (...) VALUES ...` that adds the new row's `column`
    /// to the row already holding its `key` (the primary key's columns) instead of failing.
    virtual std::string upsert_add(const std::string& table, const std::string& key,
                                   const std::string& column) const {
        return " ON CONFLICT (" + key + ") DO UPDATE SET " + column + " = " + table + "." +
               column + " + excluded." + column;
    }
    /// An integer expression (say a SUM, DECIMAL on MariaDB, NUMERIC on PostgreSQL) as a 64-bit
    /// integer column.
    virtual std::string as_bigint(const std::string& expr) const {
        return "CAST(" + expr + " AS BIGINT)";
    }
    /// COUNT(*) as a 64-bit integer column, so static binding to long long is exact.
    virtual std::string count_star() const = 0;
    /// A query with parameter `:name` returning the number of tables of that name (0 or 1).
    virtual std::string table_exists() const = 0;
    /// A hint after a table name in FROM that makes the planner read that index (MariaDB:
    /// FORCE INDEX, SQLite: INDEXED BY), or empty.
    virtual std::string force_index(const std::string& index) const { return ""; }
    /// True when postings_at should seek its listed keys from a VALUES list through a LATERAL
    /// subquery rather than filter with IN lists: PostgreSQL's generic plan for the IN form (or
    /// a plain join), built without the term's real size, reads the term's whole range instead.
    virtual bool joins_key_lists() const { return false; }
    /// A binary value (a segment's blobs) as the parameter text the backend stores raw, and
    /// a fetched column back to the bytes (false: not this dialect's form). SOCI exchanges
    /// std::string as text: SQLite and MariaDB keep every byte; PostgreSQL's BYTEA needs its
    /// hex form both ways.
    virtual std::string blob_param(std::string_view raw) const { return std::string(raw); }
    virtual bool blob_result(std::string& /*in_out*/) const { return true; }
    /// The SQL expression storing the blob parameter `param` (":data") as binary: SQLite would
    /// keep SOCI's text as TEXT, which other tools read only up to its first NUL byte.
    virtual std::string blob_value(const std::string& param) const { return param; }
    /// Deletes at most `:lim` rows of the servers' snapshots table with expires_us <= `:now`,
    /// oldest first (SQLite keeps compact rows of its own: SociStore::purge_snapshots).
    virtual std::string delete_expired_snapshots() const;
    /// The environmental fault a database error reports (by the backend's native code), or
    /// none: the error is the program's or the schema's (a 500), or a constraint violation.
    virtual std::optional<StoreFault> fault_of(const soci::soci_error& e) const = 0;
    /// Error text without bound values or row data, fit for the log.
    virtual std::string describe(const soci::soci_error& e) const = 0;
};

std::unique_ptr<Dialect> make_dialect(Backend b);

}  // namespace notesd
