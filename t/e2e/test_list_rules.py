"""Cursors, authentication, routing, isolation and consistency of the list endpoints."""
import unittest

from harness import shared_stack
from listdata import Dataset, NotesBase, tmp_path, walk


class Cursors(NotesBase):
    def first_cursor(self, query=None, path="/v2/notes"):
        q = dict(query or {}, limit=5)
        r = self.stack.request("GET", path, query=q, token=self.token)
        self.assertEqual(r.status, 200, r.text)
        return r.json()["next_page"]

    def assert_bad_cursor(self, query, path="/v2/notes", token=None):
        r = self.stack.request("GET", path, query=query, token=token or self.token)
        self.assert_error(r, 400, "INVALID_CURSOR", "page")

    def test_cursor_is_url_safe(self):
        c = self.first_cursor()
        self.assertRegex(c, r"^[A-Za-z0-9_-]+$")

    def test_altered_cursor(self):
        c = self.first_cursor()
        for i in range(len(c)):
            bad = c[:i] + ("A" if c[i] != "A" else "B") + c[i + 1:]
            self.assert_bad_cursor({"page": bad})

    def test_truncated_and_garbage(self):
        c = self.first_cursor()
        for bad in (c[:-1], c[:10], c + "xx", "!!!", "null", "a" * 5000):
            self.assert_bad_cursor({"page": bad})

    def test_padded_standard_alphabet_accepted(self):
        c = self.first_cursor()
        std = c.replace("-", "+").replace("_", "/")
        std += "=" * (-len(std) % 4)
        r = self.stack.request("GET", "/v2/notes", query={"page": std, "limit": 5}, token=self.token)
        self.assertEqual(r.status, 200, r.text)
        self.assertEqual([n["id"] for n in r.json()["results"]], self.data.expected()[5:10])

    def test_replayed_with_other_filters(self):
        c = self.first_cursor()
        col = self.data.collections[0]["id"]
        for q in ({"order_by": "created_at"}, {"collection_id": col}, {"contains_tasks": "1"},
                  {"filter_by_created_after": "2020-01-01T00:00:00Z"},
                  {"filter_by_updated_before": "2030-01-01T00:00:00Z"}):
            self.assert_bad_cursor(dict(q, page=c))
        # the same filters written differently are the same filters
        c2 = self.first_cursor({"contains_tasks": "true", "filter_by_created_after": "2020-01-01T01:00:00+01:00"})
        r = self.get({"page": c2, "contains_tasks": "1", "contains_files": "false",
                      "filter_by_created_after": "2020-01-01T00:00:00Z"})
        self.assertEqual(r.status, 200, r.text)

    def test_cursor_across_endpoints(self):
        c = self.first_cursor()
        self.assert_bad_cursor({"page": c}, path="/v2/collections")

    def test_other_user(self):
        _, other = self.stack.create_user("mallory_cursor")
        self.assert_bad_cursor({"page": self.first_cursor()}, token=other)

    def test_empty_page_is_first_page(self):
        body = self.ok("page=&limit=3")
        self.assertEqual([n["id"] for n in body["results"]], self.data.expected()[:3])

    def test_total_independent_of_page(self):
        _, pages = walk(self.stack, "/v2/notes", self.token, {"limit": 60, "contains_images": "1"})
        self.assertEqual({p["total"] for p in pages}, {len(self.data.expected(flags=["image"]))})


