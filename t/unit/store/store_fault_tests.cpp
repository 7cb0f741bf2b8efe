// More of the `store` suite, SQLite only: what the store does when the files under it fail.
// A VFS of the test's own (`vfs=notesd_fault` in the connection string) passes every call to
// SQLite's own VFS, except that the test may make the opening, reading or writing of chosen
// files fail with a given code, as the operating system would (EIO, ENOSPC, EACCES, ...). It
// leaves memory-mapped I/O out (version 2 of the file methods), so every read is a call.
#include <boost/test/unit_test.hpp>

#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>  // declares sqlite3.h in namespace sqlite_api

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "store/store.hpp"
#include "base/util.hpp"
#include "store_fixture.hpp"

using namespace notesd;
namespace lite = sqlite_api;

namespace {

/// What fails, for the files whose name contains `only` and not `except`; 0: nothing.
struct Injected {
    std::string only, except;
    int open_rc = 0;          ///< xOpen's result
    bool open_readonly = false;  ///< opened read-only instead of read-write (a mode 0444 file)
    int read_rc = 0, write_rc = 0;
    bool applies(const char* name) const {
        if (!name) return false;
        const std::string n(name);
        return n.find(only) != std::string::npos &&
               (except.empty() || n.find(except) == std::string::npos);
    }
};
Injected g_inject;
lite::sqlite3_vfs* g_real = nullptr;

struct ShimFile {
    lite::sqlite3_file base;  // pMethods: ours
    lite::sqlite3_file* real;
    bool faulty;              // the injection applies to this file
};

lite::sqlite3_file* real(lite::sqlite3_file* f) { return reinterpret_cast<ShimFile*>(f)->real; }
bool faulty(lite::sqlite3_file* f) { return reinterpret_cast<ShimFile*>(f)->faulty; }

int shim_close(lite::sqlite3_file* f) { return real(f)->pMethods->xClose(real(f)); }
int shim_read(lite::sqlite3_file* f, void* p, int n, lite::sqlite3_int64 at) {
    if (faulty(f) && g_inject.read_rc) return g_inject.read_rc;
    return real(f)->pMethods->xRead(real(f), p, n, at);
}
int shim_write(lite::sqlite3_file* f, const void* p, int n, lite::sqlite3_int64 at) {
    if (faulty(f) && g_inject.write_rc) return g_inject.write_rc;
    return real(f)->pMethods->xWrite(real(f), p, n, at);
}
int shim_truncate(lite::sqlite3_file* f, lite::sqlite3_int64 n) {
    return real(f)->pMethods->xTruncate(real(f), n);
}
int shim_sync(lite::sqlite3_file* f, int flags) { return real(f)->pMethods->xSync(real(f), flags); }
int shim_size(lite::sqlite3_file* f, lite::sqlite3_int64* n) {
    return real(f)->pMethods->xFileSize(real(f), n);
}
int shim_lock(lite::sqlite3_file* f, int l) { return real(f)->pMethods->xLock(real(f), l); }
int shim_unlock(lite::sqlite3_file* f, int l) { return real(f)->pMethods->xUnlock(real(f), l); }
int shim_reserved(lite::sqlite3_file* f, int* out) {
    return real(f)->pMethods->xCheckReservedLock(real(f), out);
}
int shim_control(lite::sqlite3_file* f, int op, void* arg) {
    return real(f)->pMethods->xFileControl(real(f), op, arg);
}
int shim_sector(lite::sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); }
int shim_device(lite::sqlite3_file* f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); }
int shim_shm_map(lite::sqlite3_file* f, int pg, int size, int extend, void volatile** p) {
    return real(f)->pMethods->xShmMap(real(f), pg, size, extend, p);
}
int shim_shm_lock(lite::sqlite3_file* f, int at, int n, int flags) {
    return real(f)->pMethods->xShmLock(real(f), at, n, flags);
}
void shim_shm_barrier(lite::sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); }
int shim_shm_unmap(lite::sqlite3_file* f, int del) {
    return real(f)->pMethods->xShmUnmap(real(f), del);
}

const lite::sqlite3_io_methods kShimMethods = {
    2, shim_close, shim_read, shim_write, shim_truncate, shim_sync, shim_size, shim_lock,
    shim_unlock, shim_reserved, shim_control, shim_sector, shim_device, shim_shm_map,
    shim_shm_lock, shim_shm_barrier, shim_shm_unmap, nullptr, nullptr};

