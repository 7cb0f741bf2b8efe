"""Database servers (issue 4): a database restart under load, and several notesd hosts on one
database. Server backends only: t/run_tests.py runs this module in the e2e passes with
NOTESD_E2E_DB=mysql or postgresql (never on SQLite, where it would fail, not skip).

- DatabaseRestart: a server instance of the test's own (t/db/mariadb.sh or postgresql.sh in a
  temp dir, so the shared test servers are not disturbed) is stopped for a few seconds while two
  clients keep requesting lists and searches: every answer is a 200 or the worker's 503 JSON
  with Retry-After (never a 500, never nginx's HTML), everything is 200 again shortly after the
  server is back, and the notesd master and workers are the same processes throughout.
- ConnectTimeout: a server that accepts connections and never answers costs a request
  db_connect_timeout_s, not the request deadline; notesd refuses a connect timeout that is not
  below the deadline.
- SeveralHosts: two notesd instances (same secret, same database, two sockets) behind their own
  nginx each and behind one nginx whose upstream lists both sockets: walking every list page
  and every search page with requests alternating between the instances gives exactly what one
  instance gives (cursors, snapshots and tokens are honoured by either).
"""
import os
import socket
import subprocess
import threading
import time
import unittest

import serverdb
from harness import BUILDDIR, Stack, assert_unavailable
from serverdb import ThrowawayServer

OUTAGE_S = 3          # how long the database server stays down
RECOVERY_S = 5        # after it is back, every request must be 200 from then on
SETTLE_S = 3          # and this much load is kept up after the recovery window
CLIENTS = 2
PAUSE_S = 0.03        # between one client's requests: light load
DB_WORDS = ("mysql", "mariadb", "postgres", "sql", "sock", "select", "errno")


def server_backend(test):
    backend = serverdb.e2e_backend()
    if backend == "sqlite":
        test.fail("test_backends needs a database server: NOTESD_E2E_DB=mysql or postgresql "
                  "(t/run_tests.py does this when NOTESD_TEST_MYSQL / NOTESD_TEST_PGSQL are set)")
    return backend


class Load:
    """CLIENTS threads requesting notes, collections and searches until stop(); every answer is
    kept as (start time, kind, Response or the exception's text)."""

    KINDS = (("GET", "/v2/notes", {"limit": 5}, None),
             ("GET", "/v2/collections", {"limit": 5}, None),
             ("POST", "/v2/notes/search", None, {"query": "review", "limit": 5}))

    def __init__(self, stack, token):
        self.stack, self.token = stack, token
        self.results = []
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.threads = [threading.Thread(target=self.client, args=(i,), daemon=True)
                        for i in range(CLIENTS)]
        for t in self.threads:
            t.start()

    def client(self, i):
        n = i
        while not self.done.is_set():
            method, path, query, body = self.KINDS[n % len(self.KINDS)]
            n += 1
            t0 = time.monotonic()
            try:
                r = self.stack.request(method, path, query=query, body=body, token=self.token,
                                       timeout=20)
            except Exception as e:  # noqa: BLE001 (kept: the test reports it)
                r = "%s: %s" % (e.__class__.__name__, e)
            with self.lock:
                self.results.append((t0, "%s %s" % (method, path), r))
            time.sleep(PAUSE_S)

    def stop(self):
        self.done.set()
        for t in self.threads:
            t.join(30)
        return sorted(self.results, key=lambda x: x[0])


