#include "store/sqlite_wal_writes.hpp"

#include <soci/sqlite3/soci-sqlite3.h>  // declares sqlite3.h in namespace sqlite_api

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace notesd::detail {
namespace lite = sqlite_api;

namespace {

constexpr int kFrameHeaderBytes = 24;  // a WAL frame's header (https://sqlite.org/fileformat.html)
// The unix VFS writes at most 0x1ffff bytes a call (seekAndWriteFd masks the size) and fails a
// larger write whose remainder is a multiple of 128 KiB, so gathered bytes go in pieces.
constexpr std::size_t kMaxWriteBytes = 96 * 1024;

std::atomic<unsigned long long> g_wal_writes{0};
std::atomic<unsigned long long> g_late_flushes{0};
lite::sqlite3_vfs* g_base = nullptr;  // SQLite's default VFS, which does the work
lite::sqlite3_vfs g_vfs;              // the gathering VFS registered over it
lite::sqlite3_io_methods g_wal_methods;

// A wrapped file (a WAL or a main database file) is SQLite's own file of g_base at kRealOffset
// in the same allocation (real()), after one of these plain C structs: SQLite allocates it,
// and only xClose frees what it points to.
struct GatheringWal {
    lite::sqlite3_file base;  // first: SQLite sees a GatheringWal as its sqlite3_file
    struct WatchedDb* db;      // its database file, while both are open
    char* data;                // gathered bytes, for the file from offset `at` on
    std::size_t size, capacity;
    lite::sqlite3_int64 at;
    // The error of a write of gathered bytes that failed (SQLITE_OK: none): every later write,
    // read and sync of the transaction fails with it, so that no COMMIT can publish frames
    // that are not in the file; cleared when its connection releases a lock (the transaction
    // ended, rolled back).
    int error;
    // A commit frame's header was written and no frame header of another transaction since:
    // what SQLite writes meanwhile (the commit's page, the rest of a page split at a sync
    // point, padding frames) reaches the file before the write returns.
    bool after_commit_header;
    bool pass_through;  // nothing gathered: each write is SQLite's own
};

// A main database file: SQLite's own, watched for the two moments its connection's WAL must
// hold nothing back: the shared-memory barrier in front of a new WAL index header (a commit
// is published) and the release of a shared-memory lock (the write lock ends a transaction, a
// rolled-back one included: its spilled frames are written before another writer may append
// at the same offsets, as SQLite itself would have written them).
struct WatchedDb {
    lite::sqlite3_file base;
    GatheringWal* wal;
};

constexpr std::size_t kRealOffset =
    (std::max(sizeof(GatheringWal), sizeof(WatchedDb)) + 15) / 16 * 16;

GatheringWal* wal_of(lite::sqlite3_file* f) { return reinterpret_cast<GatheringWal*>(f); }
WatchedDb* db_of(lite::sqlite3_file* f) { return reinterpret_cast<WatchedDb*>(f); }
lite::sqlite3_file* real(lite::sqlite3_file* f) {
    return reinterpret_cast<lite::sqlite3_file*>(reinterpret_cast<char*>(f) + kRealOffset);
}
lite::sqlite3_file* real(GatheringWal* f) { return real(&f->base); }

int write_through(GatheringWal* f, const void* buf, std::size_t n, lite::sqlite3_int64 offset) {
    for (std::size_t done = 0; done < n;) {
        const std::size_t piece = std::min(n - done, kMaxWriteBytes);
        g_wal_writes.fetch_add(1, std::memory_order_relaxed);
        const int rc = real(f)->pMethods->xWrite(real(f), static_cast<const char*>(buf) + done,
                                                 static_cast<int>(piece),
                                                 offset + static_cast<lite::sqlite3_int64>(done));
        if (rc != SQLITE_OK) return rc;
        done += piece;
    }
    return SQLITE_OK;
}

int flush(GatheringWal* f) {
    const std::size_t size = f->size;
    f->size = 0;
    if (f->error != SQLITE_OK || size == 0) return f->error;
    f->error = write_through(f, f->data, size, f->at);
    return f->error;
}

// false when the bytes could not be held (no memory): the caller writes them itself
bool gather(GatheringWal* f, const void* buf, std::size_t n) {
    if (f->size + n > f->capacity) {
        std::size_t cap = f->capacity ? f->capacity : 64 * 1024;
        while (cap < f->size + n) cap *= 2;
        void* grown = std::realloc(f->data, cap);
        if (!grown) return false;
        f->data = static_cast<char*>(grown);
        f->capacity = cap;
    }
    std::memcpy(f->data + f->size, buf, n);
    f->size += n;
    return true;
}

bool is_commit_header(const void* buf) {
    const auto* b = static_cast<const unsigned char*>(buf);
    return (b[4] | b[5] | b[6] | b[7]) != 0;  // big-endian "database size after commit"
}

int wal_write(lite::sqlite3_file* file, const void* buf, int n, lite::sqlite3_int64 offset) {
    GatheringWal* f = wal_of(file);
    if (f->pass_through) return real(f)->pMethods->xWrite(real(f), buf, n, offset);
    if (f->error != SQLITE_OK) return f->error;
    if (f->size > 0 && offset != f->at + static_cast<lite::sqlite3_int64>(f->size)) {
        const int rc = flush(f);
        if (rc != SQLITE_OK) return rc;
    }
    const bool header = n == kFrameHeaderBytes;
    const bool commit = header && is_commit_header(buf);
    // A commit header that continues nothing gathered is one SQLite rewrites in place after
    // reading its frame (walRewriteChecksums): no page follows it.
    const bool now = f->after_commit_header || (commit && f->size == 0);
    if (header) f->after_commit_header = commit;
    if (f->size == 0) f->at = offset;
    const auto bytes = static_cast<std::size_t>(n);
    if (!gather(f, buf, bytes)) {
        const int rc = flush(f);
        if (rc != SQLITE_OK) return rc;
        f->error = write_through(f, buf, bytes, offset);
        return f->error;
    }
    return now || f->size >= kMaxGatheredBytes ? flush(f) : SQLITE_OK;
}

// The WAL's other operations: what was gathered is in the file first.
template <typename Op>
int flushed(lite::sqlite3_file* file, Op op) {
    const int rc = flush(wal_of(file));
    return rc != SQLITE_OK ? rc : op(real(file));
}

int wal_close(lite::sqlite3_file* file) {
    GatheringWal* f = wal_of(file);
    const int flushed_rc = flush(f);
    std::free(f->data);
    f->data = nullptr;
    f->capacity = 0;
    if (f->db) f->db->wal = nullptr;
    const int rc = real(f)->pMethods->xClose(real(f));
    return flushed_rc != SQLITE_OK ? flushed_rc : rc;
}

int wal_read(lite::sqlite3_file* file, void* buf, int n, lite::sqlite3_int64 offset) {
    return flushed(file, [&](lite::sqlite3_file* r) { return r->pMethods->xRead(r, buf, n, offset); });
}
int wal_truncate(lite::sqlite3_file* file, lite::sqlite3_int64 size) {
    return flushed(file, [&](lite::sqlite3_file* r) { return r->pMethods->xTruncate(r, size); });
}
int wal_sync(lite::sqlite3_file* file, int flags) {
    return flushed(file, [&](lite::sqlite3_file* r) { return r->pMethods->xSync(r, flags); });
}
int wal_file_size(lite::sqlite3_file* file, lite::sqlite3_int64* size) {
    return flushed(file, [&](lite::sqlite3_file* r) { return r->pMethods->xFileSize(r, size); });
}
int wal_file_control(lite::sqlite3_file* file, int op, void* arg) {
    return flushed(file, [&](lite::sqlite3_file* r) { return r->pMethods->xFileControl(r, op, arg); });
}
int wal_fetch(lite::sqlite3_file* file, lite::sqlite3_int64 offset, int n, void** out) {
    return flushed(file, [&](lite::sqlite3_file* r) { return r->pMethods->xFetch(r, offset, n, out); });
}

// The database file's: forwarded, the WAL flushed at the barrier and at a lock's release
// (xShmLock's, and xUnlock's for locking_mode=EXCLUSIVE, which takes no shared-memory locks).
// No error can be returned there: a commit's frames went with its writes (wal_write), so these
// flushes find bytes only after a rolled-back transaction's spill (g_late_flushes counts them),
// and an error ends with that transaction.
void flush_late(GatheringWal* w, bool transaction_ended) {
    if (!w) return;
    if (w->size > 0) g_late_flushes.fetch_add(1, std::memory_order_relaxed);
    flush(w);
    if (transaction_ended) w->error = SQLITE_OK;
}
void db_shm_barrier(lite::sqlite3_file* file) {
    flush_late(db_of(file)->wal, false);
    real(file)->pMethods->xShmBarrier(real(file));
}
int db_shm_lock(lite::sqlite3_file* file, int offset, int n, int flags) {
    if (flags & SQLITE_SHM_UNLOCK) flush_late(db_of(file)->wal, true);
    return real(file)->pMethods->xShmLock(real(file), offset, n, flags);
}
int db_unlock(lite::sqlite3_file* file, int level) {
    flush_late(db_of(file)->wal, true);
    return real(file)->pMethods->xUnlock(real(file), level);
}
int db_close(lite::sqlite3_file* file) {
    if (GatheringWal* w = db_of(file)->wal) w->db = nullptr;
    return real(file)->pMethods->xClose(real(file));
}

// Both kinds forward the rest to SQLite's file.
struct Forward {
    static int read(lite::sqlite3_file* f, void* buf, int n, lite::sqlite3_int64 at) {
        return real(f)->pMethods->xRead(real(f), buf, n, at);
    }
    static int write(lite::sqlite3_file* f, const void* buf, int n, lite::sqlite3_int64 at) {
        return real(f)->pMethods->xWrite(real(f), buf, n, at);
    }
    static int truncate(lite::sqlite3_file* f, lite::sqlite3_int64 size) {
        return real(f)->pMethods->xTruncate(real(f), size);
    }
    static int sync(lite::sqlite3_file* f, int flags) { return real(f)->pMethods->xSync(real(f), flags); }
    static int file_size(lite::sqlite3_file* f, lite::sqlite3_int64* size) {
        return real(f)->pMethods->xFileSize(real(f), size);
    }
    static int lock(lite::sqlite3_file* f, int level) { return real(f)->pMethods->xLock(real(f), level); }
    static int unlock(lite::sqlite3_file* f, int level) { return real(f)->pMethods->xUnlock(real(f), level); }
    static int check_reserved(lite::sqlite3_file* f, int* out) {
        return real(f)->pMethods->xCheckReservedLock(real(f), out);
    }
    static int file_control(lite::sqlite3_file* f, int op, void* arg) {
        return real(f)->pMethods->xFileControl(real(f), op, arg);
    }
    static int sector_size(lite::sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); }
    static int device_characteristics(lite::sqlite3_file* f) {
        return real(f)->pMethods->xDeviceCharacteristics(real(f));
    }
    static int shm_map(lite::sqlite3_file* f, int region, int size, int extend, void volatile** out) {
        return real(f)->pMethods->xShmMap(real(f), region, size, extend, out);
    }
    static int shm_lock(lite::sqlite3_file* f, int offset, int n, int flags) {
        return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
    }
    static void shm_barrier(lite::sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); }
    static int shm_unmap(lite::sqlite3_file* f, int delete_flag) {
        return real(f)->pMethods->xShmUnmap(real(f), delete_flag);
    }
    static int fetch(lite::sqlite3_file* f, lite::sqlite3_int64 at, int n, void** out) {
        return real(f)->pMethods->xFetch(real(f), at, n, out);
    }
    static int unfetch(lite::sqlite3_file* f, lite::sqlite3_int64 at, void* p) {
        return real(f)->pMethods->xUnfetch(real(f), at, p);
    }
};

