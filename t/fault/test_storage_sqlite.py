"""Fault rows: SQLite's files in trouble, through the real nginx and worker pool.

Every environmental storage fault is the worker's JSON 503 UNAVAILABLE with Retry-After, never a
500; a fault of the search snapshots file (DB-snapshots) fails searches only, while the lists go
on; and once the fault is gone the workers recover by themselves, without a reload:

- the snapshots file unwritable (an immutable file, as root chattr +i), then writable again;
- the snapshots file unopenable (its path taken by a directory) for a worker that opens its
  database meanwhile;
- the snapshots file locked by another process's write transaction (SQLITE_BUSY);
- the whole database read-only (every file and the directory immutable);
- a full disk: the database on a small tmpfs of the test's own, filled up, then freed.

The locked main database (no connection can start) is test_supervisor.LockedDatabase in the e2e
suite. Root (as CI) makes files immutable with chattr, since permissions do not stop root, and
mounts the tmpfs; other users get chmod, and cannot run the full-disk row.
"""
import os
import shutil
import signal
import subprocess
import time
import unittest

import faultlib  # also puts t/e2e on sys.path
from harness import Stack, StackError, assert_unavailable  # noqa: E402

SEARCH = {"query": "review", "limit": 5}
DB_WORDS = ("sqlite", "snapshot", ".db", "select", "insert", "disk", "readonly", "read-only",
            "attach", "errno")


def set_immutable(paths, on):
    """Makes files and directories unwritable even for root (chattr +i), or writable again.
    Without root, the write permission bits instead."""
    paths = [p for p in paths if os.path.lexists(p)]
    if not paths:
        return
    if os.geteuid() == 0:
        p = subprocess.run(["chattr", "+i" if on else "-i"] + paths, capture_output=True,
                           text=True, timeout=30)
        if p.returncode != 0:
            raise StackError("chattr failed (the fault rows need CAP_LINUX_IMMUTABLE): "
                             + p.stderr)
        return
    for path in paths:
        mode = os.stat(path).st_mode
        os.chmod(path, mode & ~0o222 if on else mode | 0o200)


class SqliteFault(faultlib.FaultCase):
    """One stack per row (the fault spoils it): one worker, so every request meets the same
    worker and its connection; a user with 20 notes."""

    config = {"workers": 1, "request_timeout_ms": 3000, "db_busy_timeout_ms": 500}

    def database_url(self):
        return None  # the harness's default: DIR/data/notes.db

    def setUp(self):
        self.stack = Stack(config=dict(self.config), db=self.database_url()).start()
        self.addCleanup(self.stack.stop)
        self.user, self.token = self.stack.create_user("alice")
        self.stack.notesctl("demo", self.user, "--notes", "20")
        self.db = self.stack.sqlite_path()
        self.snapshots = self.db + "-snapshots"

    # ---- requests ---------------------------------------------------------------------------

    def list_notes(self):
        return self.stack.request("GET", "/v2/notes", query={"limit": 5}, token=self.token)

    def list_collections(self):
        return self.stack.request("GET", "/v2/collections", query={"limit": 5}, token=self.token)

    def search(self):
        return self.stack.request("POST", "/v2/notes/search", body=SEARCH, token=self.token)

    def assert_ok(self, r, what):
        self.assertEqual(r.status, 200, "%s: %d %s" % (what, r.status, r.text[:300]))

    def assert_unavailable(self, r, what):
        """The worker's JSON 503 UNAVAILABLE with Retry-After and nothing of the database."""
        assert_unavailable(self, r, what, DB_WORDS, self.stack)

    def assert_search_down_lists_up(self, rounds=3, before_search=lambda: None):
        for i in range(rounds):
            before_search()
            self.assert_unavailable(self.search(), "search %d during the fault" % i)
            self.assert_ok(self.list_notes(), "notes list %d during the fault" % i)
            self.assert_ok(self.list_collections(), "collections list %d during the fault" % i)

    def assert_all_ok(self, rounds=3, what="after the fault"):
        for i in range(rounds):
            self.assert_ok(self.search(), "search %d %s" % (i, what))
            self.assert_ok(self.list_notes(), "notes list %d %s" % (i, what))

    def assert_same_worker(self, pids):
        """The pool was neither reloaded nor restarted: recovery happened in place."""
        self.assertEqual(self.stack.worker_pids(), pids, "the worker was replaced")
        self.assertNotIn("worker died", self.stack.logs())

    def fresh_worker(self):
        """A new worker (SIGHUP: the old one retires), which opens the database anew at its
        first request; returns its pid."""
        old = self.stack.worker_pids()
        self.stack.signal_master(signal.SIGHUP)
        return self.stack.wait_for_workers(1, exclude=old)

    def immutable(self, paths):
        set_immutable(paths, True)
        self.addCleanup(set_immutable, paths, False)  # or the stack's directory stays behind

    def snapshot_files(self):
        """The snapshots file and its WAL. Never a -shm file: SQLite writes it through a shared
        mapping, and a write fault on an immutable ext4 file is SIGBUS (a file whose owner or
        mode changed keeps its mappings writable)."""
        return [self.snapshots, self.snapshots + "-wal"]


