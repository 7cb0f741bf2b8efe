// The `sqlite_wal_writes` suite: the VFS that gathers a WAL file's writes
// (store/sqlite_wal_writes.hpp) writes a commit's frames in a few calls, and loses nothing a
// commit promised: another connection reads every commit at once, a process killed right after
// COMMIT or in the middle of a transaction that spilled pages leaves the file consistent with
// every commit in it.
#include <boost/test/unit_test.hpp>

#include <soci/sqlite3/soci-sqlite3.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "store/dialect.hpp"
#include "store/sqlite_wal_writes.hpp"

namespace lite = sqlite_api;

namespace {

struct TempDb {
    std::string path;
    TempDb() {
        char dir[] = "/tmp/notesd-walw-XXXXXX";
        BOOST_REQUIRE(mkdtemp(dir) != nullptr);
        path = std::string(dir) + "/t.db";
    }
    ~TempDb() {
        for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
        std::remove(path.substr(0, path.size() - 5).c_str());
    }
};

lite::sqlite3* open_db(const std::string& path) {
    // as SociStore does: the dialect (SQLite's threading mode) before the VFS initialises SQLite
    notesd::make_dialect(notesd::Backend::Sqlite);
    notesd::detail::install_wal_write_gathering();
    lite::sqlite3* db = nullptr;
    BOOST_REQUIRE_EQUAL(lite::sqlite3_open(path.c_str(), &db), SQLITE_OK);
    return db;
}

void exec(lite::sqlite3* db, const std::string& sql) {
    char* err = nullptr;
    const int rc = lite::sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    const std::string msg = err ? err : "";
    lite::sqlite3_free(err);
    BOOST_REQUIRE_MESSAGE(rc == SQLITE_OK, sql << ": " << msg);
}

long long scalar(lite::sqlite3* db, const std::string& sql) {
    lite::sqlite3_stmt* st = nullptr;
    BOOST_REQUIRE_EQUAL(lite::sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK);
    BOOST_REQUIRE_EQUAL(lite::sqlite3_step(st), SQLITE_ROW);
    const long long v = lite::sqlite3_column_int64(st, 0);
    lite::sqlite3_finalize(st);
    return v;
}

std::string text(lite::sqlite3* db, const std::string& sql) {
    lite::sqlite3_stmt* st = nullptr;
    BOOST_REQUIRE_EQUAL(lite::sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK);
    BOOST_REQUIRE_EQUAL(lite::sqlite3_step(st), SQLITE_ROW);
    const std::string v = reinterpret_cast<const char*>(lite::sqlite3_column_text(st, 0));
    lite::sqlite3_finalize(st);
    return v;
}

// `rows` rows of about 3 KB: roughly that many 4 KiB pages
void insert_rows(lite::sqlite3* db, int from, int rows) {
    exec(db, "INSERT INTO t (id, v) WITH RECURSIVE n(i) AS (SELECT " + std::to_string(from) +
                 " UNION ALL SELECT i + 1 FROM n WHERE i < " + std::to_string(from + rows - 1) +
                 ") SELECT i, randomblob(3000) FROM n");
}

// A new WAL-mode file with table t of `rows` rows.
lite::sqlite3* new_wal_db(const std::string& path, int rows = 0) {
    lite::sqlite3* db = open_db(path);
    exec(db, "PRAGMA page_size=4096");
    exec(db, "PRAGMA journal_mode=WAL");
    exec(db, "PRAGMA synchronous=NORMAL");
    exec(db, "PRAGMA wal_autocheckpoint=0");  // the frames stay in the WAL for the readers
    exec(db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)");
    if (rows > 0) insert_rows(db, 1, rows);
    return db;
}

// A connection as notesd's: synchronous=NORMAL (notesd syncs the WAL itself after COMMIT, so
// no SQLite sync flushes the gathered frames), no automatic checkpoint; a page cache of
// `cache_pages` pages when not 0.
lite::sqlite3* open_as_notesd(const std::string& path, int cache_pages = 0) {
    lite::sqlite3* db = open_db(path);
    exec(db, "PRAGMA wal_autocheckpoint=0");
    exec(db, "PRAGMA synchronous=NORMAL");
    if (cache_pages > 0) exec(db, "PRAGMA cache_size=" + std::to_string(cache_pages));
    return db;
}

// The file, opened anew, has `rows` rows matching `where` and passes integrity_check.
void expect_rows(const std::string& path, long long rows, const std::string& where) {
    lite::sqlite3* db = open_db(path);
    BOOST_CHECK_EQUAL(scalar(db, "SELECT count(*) FROM t WHERE " + where), rows);
    BOOST_CHECK_EQUAL(text(db, "PRAGMA integrity_check"), "ok");
    lite::sqlite3_close(db);
}

// Runs `body` in a child process that is then killed with SIGKILL (it never closes anything).
template <typename Body>
void in_killed_child(Body body) {
    const pid_t pid = fork();
    BOOST_REQUIRE(pid >= 0);
    if (pid == 0) {
        body();
        raise(SIGKILL);
        _exit(3);
    }
    int status = 0;
    BOOST_REQUIRE_EQUAL(waitpid(pid, &status, 0), pid);
    BOOST_REQUIRE_MESSAGE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the child died otherwise");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sqlite_wal_writes)

// 400 pages in one commit: about 800 pwrite calls without gathering.
BOOST_AUTO_TEST_CASE(a_commit_is_written_in_a_few_calls_and_read_by_another_connection) {
    TempDb tmp;
    lite::sqlite3* db = new_wal_db(tmp.path);
    lite::sqlite3* reader = open_db(tmp.path);
    BOOST_CHECK_EQUAL(scalar(reader, "SELECT count(*) FROM t"), 0);
    const unsigned long long before = notesd::detail::wal_write_calls();
    const unsigned long long late = notesd::detail::wal_late_flushes();
    exec(db, "BEGIN");
    insert_rows(db, 1, 400);
    exec(db, "COMMIT");
    const unsigned long long calls = notesd::detail::wal_write_calls() - before;
    BOOST_TEST_MESSAGE("400-row commit: " << calls << " WAL writes");
    BOOST_CHECK_GT(calls, 0u);
    BOOST_CHECK_LT(calls, 40u);
    BOOST_CHECK_EQUAL(scalar(reader, "SELECT count(*) FROM t"), 400);
    BOOST_CHECK_EQUAL(scalar(reader, "SELECT sum(length(v)) FROM t"), 400 * 3000);
    // a small commit after it, then one overwriting pages the WAL already holds
    exec(db, "INSERT INTO t (id, v) VALUES (1000, x'01')");
    BOOST_CHECK_EQUAL(scalar(reader, "SELECT count(*) FROM t"), 401);
    exec(db, "BEGIN");
    exec(db, "UPDATE t SET v = randomblob(2000) WHERE id % 3 = 0");
    exec(db, "DELETE FROM t WHERE id % 7 = 0");
    exec(db, "COMMIT");
    BOOST_CHECK_EQUAL(scalar(reader, "SELECT count(*) FROM t"), 401 - 57);
    BOOST_CHECK_EQUAL(text(reader, "PRAGMA integrity_check"), "ok");
    // every commit's frames went with its own writes, none with the barrier's safety net
    BOOST_CHECK_EQUAL(notesd::detail::wal_late_flushes(), late);
    exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    BOOST_CHECK_EQUAL(scalar(reader, "SELECT count(*) FROM t"), 401 - 57);
    lite::sqlite3_close(reader);
    lite::sqlite3_close(db);
}

// The process dies right after COMMIT returns: the commit is in the file (a gathering that held
// the commit frame's page until later would lose it).
BOOST_AUTO_TEST_CASE(a_commit_survives_its_process_killed_right_after_it) {
    TempDb tmp;
    lite::sqlite3_close(new_wal_db(tmp.path));
    in_killed_child([&] {
        lite::sqlite3* db = open_as_notesd(tmp.path);
        exec(db, "BEGIN");
        insert_rows(db, 1, 300);
        exec(db, "COMMIT");  // nothing after it: a later read of the WAL would flush it too
    });
    expect_rows(tmp.path, 300, "1");
}

// A transaction larger than the page cache spills frames to the WAL before its commit; killed
// then, nothing of it is visible and the commits before it all are.
BOOST_AUTO_TEST_CASE(a_spilling_transaction_killed_before_its_commit_leaves_nothing) {
    TempDb tmp;
    lite::sqlite3_close(new_wal_db(tmp.path, 50));
    in_killed_child([&] {
        lite::sqlite3* db = open_as_notesd(tmp.path, 20);  // the transaction spills
        exec(db, "BEGIN");
        insert_rows(db, 100, 3000);  // about 12 MB: more than kMaxGatheredBytes too
        exec(db, "UPDATE t SET v = x'03' WHERE id <= 10");
    });
    lite::sqlite3* db = open_db(tmp.path);
    BOOST_CHECK_EQUAL(scalar(db, "SELECT count(*) FROM t"), 50);
    BOOST_CHECK_EQUAL(scalar(db, "SELECT count(*) FROM t WHERE length(v) = 3000"), 50);
    BOOST_CHECK_EQUAL(text(db, "PRAGMA integrity_check"), "ok");
    // and the file takes new commits after the dead transaction's frames
    exec(db, "PRAGMA cache_size=20");
    exec(db, "BEGIN");
    insert_rows(db, 100, 1000);
    exec(db, "COMMIT");
    lite::sqlite3* reader = open_db(tmp.path);
    BOOST_CHECK_EQUAL(scalar(reader, "SELECT count(*) FROM t"), 1050);
    BOOST_CHECK_EQUAL(text(reader, "PRAGMA integrity_check"), "ok");
    lite::sqlite3_close(reader);
    lite::sqlite3_close(db);
}

// A committing transaction that rewrites pages it spilled earlier rewrites their frames in
// place and then every frame header from the first of them on (SQLite's walRewriteChecksums),
// the commit frame's last, with nothing after it: that header too is in the file when COMMIT
// returns, or recovery finds a bad checksum and drops the commit.
BOOST_AUTO_TEST_CASE(a_commit_that_rewrote_spilled_frames_survives_its_process_killed) {
    TempDb tmp;
    lite::sqlite3_close(new_wal_db(tmp.path));
    in_killed_child([&] {
        lite::sqlite3* db = open_as_notesd(tmp.path, 20);
        exec(db, "BEGIN");
        insert_rows(db, 1, 300);                            // spills
        exec(db, "UPDATE t SET v = x'04' WHERE id <= 100");  // pages it spilled, again
        exec(db, "COMMIT");
    });
    expect_rows(tmp.path, 300, "1");
    expect_rows(tmp.path, 100, "v = x'04'");
    // the rewritten commit header went with its write, not with the barrier's safety net
    lite::sqlite3* db = open_as_notesd(tmp.path, 20);
    const unsigned long long late = notesd::detail::wal_late_flushes();
    exec(db, "BEGIN");
    insert_rows(db, 1000, 300);
    exec(db, "UPDATE t SET v = x'05' WHERE id >= 1000 AND id < 1100");
    exec(db, "COMMIT");
    BOOST_CHECK_EQUAL(notesd::detail::wal_late_flushes(), late);
    lite::sqlite3_close(db);
    expect_rows(tmp.path, 100, "v = x'05'");
}

// A transaction that spilled frames and rolled back leaves nothing to be written later: another
// connection then appends its commit at the same offsets of the WAL, and the first
// connection's next reads and its close must not write the dead frames over it.
BOOST_AUTO_TEST_CASE(a_rolled_back_spill_is_not_written_over_a_later_commit) {
    TempDb tmp;
    lite::sqlite3* a = new_wal_db(tmp.path);
    insert_rows(a, 1, 10);
    lite::sqlite3* b = open_db(tmp.path);
    exec(b, "PRAGMA synchronous=NORMAL");
    exec(a, "PRAGMA synchronous=NORMAL");
    exec(a, "PRAGMA cache_size=20");
    // an empty WAL: the rollback finds page 1 in the file, not in the WAL, and reads no frame
    exec(a, "PRAGMA wal_checkpoint(TRUNCATE)");
    exec(a, "BEGIN");
    insert_rows(a, 100, 200);  // spills well under kMaxGatheredBytes
    const unsigned long long late = notesd::detail::wal_late_flushes();
    exec(a, "ROLLBACK");
    BOOST_CHECK_GT(notesd::detail::wal_late_flushes(), late);  // written as the lock went
    exec(b, "BEGIN");
    insert_rows(b, 1000, 200);
    exec(b, "COMMIT");
    BOOST_CHECK_EQUAL(scalar(a, "SELECT count(*) FROM t"), 210);
    lite::sqlite3_close(a);
    BOOST_CHECK_EQUAL(scalar(b, "SELECT count(*) FROM t"), 210);
    BOOST_CHECK_EQUAL(scalar(b, "SELECT count(*) FROM t WHERE id >= 1000 AND length(v) = 3000"), 200);
    BOOST_CHECK_EQUAL(text(b, "PRAGMA integrity_check"), "ok");
    exec(b, "PRAGMA wal_checkpoint(TRUNCATE)");
    BOOST_CHECK_EQUAL(text(b, "PRAGMA integrity_check"), "ok");
    BOOST_CHECK_EQUAL(scalar(b, "SELECT count(*) FROM t"), 210);
    lite::sqlite3_close(b);
}

namespace {
bool g_fail_pwrite = false;
lite::sqlite3_syscall_ptr g_real_pwrite = nullptr;
ssize_t failing_pwrite(int fd, const void* buf, size_t n, off_t at) {
    if (g_fail_pwrite) {
        errno = ENOSPC;
        return -1;
    }
    return reinterpret_cast<ssize_t (*)(int, const void*, size_t, off_t)>(g_real_pwrite)(fd, buf, n, at);
}
}  // namespace

// The disk fills while a transaction's spilled frames are gathered: the write of them fails
// inside a read of the WAL, which SQLite may take for a failed statement and go on. No COMMIT
// may then succeed with frames missing from the file: it fails, or (the failure came before
// anything was lost) the file holds everything it committed.
BOOST_AUTO_TEST_CASE(a_failed_write_of_gathered_frames_fails_the_commit) {
    TempDb tmp;
    lite::sqlite3_close(new_wal_db(tmp.path, 50));
    lite::sqlite3* db = open_as_notesd(tmp.path, 20);
    lite::sqlite3_vfs* vfs = lite::sqlite3_vfs_find(nullptr);
    const char* name = vfs->xGetSystemCall(vfs, "pwrite64") ? "pwrite64" : "pwrite";
    g_real_pwrite = vfs->xGetSystemCall(vfs, name);
    BOOST_REQUIRE(g_real_pwrite != nullptr);
    BOOST_REQUIRE_EQUAL(
        vfs->xSetSystemCall(vfs, name, reinterpret_cast<lite::sqlite3_syscall_ptr>(failing_pwrite)),
        SQLITE_OK);
    exec(db, "BEGIN");
    insert_rows(db, 100, 200);  // spills, gathered
    g_fail_pwrite = true;
    // a statement with a statement journal: SQLite rolls back only it on SQLITE_FULL
    const int read_rc = lite::sqlite3_exec(db, "UPDATE t SET v = randomblob(3000) WHERE id >= 100",
                                           nullptr, nullptr, nullptr);
    g_fail_pwrite = false;
    const int commit_rc = lite::sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    BOOST_TEST_MESSAGE("read " << read_rc << ", commit " << commit_rc);
    if (commit_rc != SQLITE_OK) lite::sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    vfs->xSetSystemCall(vfs, name, g_real_pwrite);
    lite::sqlite3_close(db);
    expect_rows(tmp.path, commit_rc == SQLITE_OK ? 250 : 50, "1");
    expect_rows(tmp.path, commit_rc == SQLITE_OK ? 250 : 50, "length(v) = 3000");
}

BOOST_AUTO_TEST_SUITE_END()
