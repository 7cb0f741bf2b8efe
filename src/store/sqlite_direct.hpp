// What SociStore does through SQLite's own API, on the connection of a SOCI session.
//
// SqliteStmt: statements of the search's hot path (packed postings, key lookups, result pages,
// stored terms) stepped without SOCI, whose per-row exchange of typed values costs about as much
// as SQLite's own decoding of the row. A statement is finalized with the
// statement cache that owns it (SociStore drops that cache on every database error, before any
// reconnect).
//
// SqliteTuning: how the connection waits for a lock and when it checkpoints (see below).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/huge_pages.hpp"
#include "base/model.hpp"

namespace soci {
class session;
}

namespace notesd::detail {

/// One statement prepared on the session's SQLite connection (is_sqlite_session), with
/// positional parameters (?1, ?2...). Errors throw soci::sqlite3_soci_error.
class SqliteStmt {
public:
    SqliteStmt(soci::session& s, const std::string& sql);
    ~SqliteStmt();
    SqliteStmt(const SqliteStmt&) = delete;
    SqliteStmt& operator=(const SqliteStmt&) = delete;

    SqliteStmt& bind(int i, long long v);
    /// Text and blobs are not copied: they must stay unchanged until the statement is reset.
    SqliteStmt& bind(int i, const std::string& text);
    SqliteStmt& bind_blob(int i, const std::string& data);
    /// true: a row is ready; false: no more rows (the statement is reset).
    bool step();
    void reset();
    /// Steps through every row (an INSERT, UPDATE or DELETE).
    void run();
    long long i64(int c) const;
    /// Rows the connection's last INSERT, UPDATE or DELETE changed.
    int changes() const;
    std::string_view text(int c) const;  ///< valid until the next step or reset
    std::string_view blob(int c) const;

private:
    [[noreturn]] void fail(int rc) const;
    void* db_ = nullptr;  // sqlite3*
    void* st_ = nullptr;  // sqlite3_stmt*
};

/// The statement held in `st`, prepared on its first use. `sql` is its text, or a function
/// returning the text (built only then).
template <class Sql>
SqliteStmt& prepared_once(soci::session& s, std::unique_ptr<SqliteStmt>& st, const Sql& sql) {
    if (!st) {
        if constexpr (std::is_invocable_v<const Sql&>)
            st = std::make_unique<SqliteStmt>(s, sql());
        else
            st = std::make_unique<SqliteStmt>(s, sql);
    }
    return *st;
}

/// A buffer for blobs read whole (read_blob): 2 MB pages once it is that large.
using BlobBuffer = std::vector<char, HugePageAllocator<char>>;

/// Reads column `column` of the row `rowid` of `table` (main database) into `out` through
/// SQLite's incremental blob I/O: the pages go straight into `out`, without the copy SQLite
/// assembles for sqlite3_column_blob. False when there is no such row.
bool read_blob(soci::session& s, const char* table, const char* column, long long rowid, BlobBuffer& out);

/// Whether the session's backend is SOCI's SQLite one.
bool is_sqlite_session(soci::session& s);

/// Lock waits and checkpoints of one SQLite connection; must outlive the connection's use.
///  - Busy: retries every 50 us for the first millisecond, then every 500 us, until
///    busy_timeout_ms. SQLite's own handler sleeps 1, 2, 5, 10... ms, which turns the short
///    waits of two workers writing a snapshot at the same moment into milliseconds.
///  - defer_checkpoints: the connection stops checkpointing the WAL when it commits (SQLite
///    does so every 1,000 pages, in whichever request commits then, fsync included) and
///    records how much the WAL grew instead; checkpoint_if_due, called after a response is
///    sent, does the work once min_pages new frames have been written since its last attempt.
///    Not by the WAL's size: while writers keep readers on it, the WAL is not restarted and
///    stays above any threshold, and each commit's checkpoint (a WAL sync, an index walk)
///    had taken a fifth of a worker's time under writes.
///  - sync_after_commit: synchronous=FULL's promise (a commit is on disk before the caller goes
///    on) with the sync moved out of the write lock: the connection runs NORMAL, which writes
///    the WAL at commit but syncs it only at checkpoints, and sync_wal fdatasyncs the WAL file
///    after each write transaction's COMMIT. A commit's frames are in the file when COMMIT
///    returns, so the sync covers them; writers no longer queue behind each other's syncs, and
///    syncs running at the same time share the file system's journal commit.
struct SqliteTuning {
    int busy_timeout_ms = 5000;
    bool sync_after_commit = false;
    std::string wal_path;  ///< the main file's WAL (absolute)
    int wal_fd = -1;       ///< open on wal_path's file while it is the same file
    SqliteTuning() = default;
    ~SqliteTuning();
    SqliteTuning(const SqliteTuning&) = delete;
    SqliteTuning& operator=(const SqliteTuning&) = delete;
    bool defer_checkpoints = false;
    /// One file's WAL as this connection's commits saw it.
    struct WalGrowth {
        int last = 0;       ///< frames in the WAL at this connection's last commit to it
        int unchecked = 0;  ///< frames it grew by since the last checkpoint attempt
        void saw(int pages) {
            // fewer frames than last time: another connection restarted the WAL meanwhile
            unchecked += pages >= last ? pages - last : pages;
            last = pages;
        }
    };
    WalGrowth wal;       ///< the main file's
    WalGrowth snap_wal;  ///< the attached snapshots file's (`snap`)
};

/// Installs the busy handler and, with defer_checkpoints, the WAL hook (again after every
/// reconnect).
void tune_sqlite_session(soci::session& s, SqliteTuning& t);

/// With sync_after_commit: fdatasync of the WAL file (reopened when SQLite has replaced it).
/// Throws StoreUnavailable (disk_full, io_error) when the sync fails.
void sync_wal(SqliteTuning& t);

/// Gives the main file's free pages back to the file system (auto_vacuum=INCREMENTAL files; a
/// no-op otherwise). Run to completion: each step of the pragma frees one page.
void release_free_pages(soci::session& s);

/// A passive checkpoint (it waits for no one) of each file whose WAL grew by min_pages frames
/// since this connection last tried.
void checkpoint_if_due(soci::session& s, SqliteTuning& t, int min_pages);

}  // namespace notesd::detail
