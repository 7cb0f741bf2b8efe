"""Fault rows: stuck workers and stalled FastCGI peers. The master enforces the request deadline from its scoreboard (php-fpm's
request_terminate_timeout), through the real nginx and the real pool: a worker SIGSTOPped in the
middle of a request under load, and a handler wedged with every signal blocked (the test hook of
t/notesd-test-hooks), are ended and replaced; their clients get the JSON 503 within the deadline
plus one second. A FastCGI peer that stalls in the middle of its params or its body does not pin
a worker beyond io_timeout_ms."""
import os
import signal
import socket
import struct
import threading
import time
import unittest

import faultlib  # noqa: E402 (also puts t/e2e on sys.path)
import fcgi  # noqa: E402
from harness import Stack  # noqa: E402
from test_supervisor import Load  # noqa: E402

TIMEOUT_MS = 1000


def assert_json_503(case, r):
    case.assertEqual(r.status, 503, r.text[:300])
    doc = r.json()
    case.assertEqual(doc["error_metadata"]["error_kind"], "UNAVAILABLE")
    case.assertEqual(r.headers["X-Request-Id"], doc["request_id"])


class TimedRequest(threading.Thread):
    """One request through nginx in a thread; keeps the response and how long it took."""

    def __init__(self, stack, token, query):
        super().__init__(daemon=True)
        self.stack, self.token, self.query = stack, token, query
        self.response, self.error, self.took = None, None, None

    def run(self):
        t0 = time.monotonic()
        try:
            self.response = self.stack.request("GET", "/v2/notes", query=self.query,
                                               token=self.token, timeout=60)
        except Exception as e:  # noqa: BLE001
            self.error = repr(e)
        self.took = time.monotonic() - t0


