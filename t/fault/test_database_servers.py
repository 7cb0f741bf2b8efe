"""Fault rows: the database server in trouble (MariaDB and PostgreSQL), through the real nginx
and worker pool, each backend on a server of the class's own (serverdb.ThrowawayServer: a
t/db/*.sh server in a temp dir, which the rows stop and SIGSTOP without disturbing the shared
test servers). A backend runs when its server is in the environment (NOTESD_TEST_MYSQL,
NOTESD_TEST_PGSQL: CI has both); without it the class is reported as skipped.

- stopped, then started again: every request meanwhile is the worker's JSON 503 with
  Retry-After; once the server is back every request is 200, served by the same workers;
- hung (SIGSTOP of every server process), then resumed (SIGCONT): the JSON 503 within the
  request deadline plus one second (a connection that hangs in a read costs a worker, which the
  deadline ends and the master replaces; a new connection gives up after db_connect_timeout_s),
  and every request is 200 after SIGCONT;
- the workers' idle connections killed on the server (KILL CONNECTION, pg_terminate_backend;
  a server's idle timeout does the same): the next request is 200, its first read having been
  run again on a new connection (a request's reads are replayed once, its writes never);
- read-only (MariaDB: SET GLOBAL read_only, which binds notesd: it has neither SUPER nor
  READ_ONLY ADMIN; PostgreSQL: default_transaction_read_only in the configuration, reloaded):
  lists are 200, a search (it saves a snapshot) and a note create the JSON 503 with
  fault=read_only; made writable again, every request is 200 from the same worker;
- the user's row locked by another session (FOR UPDATE in an open transaction): a note create
  waits db_busy_timeout_ms, then the worker's JSON 503 (fault=busy or timeout); lists and
  searches go on (they take no row lock); released, the create is 200;
- the disk full: notesd's tables on a small tmpfs of the row's own (MariaDB: the database's
  directory moved there behind a symbolic link, the server stopped meanwhile; PostgreSQL: a
  tablespace there; the servers' logs stay on their disk), filled up: a table takes rows while
  its allocated pages have room, so searches and note creates are 200 until their table must
  grow, then the JSON 503 with fault=disk_full (MariaDB 1114, PostgreSQL 53100), lists 200;
  after that a write is 200 or the JSON 503 (PostgreSQL keeps the pages a failed write added),
  and every note that answered 200 reads back once the space is freed; then every request is
  200 from the same worker.

The full-disk rows mount a tmpfs: run as root (CI does).

A restart under load is test_backends.DatabaseRestart in the e2e suite's server passes.
"""
import os
import pwd
import select
import shutil
import subprocess
import time
import unittest

import faultlib  # also puts t/e2e on sys.path
import serverdb  # noqa: E402
from harness import Stack, assert_unavailable  # noqa: E402

TIMEOUT_MS = 2000
SEARCH = {"query": "review", "limit": 5}
DB_WORDS = ("mysql", "mariadb", "postgres", "sql", "sock", "select", "errno", "connection")


