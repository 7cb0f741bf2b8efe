"""Tools for the fault matrix (`make check-fault`, t/run_tests.py's "fault" part).

Each t/fault/test_*.py module is a group of rows of the matrix; each test method is one row: a
fault done to the real stack (t/e2e/harness.py: real nginx with the project's config, real
notesd, real databases), and what clients must see meanwhile. t/run_tests.py runs every module
in a process of its own, on SQLite; a row that applies to database servers takes them from
server_backends() (the servers of NOTESD_TEST_MYSQL / NOTESD_TEST_PGSQL, which CI always has)
and loops over them itself, with subTest; a row that stops, pauses or breaks the server runs
one of its own instead (serverdb.ThrowawayServer, as test_database_servers does).

A new row: a test method in the module of its kind (or a new test_<kind>.py), for example

    import faultlib                       # puts t/e2e on sys.path too

    class WorkerKilled(faultlib.StackCase):   # one stack for the class: self.stack, self.token
        stack_args = {"config": {"workers": 2}}

        def test_sigkill_under_load(self):
            with faultlib.Flood(self.stack, self.token, connections=50) as flood:
                ...                        # the fault
            self.assert_flood_clean(flood)

or with a harness.Stack of its own when the fault spoils the stack. Add the module to
FAULT_TESTS in Makefile.am.

Rows must fail on the code before their fix: say in the commit how that was shown.
Addresses: every 127.x.y.z is the loopback, so a test can be many clients (Flood spreads its
connections over 127.0.1.0/24..., probes come from 127.0.0.2) and per-address limits apply to
each of them separately.
"""
import asyncio
import http.client
import resource
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import serverdb  # noqa: E402
import openapi_check  # noqa: E402
from harness import Headers, Response, Stack  # noqa: E402

PROBE_ADDR = "127.0.0.2"

# A flood is thousands of sockets in this process (and slowhttptest, its child): the soft
# descriptor limit up to the hard one.
_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if _hard == resource.RLIM_INFINITY or _soft < _hard:
    resource.setrlimit(resource.RLIMIT_NOFILE, (_hard if _hard != resource.RLIM_INFINITY
                                                else 1 << 20, _hard))
JSON_TYPE = "application/json; charset=utf-8"


def server_backends():
    """[(backend name for NOTESD_E2E_DB, admin connection string)] of the database servers this
    run has (CI: both). A storage-fault row loops over these (plus SQLite) with subTest."""
    out = []
    for name, var in (("mysql", "NOTESD_TEST_MYSQL"), ("postgresql", "NOTESD_TEST_PGSQL")):
        conn = os.environ.get(var, "").strip()
        if conn:
            out.append((name, conn))
    return out


def demo_user(stack, name="flood", notes=20):
    """Adds a user with `notes` generated notes; returns a token of it."""
    _, token = stack.create_user(name)
    stack.notesctl("demo", name, "--notes", str(notes))
    return token


