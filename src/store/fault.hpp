// Environmental faults of the database: it is busy, full, read-only, failing, unreachable. The
// store throws StoreUnavailable for each of them (the API answers 503 with Retry-After); a
// fault is the environment's, so the same request succeeds once the fault is gone. Each
// backend's native errors are sorted into these kinds in one place, its Dialect::fault_of
// (dialect.cpp); SociStore::guarded reacts to them (a new connection where the fault may have
// broken the old one) and throws. Nothing else reads database error codes or messages.
#pragma once
#include <stdexcept>
#include <string>

namespace notesd {

enum class StoreFault {
    Busy,            ///< a lock held elsewhere, a deadlock, a serialization failure
    Timeout,         ///< a statement ran past its time limit
    DiskFull,        ///< no space left for the database's files
    ReadOnly,        ///< a read-only file, directory, file system, server or transaction
    IoError,         ///< the operating system reported an I/O error
    CannotOpen,      ///< the database (or a file of it) cannot be opened
    ConnectionLost,  ///< the server is unreachable, restarting, or ended this connection
    OutOfResources,  ///< memory, or the server's connection slots
};

/// The fault's name in logs: "busy", "timeout", "disk_full", "read_only", "io_error",
/// "cannot_open", "connection_lost", "out_of_resources".
const char* fault_name(StoreFault f);

/// Whether a connection that met this fault is opened afresh before its next use: it may be
/// broken (a lost connection, a failed I/O) or stuck in the state the fault left (SQLite opens
/// a file it may not write read-only, and keeps it so after the file is writable again).
bool needs_new_connection(StoreFault f);

/// Whether the fault ends by itself in a moment (a lock released, a server restarted), as
/// opposed to one an operator must fix (a full disk, a read-only or unopenable file).
bool passes_by_itself(StoreFault f);

/// Thrown by the store for an environmental fault (maps to 503 UNAVAILABLE). what() names the
/// fault, the store operation and the database's message without bound values (for the log).
class StoreUnavailable : public std::runtime_error {
public:
    StoreUnavailable(StoreFault fault, const std::string& what)
        : std::runtime_error(what), fault_(fault) {}
    StoreFault fault() const noexcept { return fault_; }

private:
    StoreFault fault_;
};

}  // namespace notesd