class ServerFault(faultlib.FaultCase):
    backend = None  # set by the subclasses

    @classmethod
    def setUpClass(cls):
        cls.server = cls.stack = None
        if not os.environ.get(serverdb.ADMIN_ENV[cls.backend], "").strip():
            return
        cls.server = serverdb.ThrowawayServer(cls.backend)
        try:
            cls.stack = Stack(db=cls.server.conn, config={
                "workers": 1, "request_timeout_ms": TIMEOUT_MS, "db_busy_timeout_ms": 1000,
                "db_connect_timeout_s": 1}).start()
            cls.user, cls.token = cls.stack.create_user("alice")
            cls.stack.notesctl("demo", cls.user, "--notes", "20")
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.stack is not None:
            cls.stack.stop()
        if cls.server is not None:
            cls.server.close()

    def setUp(self):
        if self.server is None:
            self.skipTest("%s is not set: no %s server in this run"
                          % (serverdb.ADMIN_ENV[self.backend], self.backend))
        # A row that failed may have left the server stopped or paused.
        try:
            self.server.run("resume")
        except serverdb.ServerError:
            pass  # not running
        self.server.run("start", timeout=120)
        self.assert_all_ok(1, "before the fault")
        self.worker = self.stack.worker_pids()
        self.crashes = self.stack.status()["worker_lifecycle"]["crashes"]

    # ---- requests ---------------------------------------------------------------------------

    def list_notes(self):
        return self.stack.request("GET", "/v2/notes", query={"limit": 5}, token=self.token,
                                  timeout=30)

    def search(self):
        return self.stack.request("POST", "/v2/notes/search", body=SEARCH, token=self.token,
                                  timeout=30)

    def assert_ok(self, r, what):
        self.assertEqual(r.status, 200, "%s: %d %s" % (what, r.status, r.text[:300]))

    def assert_unavailable(self, r, what, worker_answered=True):
        """The JSON 503, answered by the worker itself unless a stuck worker was ended (nginx
        then maps the 502)."""
        assert_unavailable(self, r, what, DB_WORDS, self.stack if worker_answered else None)

    def assert_all_ok(self, rounds=3, what="after the fault"):
        for i in range(rounds):
            self.assert_ok(self.list_notes(), "notes list %d %s" % (i, what))
            self.assert_ok(self.search(), "search %d %s" % (i, what))

    def assert_no_crash(self):
        st = self.stack.status()
        self.assertEqual(st["worker_lifecycle"]["crashes"], self.crashes, "a worker crashed")
        self.assertNotIn("internal error", self.stack.logs())

    # ---- the rows ---------------------------------------------------------------------------

    def test_server_stopped_then_started(self):
        self.server.run("stop")
        try:
            for i in range(3):
                self.assert_unavailable(self.list_notes(), "notes list %d while stopped" % i)
                self.assert_unavailable(self.search(), "search %d while stopped" % i)
        finally:
            self.server.run("start", timeout=120)
        self.assert_all_ok()
        self.assertEqual(self.stack.worker_pids(), self.worker, "the worker was replaced")
        self.assert_no_crash()
        self.assertIn("database unavailable", self.stack.logs())

    def test_server_hung_then_resumed(self):
        self.server.run("pause")
        try:
            # the first on the worker's hung connection (the deadline), the next on a new one
            # (the connect timeout: libpq's shortest is 2 s)
            for i, call in enumerate((self.list_notes, self.search)):
                t0 = time.monotonic()
                r = call()
                took = time.monotonic() - t0
                self.assert_unavailable(r, "request %d while hung" % i, worker_answered=False)
                self.assertLess(took, TIMEOUT_MS / 1000 + 1.0,
                                "request %d: the 503 came later than the deadline + 1 s" % i)
        finally:
            self.server.run("resume")
        self.assert_all_ok()
        self.assert_no_crash()

    def kill_connections(self):
        """Ends every connection of the user notesd on the server; returns how many."""
        if self.backend == "mysql":
            ids = self.server.sql("SELECT id FROM information_schema.processlist "
                                  "WHERE user = 'notesd'", "-N", "-B").split()
            if ids:
                self.server.sql("".join("KILL CONNECTION %s;\n" % i for i in ids))
            return len(ids)
        out = self.server.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE usename = 'notesd'", "-t", "-A")
        return out.split().count("t")

    def test_idle_connection_dropped(self):
        for call in (self.list_notes, self.search, self.list_notes):
            self.assertGreater(self.kill_connections(), 0, "no connection of the worker to end")
            self.assert_ok(call(), "%s after its connection was ended" % call.__name__)
        self.assertIn("database connection lost: the read runs again", self.stack.logs())
        self.assertEqual(self.stack.worker_pids(), self.worker, "the worker was replaced")
        self.assert_no_crash()


    # ---- read-only --------------------------------------------------------------------------

    def create_note(self, text="# written during the fault"):
        return self.stack.request("POST", "/v2/notes", body={"content": text}, token=self.token,
                                  timeout=30)

    def set_read_only(self, on):
        """The server read-only for notesd, or writable again. MariaDB: read_only, which binds
        every user without SUPER or READ_ONLY ADMIN (notesd has neither: t/db/mariadb.sh grants
        it ALL on its database only). PostgreSQL: default_transaction_read_only in the server's
        configuration, reloaded (every transaction not asking for READ WRITE itself is
        read-only: notesd never asks); the postmaster signals the sessions as it reloads, and a
        session applies the change before its next statement, so once a new session sees the
        value every session of the worker does."""
        if self.backend == "mysql":
            self.server.sql("SET GLOBAL read_only = %s" % ("ON" if on else "OFF"))
            return
        self.server.sql("ALTER SYSTEM %s; SELECT pg_reload_conf();" % (
            "SET default_transaction_read_only = on" if on
            else "RESET default_transaction_read_only"))
        want = "on" if on else "off"
        for _ in range(100):
            if self.server.sql("SHOW default_transaction_read_only", "-t", "-A").strip() == want:
                return
            time.sleep(0.05)
        self.fail("the server did not reload default_transaction_read_only = " + want)

    def test_server_read_only_then_writable(self):
        self.set_read_only(True)
        try:
            for i in range(3):
                self.assert_unavailable(self.search(), "search %d while read-only (its snapshot)"
                                        % i)
                self.assert_ok(self.list_notes(), "notes list %d while read-only" % i)
                self.assert_unavailable(self.create_note(), "note create %d while read-only" % i)
        finally:
            self.set_read_only(False)
        self.assert_all_ok()
        self.assert_ok(self.create_note("# written after the fault"), "note create after")
        self.assertEqual(self.stack.worker_pids(), self.worker, "the worker was replaced")
        self.assert_no_crash()
        self.assertIn("fault=read_only", self.stack.logs())

    # ---- locked -----------------------------------------------------------------------------

    def hold_user_lock(self):
        """Another session (the server's client, as an operator's or another host's) holding
        the write lock of the user's row, FOR UPDATE in an open transaction, as a write of
        notesd's own takes it; returns the client, which ends the transaction as its input
        closes. Waits until the lock is held: MariaDB's client, --unbuffered, prints each result
        as it comes (information_schema.innodb_trx showed its rows_locked as 0 now and then); psql buffers
        its output into a pipe, but pg_stat_activity shows the session idle in its
        transaction once the statement is done."""
        mysql = self.backend == "mysql"
        holder = subprocess.Popen(["sh", self.server.script, "sql", self.server.dir] +
                                  (["-N", "--unbuffered", "notesd"] if mysql else ["-d", "notesd"]),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        holder.stdin.write("BEGIN;\nSELECT 'locked', id FROM users WHERE name = '%s' FOR UPDATE;\n"
                           % self.user)
        holder.stdin.flush()
        held = ("SELECT COUNT(*) FROM pg_stat_activity WHERE state = 'idle in transaction' "
                "AND query LIKE '%FOR UPDATE%'")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and holder.poll() is None:
            if mysql:
                if select.select([holder.stdout], [], [], 0.5)[0]:
                    if holder.stdout.readline().startswith("locked"):
                        return holder
            elif self.server.sql(held, "-t", "-A").strip() not in ("", "0"):
                return holder
            else:
                time.sleep(0.05)
        holder.kill()
        self.fail("the other session did not get the user's lock: %r" % holder.communicate()[0])

    def test_user_locked_elsewhere_then_released(self):
        holder = self.hold_user_lock()
        try:
            for i in range(2):
                t0 = time.monotonic()
                r = self.create_note("# waits for the lock %d" % i)
                took = time.monotonic() - t0
                self.assert_unavailable(r, "note create %d while the user is locked" % i)
                self.assertGreaterEqual(took, 0.9, "answered before the lock wait timeout")
                self.assert_ok(self.list_notes(), "notes list %d while locked" % i)
                self.assert_ok(self.search(), "search %d while locked" % i)
        finally:
            holder.communicate(timeout=30)  # its input closed, the client ends; the server
            # rolls its transaction back
        self.assert_ok(self.create_note("# written after the lock"), "note create after")
        self.assert_all_ok()
        self.assertEqual(self.stack.worker_pids(), self.worker, "the worker was replaced")
        self.assert_no_crash()
        self.assertRegex(self.stack.logs(), r"fault=(busy|timeout)")

    # ---- full disk --------------------------------------------------------------------------

    def tables_on_tmpfs(self):
        """Puts notesd's tables and indexes on a small tmpfs; returns its path. The server's
        logs stay in its data directory, as on a server whose tables have a disk of their own.
        MariaDB: the database's directory (a file per table) moved there, a symbolic link in
        its place, the server stopped meanwhile. PostgreSQL: a tablespace there."""
        if self.backend == "mysql":
            mount = self.mount_tmpfs("16m", os.geteuid())
            self.move_database(mount, True)
            self.addCleanup(self.move_database, mount, False)
            return mount
        # the cluster runs as postgres when we are root (t/db/postgresql.sh)
        mount = self.mount_tmpfs("16m", pwd.getpwnam("postgres").pw_uid)
        self.server.sql("CREATE TABLESPACE notesd_full LOCATION '%s'" % mount)
        self.addCleanup(self.server.sql, "DROP TABLESPACE notesd_full")
        self.move_tables("pg_default", "notesd_full")
        self.addCleanup(self.move_tables, "notesd_full", "pg_default")
        return mount

    def move_database(self, mount, there):
        """MariaDB: the database notesd's directory moved onto `mount` (there) or back."""
        home = os.path.join(self.server.dir, "data", "notesd")
        away = os.path.join(mount, "notesd")
        self.server.run("stop")
        if there:
            shutil.move(home, away)
            os.symlink(away, home)
        else:
            os.unlink(home)
            shutil.move(away, home)
        self.server.run("start", timeout=120)

    def move_tables(self, src, dst):
        self.server.sql("ALTER TABLE ALL IN TABLESPACE %s OWNED BY notesd SET TABLESPACE %s; "
                        "ALTER INDEX ALL IN TABLESPACE %s OWNED BY notesd SET TABLESPACE %s"
                        % (src, dst, src, dst), "-d", "notesd")

    def first_unavailable(self, call, what, most=500):
        """Calls `call` until it is the JSON 503 (each answer before it a 200: a table's pages
        have room for some rows before it must grow); returns how many 200s came first."""
        for i in range(most):
            r = call()
            if r.status != 200:
                self.assert_unavailable(r, "%s %d with the disk full" % (what, i))
                return i
        self.fail("%s: still 200 after %d calls with the disk full" % (what, most))

    def test_disk_full_then_freed(self):
        mount = self.tables_on_tmpfs()
        self.assert_all_ok(1, "with the tables on the tmpfs")
        filler = faultlib.fill_up(mount)
        try:
            self.first_unavailable(self.search, "search")
            self.first_unavailable(self.create_note, "note create")
            answered = []  # notes created with the disk full: each must survive it
            for i in range(3):
                # A row fits while its table's pages have room, and on PostgreSQL the pages a
                # failed write added stay for the next one: a search (its snapshot row) or a
                # create is either 200 or the JSON 503, never anything else.
                r = self.search()
                if r.status != 200:
                    self.assert_unavailable(r, "search %d with the disk full" % i)
                self.assert_ok(self.list_notes(), "notes list %d with the disk full" % i)
                r = self.create_note()
                if r.status == 200:
                    answered.append(r.json()["id"])
                else:
                    self.assert_unavailable(r, "note create %d with the disk full" % i)
        finally:
            os.unlink(filler)
        self.assert_all_ok()
        for note_id in answered:  # a write that answered 200 is durable
            self.assert_ok(self.stack.request("GET", "/v2/notes/" + note_id, token=self.token),
                           "note %s created with the disk full, read after" % note_id)
        self.assert_ok(self.create_note("# written after the fault"), "note create after")
        self.assertEqual(self.stack.worker_pids(), self.worker, "the worker was replaced")
        self.assert_no_crash()
        self.assertIn("fault=disk_full", self.stack.logs())

class MariaDb(ServerFault):
    backend = "mysql"


class PostgreSql(ServerFault):
    backend = "postgresql"


del ServerFault  # the base class runs no rows of its own

if __name__ == "__main__":
    unittest.main()