class Auth(NotesBase):
    def test_missing_and_malformed(self):
        for headers in ({}, {"Authorization": ""}, {"Authorization": "Basic dXNlcjpwYXNz"},
                        {"Authorization": "Bearer"}, {"Authorization": "Bearer "},
                        {"Authorization": "Bearer a b"}, {"Authorization": "Token " + self.token},
                        {"Authorization": "Bearer " + self.token + "x"},
                        {"Authorization": "Bearer notesd_" + "A" * 43}):
            r = self.stack.request("GET", "/v2/notes", headers=headers)
            self.assert_error(r, 401, "NOT_AUTHORIZED")
            self.assertTrue(r.headers["WWW-Authenticate"].startswith("Bearer"))

    def test_scheme_case_insensitive(self):
        for scheme in ("bearer", "BEARER", "BeArEr"):
            r = self.stack.request("GET", "/v2/notes", query={"limit": 1},
                                   headers={"Authorization": "%s %s" % (scheme, self.token)})
            self.assertEqual(r.status, 200, r.text)

    def test_token_not_accepted_in_query(self):
        r = self.stack.request("GET", "/v2/notes", query={"access_token": self.token, "token": self.token})
        self.assert_error(r, 401, "NOT_AUTHORIZED")

    def test_revocation_is_immediate(self):
        self.stack.notesctl("user", "add", "revokee")
        token = self.stack.create_token("revokee")
        self.assertEqual(self.get({"limit": 1}, token=token).status, 200)
        listing = self.stack.notesctl("token", "list", "revokee").stdout
        ids = [line.split()[0] for line in listing.splitlines() if line.split() and line.split()[0].isdigit()]
        self.assertTrue(ids, listing)
        for tid in ids:
            self.stack.notesctl("token", "revoke", tid)
        self.assert_error(self.get({"limit": 1}, token=token), 401, "NOT_AUTHORIZED")

    def test_database_and_logs_hold_no_token(self):
        self.get({"limit": 1})
        self.get({"limit": 1}, token=self.token + "wrong")
        self.assertNotIn(self.token, self.stack.logs())
        self.assertNotIn(self.token[8:], self.stack.logs())
        blob = self.stack.stored_bytes()  # SQLite's files, or a server's dump of the tables
        self.assertIn(b"notes", blob.lower())  # it did read the database
        self.assertNotIn(self.token.encode(), blob)
        self.assertNotIn(self.token[8:].encode(), blob)


class Routing(NotesBase):
    def test_unknown_paths(self):
        for path in ("/v1/notes", "/v3/notes", "/v2/unknown", "/v2/notes/", "/v2",
                     "/v2/notes/x/unknown"):
            r = self.stack.request("GET", path, token=self.token)
            self.assert_error(r, 404, "NOT_FOUND")

    def test_wrong_methods(self):
        for method, path, allow in (("PUT", "/v2/notes", "GET, POST"),
                                    ("DELETE", "/v2/notes", "GET, POST"),
                                    ("PUT", "/v2/collections", "GET, POST"),
                                    ("PATCH", "/v2/collections", "GET, POST")):
            r = self.stack.request(method, path, token=self.token, body=b"{}")
            self.assert_error(r, 405, "METHOD_NOT_ALLOWED")
            self.assertEqual(r.headers["Allow"], allow)


class Isolation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()
        cls.a = Dataset("iso-a", 40)
        cls.b = Dataset("iso-b", 12, n_collections=1)
        cls.ua, cls.ta = cls.stack.create_user("iso_a")
        cls.ub, cls.tb = cls.stack.create_user("iso_b")
        cls.stack.notesctl("import", cls.ua, cls.a.write_jsonl(tmp_path(cls.stack, "iso-a.jsonl")))
        cls.stack.notesctl("import", cls.ub, cls.b.write_jsonl(tmp_path(cls.stack, "iso-b.jsonl")))

    def test_each_user_sees_only_own_notes_and_collections(self):
        ids_a, _ = walk(self.stack, "/v2/notes", self.ta, {"limit": 100})
        ids_b, _ = walk(self.stack, "/v2/notes", self.tb, {"limit": 100})
        self.assertEqual(ids_a, self.a.expected())
        self.assertEqual(ids_b, self.b.expected())
        cols_b, pages = walk(self.stack, "/v2/collections", self.tb, {"limit": 100})
        self.assertEqual(sorted(cols_b), sorted(c["id"] for c in self.b.collections))
        self.assertEqual(pages[0]["total"], 1)

    def test_foreign_collection_id_is_empty(self):
        for c in self.a.collections:
            r = self.stack.request("GET", "/v2/notes", query={"collection_id": c["id"]}, token=self.tb)
            self.assertEqual(r.status, 200)
            self.assertEqual((r.json()["results"], r.json()["total"]), ([], 0))

    def test_same_note_id_for_two_users_stays_separate(self):
        shared = Dataset("iso-shared", 3, n_collections=0)
        path = shared.write_jsonl(tmp_path(self.stack, "iso-shared.jsonl"))
        self.stack.notesctl("import", self.ua, path)
        u, t = self.stack.create_user("iso_c")
        self.stack.notesctl("import", u, path)
        ids_c, _ = walk(self.stack, "/v2/notes", t, {"limit": 100})
        self.assertEqual(ids_c, shared.expected())
        self.stack.notesctl("note", "delete", self.ua, shared.notes[0]["id"])
        ids_c2, _ = walk(self.stack, "/v2/notes", t, {"limit": 100})
        self.assertEqual(ids_c2, shared.expected())


