// SQLite writes each WAL frame with two system calls, its 24-byte header and then its page, so a
// commit of N pages costs 2N pwrite calls; on this project's virtual machines a system call
// costs several microseconds, more than copying the page. install_wal_write_gathering()
// registers, once per process and as the default, a VFS over SQLite's own that gathers a WAL
// file's contiguous writes in memory and hands them to the file in a few calls (pieces of
// 96 KiB, the unix VFS's largest write). The gathered bytes reach the file:
//  - with the write that completes a commit frame (its header's "database size after commit"
//    is not zero), and with every write after it until the next transaction's first frame
//    header (the rest of a page SQLite split at a sync point, padding frames, a commit header
//    rewritten in place): a commit's frames are in the file, errors reported, before SQLite
//    publishes it in the WAL index;
//  - before any other operation on the WAL (a read, sync, size, truncate, file control,
//    close) and before a write that does not continue the gathered bytes;
//  - when the database file's connection passes a shared-memory barrier (a WAL index header
//    is published) or releases a shared-memory lock (a transaction ends: a rolled-back one's
//    spilled frames are written while it still holds the write lock, as SQLite would have
//    written them, never later over another writer's frames at the same offsets);
//  - once kMaxGatheredBytes are held (frames a transaction spills before its commit).
// A write of gathered bytes that fails fails every later write and sync of its transaction.
// A WAL without powersafe overwrite (psow=0: SQLite pads synced commits with frames it may
// split anywhere) is written as SQLite writes it. A crash at any moment loses only frames of a
// transaction that had not committed. Other
// files (temporary ones, journals) are SQLite's own, untouched; a main database file is
// SQLite's own behind a forwarding wrapper that does the third point.
#pragma once

#include <cstddef>

namespace notesd::detail {

/// At most this many bytes are held before they are written.
constexpr std::size_t kMaxGatheredBytes = 4u << 20;

/// Registers the gathering VFS as the default (idempotent, thread-safe); connections opened
/// afterwards use it. Throws std::runtime_error when SQLite has no default VFS to wrap.
void install_wal_write_gathering();

/// The pwrite calls this process's WAL files made so far (for tests).
unsigned long long wal_write_calls();

/// The flushes at a barrier or a lock's release that found gathered bytes: a rolled-back
/// transaction's spill, never a commit's frames (for tests).
unsigned long long wal_late_flushes();

}  // namespace notesd::detail
