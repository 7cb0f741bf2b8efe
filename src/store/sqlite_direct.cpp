#include "store/sqlite_direct.hpp"

#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>  // declares sqlite3.h in namespace sqlite_api

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <cstring>
#include <typeinfo>

#include "store/fault.hpp"


namespace notesd::detail {
namespace lite = sqlite_api;

namespace {

lite::sqlite3* connection(soci::session& s) {
    if (!is_sqlite_session(s)) throw std::logic_error("SQLite API used on a session that is not SQLite");
    return static_cast<soci::sqlite3_session_backend*>(s.get_backend())->conn_;
}

int busy_wait(void* ctx, int retries) {
    const auto* t = static_cast<const SqliteTuning*>(ctx);
    const long long waited_us = retries < 20 ? 50LL * retries : 1000 + 500LL * (retries - 20);
    if (waited_us >= 1000LL * t->busy_timeout_ms) return 0;  // SQLITE_BUSY to the caller
    usleep(retries < 20 ? 50 : 500);
    return 1;
}

int record_wal_size(void* ctx, lite::sqlite3*, const char* db_name, int pages) {
    auto* t = static_cast<SqliteTuning*>(ctx);
    (db_name && std::strcmp(db_name, "snap") == 0 ? t->snap_wal : t->wal).saw(pages);
    return SQLITE_OK;
}

// Passive checkpoint of one attached file once it is due. Frames a reader still holds wait
// for the next attempt, min_pages frames later: a busy or partial checkpoint is not retried at
// once, which would cost a WAL sync per commit while the reader stays.
//
// SQLite starts the WAL over only when a write begins with every frame copied back, which
// steady writes from several workers never allow: the WAL had grown by every frame written
// (1.1 GB in a 12 s run of creates), and with it every page look-up's walk of the WAL's index.
// So when the WAL holds kRestartFactor times min_pages frames, a RESTART checkpoint follows
// the passive one: it takes the write lock, copies the few frames written meanwhile, and waits
// for readers to leave the WAL, so the next write starts it over. Both waits are bounded by
// kRestartWaitMs; when that runs out, the next due checkpoint tries again.
constexpr int kRestartFactor = 4;
constexpr int kRestartWaitMs = 20;

void checkpoint_if_grown(lite::sqlite3* db, const char* name, SqliteTuning& t, SqliteTuning::WalGrowth& g,
                         int min_pages) {
    if (g.unchecked < min_pages) return;
    g.unchecked = 0;
    int log = 0, done = 0;
    if (lite::sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, &log, &done) != SQLITE_OK ||
        log < kRestartFactor * min_pages)
        return;
    const int timeout = t.busy_timeout_ms;
    t.busy_timeout_ms = std::min(timeout, kRestartWaitMs);  // busy_wait reads it
    lite::sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_RESTART, nullptr, nullptr);
    t.busy_timeout_ms = timeout;
}

}  // namespace

void tune_sqlite_session(soci::session& s, SqliteTuning& t) {
    lite::sqlite3* db = connection(s);
    lite::sqlite3_busy_handler(db, busy_wait, &t);
    if (t.defer_checkpoints) lite::sqlite3_wal_hook(db, record_wal_size, &t);  // replaces auto
    t.wal = t.snap_wal = SqliteTuning::WalGrowth{};
}

SqliteTuning::~SqliteTuning() {
    if (wal_fd >= 0) ::close(wal_fd);
}

void sync_wal(SqliteTuning& t) {
    if (!t.sync_after_commit) return;
    struct stat path_st {}, fd_st {};
    if (t.wal_fd >= 0 && (::stat(t.wal_path.c_str(), &path_st) != 0 || ::fstat(t.wal_fd, &fd_st) != 0 ||
                          path_st.st_ino != fd_st.st_ino || path_st.st_dev != fd_st.st_dev)) {
        ::close(t.wal_fd);
        t.wal_fd = -1;
    }
    if (t.wal_fd < 0) t.wal_fd = ::open(t.wal_path.c_str(), O_RDONLY | O_CLOEXEC);
    const int err = t.wal_fd < 0 ? errno : ::fdatasync(t.wal_fd) == 0 ? 0 : errno;
    if (err == 0) return;
    const StoreFault f = err == ENOSPC || err == EDQUOT ? StoreFault::DiskFull : StoreFault::IoError;
    throw StoreUnavailable(f, std::string(fault_name(f)) + " during the WAL sync after a commit (" +
                                  std::strerror(err) + ")");
}

void release_free_pages(soci::session& s) {
    char* err = nullptr;
    const int rc = lite::sqlite3_exec(connection(s), "PRAGMA main.incremental_vacuum", nullptr, nullptr, &err);
    const std::string msg = err ? err : "";
    lite::sqlite3_free(err);
    if (rc != SQLITE_OK) throw soci::soci_error("incremental_vacuum: " + msg);
}

void checkpoint_if_due(soci::session& s, SqliteTuning& t, int min_pages) {
    if (!t.defer_checkpoints) return;  // only SQLite defers
    checkpoint_if_grown(connection(s), "main", t, t.wal, min_pages);
    checkpoint_if_grown(connection(s), "snap", t, t.snap_wal, min_pages);
}

