"""The notesd master through the real nginx: respawn after SIGKILL, graceful SIGTERM under load,
SIGHUP reload (valid and broken config), worker recycling, a locked database and a request
stuck past the deadline (both 503 JSON), and what the logs hold (request ids, never a token)."""
import fcntl
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fcgi  # noqa: E402
from harness import BUILDDIR, Stack, proc_stat  # noqa: E402

REQUEST_ID = re.compile(r"^api-request-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class Load:
    """Threads sending GET /v2/notes through nginx until stopped; every outcome is kept."""

    def __init__(self, stack, token, threads=6):
        self.stack, self.token = stack, token
        self.results = []          # (status, json body or None, request id or None)
        self.errors = []           # exceptions between the client and nginx
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]

    def _run(self):
        while not self._stop.is_set():
            try:
                r = self.stack.request("GET", "/v2/notes", query={"limit": 5}, token=self.token,
                                       timeout=30)
                try:
                    body = r.json()
                except ValueError:
                    body = None
                self.results.append((r.status, body, r.headers.get("X-Request-Id")))
            except Exception as e:  # noqa: BLE001 (any client-side failure counts)
                self.errors.append(repr(e))

    def __enter__(self):
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for t in self._threads:
            t.join(60)


def worker_answered(stack, results):
    """Splits results by the access log's upstream status: (from a worker, nginx alone).

    nginx logs the worker's status, or 502/504 when it could not get an answer from the pool
    (the client then got nginx's JSON 503), or "-" when it never tried.
    """
    upstream = stack.upstream_statuses(res[2] for res in results if res[2])
    worker, nginx = [], []
    for res in results:
        last = upstream.get(res[2], "-").split(", ")[-1]
        (worker if last.isdigit() and last not in ("502", "504") else nginx).append(res)
    return worker, nginx


class SupervisorCase(unittest.TestCase):
    config = {}

    def setUp(self):
        self.stack = Stack(config=self.config).start()
        self.addCleanup(self.stack.stop)
        self.user, self.token = self.stack.create_user("alice")
        self.stack.notesctl("demo", self.user, "--notes", "20")

    def get_ok(self, n=1):
        for _ in range(n):
            r = self.stack.request("GET", "/v2/notes", query={"limit": 5}, token=self.token)
            self.assertEqual(r.status, 200, r.text[:500])
            self.assertRegex(r.json()["request_id"], REQUEST_ID)


class Respawn(SupervisorCase):
    config = {"workers": 2}

    def test_killed_worker_is_replaced_and_pool_serves(self):
        before = self.stack.wait_for_workers(2)
        self.get_ok()
        os.kill(before[0], signal.SIGKILL)
        after = self.stack.wait_for_workers(2, exclude=[before[0]])
        self.assertIn(before[1], after, "the other worker must be left alone")
        self.get_ok(6)
        self.assertIsNone(self.stack.notesd_proc.poll(), "the master must survive")

    def test_all_workers_killed_twice(self):
        for _ in range(2):
            old = self.stack.wait_for_workers(2)
            for pid in old:
                os.kill(pid, signal.SIGKILL)
            self.stack.wait_for_workers(2, exclude=old, timeout=15)
        self.get_ok(4)


class Recycle(SupervisorCase):
    config = {"workers": 1, "max_requests": 3}

    def test_worker_replaced_after_max_requests(self):
        first = self.stack.wait_for_workers(1)
        self.get_ok(3)
        self.stack.wait_for_workers(1, exclude=first)
        self.get_ok(7)  # no request is lost while workers come and go


