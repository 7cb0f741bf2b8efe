"""The status page (/notesd-status, answered by the notesd master from its scoreboard) through the
real nginx: its counters add up to a known number of requests, per endpoint and status class,
in JSON and in Prometheus text (checked by a strict parser of the text format); a worker killed
with SIGKILL shows as a crash and a restart; a request in progress shows with its request id
while the pool is busy; a slow request is logged once with its phase times."""
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Stack  # noqa: E402

METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*$")


def parse_prometheus(text):
    """Strict parser of the Prometheus text format 0.0.4 for what notesd writes: HELP and TYPE
    lines before each family's samples, label sets with escaped values, float values. Returns
    {family: {"type": t, "samples": {(name, ((label, value), ...)): float}}}; raises ValueError
    on anything malformed (a sample without its TYPE, a repeated series, a bad name...)."""
    families, current = {}, None
    if not text.endswith("\n"):
        raise ValueError("the text must end with a newline")
    for n, line in enumerate(text.split("\n")[:-1], 1):
        if line.startswith("# HELP "):
            name = line[7:].split(" ", 1)[0]
            if not METRIC_NAME.match(name) or name in families:
                raise ValueError("line %d: bad or repeated HELP for %r" % (n, name))
            families[name] = {"type": None, "samples": {}}
            current = name
            continue
        if line.startswith("# TYPE "):
            parts = line[7:].split(" ")
            if len(parts) != 2 or parts[0] != current or parts[1] not in (
                    "counter", "gauge", "histogram", "summary", "untyped"):
                raise ValueError("line %d: bad TYPE line %r" % (n, line))
            families[current]["type"] = parts[1]
            continue
        if not line or line.startswith("#"):
            raise ValueError("line %d: empty line or unknown comment" % n)
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$", line)
        if not m:
            raise ValueError("line %d: not a sample: %r" % (n, line))
        name, labels, value = m.group(1), [], m.group(4)
        if m.group(3):
            rest = m.group(3)
            while rest:
                lm = re.match(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)', rest)
                if not lm:
                    raise ValueError("line %d: bad labels %r" % (n, m.group(3)))
                labels.append((lm.group(1), lm.group(2)))
                rest = rest[lm.end():]
        family = current
        if current is None or not (name == current or (
                families[current]["type"] == "histogram"
                and name in (current + "_bucket", current + "_sum", current + "_count"))):
            raise ValueError("line %d: sample %r outside its family (%r)" % (n, name, current))
        if families[family]["type"] is None:
            raise ValueError("line %d: sample before the TYPE line" % n)
        v = float(value)  # accepts +Inf, NaN as the format does
        key = (name, tuple(labels))
        if key in families[family]["samples"]:
            raise ValueError("line %d: repeated series %r" % (n, key))
        families[family]["samples"][key] = v
    for name, f in families.items():
        if f["type"] == "histogram":
            check_histogram(name, f["samples"])
    return families


def check_histogram(name, samples):
    """Buckets cumulative and ending with +Inf equal to _count, per label set."""
    series = {}
    for (sname, labels), v in samples.items():
        rest = tuple(kv for kv in labels if kv[0] != "le")
        series.setdefault(rest, {"buckets": [], "count": None})
        if sname == name + "_bucket":
            le = dict(labels)["le"]
            series[rest]["buckets"].append((float(le), v))
        elif sname == name + "_count":
            series[rest]["count"] = v
    for rest, s in series.items():
        b = sorted(s["buckets"])
        if not b or b[-1][0] != math.inf:
            raise ValueError("%s%r: no +Inf bucket" % (name, rest))
        if any(b[i][1] > b[i + 1][1] for i in range(len(b) - 1)):
            raise ValueError("%s%r: buckets not cumulative" % (name, rest))
        if s["count"] != b[-1][1]:
            raise ValueError("%s%r: _count differs from the +Inf bucket" % (name, rest))


def value(families, family, name=None, **labels):
    return families[family]["samples"][(name or family, tuple(labels.items()))]


class ParserSelfTest(unittest.TestCase):
    """The parser is strict: each of these must be refused (else the real test proves little)."""

    def test_rejects_malformed(self):
        good = "# HELP a_total x\n# TYPE a_total counter\na_total{k=\"v\"} 1\n"
        parse_prometheus(good)
        for bad in (good.rstrip("\n"), good.replace("# TYPE a_total counter\n", ""),
                    good + "a_total{k=\"v\"} 2\n", good.replace('k="v"', "k=v"),
                    good.replace(" 1\n", " one\n"), good + "b 1\n",
                    "# HELP h x\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n"
                    "h_sum 1\nh_count 1\n"):
            with self.assertRaises(ValueError, msg=bad):
                parse_prometheus(bad)