def flood_addresses(n):
    """n distinct loopback source addresses, 127.0.1.1 onwards (never the probe's)."""
    return ["127.0.%d.%d" % (1 + i // 250, 1 + i % 250) for i in range(n)]


def fastcgi_params(token, **extra):
    """The FastCGI params of GET /v2/notes?limit=1 as nginx passes them (with `extra` changed),
    for a peer talking to the worker socket directly."""
    p = {"REQUEST_METHOD": "GET", "DOCUMENT_URI": "/v2/notes", "QUERY_STRING": "limit=1",
         "HTTP_AUTHORIZATION": "Bearer " + token, "CONTENT_LENGTH": "0",
         "REQUEST_ID": "0123456789abcdef0123456789abcdef"}
    p.update(extra)
    return p


def request_from(stack, method, path, source=PROBE_ADDR, headers=None, body=None, timeout=10.0,
                 unvalidated=None):
    """One request through nginx from a given loopback source address; returns a Response,
    checked against the OpenAPI document as the harness checks its own (openapi_check.py)
    unless `unvalidated` says why not."""
    conn = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=timeout,
                                      source_address=(source, 0))
    try:
        conn.request(method, path, body=body, headers=dict(headers or {}))
        resp = conn.getresponse()
        r = Response(resp.status, Headers(resp.getheaders()), resp.read())
    finally:
        conn.close()
    if not (unvalidated or stack.unvalidated):
        openapi_check.check_response(method, path, r.status, r.headers, r.body)
    return r


def json_error_kind(status, headers, body):
    """The error_kind of a contract error body (section 6), or a description of what is wrong."""
    if headers.get("Content-Type") != JSON_TYPE:
        return "not JSON: Content-Type %r" % headers.get("Content-Type")
    try:
        doc = json.loads(body)
        kind = doc["error_metadata"]["error_kind"]
        if doc["request_id"] != headers.get("X-Request-Id"):
            return "request_id differs from X-Request-Id"
    except (ValueError, KeyError, TypeError) as e:
        return "not an error body: %s" % e
    if status in (429, 503) and not (headers.get("Retry-After") or "").isdigit():
        return "%s without Retry-After" % kind
    return kind


def percentile(values, p):
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    v = sorted(values)
    k = max(0, min(len(v) - 1, int(-(-p * len(v) // 100)) - 1))
    return v[k]


class Probe:
    """A well-behaved client: one request at a time from PROBE_ADDR, every `interval` seconds,
    while it runs (a context manager). samples: [(seconds, status or None, what)] where what is
    "ok", an error_kind, or the exception of a request that got no answer."""

    def __init__(self, stack, path, token, interval=0.05, timeout=10.0):
        self.stack, self.path, self.token = stack, path, token
        self.interval, self.timeout = interval, timeout
        self.samples = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(self.timeout + 5)

    def _run(self):
        while not self._stop.is_set():
            t0 = time.monotonic()
            try:
                r = request_from(self.stack, "GET", self.path, timeout=self.timeout,
                                 headers={"Authorization": "Bearer " + self.token})
                what = "ok" if r.status == 200 else json_error_kind(r.status, r.headers, r.body)
                self.samples.append((time.monotonic() - t0, r.status, what))
            except OSError as e:
                self.samples.append((time.monotonic() - t0, None, repr(e)))
            self._stop.wait(max(0.0, self.interval - (time.monotonic() - t0)))

    def summary(self):
        lat = [s[0] for s in self.samples]
        statuses = {}
        for s in self.samples:
            statuses[s[1]] = statuses.get(s[1], 0) + 1
        return "%d probes, statuses %r, p50 %.3f s, p99 %.3f s, max %.3f s" % (
            len(lat), statuses, percentile(lat, 50), percentile(lat, 99), max(lat))


class Flood:
    """`connections` concurrent keep-alive clients, spread over `addresses` source addresses,
    each sending `request` (raw bytes, or built from method/path/token) again and again from the
    moment all are connected until the block ends (a context manager; runs in its own thread).

    Outcomes: statuses {code: count}, kinds {error_kind: count} of non-200 answers, errors
    [(repr of the exception, count)] of requests that got no complete answer (a reset, a close
    before the answer, a timeout), connected (how many connections were established)."""

    def __init__(self, stack, token, connections=2000, addresses=100, method="GET",
                 path="/v2/notes?limit=1", body=b"", timeout=30.0):
        self.stack, self.timeout = stack, timeout
        hdr = "%s %s HTTP/1.1\r\nHost: notesd\r\nAuthorization: Bearer %s\r\n" % (method, path, token)
        if body or method == "POST":
            hdr += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        self.request = hdr.encode() + b"\r\n" + body
        self.sources = flood_addresses(addresses)
        self.n = connections
        self.statuses, self.kinds, self._errors = {}, {}, {}
        self.connected = 0
        self.requests = 0
        self._ready = threading.Event()
        self._stop = None
        self._loop = None
        self._thread = threading.Thread(target=self._main, daemon=True)

    @property
    def errors(self):
        return sorted(self._errors.items())

    def __enter__(self):
        self._thread.start()
        if not self._ready.wait(self.timeout + 30):
            raise RuntimeError("the flood did not get its connections going")
        return self

    def __exit__(self, *exc):
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(self.timeout + 30)

    def _main(self):
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._flood())
        finally:
            self._loop.close()
            self._ready.set()

    def _error(self, e):
        key = e if isinstance(e, str) else e.__class__.__name__ + (": %s" % e if str(e) else "")
        self._errors[key] = self._errors.get(key, 0) + 1

    async def _flood(self):
        self._stop = asyncio.Event()
        go = asyncio.Event()
        counted = []

        async def client(i):
            src = self.sources[i % len(self.sources)]
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(
                    "127.0.0.1", self.stack.port, local_addr=(src, 0)), self.timeout)
            except (OSError, asyncio.TimeoutError) as e:
                self._error(e)
                counted.append(i)
                if len(counted) == self.n:
                    go.set()
                return
            self.connected += 1
            counted.append(i)
            if len(counted) == self.n:
                go.set()
            await go.wait()
            try:
                while not self._stop.is_set():
                    writer.write(self.request)
                    self.requests += 1
                    status, close = await asyncio.wait_for(self._answer(reader), self.timeout)
                    if close:  # the server ended the connection after a whole answer: reconnect
                        writer.close()
                        reader, writer = await asyncio.wait_for(asyncio.open_connection(
                            "127.0.0.1", self.stack.port, local_addr=(src, 0)), self.timeout)
            except Exception as e:  # noqa: BLE001 (a reset, a close, a timeout, garbage: counted)
                self._error(e)
            finally:
                writer.close()

        tasks = [asyncio.ensure_future(client(i)) for i in range(self.n)]
        await go.wait()
        self._ready.set()
        await self._stop.wait()
        await asyncio.wait(tasks, timeout=self.timeout + 5)
        for t in tasks:
            t.cancel()

    async def _answer(self, reader):
        """Reads one whole response; counts it; returns (status, whether the server closes)."""
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        pairs = []
        for line in lines[1:]:
            if line:
                k, _, v = line.partition(":")
                pairs.append((k.strip(), v.strip()))
        headers = Headers(pairs)
        if (headers.get("Transfer-Encoding") or "").lower() == "chunked":
            body = b""
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunk = await reader.readexactly(size + 2)
                if size == 0:
                    break
                body += chunk[:-2]
        else:
            body = await reader.readexactly(int(headers.get("Content-Length", "0")))
        self.statuses[status] = self.statuses.get(status, 0) + 1
        if status != 200:
            kind = "%d %s" % (status, json_error_kind(status, headers, body))
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
        return status, (headers.get("Connection") or "").lower() == "close"

    def summary(self):
        return "%d connections (%d established), %d requests, statuses %r, errors %r, kinds %r" % (
            self.n, self.connected, self.requests, self.statuses, self.errors, self.kinds)


class SlowHttpTest:
    """Debian's slowhttptest as the attacker, in the background while the block runs.
    mode: "-H" (slowloris: headers that never end) or "-B" (a body sent a few bytes at a time)."""

    def __init__(self, url, mode, connections=1000, rate=250, interval=3, length=40,
                 extra=()):
        self.binary = shutil.which("slowhttptest")
        self.cmd = [self.binary or "slowhttptest", mode, "-c", str(connections),
                    "-r", str(rate), "-i", str(interval), "-l", str(length), "-u", url,
                    "-p", "3", "-v", "1"] + list(extra)
        self.proc = None
        self.output = ""

    def __enter__(self):
        if not self.binary:
            raise RuntimeError("slowhttptest is not installed (tools/debian-packages.txt)")
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        try:
            out, _ = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        self.output = out.decode("utf-8", errors="replace")

    def text(self):
        """Its report without the terminal colours."""
        return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", self.output)

    def most_connected(self):
        """The most connections its status reports (one a second) saw open at once."""
        return max([int(n) for n in re.findall(r"connected:\s+(\d+)", self.text())] or [0])


def fill_up(directory):
    """Appends to DIRECTORY/filler until its file system is full (again: whatever was freed
    meanwhile is taken too, as by a log that keeps growing); returns the file's path."""
    path = os.path.join(directory, "filler")
    with open(path, "ab", buffering=0) as f:
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError:
                pass
    return path


class FaultCase(unittest.TestCase):
    """Assertions and set-ups shared by the rows."""

    def mount_tmpfs(self, size, uid=0):
        """A tmpfs of `size` (e.g. "8m") of the row's own, its root owned by `uid`, unmounted by
        its exact path at the row's cleanup; returns its path. Needs root (CI runs as root)."""
        if os.geteuid() != 0:
            self.fail("the full-disk rows mount a tmpfs: run them as root (CI does)")
        path = tempfile.mkdtemp(prefix="notesd-full-")
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=0700,uid=%d"
                            % (size, uid), "notesd-fault", path], capture_output=True, text=True)
        if p.returncode != 0:
            os.rmdir(path)
            self.fail("cannot mount a tmpfs (the row needs CAP_SYS_ADMIN): " + p.stderr)
        self.addCleanup(os.rmdir, path)
        self.addCleanup(subprocess.run, ["umount", "-l", path], capture_output=True)
        return path

    def assert_flood_clean(self, flood, allowed=(200, 503)):
        """Every request of the flood got a whole answer: 200, or a contract JSON error with
        Retry-After (503 UNAVAILABLE by default) - never a reset, a close or a timeout."""
        self.assertEqual(flood.errors, [], flood.summary())
        self.assertEqual(flood.connected, flood.n, flood.summary())
        self.assertLessEqual(set(flood.statuses), set(allowed), flood.summary())
        for kind in flood.kinds:
            status, _, what = kind.partition(" ")
            if status == "503":
                self.assertEqual(what, "UNAVAILABLE", flood.summary())
        self.assertGreater(flood.statuses.get(200, 0), 0, flood.summary())

    def assert_probe_answered(self, probe, within_s=1.0, allow_503=False):
        """Every probe got a whole answer (200, or with allow_503 the JSON 503), p99 latency
        under within_s: the service stays available to a well-behaved client."""
        self.assertGreater(len(probe.samples), 10, "too few probes ran")
        for secs, status, what in probe.samples:
            if status == 200 or (allow_503 and status == 503 and what == "UNAVAILABLE"):
                continue
            self.fail("probe got %s %s after %.3f s; %s" % (status, what, secs, probe.summary()))
        self.assertIn(200, [s[1] for s in probe.samples], probe.summary())
        lat = [s[0] for s in probe.samples]
        self.assertLess(percentile(lat, 99), within_s, probe.summary())


class StackCase(FaultCase):
    """A class of rows sharing one stack (Stack(**stack_args)), started once, with a user that
    has a few notes: self.stack, self.token."""

    stack_args = {"config": {"workers": 2}}

    @classmethod
    def setUpClass(cls):
        cls.stack = Stack(**cls.stack_args).start()
        cls.token = demo_user(cls.stack)

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()