class GracefulStop(SupervisorCase):
    config = {"workers": 3, "stop_timeout_ms": 5000}

    def test_sigterm_under_load(self):
        workers = self.stack.wait_for_workers(3)
        with Load(self.stack, self.token) as load:
            time.sleep(1.0)
            served_before = len(load.results)
            self.stack.signal_master(signal.SIGTERM)
            rc = self.stack.notesd_proc.wait(20)
            time.sleep(0.3)  # a few requests after the pool is gone: nginx's own 503
        self.assertEqual(rc, 0, self.stack.logs()[-2000:])
        left = [p for p in workers if proc_stat(p) and proc_stat(p)[0] != "Z"]
        self.assertEqual(left, [], "workers outlived the master")
        self.assertEqual(load.errors, [], "client-side failures between client and nginx")
        self.assertGreater(served_before, 5, "the load did not run")
        from_worker, from_nginx = worker_answered(self.stack, load.results)
        failed = [r for r in from_worker if r[0] != 200 or r[1] is None]
        self.assertEqual(failed, [], "requests answered by a worker must all succeed")
        non_json = [r for r in load.results if r[1] is None]
        self.assertEqual(non_json, [])
        for status, body, _ in from_nginx:  # not accepted by the pool: the JSON 503
            self.assertEqual((status, body["error_metadata"]["error_kind"]), (503, "UNAVAILABLE"))
        self.assertNotIn("prematurely closed", self.stack.nginx_logs(),
                         "a worker dropped a request it had accepted")


class ConnectionClose(SupervisorCase):
    """After its answer a worker closes the connection outright (its input was read to the end),
    rather than shut down its side and wait for the peer to close first: it goes on to the next
    connection while nginx still holds the previous one."""
    config = {"workers": 1}

    def params(self):
        return {"REQUEST_METHOD": "GET", "DOCUMENT_URI": "/v2/notes", "QUERY_STRING": "limit=1",
                "HTTP_AUTHORIZATION": "Bearer " + self.token, "CONTENT_LENGTH": "0",
                "REQUEST_ID": "0123456789abcdef0123456789abcdef"}

    def test_worker_closes_and_serves_the_next_connection(self):
        self.stack.wait_for_workers(1)
        held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        held.settimeout(10)
        held.connect(self.stack.socket_path)
        self.addCleanup(held.close)
        held.sendall(fcgi.record(fcgi.BEGIN_REQUEST, 1, struct.pack("!HB5x", fcgi.RESPONDER, 0)))
        held.sendall(fcgi.stream(fcgi.PARAMS, 1, fcgi.encode_params(self.params())))
        held.sendall(fcgi.stream(fcgi.STDIN, 1, b""))
        stdout, ended = b"", False
        while not ended:
            rec = fcgi.read_record(held)
            self.assertIsNotNone(rec, "the connection ended before FCGI_END_REQUEST")
            if rec[0] == fcgi.STDOUT:
                stdout += rec[2]
            ended = rec[0] == fcgi.END_REQUEST
        self.assertIn(b'"results"', stdout)
        self.assertEqual(held.recv(1), b"", "nothing may follow FCGI_END_REQUEST")
        # A shut-down-and-wait close would still hold its end open and read this byte; a closed
        # peer makes the write fail.
        with self.assertRaises((BrokenPipeError, ConnectionResetError)):
            for _ in range(3):
                held.send(b"x")
        # the only worker answers a new connection while the first is still open on this side
        r = fcgi.fcgi_request(self.stack.socket_path, self.params(), timeout=10)
        self.assertTrue(r.ended)
        self.assertEqual(r.status, 200, r.stdout[:300])


class Reload(SupervisorCase):
    config = {"workers": 2}

    def test_sighup_with_changed_config(self):
        old = self.stack.wait_for_workers(2)
        master = self.stack.master_pid()
        self.stack.write_config(workers=3)
        with Load(self.stack, self.token, threads=4) as load:
            time.sleep(0.5)
            self.stack.signal_master(signal.SIGHUP)
            new = self.stack.wait_for_workers(3, exclude=old, timeout=15)
            time.sleep(0.5)
        self.assertEqual(self.stack.master_pid(), master)
        self.assertEqual(len(new), 3)
        self.assertEqual(load.errors, [])
        bad = [r for r in load.results if r[0] != 200]
        self.assertEqual(bad, [], "a reload must not drop or fail any request")
        self.assertGreater(len(load.results), 5)
        self.get_ok(3)

    def test_sighup_with_broken_config_keeps_old(self):
        old = self.stack.wait_for_workers(2)
        self.stack.write_config(workers="banana", request_timeout_ms=-5)
        self.stack.signal_master(signal.SIGHUP)
        time.sleep(1.5)
        self.assertIsNone(self.stack.notesd_proc.poll(), "the master must keep running")
        self.assertEqual(self.stack.worker_pids(), old, "the old workers must keep serving")
        self.get_ok(4)
        self.assertIn("workers", self.stack.logs(), "the problem must be logged")
        # A later valid reload still works.
        self.stack.write_config(workers=1, request_timeout_ms=10000)
        self.stack.signal_master(signal.SIGHUP)
        self.stack.wait_for_workers(1, exclude=old, timeout=15)
        self.get_ok(2)