int shim_open(lite::sqlite3_vfs*, const char* name, lite::sqlite3_file* f, int flags,
              int* out_flags) {
    auto* s = reinterpret_cast<ShimFile*>(f);
    s->base.pMethods = nullptr;
    s->faulty = g_inject.applies(name);
    if (s->faulty && g_inject.open_rc) return g_inject.open_rc;
    if (s->faulty && g_inject.open_readonly && (flags & SQLITE_OPEN_READWRITE))
        flags = (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_READONLY;
    s->real = reinterpret_cast<lite::sqlite3_file*>(s + 1);
    const int rc = g_real->xOpen(g_real, name, s->real, flags, out_flags);
    if (s->real->pMethods) s->base.pMethods = &kShimMethods;
    return rc;
}

/// Registers the VFS `notesd_fault` once (not as the default).
void register_fault_vfs() {
    static lite::sqlite3_vfs shim;
    if (g_real) return;
    g_real = lite::sqlite3_vfs_find(nullptr);
    shim = *g_real;
    shim.zName = "notesd_fault";
    shim.szOsFile = static_cast<int>(sizeof(ShimFile)) + g_real->szOsFile;
    shim.xOpen = shim_open;
    shim.pNext = nullptr;
    lite::sqlite3_vfs_register(&shim, 0);
}

struct FaultFixture : test::StoreFixture {
    FaultFixture() {
        register_fault_vfs();
        g_inject = Injected{};
        if (sqlite()) u = user("fault");
    }
    ~FaultFixture() { g_inject = Injected{}; }
    /// A store of the test's own through the VFS, with an empty page cache.
    std::unique_ptr<Store> faulty_store() { return open_store(conn + " vfs=notesd_fault"); }
    /// The main file and its WAL, not the snapshots file.
    static Injected main_files() { return Injected{"/test.db", "-snapshots"}; }
    static Injected snapshot_files() { return Injected{"/test.db-snapshots", ""}; }

    static NoteInput note(const std::string& title) { return test::plain_note(title); }
    SnapshotRecord snapshot() const {
        SnapshotRecord s;
        s.id = new_uuid();
        s.user_id = u;
        s.fingerprint = "f";
        s.created_us = 1;
        s.expires_us = 1LL << 60;
        s.note_ids = {new_uuid()};
        return s;
    }
    template <class F>
    void expect_fault(F&& call, StoreFault want, const char* what) {
        try {
            call();
            BOOST_ERROR(what << ": no error");
        } catch (const StoreUnavailable& e) {
            BOOST_CHECK_MESSAGE(e.fault() == want, what << ": " << e.what());
        }
    }
    long long u = 0;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(store)

// An I/O error reading the database: StoreUnavailable (io_error), and the same store reads
// again once the disk answers (a new connection).
BOOST_FIXTURE_TEST_CASE(sqlite_read_error_is_unavailable_then_passes, FaultFixture) {
    if (!sqlite()) return;
    store->write_batch(u, {}, {note("one")});
    auto s = faulty_store();
    g_inject = main_files();
    g_inject.read_rc = SQLITE_IOERR_READ;
    expect_fault([&] { s->list_notes(u, {}, OrderBy::UpdatedAt, std::nullopt, 5, false); },
                 StoreFault::IoError, "read error");
    g_inject = Injected{};
    BOOST_CHECK_EQUAL(s->list_notes(u, {}, OrderBy::UpdatedAt, std::nullopt, 5, false).size(), 1u);
}

// A failed write (EIO) or a full disk (ENOSPC) loses the transaction, never the data before
// it, and the next write succeeds once the disk does.
BOOST_FIXTURE_TEST_CASE(sqlite_write_error_and_full_disk_are_unavailable_then_pass, FaultFixture) {
    if (!sqlite()) return;
    auto s = faulty_store();
    BOOST_REQUIRE(s->write_batch(u, {}, {note("before")})[0] == WriteOutcome::Inserted);
    for (int rc : {SQLITE_IOERR_WRITE, SQLITE_FULL}) {
        g_inject = main_files();
        g_inject.write_rc = rc;
        expect_fault([&] { s->write_batch(u, {}, {note("lost")}); },
                     rc == SQLITE_FULL ? StoreFault::DiskFull : StoreFault::IoError, "write");
        g_inject = Injected{};
        BOOST_CHECK_EQUAL(s->count_notes(u, {}), 1);
    }
    BOOST_CHECK(s->write_batch(u, {}, {note("after")})[0] == WriteOutcome::Inserted);
    BOOST_CHECK_EQUAL(store->count_notes(u, {}), 2);
}

// An import batch whose write failed at its commit (the prebuilt segment already taken, the
// notes' terms freed with it) is written whole by the next try with the same prepared batch:
// each note indexed from its terms derived again, the index exact.
BOOST_FIXTURE_TEST_CASE(sqlite_failed_import_batch_is_indexed_whole_when_written_again, FaultFixture) {
    if (!sqlite()) return;
    auto s = faulty_store();
    std::vector<NoteInput> batch;
    for (int i = 0; i < 80; ++i) {
        NoteInput n = note("retried note " + std::to_string(i));
        n.plain_text = "common retried" + std::to_string(i);
        batch.push_back(n);
    }
    std::unique_ptr<PreparedNotes> prepared = s->prepare_batch(batch);
    g_inject = main_files();
    g_inject.write_rc = SQLITE_IOERR_WRITE;
    expect_fault([&] { s->write_prepared(u, {}, *prepared); }, StoreFault::IoError, "write");
    g_inject = Injected{};
    BOOST_CHECK_EQUAL(s->count_notes(u, {}), 0);
    const std::vector<WriteOutcome> out = s->write_prepared(u, {}, *prepared);
    BOOST_CHECK(std::count(out.begin(), out.end(), WriteOutcome::Inserted) == 80);
    BOOST_CHECK_EQUAL(s->count_notes(u, {}), 80);
    const std::vector<std::string> problems = s->check_user(u);
    BOOST_CHECK_MESSAGE(problems.empty(), (problems.empty() ? std::string() : problems.front()));
}

// A file SQLite could open read-only only (its permissions): reads work, a write is
// StoreUnavailable (read_only), and once the file is writable the store opens it afresh: a
// connection SQLite opened read-only would stay so.
BOOST_FIXTURE_TEST_CASE(sqlite_read_only_file_is_unavailable_then_reopened, FaultFixture) {
    if (!sqlite()) return;
    g_inject = main_files();
    g_inject.open_readonly = true;
    auto s = faulty_store();
    BOOST_CHECK_EQUAL(s->count_notes(u, {}), 0);
    expect_fault([&] { s->write_batch(u, {}, {note("refused")}); }, StoreFault::ReadOnly,
                 "write to a read-only file");
    g_inject = Injected{};
    BOOST_CHECK(s->write_batch(u, {}, {note("accepted")})[0] == WriteOutcome::Inserted);
}

// The snapshots file cannot be opened or written: snapshots fail (cannot_open, io_error) while
// every other read goes on, and they work again without a new store once the file does.
BOOST_FIXTURE_TEST_CASE(sqlite_snapshots_file_faults_touch_snapshots_only, FaultFixture) {
    if (!sqlite()) return;
    store->write_batch(u, {}, {note("listed")});
    for (int pass = 0; pass < 2; ++pass) {
        g_inject = snapshot_files();
        (pass == 0 ? g_inject.open_rc : g_inject.write_rc) =
            pass == 0 ? SQLITE_CANTOPEN : SQLITE_IOERR_WRITE;
        auto s = faulty_store();
        BOOST_CHECK_EQUAL(s->count_notes(u, {}), 1);
        const SnapshotRecord snap = snapshot();
        expect_fault([&] { s->save_snapshot(snap); },
                     pass == 0 ? StoreFault::CannotOpen : StoreFault::IoError, "snapshot");
        BOOST_CHECK_EQUAL(s->list_notes(u, {}, OrderBy::UpdatedAt, std::nullopt, 5, false).size(), 1u);
        BOOST_CHECK(s->find_token(sha256_hex("no such token")) == std::nullopt);
        g_inject = Injected{};
        s->save_snapshot(snap);
        const auto found = s->find_snapshot(u, snap.id, 2);
        BOOST_REQUIRE(found);
        BOOST_CHECK(found->note_ids == snap.note_ids);
    }
}

BOOST_AUTO_TEST_SUITE_END()
