"""The project's nginx configuration, through a real nginx: the JSON body of every error nginx
generates itself, limits, request ids, FastCGI params, gzip, the access log. (Rate limits,
floods and slow clients are rows of the fault matrix: t/fault.)

Most classes run nginx without notesd (a stub FastCGI responder or nothing at all behind it), so
they test the nginx files alone; RealPool checks the id hand-over to the real workers.
"""
import gzip
import json
import os
import time
import re
import socket
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import openapi_check  # noqa: E402
from fcgi import StubResponder  # noqa: E402
from harness import Stack, format_request_id, shared_stack  # noqa: E402

REQUEST_ID = re.compile(r"^api-request-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
JSON_TYPE = "application/json; charset=utf-8"

# A second server that only includes the error file, to make nginx produce a genuine 500 (in
# real life: a socket() past the descriptor limit, memory).
EXTRA_500 = """
server {
    listen 127.0.0.1:@EXTRA_PORT@;
    include @PREFIX@/notesd-errors.conf;
    location = /boom { return 500; }
}
"""


def parse_raw(data):
    """(status, lower-case header dict, body) of one raw HTTP/1.1 response."""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers.setdefault(k.strip().lower(), []).append(v.strip())
    return status, headers, body


class ErrorShape:
    """Assertions on the contract's error envelope (section 6)."""

    def assert_envelope(self, status, headers, body, want_status, kind, category=None):
        """headers: name -> list of values (lower-case names)."""
        self.assertEqual(status, want_status, body[:300])
        self.assertEqual(headers.get("content-type"), [JSON_TYPE])
        self.assertEqual(headers.get("cache-control"), ["no-store"])
        self.assertEqual(headers.get("x-content-type-options"), ["nosniff"])
        ids = headers.get("x-request-id", [])
        self.assertEqual(len(ids), 1, "exactly one X-Request-Id: %r" % ids)
        doc = json.loads(body.decode("utf-8"))
        self.assertEqual(set(doc), {"request_id", "error_category", "error_metadata"})
        self.assertRegex(doc["request_id"], REQUEST_ID)
        self.assertEqual(doc["request_id"], ids[0])
        self.assertEqual(doc["error_category"],
                         category or ("SERVER_ERROR" if want_status >= 500 else "CLIENT_ERROR"))
        meta = doc["error_metadata"]
        self.assertEqual(meta["error_kind"], kind)
        self.assertEqual(meta["request_id"], doc["request_id"])
        self.assertIsInstance(meta["message"], str)
        self.assertTrue(meta["message"].strip())
        self.assertNotIn("nginx", body.decode().lower())
        if want_status in (429, 503):
            self.assertRegex(headers.get("retry-after", [""])[0], r"^[1-9][0-9]*$")
        else:
            self.assertNotIn("retry-after", headers)
        return doc

    def assert_error(self, r, want_status, kind, category=None):
        headers = {}
        for k, v in r.headers.pairs:
            headers.setdefault(k.lower(), []).append(v)
        return self.assert_envelope(r.status, headers, r.body, want_status, kind, category)

    def assert_raw_error(self, data, want_status, kind):
        status, headers, body = parse_raw(data)
        return self.assert_envelope(status, headers, body, want_status, kind)


class NginxAlone(ErrorShape, unittest.TestCase):
    """nginx with nothing listening on the FastCGI socket."""

    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack(notesd=False, nginx_extra=EXTRA_500)

    def test_root_is_json_404(self):
        self.assert_error(self.stack.request("GET", "/"), 404, "NOT_FOUND")

    def test_other_versions_are_json_404(self):
        for path in ("/v1/x", "/v1/notes", "/v3", "/v3/notes", "/v2", "/v2x", "/notes"):
            with self.subTest(path=path):
                self.assert_error(self.stack.request("GET", path), 404, "NOT_FOUND")

    def test_file_extension_does_not_change_content_type(self):
        for path in ("/index.html", "/x.css", "/favicon.ico"):
            with self.subTest(path=path):
                self.assert_error(self.stack.request("GET", path), 404, "NOT_FOUND")

    def test_error_location_is_internal(self):
        self.assert_error(self.stack.request("GET", "/_notesd_error"), 404, "NOT_FOUND")

    def test_post_elsewhere_is_404(self):
        self.assert_error(self.stack.request("POST", "/v1/notes/search", body={"query": "x"}),
                          404, "NOT_FOUND")

    def test_head_404_has_headers_no_body(self):
        r = self.stack.request("HEAD", "/v3")
        self.assertEqual(r.status, 404)
        self.assertEqual(r.headers["Content-Type"], JSON_TYPE)
        self.assertRegex(r.headers["X-Request-Id"], REQUEST_ID)
        self.assertEqual(r.raw, b"")

    def test_trace_goes_to_the_pool_for_its_405(self):
        # nginx refuses TRACE itself; the pool, which knows Allow, answers (here: is down).
        self.assert_error(self.stack.request("TRACE", "/v2/notes"), 503, "UNAVAILABLE")
        self.assert_error(self.stack.request("TRACE", "/v1/notes"), 404, "NOT_FOUND")

    def test_upstream_down_is_503_with_retry_after(self):
        for path in ("/v2/notes", "/v2/collections", "/v2/anything"):
            with self.subTest(path=path):
                self.assert_error(self.stack.request("GET", path), 503, "UNAVAILABLE")
        self.assert_error(self.stack.request("POST", "/v2/notes/search", body={"query": "q"}),
                          503, "UNAVAILABLE")

    def test_body_over_64k_is_413(self):
        r = self.stack.request("POST", "/v2/notes/search", body=b"x" * (65536 + 1),
                               headers={"Content-Type": "application/json"})
        self.assert_error(r, 413, "PAYLOAD_TOO_LARGE")

    def test_chunked_body_over_64k_is_413(self):
        chunk = b"x" * 70000
        data = (b"POST /v2/notes/search HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                + b"%x\r\n" % len(chunk) + chunk + b"\r\n0\r\n\r\n")
        self.assert_raw_error(self.stack.raw_request(data), 413, "PAYLOAD_TOO_LARGE")

    def test_body_of_exactly_64k_passes_nginx(self):
        r = self.stack.request("POST", "/v2/notes/search", body=b"x" * 65536,
                               headers={"Content-Type": "application/json"})
        self.assert_error(r, 503, "UNAVAILABLE")  # reached the (absent) pool

    def test_long_uri_is_414(self):
        r = self.stack.request("GET", "/v2/notes", query="q=" + "a" * 9000)
        self.assert_error(r, 414, "URI_TOO_LONG")

    def test_uri_below_limit_passes_nginx(self):
        r = self.stack.request("GET", "/v2/notes", query="q=" + "a" * 7000)
        self.assert_error(r, 503, "UNAVAILABLE")

    def test_oversized_header_is_400(self):
        r = self.stack.request("GET", "/v2/notes", headers={"X-Big": "a" * 9000})
        self.assert_error(r, 400, "BAD_REQUEST")

    def test_oversized_bearer_token_is_400(self):
        r = self.stack.request("GET", "/v2/notes", token="t" * 9000)
        self.assert_error(r, 400, "BAD_REQUEST")

    def test_too_many_header_bytes_is_400(self):
        headers = {"X-Pad-%d" % i: "b" * 7000 for i in range(6)}
        self.assert_error(self.stack.request("GET", "/v2/notes", headers=headers),
                          400, "BAD_REQUEST")

    def test_malformed_requests_are_400(self):
        cases = [
            b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n",                # no Host
            b"GARBAGE\r\n\r\n",                                             # no request line
            b"GET /v2/notes HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",        # two Hosts
            b"GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n",                       # control char
            b"POST /v2/notes HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
            b"POST /v2/notes HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n",
        ]
        for data in cases:
            with self.subTest(request=data[:40]):
                self.assert_raw_error(self.stack.raw_request(data), 400, "BAD_REQUEST")

    def test_nginx_own_500_is_json_503(self):
        data = (b"GET /boom HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        with socket.create_connection(("127.0.0.1", self.stack.extra_port), timeout=10) as s:
            s.sendall(data)
            out = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
        openapi_check.check_raw(data, out)  # the error body of the API, from another server
        self.assert_raw_error(out, 503, "UNAVAILABLE")

    def test_request_ids_differ(self):
        a = self.stack.request("GET", "/").json()["request_id"]
        b = self.stack.request("GET", "/").json()["request_id"]
        self.assertNotEqual(a, b)

    def test_request_id_is_in_access_log(self):
        rid = self.stack.request("GET", "/v3/logged").json()["request_id"]
        # nginx logs a request after it has sent the answer: wait for the line
        deadline = time.monotonic() + 5
        while True:
            with open(os.path.join(self.stack.dir, "logs", "access.log")) as f:
                text = f.read()
            if "id=" + rid in text or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        self.assertIn("id=" + rid, text)

    def test_errors_are_logged_under_the_clients_method_and_path(self):
        cases = [("POST", "/v1/notes?cursor=secret", b"{}", 404, "POST /v1/notes"),
                 ("DELETE", "/v3/x", None, 404, "DELETE /v3/x"),
                 ("POST", "/v2/notes/search?page=secret", b"x" * 70000, 413,
                  "POST /v2/notes/search"),
                 ("GET", "/v2/notes?limit=1", None, 503, "GET /v2/notes")]
        for method, path, body, status, logged in cases:
            with self.subTest(request=logged):
                r = self.stack.request(method, path, body=body)
                self.assertEqual(r.status, status)
                rid = r.json()["request_id"]
                self.stack.upstream_statuses([rid])
                self.assertEqual([(e["request"], e["status"]) for e in self.stack.access_log()
                                  if e["id"] == rid], [(logged, status)])
        self.assertNotIn("secret", "".join(e["request"] for e in self.stack.access_log()))

    def test_token_not_in_access_log(self):
        self.stack.request("GET", "/v2/notes", token="SECRET-TOKEN-never-logged")
        self.stack.request("GET", "/v3", token="SECRET-TOKEN-never-logged")
        self.assertNotIn("SECRET-TOKEN", self.stack.nginx_logs())

    def test_server_version_hidden(self):
        self.assertEqual(self.stack.request("GET", "/").headers["Server"], "nginx")

    def test_gzip_of_json_error(self):
        r = self.stack.request("GET", "/v1/gzip", headers={"Accept-Encoding": "gzip"})
        self.assertEqual(r.headers.get("Content-Encoding"), "gzip")
        self.assert_error(r, 404, "NOT_FOUND")

    def test_no_rate_limit_by_default(self):
        statuses = {self.stack.request("GET", "/v2/notes", token="same").status
                    for _ in range(30)}
        self.assertEqual(statuses, {503})


class StubUpstream(ErrorShape, unittest.TestCase):
    """nginx in front of a stub FastCGI responder: what the workers receive and send back."""

    @classmethod
    def setUpClass(cls):
        cls.stack = Stack(notesd=False, unvalidated="a stub FastCGI responder answers, not notesd")
        cls.stub = StubResponder(cls.stack.socket_path, pad=4000)
        cls.stack.start()

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()
        cls.stub.close()

    def last(self):
        return self.stub.requests[-1]

    def test_params_for_get(self):
        r = self.stack.request("GET", "/v2/notes", query="limit=5&x=a%20b", token="tok123",
                               headers={"Proxy": "http://evil.invalid"})
        self.assertEqual(r.status, 200, r.text)
        req = self.last()
        p = req["params"]
        self.assertEqual(p["REQUEST_METHOD"], "GET")
        self.assertEqual(p["QUERY_STRING"], "limit=5&x=a%20b")
        self.assertEqual(p["DOCUMENT_URI"], "/v2/notes")
        self.assertEqual(p["REQUEST_URI"], "/v2/notes?limit=5&x=a%20b")
        self.assertEqual(p["HTTP_AUTHORIZATION"], "Bearer tok123")
        self.assertEqual(p["REMOTE_ADDR"], "127.0.0.1")
        self.assertEqual(p.get("CONTENT_LENGTH", ""), "")
        self.assertEqual(p.get("HTTP_PROXY", ""), "")
        self.assertRegex(p["REQUEST_ID"], r"^[0-9a-f]{32}$")
        self.assertFalse(req["keep_conn"], "fastcgi_keep_conn must stay off")

    def test_params_for_post(self):
        body = {"query": "hello"}
        r = self.stack.request("POST", "/v2/notes/search", query={"limit": 3}, body=body)
        self.assertEqual(r.status, 200, r.text)
        p = self.last()["params"]
        self.assertEqual(p["REQUEST_METHOD"], "POST")
        self.assertEqual(p["CONTENT_TYPE"], "application/json")
        self.assertEqual(p["CONTENT_LENGTH"], str(len(json.dumps(body))))
        self.assertEqual(self.last()["body_length"], len(json.dumps(body)))

    def test_chunked_body_arrives_with_length(self):
        chunk = b'{"query":"chunked"}'
        data = (b"POST /v2/notes/search HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                + b"%x\r\n" % len(chunk) + chunk + b"\r\n0\r\n\r\n")
        status, _, _ = parse_raw(self.stack.raw_request(data))
        self.assertEqual(status, 200)
        self.assertEqual(self.last()["body_length"], len(chunk))
        self.assertEqual(self.last()["params"]["CONTENT_LENGTH"], str(len(chunk)))

    def test_request_id_header_not_duplicated(self):
        r = self.stack.request("GET", "/v2/notes")
        ids = r.headers.get_all("X-Request-Id")
        self.assertEqual(len(ids), 1)
        self.assertEqual(ids[0], format_request_id(self.last()["params"]["REQUEST_ID"]))
        self.assertEqual(r.json()["request_id"], ids[0])
        self.assertEqual(r.headers.get_all("Cache-Control"), ["no-store"])

    def test_gzip_for_upstream_json(self):
        r = self.stack.request("GET", "/v2/notes", headers={"Accept-Encoding": "gzip"})
        self.assertEqual(r.status, 200)
        self.assertEqual(r.headers.get("Content-Encoding"), "gzip")
        self.assertIn("Accept-Encoding", r.headers.get("Vary", ""))
        self.assertLess(len(r.raw), len(r.body))
        self.assertEqual(r.json()["body_length"], 0)
        plain = self.stack.request("GET", "/v2/notes")
        self.assertIsNone(plain.headers.get("Content-Encoding"))
        self.assertEqual(json.loads(plain.body)["body_length"], 0)
        self.assertEqual(gzip.decompress(r.raw)[:10], plain.body[:10])

    def test_worker_errors_pass_through(self):
        for code in (400, 401, 404, 405, 500, 503):
            with self.subTest(code=code):
                r = self.stack.request("GET", "/v2/notes", query={"stub_status": code})
                self.assertEqual(r.status, code)
                self.assertIn("params", r.json(), "nginx replaced the worker's own body")

    def test_paths_outside_v2_never_reach_the_pool(self):
        before = len(self.stub.requests)
        for path in ("/", "/v1/notes", "/v3/notes", "/v2"):
            self.assertEqual(self.stack.request("GET", path).status, 404)
        self.assertEqual(len(self.stub.requests), before)

    def test_dot_segments_cannot_escape_v2(self):
        self.assertEqual(self.stack.request("GET", "/v2/../v1/notes").status, 404)
        r = self.stack.request("GET", "/v2/x/../notes")
        self.assertEqual(r.status, 200)
        self.assertEqual(self.last()["params"]["DOCUMENT_URI"], "/v2/notes")


class SlowUpstream(ErrorShape, unittest.TestCase):
    """An upstream that never answers: nginx's 504 becomes the JSON 503."""

    @classmethod
    def setUpClass(cls):
        cls.stack = Stack(notesd=False, nginx={"FCGI_READ_TIMEOUT": "1s"})
        cls.stub = StubResponder(cls.stack.socket_path, mode="hang")
        cls.stack.start()

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()
        cls.stub.close()

    def test_gateway_timeout_is_503(self):
        self.assert_error(self.stack.request("GET", "/v2/notes"), 503, "UNAVAILABLE")


class RealPool(ErrorShape, unittest.TestCase):
    """The id hand-over between nginx and the real workers."""

    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()

    def test_worker_error_carries_nginx_request_id(self):
        r = self.stack.request("GET", "/v2/notes")  # no token: the worker's 401
        self.assert_error(r, 401, "NOT_AUTHORIZED")
        self.assertIn("Bearer", r.headers.get("WWW-Authenticate", ""))
        path = os.path.join(self.stack.dir, "logs", "access.log")
        rid = r.json()["request_id"]

        def logged():  # nginx writes the line after it has sent the response
            with open(path) as f:
                return ("id=" + rid) in f.read()

        self.stack.wait_for(logged, "the access log line of " + rid, timeout=3)

    def test_unknown_v2_path_is_workers_404(self):
        self.assert_error(self.stack.request("GET", "/v2/unknown"), 404, "NOT_FOUND")


if __name__ == "__main__":
    unittest.main()