class BadConnectionString(unittest.TestCase):
    """The connection string is judged at start-up by the store's one parser: a string it
    rejects is named by --check-config and stops start-up, before any worker tries it."""

    ARGS = ["--config", os.devnull, "--set", "secret=" + "s" * 40, "--listen", "127.0.0.1:1"]

    def notesd(self, *args):
        return subprocess.run([os.path.join(BUILDDIR, "notesd")] + self.ARGS + list(args),
                              capture_output=True, text=True, timeout=30)

    def test_check_config_names_the_parsers_problem(self):
        for conn, needle in (("sqlite3://db=/tmp/notesd-x.db cache_mb=lots", "db: cache_mb must be"),
                             ("oracle://db=x", "db: unknown database scheme 'oracle'"),
                             ("mysql://db=x user='y", "db: unterminated quote")):
            p = self.notesd("--check-config", "--db", conn)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn(needle, p.stderr)
        p = self.notesd("--check-config", "--db", "sqlite3://db=/tmp/notesd-x.db cache_mb=8")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_start_up_refuses_it(self):
        p = self.notesd("--db", "sqlite3://db=/tmp/notesd-x.db synchronous=sometimes")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("synchronous must be", p.stderr)
        self.assertIn("not starting: invalid configuration", p.stderr)
        self.assertFalse(os.path.exists("/tmp/notesd-x.db"))


def tracer_pid(pid):
    """The pid tracing `pid` (0: none), from /proc/PID/status."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("TracerPid:"):
                return int(line.split()[1])
    return 0


def sqlite_path(db_url):
    return db_url.split("db=", 1)[1].split()[0]


class ExclusiveLock:
    """Another process holding SQLite's exclusive lock (locking_mode=EXCLUSIVE) until released.

    It only gets the lock while no other connection has the database open."""

    def __init__(self, path):
        self.proc = subprocess.Popen(["sqlite3", path], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.proc.stdin.write("PRAGMA locking_mode=EXCLUSIVE;\nBEGIN EXCLUSIVE;\n"
                              "SELECT 'lock-' || 'held', count(*) FROM sqlite_master;\n")
        self.proc.stdin.flush()
        out = ""
        while "lock-held" not in out:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("sqlite3 could not lock the database: " + out)
            out += line

    def release(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(10)
        self.proc.stdout.close()


class WriterLock:
    """Another connection holding SQLite's write lock (BEGIN IMMEDIATE) until released: in WAL
    mode readers go on, writers wait for it."""

    def __init__(self, path):
        self.proc = subprocess.Popen(["sqlite3", path], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.proc.stdin.write("BEGIN IMMEDIATE;\nSELECT 'lock-' || 'held';\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if "lock-held" not in line:
            raise RuntimeError("sqlite3 could not take the write lock: " + line)

    def release(self):
        if self.proc.poll() is None:
            self.proc.stdin.write("ROLLBACK;\n")
            self.proc.stdin.close()
            self.proc.wait(10)
        self.proc.stdout.close()


class WalReadLocks:
    """Exclusive POSIX locks on the five WAL read-mark bytes of DB-shm (WAL_READ_LOCK(0..4) at
    offsets 123..127), the locks a reader needs to start a read transaction. A reader then
    retries with SQLite's own back-off in wal.c for about 10 s, which the busy timeout does not
    bound, before failing with SQLITE_PROTOCOL: a request stuck in the database for real."""

    def __init__(self, path):
        self.fd = os.open(path + "-shm", os.O_RDWR)
        for _ in range(100):  # a worker may be inside a read transaction for a moment
            try:
                fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 5, 123, os.SEEK_SET)
                return
            except OSError:
                time.sleep(0.02)
        os.close(self.fd)
        raise AssertionError("could not take the WAL read locks for 2 s: a worker keeps a read "
                             "transaction open between requests")

    def release(self):
        os.close(self.fd)  # closing drops this process's locks on the file


class Unavailable(SupervisorCase):
    def assert_unavailable(self, r):
        self.assertEqual(r.status, 503, r.text)
        doc = r.json()
        self.assertEqual(doc["error_category"], "SERVER_ERROR")
        self.assertEqual(doc["error_metadata"]["error_kind"], "UNAVAILABLE")
        self.assertEqual(r.headers["X-Request-Id"], doc["request_id"])
        self.assertEqual(r.headers["Content-Type"], "application/json; charset=utf-8")
        self.assertRegex(r.headers.get("Retry-After", ""), r"^[1-9][0-9]*$")
        for word in ("lock", "sqlite", "protocol", ".db", "select"):
            self.assertNotIn(word, r.text.lower(), "no database detail for clients")
        # The worker answered (nginx's own 503 would show 502/504 upstream).
        us = self.stack.upstream_statuses([doc["request_id"]])
        self.assertEqual(us.get(doc["request_id"]), "503")

    def unavailable_while_held(self, lock):
        """Seconds a list request took while `lock` was held (released after it); the answer
        must be the worker's 503."""
        try:
            t0 = time.monotonic()
            r = self.stack.request("GET", "/v2/notes", token=self.token)
            took = time.monotonic() - t0
        finally:
            lock.release()
        self.assert_unavailable(r)
        return took


