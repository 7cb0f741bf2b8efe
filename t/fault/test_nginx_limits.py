"""Fault rows: a client that tries to get around nginx's rate limits, and nginx's own 405.

Rate limits (contract section 8: per token, reads and writes apart, off by default) are turned
on here through nginx/mkprefix.sh's READ_RATE and WRITE_RATE, a few requests a minute, so that a
bucket stays empty for the whole test. The real workers answer whatever passes the limits."""
import json

import faultlib
from harness import Stack

# Every spelling of "Bearer <token>" the worker's bearer_token() (src/api/auth.cpp) accepts.
SPELLINGS = ("Bearer %s", "bearer %s", "BEARER %s", "Bearer  %s", "\tbeaRER\t%s",
             " Bearer %s ", "BeArEr \t %s\t")


class RateLimits(faultlib.FaultCase):

    @classmethod
    def setUpClass(cls):
        # Reads: 1 a minute + a burst of 2 (3 pass, then 429 with Retry-After 60).
        # Writes: 2 a minute + a burst of 1 (2 pass, then 429 with Retry-After 30).
        cls.stack = Stack(nginx={"READ_RATE": "1r/m", "READ_BURST": "2",
                                 "WRITE_RATE": "2r/m", "WRITE_BURST": "1"}).start()
        cls.stack.notesctl("user", "add", "rl")

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()

    def send(self, method, path, authorization=None, source=faultlib.PROBE_ADDR, body=None,
             unvalidated=None):
        headers = {} if authorization is None else {"Authorization": authorization}
        if body is not None:
            headers["Content-Type"] = "application/json"
            body = json.dumps(body)
        return faultlib.request_from(self.stack, method, path, source=source, headers=headers,
                                     body=body, unvalidated=unvalidated)

    def assert_limited(self, r, retry_after):
        self.assertEqual(r.status, 429, r.text)
        self.assertEqual(faultlib.json_error_kind(r.status, r.headers, r.body), "RATE_LIMITED")
        self.assertEqual(r.headers.get("Retry-After"), str(retry_after))

    def test_every_spelling_is_accepted_by_the_worker(self):
        # (what makes the next row matter: each spelling is a working credential)
        for spelling in SPELLINGS:
            with self.subTest(spelling=spelling):
                token = self.stack.create_token("rl")  # a bucket of its own
                r = self.send("GET", "/v2/collections", spelling % token)
                self.assertEqual(r.status, 200, r.text)

    def test_respelt_headers_share_one_bucket(self):
        token = self.stack.create_token("rl")
        for i, spelling in enumerate(SPELLINGS):
            with self.subTest(spelling=spelling):
                r = self.send("GET", "/v2/notes", spelling % token)
                if i < 3:
                    self.assertEqual(r.status, 200, r.text)
                else:
                    self.assert_limited(r, 60)
        other = self.stack.create_token("rl")
        self.assertEqual(self.send("GET", "/v2/notes", "Bearer " + other).status, 200)

    def test_requests_without_a_valid_token_count_per_address(self):
        src = "127.0.0.3"
        for auth in (None, "Basic dXNlcjpwYXNz", "Bearer"):  # the worker's 401 each time
            self.assertEqual(self.send("GET", "/v2/notes", auth, source=src).status, 401)
        for auth in (None, "Bearer   ", "Token abc", "Bearer " + "t" * 513):
            with self.subTest(authorization=(auth or "")[:20]):
                self.assert_limited(self.send("GET", "/v2/notes", auth, source=src), 60)
        self.assertEqual(self.send("GET", "/v2/notes", None, source="127.0.0.4").status, 401)
        # a valid token from that address still has its own bucket
        token = self.stack.create_token("rl")
        self.assertEqual(self.send("GET", "/v2/notes", "Bearer " + token, source=src).status,
                         200)

    def test_reads_and_writes_have_separate_buckets(self):
        token = self.stack.create_token("rl")
        auth = "Bearer " + token
        # Reads, searches included, until the read bucket is empty.
        for method, path, body in (("GET", "/v2/notes", None),
                                   ("POST", "/v2/notes/search", {"query": "x"}),
                                   ("GET", "/v2/collections", None)):
            self.assertNotEqual(self.send(method, path, auth, body=body).status, 429)
        for method, path in (("GET", "/v2/notes"), ("HEAD", "/v2/notes"),
                             ("POST", "/v2/notes/search"), ("POST", "/v2/notes/extended-search"),
                             ("POST", "/v2/collections/search")):
            with self.subTest(read=method + " " + path):
                r = self.send(method, path, auth, body={"query": "x"} if method == "POST" else None)
                if method == "HEAD":
                    self.assertEqual(r.status, 429)
                else:
                    self.assert_limited(r, 60)
        # The write bucket is untouched: two writes reach the worker, through the 1 MiB
        # locations of note create and update too, the third is limited.
        created = self.send("POST", "/v2/notes", auth, body={"content": "# x"})
        self.assertEqual(created.status, 200, created.text)
        note = created.json()["id"]
        r = self.send("PATCH", "/v2/notes/" + note, auth, body={"content": "# y", "version": 1})
        self.assertEqual(r.status, 200, r.text)
        for method, path in (("DELETE", "/v2/notes/" + note), ("PATCH", "/v2/notes/" + note),
                             ("POST", "/v2/notes"), ("PUT", "/v2/collections/a/notes/b"),
                             ("POST", "/v2/collections")):
            with self.subTest(write=method + " " + path):
                self.assert_limited(self.send(method, path, auth, body={}), 30)
        # A read of one note (its location is a note update's) is still a read.
        self.assert_limited(self.send("GET", "/v2/notes/" + note, auth), 60)

    def test_writes_do_not_use_up_reads(self):
        token = self.stack.create_token("rl")
        auth = "Bearer " + token
        for _ in range(2):
            self.assertNotEqual(self.send("DELETE", "/v2/collections/x", auth).status, 429)
        self.assert_limited(self.send("DELETE", "/v2/collections/x", auth), 30)
        for _ in range(3):
            self.assertEqual(self.send("GET", "/v2/collections", auth).status, 200)
        self.assert_limited(self.send("GET", "/v2/collections", auth), 60)