class ConcurrentWalk(unittest.TestCase):
    """Walking all pages while another process inserts and deletes notes returns every untouched
    note exactly once (keyset pagination). The churn runs in notesctl processes between pages, so
    every walk is guaranteed to see writes land in the middle of it."""

    def test_walk_under_churn(self):
        stack = shared_stack()
        data = Dataset("churn", 300, n_collections=2)
        user, token = stack.create_user("churn")
        stack.notesctl("import", user, data.write_jsonl(tmp_path(stack, "churn.jsonl")))
        for order, limit in (("updated_at", 9), ("created_at", 13)):
            doomed = [n["id"] for n in data.notes[::7]]
            untouched = set(n["id"] for n in data.notes) - set(doomed)
            extra = Dataset("churn-extra-" + order, 90, n_collections=0, seed_offset=1000)
            for i, n in enumerate(extra.notes):  # inserted before, inside and after the range
                n["updated_us"] = data.notes[(i * 37) % 300]["updated_us"] + (i % 3) - 1
                n["created_us"] = data.notes[(i * 53) % 300]["created_us"] + (i % 3) - 1
            steps = [(extra.notes[k * 5:(k + 1) * 5], doomed[k * 3:(k + 1) * 3]) for k in range(18)]

            def churn(k):
                if k >= len(steps):
                    return
                batch, victims = steps[k]
                if batch:
                    p = tmp_path(stack, "churn-%s-%d.jsonl" % (order, k))
                    stack.notesctl("import", user, extra.write_jsonl(p, batch, with_collections=False))
                for nid in victims:
                    stack.notesctl("note", "delete", user, nid)

            ids, pages = walk_with(stack, token, {"limit": limit, "order_by": order}, churn)
            self.assertGreater(pages, 18)
            self.assertEqual(len(ids), len(set(ids)), "a note appeared twice")
            missing = untouched - set(ids)
            self.assertFalse(missing, "untouched notes skipped: %d" % len(missing))
            # the churn really happened: the notes still there and the new ones are now listed
            data.notes = [n for n in data.notes if n["id"] not in set(doomed[:54])] + extra.notes
            after, _ = walk(stack, "/v2/notes", token, {"limit": 100, "order_by": order})
            self.assertEqual(after, data.expected(order))


def walk_with(stack, token, query, between):
    """Walks all pages, calling between(page_number) after each page."""
    query = dict(query)
    ids, pages = [], 0
    while True:
        r = stack.request("GET", "/v2/notes", query=query, token=token)
        assert r.status == 200, r.text
        body = r.json()
        ids.extend(n["id"] for n in body["results"])
        between(pages)
        pages += 1
        if "next_page" not in body:
            return ids, pages
        query["page"] = body["next_page"]


if __name__ == "__main__":
    unittest.main()
