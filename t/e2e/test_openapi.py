"""The OpenAPI document: served by the real nginx at /v2/openapi.json without a token, and the
response validation of the whole e2e suite (openapi_check.py), shown to reject responses that
differ from the document.
"""
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import openapi_check  # noqa: E402
from fcgi import StubResponder  # noqa: E402
from harness import SRCDIR, Headers, Stack, shared_stack  # noqa: E402

try:
    import yaml
except ImportError:  # the build needs it too: say so rather than skip
    yaml = None

REQUEST_ID = re.compile(r"^api-request-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def source_document():
    if yaml is None:
        raise AssertionError("python3-yaml is missing (Debian: apt-get install python3-yaml)")
    with open(os.path.join(SRCDIR, "doc", "openapi.yaml"), encoding="utf-8") as f:
        return yaml.safe_load(f)


class Served(unittest.TestCase):
    """GET /v2/openapi.json through nginx's site file, as an installed site serves it."""

    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()

    def test_document_without_token(self):
        r = self.stack.request("GET", "/v2/openapi.json")
        self.assertEqual(r.status, 200, r.text[:300])
        self.assertEqual(r.headers["Content-Type"], "application/json")
        self.assertEqual(r.headers["X-Content-Type-Options"], "nosniff")
        self.assertRegex(r.headers["X-Request-Id"], REQUEST_ID)
        doc = r.json()
        self.assertEqual(doc, source_document())
        self.assertTrue(doc["openapi"].startswith("3.1."))
        self.assertIn("/v2/notes/search", doc["paths"])

    def test_a_token_changes_nothing(self):
        with_token = self.stack.request("GET", "/v2/openapi.json", token="not-a-token")
        self.assertEqual(with_token.status, 200)
        self.assertEqual(with_token.json(), self.stack.request("GET", "/v2/openapi.json").json())

    def test_etag_revalidation(self):
        r = self.stack.request("GET", "/v2/openapi.json")
        etag = r.headers["ETag"]
        again = self.stack.request("GET", "/v2/openapi.json", headers={"If-None-Match": etag})
        self.assertEqual(again.status, 304)
        self.assertEqual(again.raw, b"")
        self.assertEqual(again.headers["ETag"], etag)

    def test_gzip(self):
        r = self.stack.request("GET", "/v2/openapi.json", headers={"Accept-Encoding": "gzip"})
        self.assertEqual(r.headers.get("Content-Encoding"), "gzip")
        self.assertEqual(r.json(), source_document())

    def test_other_methods_are_json_405_with_allow(self):
        for method in ("POST", "DELETE", "PUT"):
            with self.subTest(method=method):
                r = self.stack.request(method, "/v2/openapi.json", body=b"{}")
                self.assertEqual(r.status, 405, r.text)
                self.assertEqual(r.headers["Allow"], "GET, HEAD")
                self.assertEqual(r.json()["error_metadata"]["error_kind"], "METHOD_NOT_ALLOWED")

    def test_site_file_points_at_the_installed_document(self):
        with tempfile.TemporaryDirectory() as d:
            site = os.path.join(d, "notesd")
            subprocess.run(["sh", os.path.join(SRCDIR, "nginx", "mkprefix.sh"), "--site", site],
                           check=True)
            with open(site) as f:
                text = f.read()
        self.assertRegex(text, r"location = /v2/openapi\.json \{\s*alias /usr/share/notesd/openapi\.json;")


class ValidatorRejects(unittest.TestCase):
    """The checker the whole suite relies on fails on planted mismatches (and passes the real
    responses they are made from)."""

    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()
        cls.user, cls.token = cls.stack.create_user("openapi_check")
        cls.stack.notesctl("demo", cls.user, "--notes", "5")
        cls.doc = openapi_check.document()

    def fetch(self, method, path, **kw):
        kw.setdefault("token", self.token)
        r = self.stack.request(method, path, **kw)
        return r, Headers(list(r.headers.pairs)), json.loads(r.body) if r.body else None

    def problems(self, method, target, status, headers, body):
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self.doc.problems(method, target, status, headers, raw)

    def assertRejected(self, problems, fragment):
        self.assertTrue(problems, "the checker accepted a planted mismatch")
        self.assertIn(fragment, " ".join(problems))

    def test_real_responses_pass(self):
        for method, path, kw in (("GET", "/v2/notes", {"query": {"limit": 2}}),
                                 ("GET", "/v2/collections", {}),
                                 ("POST", "/v2/notes/search", {"body": {"query": "note"}})):
            r, headers, body = self.fetch(method, path, **kw)
            self.assertEqual(self.problems(method, path, r.status, headers, body), [])

    def test_extra_field_in_a_note_item(self):
        r, headers, body = self.fetch("GET", "/v2/notes", query={"limit": 2})
        self.assertTrue(body["results"])
        body["results"][0]["surprise"] = 1
        self.assertRejected(self.problems("GET", "/v2/notes", 200, headers, body), "surprise")

    def test_extra_top_level_field(self):
        r, headers, body = self.fetch("POST", "/v2/notes/search", body={"query": "note"})
        body["debug"] = {}
        self.assertRejected(self.problems("POST", "/v2/notes/search", 200, headers, body), "debug")

    def test_missing_required_field(self):
        r, headers, body = self.fetch("GET", "/v2/notes", query={"limit": 2})
        del body["results"][0]["snippet"]
        self.assertRejected(self.problems("GET", "/v2/notes", 200, headers, body), "snippet")
        r, headers, body = self.fetch("POST", "/v2/notes/search", body={"query": "note"})
        del body["has_next_page"]
        self.assertRejected(self.problems("POST", "/v2/notes/search", 200, headers, body),
                            "has_next_page")

    def test_next_page_rules_of_notes_and_collections(self):
        r, headers, body = self.fetch("GET", "/v2/notes", query={"limit": 100})
        self.assertNotIn("next_page", body)
        body["next_page"] = None  # notes omit it on the last page; null is a mismatch
        self.assertRejected(self.problems("GET", "/v2/notes", 200, headers, body), "next_page")
        r, headers, body = self.fetch("GET", "/v2/collections")
        self.assertIsNone(body["next_page"])
        del body["next_page"]  # collections send null on the last page; omitting it is one
        self.assertRejected(self.problems("GET", "/v2/collections", 200, headers, body),
                            "next_page")

    def test_wrong_types_and_formats(self):
        r, headers, body = self.fetch("GET", "/v2/notes", query={"limit": 2})
        for field, value, fragment in (("created_at", "2025-05-04 14:20:11", "created_at"),
                                       ("id", body["results"][0]["id"].upper(), "id"),
                                       ("collection_ids", None, "collection_ids")):
            planted = copy.deepcopy(body)
            planted["results"][0][field] = value
            with self.subTest(field=field):
                self.assertRejected(self.problems("GET", "/v2/notes", 200, headers, planted),
                                    fragment)

    def test_missing_required_header(self):
        r, headers, body = self.fetch("GET", "/v2/notes", query={"limit": 2})
        stripped = Headers([(k, v) for k, v in headers.pairs if k.lower() != "x-request-id"])
        self.assertRejected(self.problems("GET", "/v2/notes", 200, stripped, body), "X-Request-Id")
        r, headers, body = self.fetch("GET", "/v2/notes", token=None)
        self.assertEqual(r.status, 401)
        stripped = Headers([(k, v) for k, v in headers.pairs if k.lower() != "www-authenticate"])
        self.assertRejected(self.problems("GET", "/v2/notes", 401, stripped, body),
                            "WWW-Authenticate")

    def test_undocumented_status_and_error_kind(self):
        r, headers, body = self.fetch("GET", "/v2/notes", query={"limit": 0})
        self.assertEqual(r.status, 400)
        self.assertEqual(self.problems("GET", "/v2/notes", 400, headers, body), [])
        self.assertRejected(self.problems("GET", "/v2/notes", 409, headers, body),
                            "not documented")
        body["error_metadata"]["error_kind"] = "SNAPSHOT_MISMATCH"  # not one of a list's 400s
        self.assertRejected(self.problems("GET", "/v2/notes", 400, headers, body), "error_kind")

    def test_success_on_an_unknown_path_or_method(self):
        r, headers, body = self.fetch("GET", "/v2/notes", query={"limit": 1})
        self.assertRejected(self.problems("GET", "/v2/unknown", 200, headers, body), "status 200")
        self.assertRejected(self.problems("DELETE", "/v2/notes", 200, headers, body), "status 200")

    def test_405_without_allow(self):
        r, headers, body = self.fetch("DELETE", "/v2/notes")
        self.assertEqual(r.status, 405)
        stripped = Headers([(k, v) for k, v in headers.pairs if k.lower() != "allow"])
        self.assertRejected(self.problems("DELETE", "/v2/notes", 405, stripped, body), "Allow")

    def test_the_harness_raises_and_records(self):
        """Through the real pipeline: nginx in front of a stub responder whose answer has fields
        the document does not have; Stack.request must raise, and record it for the runner."""
        stack = Stack(notesd=False)
        stub = StubResponder(stack.socket_path)
        before = len(openapi_check.MISMATCHES)
        try:
            stack.start()
            with self.assertRaises(openapi_check.Mismatch) as caught:
                stack.request("GET", "/v2/notes", token="t")
            self.assertIn("params", str(caught.exception))  # the stub's undocumented field
            self.assertEqual(len(openapi_check.MISMATCHES), before + 1)
            # an explicit opt-out does not check
            r = stack.request("GET", "/v2/notes", unvalidated="this test's stub answers")
            self.assertEqual(r.status, 200)
        finally:
            # The planted mismatch is expected here: not charged to this test by the runner.
            del openapi_check.MISMATCHES[before:]
            stack.stop()
            stub.close()

    def test_raw_responses_are_checked(self):
        raw = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"
               b"Content-Length: 2\r\n\r\n{}")
        before = len(openapi_check.MISMATCHES)
        try:
            with self.assertRaises(openapi_check.Mismatch):
                openapi_check.check_raw(b"GET /v2/notes HTTP/1.1\r\nHost: x\r\n\r\n", raw)
        finally:
            del openapi_check.MISMATCHES[before:]


if __name__ == "__main__":
    unittest.main()