class Counters(unittest.TestCase):
    def setUp(self):
        self.stack = Stack(config={"workers": 2}).start()
        self.addCleanup(self.stack.stop)
        self.user, self.token = self.stack.create_user("alice")
        self.stack.notesctl("demo", self.user, "--notes", "20")

    def test_counts_add_up(self):
        sent = {("list_notes", "2xx"): 0, ("list_collections", "2xx"): 0,
                ("list_notes", "4xx"): 0, ("other", "4xx"): 0, ("search_notes", "2xx"): 0,
                ("create_note", "2xx"): 0}
        lock = threading.Lock()

        # (method, path, query, body) -> the endpoint and status class it is counted under
        kinds = [(("GET", "/v2/notes", {"limit": 3}, None), ("list_notes", "2xx")),
                 (("GET", "/v2/collections", None, None), ("list_collections", "2xx")),
                 (("GET", "/v2/notes", {"limit": 0}, None), ("list_notes", "4xx")),
                 (("GET", "/v2/nothing", None, None), ("other", "4xx")),
                 (("POST", "/v2/notes/search", None, {"query": "note"}), ("search_notes", "2xx")),
                 (("POST", "/v2/notes", None, {"content": "# counted"}), ("create_note", "2xx"))]

        def client(k):
            for i in range(30):
                (method, path, query, body), key = kinds[(i + k) % len(kinds)]
                r = self.stack.request(method, path, query=query, body=body, token=self.token)
                self.assertEqual(r.status // 100, int(key[1][0]), r.text[:200])
                with lock:
                    sent[key] += 1

        threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        total = sum(sent.values())
        self.assertEqual(total, 120)

        st = self.stack.status()
        by = {e["endpoint"]: e for e in st["requests"]["by_endpoint"]}
        for (ep, cls), n in sent.items():
            self.assertEqual(by[ep]["status"][cls], n, "%s %s" % (ep, cls))
        self.assertEqual(st["requests"]["total"], total)
        for e in by.values():
            self.assertEqual(sum(e["status"].values()), e["total"])
            self.assertEqual(e["latency"][-1]["count"], e["total"])
        self.assertEqual(st["pool"]["size"], 2)
        self.assertEqual(st["pool"]["idle"] + st["pool"]["busy"], 2)
        self.assertGreaterEqual(st["pool"]["accepted_connections"], total)
        self.assertEqual(st["pool"]["listen_queue_max"], 1024)  # listen_backlog's default
        self.assertEqual(st["worker_lifecycle"], {"restarts": 0, "crashes": 0, "recycled": 0})

        fam = parse_prometheus(self.stack.status(prometheus=True))
        for (ep, cls), n in sent.items():
            self.assertEqual(value(fam, "notesd_requests_total", endpoint=ep, status=cls), n)
        for ep in by:
            self.assertEqual(value(fam, "notesd_request_duration_seconds",
                                   "notesd_request_duration_seconds_count", endpoint=ep),
                             by[ep]["total"])
        self.assertEqual(fam["notesd_requests_total"]["type"], "counter")
        self.assertEqual(value(fam, "notesd_pool_size"), 2)
        self.assertEqual(value(fam, "notesd_worker_crashes_total"), 0)
        self.assertGreater(value(fam, "notesd_start_time_seconds"), 1.6e9)

    def test_counts_match_wrk(self):
        # A short fixed load from wrk (what make bench drives). wrk counts the responses it
        # read; when its time is up it drops the requests still in flight, which the pool
        # still serves and counts: so the pool's count is wrk's plus at most one per
        # connection, and every one of them is a 2xx.
        wrk = shutil.which("wrk")
        self.assertIsNotNone(wrk, "wrk is not installed (tools/debian-packages.txt lists it)")
        connections = 8

        def list_notes(st):
            return next(e for e in st["requests"]["by_endpoint"] if e["endpoint"] == "list_notes")

        before = list_notes(self.stack.status())["total"]
        out = subprocess.run([wrk, "-t2", "-c%d" % connections, "-d2s",
                              "-H", "Authorization: Bearer " + self.token,
                              self.stack.url("/v2/notes", {"limit": 5})],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        m = re.search(r"(\d+) requests in", out)
        self.assertIsNotNone(m, out)
        answered = int(m.group(1))
        self.assertNotIn("Non-2xx", out)
        self.assertNotIn("Socket errors", out)
        self.assertGreater(answered, 50, out)
        self.stack.wait_for(lambda: self.stack.status()["pool"]["busy"] == 0, "an idle pool")
        st = self.stack.status()
        counted = list_notes(st)["total"] - before
        self.assertGreaterEqual(counted, answered)
        self.assertLessEqual(counted, answered + connections)
        self.assertEqual(list_notes(st)["status"]["2xx"], list_notes(st)["total"])
        self.assertEqual(list_notes(st)["latency"][-1]["count"], list_notes(st)["total"])

    def test_sigkill_is_a_crash_and_a_restart(self):
        old = self.stack.wait_for_workers(2)
        os.kill(old[0], signal.SIGKILL)
        self.stack.wait_for_workers(2, exclude=[old[0]])
        st = self.stack.status()
        self.assertEqual(st["worker_lifecycle"]["crashes"], 1)
        self.assertEqual(st["worker_lifecycle"]["restarts"], 1)
        self.assertEqual(sorted(w["pid"] for w in st["workers"]), self.stack.worker_pids())
        fam = parse_prometheus(self.stack.status(prometheus=True))
        self.assertEqual(value(fam, "notesd_worker_crashes_total"), 1)
        self.assertEqual(value(fam, "notesd_worker_restarts_total"), 1)

    def test_notesctl_status(self):
        for _ in range(3):
            self.assertEqual(self.stack.request("GET", "/v2/notes", token=self.token).status, 200)
        # The status socket named by the config file (status_listen = auto: next to listen).
        out = self.stack.notesctl("--config", self.stack.config_path, "status").stdout
        self.assertRegex(out, r"pool: +2 workers")
        self.assertRegex(out, r"\nlist_notes +3 +3 +0 +0 ")
        for pid in self.stack.worker_pids():
            self.assertIn("\n%d " % pid, out)
        prom = self.stack.notesctl("status", "--socket", self.stack.status_socket_path,
                                   "--format", "prometheus").stdout
        fam = parse_prometheus(prom)
        self.assertEqual(value(fam, "notesd_requests_total", endpoint="list_notes", status="2xx"), 3)
        bad = self.stack.notesctl("status", "--socket", self.stack.dir + "/nothing.sock", check=False)
        self.assertEqual(bad.returncode, 1)
        self.assertIn("cannot connect", bad.stderr)

    def test_only_this_url_and_only_get_answers(self):
        # The page is one exact location; anything below it is the API's JSON 404.
        r = self.stack.request("GET", "/notesd-status/x")
        self.assertEqual(r.status, 404)
        self.assertEqual(r.json()["error_metadata"]["error_kind"], "NOT_FOUND")


class BusyPool(unittest.TestCase):
    def setUp(self):
        self.stack = Stack(config={"workers": 1, "slow_request_ms": 200}, test_hooks=True).start()
        self.addCleanup(self.stack.stop)
        self.user, self.token = self.stack.create_user("alice")

    def test_request_in_progress_and_slow_log(self):
        self.stack.wait_for_workers(1)
        box = {}

        def slow():
            box["r"] = self.stack.request("GET", "/v2/notes",
                                          query={"notesd_test_sleep_ms": 1500}, token=self.token)

        t = threading.Thread(target=slow)
        t.start()
        seen = None
        for _ in range(100):
            st = self.stack.status()  # answered by the master while the only worker is busy
            busy = [w for w in st["workers"] if w["state"] == "busy" and w["phase"] != "read"]
            if busy:
                seen = (st, busy[0])
                break
            time.sleep(0.02)
        t.join(30)
        self.assertIsNotNone(seen, "the busy worker never showed")
        st, w = seen
        self.assertEqual((st["pool"]["busy"], st["pool"]["idle"]), (1, 0))
        rid = box["r"].json()["request_id"]
        self.assertEqual(w["request_id"], rid)
        self.assertEqual((w["method"], w["path"]), ("GET", "/v2/notes"))
        time.sleep(0.3)  # the worker logs after it has finished the response
        slow_lines = [ln for ln in self.stack.logs().splitlines() if "msg=\"slow request\"" in ln
                      or "msg=slow request" in ln]
        self.assertEqual(len(slow_lines), 1, self.stack.logs()[-2000:])
        self.assertIn(rid, slow_lines[0])
        for phase in ("read_ms", "auth_ms", "parse_ms", "store_ms", "rank_ms", "render_ms", "write_ms"):
            self.assertIn(phase + "=", slow_lines[0])
        self.assertEqual(self.stack.status()["requests"]["slow"], 1)
        fast = self.stack.request("GET", "/v2/notes", token=self.token)
        self.assertEqual(fast.status, 200)
        self.assertEqual(self.stack.status()["requests"]["slow"], 1, "a fast request is not slow")


if __name__ == "__main__":
    unittest.main()