class DatabaseRestart(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.backend = serverdb.e2e_backend()
        cls.server = None
        if cls.backend == "sqlite":
            return
        cls.server = ThrowawayServer(cls.backend)
        try:
            cls.stack = Stack(db=cls.server.conn, config={
                "workers": 2, "request_timeout_ms": 5000, "db_busy_timeout_ms": 2000,
                "db_connect_timeout_s": 2}).start()
        except BaseException:
            cls.server.close()
            raise
        cls.user, cls.token = cls.stack.create_user("restart")
        cls.stack.notesctl("demo", cls.user, "--notes", "200")

    @classmethod
    def tearDownClass(cls):
        if cls.server is not None:
            cls.stack.stop()
            cls.server.close()

    def test_restart_under_load_gives_200_or_503_and_recovers_in_place(self):
        server_backend(self)
        master, workers = self.stack.master_pid(), self.stack.wait_for_workers(2)
        load = Load(self.stack, self.token)
        try:
            time.sleep(1.0)
            down_at = time.monotonic()
            self.server.run("restart", OUTAGE_S, timeout=120)
            back_at = time.monotonic()
            time.sleep(RECOVERY_S + SETTLE_S)
        finally:
            results = load.stop()
        upstream = self.stack.upstream_statuses(
            r.headers.get("X-Request-Id") for _, _, r in results
            if not isinstance(r, str) and r.status == 503 and r.headers.get("X-Request-Id"))
        outage = [x for x in results if down_at <= x[0] < back_at]
        late = [x for x in results if x[0] >= back_at + RECOVERY_S]
        unavailable = 0
        for t0, kind, r in results:
            self.assertNotIsInstance(r, str, "%s at %+.1f s: %s" % (kind, t0 - down_at, r))
            if r.status == 200:
                self.assertIsInstance(r.json()["results"], list)
                continue
            self.assertEqual(r.status, 503, "%s at %+.1f s -> %d %s"
                             % (kind, t0 - down_at, r.status, r.text[:300]))
            assert_unavailable(self, r, kind, DB_WORDS, upstream)
            unavailable += 1
        statuses = [r.status for _, _, r in outage if not isinstance(r, str)]
        print("%s: %d requests while down (%d x 503), %d after recovery; back after %.1f s"
              % (self.backend, len(outage), statuses.count(503), len(late), back_at - down_at))
        self.assertGreater(len(outage), 10, "too little load while the database was down")
        self.assertGreater(unavailable, 0, "no 503 while the database was down: not tested")
        self.assertGreater(len(late), 20)
        bad = [(round(t0 - back_at, 2), kind, r.status) for t0, kind, r in late if r.status != 200]
        self.assertEqual(bad, [], "not all 200 %d s after the database was back" % RECOVERY_S)
        self.assertEqual(self.stack.master_pid(), master)
        self.assertEqual(self.stack.worker_pids(), workers, "workers were replaced")
        self.assertIsNone(self.stack.notesd_proc.poll())


class ConnectTimeout(unittest.TestCase):
    def test_unanswering_server_is_503_within_the_connect_timeout(self):
        # A server that accepts TCP connections and never says a word: the worker's connect
        # must give up after db_connect_timeout_s (1 s), well before the request deadline (5 s),
        # so the worker answers the 503 itself and stays.
        backend = server_backend(self)
        mute = socket.socket()
        mute.bind(("127.0.0.1", 0))
        mute.listen(64)
        self.addCleanup(mute.close)
        port = mute.getsockname()[1]
        conn = {"mysql": "mysql://db=notesd user=notesd password=x host=127.0.0.1 port=%d "
                         "connect_timeout=30",
                "postgresql": "postgresql://dbname=notesd user=notesd password=x "
                              "host=127.0.0.1 port=%d connect_timeout=30"}[backend] % port
        with Stack(db=conn, migrate=False, config={
                "workers": 1, "request_timeout_ms": 5000, "db_busy_timeout_ms": 1000,
                "db_connect_timeout_s": 1}) as st:
            worker = st.wait_for_workers(1)
            t0 = time.monotonic()
            r = st.request("GET", "/v2/notes", token="x" * 40)
            took = time.monotonic() - t0
            self.assertEqual(r.status, 503, r.text)
            self.assertEqual(r.json()["error_metadata"]["error_kind"], "UNAVAILABLE")
            self.assertRegex(r.headers.get("Retry-After", ""), r"^[1-9][0-9]*$")
            self.assertLess(took, 3.5, "the connect was not cut at db_connect_timeout_s")
            self.assertGreaterEqual(took, 0.9)
            time.sleep(0.3)
            self.assertEqual(st.worker_pids(), worker, "the worker was replaced")

    def test_connect_timeout_must_be_below_the_deadline(self):
        server_backend(self)
        # (checked without connecting: --check-config)
        p = subprocess.run([os.path.join(BUILDDIR, "notesd"), "--check-config", "--config",
                            os.devnull, "--set", "db=mysql://db=x user=y", "--set", "secret=" + "s" * 40,
                            "--set", "request_timeout_ms=3000", "--set", "db_busy_timeout_ms=100",
                            "--set", "db_connect_timeout_s=3"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("db_connect_timeout_s", p.stdout + p.stderr)


def strip_ids(page):
    """A page without what differs on every request (request_id; snapshot_id is random)."""
    return {k: v for k, v in page.items() if k not in ("request_id", "snapshot_id")}


class Alternating:
    """Sends request i to stacks[i % len(stacks)] (each instance through its own nginx)."""

    def __init__(self, stacks):
        self.stacks, self.n = stacks, 0

    def request(self, *args, **kw):
        st = self.stacks[self.n % len(self.stacks)]
        self.n += 1
        return st.request(*args, **kw)


def walk_list(client, path, token, query):
    pages, query = [], dict(query)
    while True:
        r = client.request("GET", path, query=query, token=token)
        if r.status != 200:
            raise AssertionError("%s %s -> %d %s" % (path, query, r.status, r.text[:300]))
        page = r.json()
        pages.append(strip_ids(page))
        if not page.get("next_page") or len(pages) > 1000:
            return pages
        query["page"] = page["next_page"]


def walk_search(client, token, body):
    """Every page of one search: the first makes the snapshot, the others read it."""
    pages, offset, snapshot = [], 0, None
    while True:
        req = dict(body, offset=offset)
        if snapshot:
            req["snapshot_id"] = snapshot
        r = client.request("POST", "/v2/notes/search", body=req, token=token)
        if r.status != 200:
            raise AssertionError("search %s -> %d %s" % (req, r.status, r.text[:300]))
        page = r.json()
        if snapshot:
            assert page["snapshot_id"] == snapshot, (page["snapshot_id"], snapshot)
        snapshot = page["snapshot_id"]
        pages.append(strip_ids(page))
        if not page["has_next_page"] or len(pages) > 200:
            return pages
        offset += len(page["results"])


LIST_WALKS = (("/v2/notes", {"limit": 7}),
              ("/v2/notes", {"limit": 11, "order_by": "created_at"}),
              ("/v2/collections", {"limit": 2}))
SEARCHES = ({"query": "review", "limit": 7}, {"query": "notes week", "limit": 9},
            {"query": "\"next week\"", "limit": 5}, {"query": "summ", "limit": 6})


class SeveralHosts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stacks = []
        if serverdb.e2e_backend() == "sqlite":
            return
        a = Stack(config={"workers": 2}).start()  # a fresh database on the test server
        cls.stacks.append(a)
        secret = os.path.join(a.data_dir, "secret")
        b = Stack(db=a.db_url, migrate=False, config={"workers": 2, "secret_file": secret}).start()
        cls.stacks.append(b)
        both = "server unix:%s; server unix:%s;" % (a.socket_path, b.socket_path)
        rr = Stack(notesd=False, upstream=both).start()
        cls.stacks.append(rr)
        cls.a, cls.b, cls.rr = a, b, rr
        cls.user, cls.token = a.create_user("hosts")
        a.notesctl("demo", cls.user, "--notes", "400")

    @classmethod
    def tearDownClass(cls):
        for st in reversed(cls.stacks):
            st.stop()

    def walks(self, client):
        out = []
        for path, query in LIST_WALKS:
            out.append(walk_list(client, path, self.token, query))
        for body in SEARCHES:
            out.append(walk_search(client, self.token, body))
        return out

    def check_walks(self, single, other, how):
        for (i, want), got in zip(enumerate(single), other):
            what = LIST_WALKS[i] if i < len(LIST_WALKS) else SEARCHES[i - len(LIST_WALKS)]
            self.assertGreater(len(want), 2, "too few pages to alternate: %s" % (what,))
            self.assertTrue(want[0]["results"], "nothing found: %s" % (what,))
            self.assertEqual(got, want, "%s: %s differs from one instance" % (how, what))

    def test_alternating_instances_give_single_instance_results(self):
        server_backend(self)
        single = self.walks(Alternating([self.a]))
        self.check_walks(single, self.walks(Alternating([self.b])), "instance B alone")
        self.check_walks(single, self.walks(Alternating([self.a, self.b])), "A, B, A, ...")
        self.check_walks(single, self.walks(Alternating([self.b, self.a])), "B, A, B, ...")

    def test_one_upstream_with_both_sockets(self):
        server_backend(self)
        single = self.walks(Alternating([self.a]))
        before = [written(self.a), written(self.b)]
        self.check_walks(single, self.walks(self.rr), "one nginx upstream, both sockets")
        served = [written(self.a) - before[0], written(self.b) - before[1]]
        # Round robin: each instance wrote about half of the answers.
        total = sum(served)
        print("bytes written by A, B during the round-robin walks: %s" % served)
        for name, n in zip("AB", served):
            self.assertGreater(n, total // 4, "instance %s served too little: %s" % (name, served))

    def test_other_secret_rejects_the_cursor(self):
        # The control: shared cursors work above because the secret is shared, not by accident.
        server_backend(self)
        page = self.a.request("GET", "/v2/notes", query={"limit": 3}, token=self.token).json()
        with Stack(db=self.a.db_url, migrate=False, config={"workers": 1}) as c:
            r = c.request("GET", "/v2/notes", query={"limit": 3, "page": page["next_page"]},
                          token=self.token)
            self.assertEqual(r.status, 400, r.text)
            self.assertEqual(r.json()["error_metadata"]["error_kind"], "INVALID_CURSOR")
            r = self.b.request("GET", "/v2/notes", query={"limit": 3, "page": page["next_page"]},
                               token=self.token)
            self.assertEqual(r.status, 200, r.text)


def written(stack):
    """Bytes the instance's workers have written so far (/proc/PID/io wchar: their answers)."""
    total = 0
    for pid in stack.worker_pids():
        try:
            with open("/proc/%d/io" % pid) as f:
                for line in f:
                    if line.startswith("wchar:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


if __name__ == "__main__":
    unittest.main()