lite::sqlite3_io_methods g_db_methods;

// A WAL file gets the gathering methods over the base VFS's file, a main database file the
// watching ones; every other file is the base VFS's own, opened in place (the allocation is
// at least the base's szOsFile).
int open_file(lite::sqlite3_vfs*, const char* name, lite::sqlite3_file* file, int flags, int* out_flags) {
    const bool wal = flags & SQLITE_OPEN_WAL, main_db = flags & SQLITE_OPEN_MAIN_DB;
    if (!wal && !main_db) return g_base->xOpen(g_base, name, file, flags, out_flags);
    std::memset(file, 0, kRealOffset);
    const int rc = g_base->xOpen(g_base, name, real(file), flags, out_flags);
    if (rc != SQLITE_OK) {
        // SQLite calls xClose only when pMethods is set; close what the base may have opened
        if (real(file)->pMethods) real(file)->pMethods->xClose(real(file));
        file->pMethods = nullptr;
        return rc;
    }
    if (main_db) {
        file->pMethods = &g_db_methods;
        return SQLITE_OK;
    }
    GatheringWal* f = wal_of(file);
    // Without powersafe overwrite SQLite pads a synced commit to a sector with frames it may
    // split at a sync point in any place, a piece of a page then looking like a header: such a
    // WAL is written as SQLite writes it (psow=0 in the file name's URI; never notesd's).
    f->pass_through =
        !(Forward::device_characteristics(file) & SQLITE_IOCAP_POWERSAFE_OVERWRITE);
    // the database file this WAL belongs to, opened before it by the same connection
    lite::sqlite3_file* db = name ? lite::sqlite3_database_file_object(name) : nullptr;
    if (db && db->pMethods == &g_db_methods) {
        f->db = db_of(db);
        f->db->wal = f;
    }
    file->pMethods = &g_wal_methods;
    return SQLITE_OK;
}