class DurableWrites(SupervisorCase):
    """A write that answered 200 is on disk: each commit syncs SQLite's WAL (synchronous=FULL)
    before the worker answers, not only at the next checkpoint (NORMAL), which a power cut
    before it would lose."""
    config = {"workers": 1}
    creates = 6

    def test_every_committed_write_syncs_the_wal(self):
        self.get_ok()  # the worker has its database open
        [worker] = self.stack.wait_for_workers(1)
        trace = os.path.join(self.stack.dir, "fsync.trace")
        # -y names each file descriptor's path; -qq keeps attach/detach notes out of the file.
        tracer = subprocess.Popen(["strace", "-qq", "-y", "-e", "trace=fdatasync,fsync",
                                   "-o", trace, "-p", str(worker)], stderr=subprocess.PIPE)
        try:
            self.stack.wait_for(lambda: tracer.poll() is not None or tracer_pid(worker) != 0,
                                "strace attached to the worker", 10)
            if tracer.poll() is not None:  # (reading its stderr before it ends would block)
                self.fail("strace: " + tracer.stderr.read().decode(errors="replace"))
            for i in range(self.creates):
                r = self.stack.request("POST", "/v2/notes", token=self.token,
                                       body={"content": "# durable %d\n\nsynced before 200" % i})
                self.assertEqual(r.status, 200, r.text)
        finally:
            tracer.terminate()
            tracer.wait(10)
        with open(trace) as f:
            syncs = [line for line in f if "-wal>" in line and " = 0" in line]
        # NORMAL syncs the WAL only at a checkpoint (about every fourth create of a demo note).
        self.assertGreaterEqual(len(syncs), self.creates, "WAL syncs: %r" % syncs)


class LockedDatabase(Unavailable):
    config = {"workers": 1, "request_timeout_ms": 1000, "db_busy_timeout_ms": 900}

    def test_locked_database_is_503_then_recovers(self):
        # The worker opens its database at its first request: the lock is taken before that.
        took = self.unavailable_while_held(ExclusiveLock(sqlite_path(self.stack.db_url)))
        self.assertLess(took, 3.0)
        self.get_ok(3)