class DeadlineCase(unittest.TestCase):
    config = {}

    def setUp(self):
        self.stack = Stack(config=dict({"request_timeout_ms": TIMEOUT_MS,
                                        "db_busy_timeout_ms": 500}, **self.config),
                           test_hooks=True).start()
        self.addCleanup(self.stack.stop)
        self.user, self.token = self.stack.create_user("alice")
        self.stack.notesctl("demo", self.user, "--notes", "20")

    def busy_worker(self, timeout=5.0, min_elapsed_ms=0):
        """(pid, request id) of a worker the status page shows inside a request that has run for
        at least min_elapsed_ms (the slow request among the load's quick ones)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            busy = [w for w in self.stack.status()["workers"]
                    if w["state"] == "busy" and w["phase"] != "read"
                    and w["elapsed_ms"] >= min_elapsed_ms]
            if busy:
                return busy[0]["pid"], busy[0]["request_id"]
            time.sleep(0.02)
        self.fail("no worker inside a request")

    def assert_killed_and_replaced(self, pid, took, rid):
        self.assertLess(took, TIMEOUT_MS / 1000 + 1.0, "the 503 came later than deadline + 1 s")
        self.stack.wait_for(lambda: pid not in self.stack.worker_pids(), "the stuck worker to end")
        self.stack.wait_for_workers(int(self.stack.settings["workers"]), exclude=[pid])
        logs = self.stack.logs()
        self.assertIn("request past its deadline: ending the worker", logs)
        line = [ln for ln in logs.splitlines() if "request past its deadline" in ln][0]
        self.assertIn(rid, line, "the master logs the request id")
        st = self.stack.status()
        self.assertEqual(st["requests"]["deadline_kills"], 1)
        self.assertEqual(st["worker_lifecycle"]["crashes"], 0, "a deadline kill is not a crash")
        self.assertGreaterEqual(st["worker_lifecycle"]["restarts"], 1)


class StoppedWorker(DeadlineCase):
    config = {"workers": 2}

    def test_sigstopped_worker_mid_request_under_load(self):
        self.stack.wait_for_workers(2)
        with Load(self.stack, self.token, threads=3) as load:
            slow = TimedRequest(self.stack, self.token, {"notesd_test_sleep_ms": 700})
            slow.start()
            pid, rid = self.busy_worker(min_elapsed_ms=200)  # load requests take a few ms
            os.kill(pid, signal.SIGSTOP)  # its own deadline (SIGALRM) can no longer run
            slow.join(30)
            time.sleep(0.5)
        self.assertIsNone(slow.error, slow.error)
        assert_json_503(self, slow.response)
        self.assertEqual(slow.response.json()["request_id"], rid, "the stopped worker served it")
        self.assert_killed_and_replaced(pid, slow.took, rid)
        self.assertEqual(load.errors, [])
        self.assertGreater(len(load.results), 5, "the load did not run")
        bad = [r for r in load.results if r[0] not in (200, 503) or r[1] is None]
        self.assertEqual(bad, [], "every other request gets 200 or the JSON 503")


class HungHandler(DeadlineCase):
    config = {"workers": 1}

    def test_wedged_handler_is_killed(self):
        pid = self.stack.wait_for_workers(1)[0]
        hung = TimedRequest(self.stack, self.token, {"notesd_test_hang": 1})
        hung.start()
        _, rid = self.busy_worker()
        hung.join(30)
        self.assertIsNone(hung.error, hung.error)
        assert_json_503(self, hung.response)
        self.assert_killed_and_replaced(pid, hung.took, rid)
        r = self.stack.request("GET", "/v2/notes", token=self.token)
        self.assertEqual(r.status, 200, "the replacement serves")


def begin_and_params(params, cut=None):
    data = fcgi.record(fcgi.BEGIN_REQUEST, 1, struct.pack("!HB5x", fcgi.RESPONDER, 0))
    body = fcgi.encode_params(params)
    if cut is None:
        return data + fcgi.stream(fcgi.PARAMS, 1, body)
    return data + fcgi.record(fcgi.PARAMS, 1, body[:cut])


class StalledInput(unittest.TestCase):
    """A peer on the worker socket (nginx is the only one in production, but anyone with access
    to the socket could be) that stops sending: the only worker must come free again."""

    def setUp(self):
        self.stack = Stack(config={"workers": 1, "io_timeout_ms": 1000}).start()
        self.addCleanup(self.stack.stop)
        self.user, self.token = self.stack.create_user("alice")

    def params(self, **extra):
        return faultlib.fastcgi_params(self.token, **extra)

    def stalled(self, data):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(20)
        s.connect(self.stack.socket_path)
        self.addCleanup(s.close)
        s.sendall(data)
        return s

    def assert_worker_free(self, stalled):
        # The stalled connection is closed by the worker (recv sees the end, not our timeout)...
        try:
            while stalled.recv(65536):
                pass
        except socket.timeout:
            self.fail("the worker kept the stalled connection open")
        # ...and the only worker answers the next request.
        r = self.stack.request("GET", "/v2/notes", token=self.token, timeout=20)
        self.assertEqual(r.status, 200, r.text[:300])
        self.assertEqual(self.stack.notesd_proc.poll(), None)

    def test_stall_in_params(self):
        self.stack.wait_for_workers(1)
        s = self.stalled(begin_and_params(self.params(), cut=20))
        self.assert_worker_free(s)
        self.assertIn("params stalled", self.stack.logs())
        self.assertGreaterEqual(self.stack.status()["requests"]["input_failed"], 1)

    def test_stall_in_body(self):
        self.stack.wait_for_workers(1)
        p = self.params(REQUEST_METHOD="POST", DOCUMENT_URI="/v2/notes/search",
                        CONTENT_TYPE="application/json", CONTENT_LENGTH="100")
        s = self.stalled(begin_and_params(p) + fcgi.record(fcgi.STDIN, 1, b'{"query":'))
        self.assert_worker_free(s)

    def test_stall_before_begin(self):
        self.stack.wait_for_workers(1)
        s = self.stalled(b"\x01\x01\x00")  # three bytes of a record header
        self.assert_worker_free(s)


if __name__ == "__main__":
    unittest.main()
