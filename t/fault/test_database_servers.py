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
  run again on a new connection (a request's reads are replayed once, its writes never).

A restart under load is test_backends.DatabaseRestart in the e2e suite's server passes.
"""
import os
import time
import unittest

import faultlib  # noqa: F401 (puts t/e2e on sys.path)
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


class MariaDb(ServerFault):
    backend = "mysql"


class PostgreSql(ServerFault):
    backend = "postgresql"


del ServerFault  # the base class runs no rows of its own

if __name__ == "__main__":
    unittest.main()