class NginxMethodNotAllowed(faultlib.FaultCase):
    """nginx refuses TRACE itself; the client still gets the contract's 405 with Allow."""

    @classmethod
    def setUpClass(cls):
        cls.stack = Stack().start()
        _, cls.token = cls.stack.create_user("trace")

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()

    def test_trace_is_405_with_the_paths_allow(self):
        auth = {"Authorization": "Bearer " + self.token}
        for path in ("/v2/notes", "/v2/collections", "/v2/notes/search"):
            with self.subTest(path=path):
                # the worker's own 405 for another method on the path names what is allowed
                want = faultlib.request_from(self.stack, "PUT", path, headers=auth)
                self.assertEqual(want.status, 405, want.text)
                for body in (None, b"a body nginx discards"):
                    r = faultlib.request_from(self.stack, "TRACE", path, headers=auth, body=body)
                    self.assertEqual(r.status, 405, r.text)
                    self.assertEqual(faultlib.json_error_kind(r.status, r.headers, r.body),
                                     "METHOD_NOT_ALLOWED")
                    self.assertTrue(r.headers.get("Allow"), r.headers)
                    self.assertEqual(r.headers.get("Allow"), want.headers.get("Allow"))

    def test_trace_elsewhere_is_404(self):
        for path in ("/", "/v3/notes", "/v2/unknown"):
            with self.subTest(path=path):
                r = faultlib.request_from(self.stack, "TRACE", path)
                self.assertEqual(r.status, 404, r.text)
                self.assertEqual(faultlib.json_error_kind(r.status, r.headers, r.body),
                                 "NOT_FOUND")

    def test_trace_is_logged_under_its_method_and_path(self):
        rid = faultlib.request_from(self.stack, "TRACE", "/v2/collections?x=1").json()["request_id"]
        self.stack.upstream_statuses([rid])
        lines = [e for e in self.stack.access_log() if e["id"] == rid]
        self.assertEqual([(e["request"], e["status"]) for e in lines],
                         [("TRACE /v2/collections", 405)])