// The VFS's other methods are the base's, called with the base as the VFS.
int vfs_delete(lite::sqlite3_vfs*, const char* name, int sync_dir) { return g_base->xDelete(g_base, name, sync_dir); }
int vfs_access(lite::sqlite3_vfs*, const char* name, int flags, int* out) {
    return g_base->xAccess(g_base, name, flags, out);
}
int vfs_full_pathname(lite::sqlite3_vfs*, const char* name, int n, char* out) {
    return g_base->xFullPathname(g_base, name, n, out);
}
void* vfs_dlopen(lite::sqlite3_vfs*, const char* name) { return g_base->xDlOpen(g_base, name); }
void vfs_dlerror(lite::sqlite3_vfs*, int n, char* out) { g_base->xDlError(g_base, n, out); }
void (*vfs_dlsym(lite::sqlite3_vfs*, void* h, const char* sym))(void) { return g_base->xDlSym(g_base, h, sym); }
void vfs_dlclose(lite::sqlite3_vfs*, void* h) { g_base->xDlClose(g_base, h); }
int vfs_randomness(lite::sqlite3_vfs*, int n, char* out) { return g_base->xRandomness(g_base, n, out); }
int vfs_sleep(lite::sqlite3_vfs*, int us) { return g_base->xSleep(g_base, us); }
int vfs_current_time(lite::sqlite3_vfs*, double* out) { return g_base->xCurrentTime(g_base, out); }
int vfs_last_error(lite::sqlite3_vfs*, int n, char* out) { return g_base->xGetLastError(g_base, n, out); }
int vfs_current_time64(lite::sqlite3_vfs*, lite::sqlite3_int64* out) {
    return g_base->xCurrentTimeInt64(g_base, out);
}
int vfs_set_syscall(lite::sqlite3_vfs*, const char* name, lite::sqlite3_syscall_ptr p) {
    return g_base->xSetSystemCall(g_base, name, p);
}
lite::sqlite3_syscall_ptr vfs_get_syscall(lite::sqlite3_vfs*, const char* name) {
    return g_base->xGetSystemCall(g_base, name);
}
const char* vfs_next_syscall(lite::sqlite3_vfs*, const char* name) {
    return g_base->xNextSystemCall(g_base, name);
}