bool read_blob(soci::session& s, const char* table, const char* column, long long rowid, BlobBuffer& out) {
    lite::sqlite3* db = connection(s);
    lite::sqlite3_blob* blob = nullptr;
    int rc = lite::sqlite3_blob_open(db, "main", table, column, rowid, 0, &blob);
    if (rc != SQLITE_OK) {
        lite::sqlite3_blob_close(blob);  // a no-op on nullptr
        // "no such rowid: N": the row is gone, which the caller expects to happen
        if (rc == SQLITE_ERROR && std::strncmp(lite::sqlite3_errmsg(db), "no such rowid", 13) == 0) return false;
        throw soci::sqlite3_soci_error(std::string("sqlite3_blob_open: ") + lite::sqlite3_errmsg(db), rc);
    }
    out.resize(static_cast<std::size_t>(lite::sqlite3_blob_bytes(blob)));
    rc = out.empty() ? SQLITE_OK : lite::sqlite3_blob_read(blob, out.data(), static_cast<int>(out.size()), 0);
    lite::sqlite3_blob_close(blob);
    // with the result code, as SqliteStmt's errors, so that the store classifies the fault
    if (rc != SQLITE_OK) throw soci::sqlite3_soci_error(std::string("sqlite3_blob_read: ") + lite::sqlite3_errstr(rc), rc);
    return true;
}

bool is_sqlite_session(soci::session& s) {
    // libsoci_sqlite3 exports no typeinfo (see end_read): compare the dynamic type's name.
    soci::details::session_backend* b = s.get_backend();
    return b && std::strcmp(typeid(*b).name(), "N4soci23sqlite3_session_backendE") == 0;
}

SqliteStmt::SqliteStmt(soci::session& s, const std::string& sql) {
    lite::sqlite3* db = connection(s);
    db_ = db;
    lite::sqlite3_stmt* st = nullptr;
    const int rc = lite::sqlite3_prepare_v3(db, sql.c_str(), static_cast<int>(sql.size()),
                                            SQLITE_PREPARE_PERSISTENT, &st, nullptr);
    if (rc != SQLITE_OK) fail(rc);
    st_ = st;
}

SqliteStmt::~SqliteStmt() { lite::sqlite3_finalize(static_cast<lite::sqlite3_stmt*>(st_)); }

SqliteStmt& SqliteStmt::bind(int i, long long v) {
    if (const int rc = lite::sqlite3_bind_int64(static_cast<lite::sqlite3_stmt*>(st_), i, v); rc != SQLITE_OK)
        fail(rc);
    return *this;
}

SqliteStmt& SqliteStmt::bind(int i, const std::string& text) {
    if (const int rc = lite::sqlite3_bind_text(static_cast<lite::sqlite3_stmt*>(st_), i, text.data(),
                                               static_cast<int>(text.size()), SQLITE_STATIC);
        rc != SQLITE_OK)
        fail(rc);
    return *this;
}

SqliteStmt& SqliteStmt::bind_blob(int i, const std::string& data) {
    if (const int rc = lite::sqlite3_bind_blob(static_cast<lite::sqlite3_stmt*>(st_), i, data.data(),
                                               static_cast<int>(data.size()), SQLITE_STATIC);
        rc != SQLITE_OK)
        fail(rc);
    return *this;
}

bool SqliteStmt::step() {
    auto* st = static_cast<lite::sqlite3_stmt*>(st_);
    const int rc = lite::sqlite3_step(st);
    if (rc == SQLITE_ROW) return true;
    lite::sqlite3_reset(st);
    if (rc != SQLITE_DONE) fail(rc);
    return false;
}

void SqliteStmt::reset() { lite::sqlite3_reset(static_cast<lite::sqlite3_stmt*>(st_)); }

void SqliteStmt::run() {
    while (step()) {
    }
}

int SqliteStmt::changes() const { return lite::sqlite3_changes(static_cast<lite::sqlite3*>(db_)); }

long long SqliteStmt::i64(int c) const {
    return lite::sqlite3_column_int64(static_cast<lite::sqlite3_stmt*>(st_), c);
}

std::string_view SqliteStmt::text(int c) const {
    auto* st = static_cast<lite::sqlite3_stmt*>(st_);
    const auto* p = reinterpret_cast<const char*>(lite::sqlite3_column_text(st, c));
    return p ? std::string_view(p, static_cast<std::size_t>(lite::sqlite3_column_bytes(st, c)))
             : std::string_view();
}

std::string_view SqliteStmt::blob(int c) const {
    auto* st = static_cast<lite::sqlite3_stmt*>(st_);
    const void* p = lite::sqlite3_column_blob(st, c);
    return p ? std::string_view(static_cast<const char*>(p),
                                static_cast<std::size_t>(lite::sqlite3_column_bytes(st, c)))
             : std::string_view();
}

void SqliteStmt::fail(int rc) const {
    const char* msg = lite::sqlite3_errmsg(static_cast<lite::sqlite3*>(db_));
    throw soci::sqlite3_soci_error(std::string("sqlite3: ") + (msg ? msg : "error"), rc);
}


}  // namespace notesd::detail