class SnapshotsUnwritable(SqliteFault):
    def test_unwritable_snapshots_file_fails_search_only_and_recovers(self):
        self.assert_all_ok(1, "before the fault")
        worker = self.stack.worker_pids()
        self.immutable(self.snapshot_files())
        self.assert_search_down_lists_up()
        set_immutable(self.snapshot_files(), False)
        self.assert_all_ok()
        self.assert_same_worker(worker)
        self.assertIn("database unavailable", self.stack.logs())


class SnapshotsUnopenable(SqliteFault):
    def take_path(self):
        """The snapshots file (and its -wal/-shm) removed and its name taken by a directory."""
        for path in self.snapshot_files():
            if os.path.exists(path):
                os.unlink(path)
        os.mkdir(self.snapshots)
        self.addCleanup(lambda: os.path.isdir(self.snapshots) and os.rmdir(self.snapshots))

    def test_worker_opening_its_database_then_serves_lists(self):
        self.assert_all_ok(1, "before the fault")
        self.take_path()
        worker = self.fresh_worker()
        self.assert_search_down_lists_up()
        os.rmdir(self.snapshots)
        self.assert_all_ok()
        self.assert_same_worker(worker)


class SnapshotsBusy(SqliteFault):
    def test_snapshots_write_lock_held_elsewhere(self):
        self.assert_all_ok(1, "before the fault")
        worker = self.stack.worker_pids()
        holder = subprocess.Popen(["sqlite3", self.snapshots], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.addCleanup(holder.wait, 10)
        self.addCleanup(holder.stdout.close)
        holder.stdin.write(".timeout 5000\nBEGIN IMMEDIATE;\nSELECT 'lock-' || 'held';\n")
        holder.stdin.flush()
        self.assertEqual(holder.stdout.readline().strip(), "lock-held")
        try:
            self.assert_search_down_lists_up(2)
        finally:
            holder.stdin.write("ROLLBACK;\n")
            holder.stdin.close()
        self.assert_all_ok()
        self.assert_same_worker(worker)


class ReadOnlyDatabase(SqliteFault):
    def data_files(self):
        d = os.path.dirname(self.db)
        return [os.path.join(d, n) for n in os.listdir(d)
                if n.startswith(os.path.basename(self.db)) and not n.endswith("-shm")] + [d]

    def test_read_only_database_lists_serve_search_503_then_recovers(self):
        self.assert_all_ok(1, "before the fault")
        worker = self.stack.worker_pids()
        files = self.data_files()
        self.immutable(files)
        self.assert_search_down_lists_up()
        set_immutable(files, False)
        self.assert_all_ok()
        self.assert_same_worker(worker)

    def test_read_only_database_for_a_new_worker(self):
        self.assert_all_ok(1, "before the fault")
        files = self.data_files()
        self.immutable(files)
        worker = self.fresh_worker()
        self.assert_search_down_lists_up()
        set_immutable(files, False)
        self.assert_all_ok()
        self.assert_same_worker(worker)


class ReadOnlyConnectionString(SqliteFault):
    """An operator's `readonly` connection string (say, a copy served for reading): lists are
    served; a search (it would save a snapshot) and a write are the JSON 503, never a 500."""

    def test_readonly_string_lists_serve_search_and_writes_503(self):
        self.assert_all_ok(1, "before the change")
        self.stack.write_config(db=self.stack.db_url + " readonly=1")
        self.fresh_worker()
        self.assert_search_down_lists_up()
        r = self.stack.request("POST", "/v2/notes", body={"content": "# refused"}, token=self.token)
        self.assert_unavailable(r, "a write")
        self.assertIn("fault=read_only", self.stack.logs())
        self.stack.write_config(db=self.stack.db_url)
        self.fresh_worker()
        self.assert_all_ok()


class DiskFull(SqliteFault):
    TMPFS_SIZE = "8m"

    def database_url(self):
        self.mount = self.mount_tmpfs(self.TMPFS_SIZE)
        return "sqlite3://db=%s" % os.path.join(self.mount, "notes.db")

    def fill(self):
        return faultlib.fill_up(self.mount)

    def test_full_disk_fails_search_only_and_recovers(self):
        self.assert_all_ok(1, "before the fault")
        worker = self.stack.worker_pids()
        filler = self.fill()
        try:
            self.assert_search_down_lists_up(before_search=self.fill)
        finally:
            os.unlink(filler)
        self.assert_all_ok()
        self.assert_same_worker(worker)
        self.assertEqual(self.stack.integrity_problems(), [])


if __name__ == "__main__":
    unittest.main()