class WriterWait(Unavailable):
    """API writes wait for another writer (an import, notesctl, another host's worker) up to
    db_busy_timeout_ms, then answer the JSON 503 with Retry-After, never a 500; reads go on."""
    config = {"workers": 2, "request_timeout_ms": 3000, "db_busy_timeout_ms": 900}

    def write(self, content):
        return self.stack.request("POST", "/v2/notes", token=self.token,
                                  body={"content": "# %s\n\nwritten while locked" % content})

    def test_write_waits_for_the_writer_lock_then_503(self):
        self.get_ok(2)  # both workers have their database open (they are what waits)
        path = sqlite_path(self.stack.db_url)
        lock = WriterLock(path)
        try:
            self.get_ok()  # WAL: readers are not blocked by a writer
            t0 = time.monotonic()
            r = self.write("refused")
            took = time.monotonic() - t0
        finally:
            lock.release()
        self.assert_unavailable(r)
        self.assertGreaterEqual(took, 0.8, "answered before the busy timeout: did it wait?")
        self.assertLess(took, 3.0)
        # A lock released within the busy timeout: the write waits for it and succeeds.
        lock = WriterLock(path)
        timer = threading.Timer(0.3, lock.release)
        timer.start()
        try:
            r = self.write("accepted")
        finally:
            timer.join()
        self.assertEqual(r.status, 200, r.text)
        self.assertEqual(self.stack.request("GET", "/v2/notes", token=self.token).json()["total"], 21)
        out = self.stack.notesctl("check", self.user, check=False)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)


class Deadline(Unavailable):
    config = {"workers": 1, "request_timeout_ms": 1000, "db_busy_timeout_ms": 900}

    def test_request_over_deadline_is_503_and_slot_comes_back(self):
        path = sqlite_path(self.stack.db_url)
        # An idle connection of our own keeps DB-shm in place whatever the worker does.
        keeper = subprocess.Popen(["sqlite3", path], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.addCleanup(keeper.stdout.close)
        self.addCleanup(keeper.wait, 10)
        self.addCleanup(keeper.stdin.close)
        keeper.stdin.write("SELECT count(*) FROM sqlite_master;\n")
        keeper.stdin.flush()
        keeper.stdout.readline()
        self.get_ok()
        worker = self.stack.wait_for_workers(1)
        took = self.unavailable_while_held(WalReadLocks(path))
        self.assertGreaterEqual(took, 0.9, "answered before the deadline: not the deadline path")
        self.assertLess(took, 5.0, "the deadline (1 s) did not cut the request short")
        self.assertIn("deadline", self.stack.logs())
        self.stack.wait_for_workers(1, exclude=worker)  # the stuck worker was replaced
        self.get_ok(3)


class Snapshots(SupervisorCase):
    config = {"workers": 1}

    def test_worker_sees_writes_made_after_its_last_request(self):
        # A worker must not keep a read transaction (an old snapshot) open between requests.
        first = self.stack.request("GET", "/v2/notes", token=self.token).json()["total"]
        self.stack.notesctl("user", "add", "bob")
        token = self.stack.create_token("bob")
        self.stack.notesctl("demo", "bob", "--notes", "3")
        r = self.stack.request("GET", "/v2/notes", token=token)
        self.assertEqual(r.status, 200, r.text)
        self.assertEqual(r.json()["total"], 3, "the worker answered from a stale snapshot")
        self.assertEqual(first, 20)


class Logs(SupervisorCase):
    config = {"workers": 2}

    def test_request_ids_logged_token_never(self):
        ids = []
        for _ in range(3):
            r = self.stack.request("GET", "/v2/notes", query={"limit": 2}, token=self.token)
            ids.append(r.json()["request_id"])
        bad = self.stack.request("GET", "/v2/notes", token=self.token + "x")
        self.assertEqual(bad.status, 401)
        ids.append(bad.json()["request_id"])
        time.sleep(0.3)  # the worker logs after finishing the response
        logs = self.stack.logs()
        for rid in ids:
            self.assertIn(rid, logs)
        self.assertNotIn(self.token, logs)
        self.assertNotIn(self.token[:16], logs)
        self.assertNotIn(self.token, self.stack.nginx_logs())


if __name__ == "__main__":
    unittest.main()