void install() {
    g_base = lite::sqlite3_vfs_find(nullptr);
    if (!g_base) throw std::runtime_error("SQLite has no default VFS");
    if (g_base->iVersion < 3) throw std::runtime_error("SQLite's default VFS is older than version 3");
    g_wal_methods = lite::sqlite3_io_methods{
        3, wal_close, wal_read, wal_write, wal_truncate, wal_sync, wal_file_size,
        Forward::lock, Forward::unlock, Forward::check_reserved, wal_file_control,
        Forward::sector_size, Forward::device_characteristics, Forward::shm_map,
        Forward::shm_lock, Forward::shm_barrier, Forward::shm_unmap, wal_fetch,
        Forward::unfetch};
    g_db_methods = lite::sqlite3_io_methods{
        3, db_close, Forward::read, Forward::write, Forward::truncate, Forward::sync,
        Forward::file_size, Forward::lock, db_unlock, Forward::check_reserved,
        Forward::file_control, Forward::sector_size, Forward::device_characteristics,
        Forward::shm_map, db_shm_lock, db_shm_barrier, Forward::shm_unmap, Forward::fetch,
        Forward::unfetch};
    g_vfs = lite::sqlite3_vfs{};
    g_vfs.iVersion = 3;
    g_vfs.szOsFile = static_cast<int>(kRealOffset) + g_base->szOsFile;
    g_vfs.mxPathname = g_base->mxPathname;
    g_vfs.zName = "notesd-wal-gathering";
    g_vfs.xOpen = open_file;
    g_vfs.xDelete = vfs_delete;
    g_vfs.xAccess = vfs_access;
    g_vfs.xFullPathname = vfs_full_pathname;
    g_vfs.xDlOpen = vfs_dlopen;
    g_vfs.xDlError = vfs_dlerror;
    g_vfs.xDlSym = vfs_dlsym;
    g_vfs.xDlClose = vfs_dlclose;
    g_vfs.xRandomness = vfs_randomness;
    g_vfs.xSleep = vfs_sleep;
    g_vfs.xCurrentTime = vfs_current_time;
    g_vfs.xGetLastError = vfs_last_error;
    g_vfs.xCurrentTimeInt64 = vfs_current_time64;
    g_vfs.xSetSystemCall = vfs_set_syscall;
    g_vfs.xGetSystemCall = vfs_get_syscall;
    g_vfs.xNextSystemCall = vfs_next_syscall;
    const int rc = lite::sqlite3_vfs_register(&g_vfs, 1);
    if (rc != SQLITE_OK) throw std::runtime_error("registering SQLite's WAL-gathering VFS failed");
}

}  // namespace

void install_wal_write_gathering() {
    static std::once_flag once;
    std::call_once(once, install);
}

unsigned long long wal_write_calls() { return g_wal_writes.load(std::memory_order_relaxed); }

unsigned long long wal_late_flushes() { return g_late_flushes.load(std::memory_order_relaxed); }

}  // namespace notesd::detail
