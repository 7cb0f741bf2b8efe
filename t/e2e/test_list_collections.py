"""GET /v2/collections through nginx and the worker pool: contract section 4."""
import unittest

from harness import shared_stack
from listdata import Dataset, fmt_time, tmp_path, walk, REQ_ID


class Collections(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()
        cls.data = Dataset("cols", 90, n_collections=23)
        cls.user, cls.token = cls.stack.create_user("collector")
        cls.stack.notesctl("import", cls.user, cls.data.write_jsonl(tmp_path(cls.stack, "cols.jsonl")))

    def get(self, query=None, token=None):
        return self.stack.request("GET", "/v2/collections", query=query, token=token or self.token)

    def expected(self, order_by="updated_at", created=(None, None), updated=(None, None)):
        key = "created_us" if order_by == "created_at" else "updated_us"
        cols = [c for c in self.data.collections
                if (created[0] is None or c["created_us"] >= created[0])
                and (created[1] is None or c["created_us"] <= created[1])
                and (updated[0] is None or c["updated_us"] >= updated[0])
                and (updated[1] is None or c["updated_us"] <= updated[1])]
        cols.sort(key=lambda c: (c[key], c["id"]), reverse=True)
        return [c["id"] for c in cols]

    def test_envelope_and_items(self):
        r = self.get()
        self.assertEqual(r.status, 200, r.text)
        self.assertEqual(r.headers["Cache-Control"], "no-store")
        body = r.json()
        self.assertRegex(body["request_id"], REQ_ID)
        self.assertEqual(r.headers["X-Request-Id"], body["request_id"])
        self.assertEqual(body["total"], 23)
        self.assertIn("next_page", body)
        self.assertIsNone(body["next_page"])  # last page: present and null
        by_id = {c["id"]: c for c in self.data.collections}
        for item in body["results"]:
            self.assertEqual(set(item), {"id", "title", "description", "created_at", "updated_at", "note_count"})
            c = by_id[item["id"]]
            self.assertEqual(item["title"], c["title"])
            self.assertEqual(item["description"], c["description"])
            self.assertEqual(item["created_at"], fmt_time(c["created_us"]))
            self.assertEqual(item["updated_at"], fmt_time(c["updated_us"]))
            self.assertEqual(item["note_count"], self.data.note_count(c["id"]))
        self.assertEqual([i["id"] for i in body["results"]], self.expected())

    def test_walk_both_orders(self):
        for order in ("updated_at", "created_at"):
            for limit in (1, 4, 23, 100):
                ids, pages = walk(self.stack, "/v2/collections", self.token,
                                  {"limit": limit, "order_by": order})
                self.assertEqual(ids, self.expected(order), (order, limit))
                self.assertIsNone(pages[-1]["next_page"])
                self.assertTrue(all(isinstance(p["next_page"], str) for p in pages[:-1]))
                self.assertTrue(all(p["total"] == 23 for p in pages))

    def test_limit_validation(self):
        for bad in ("0", "101", "x", "-3"):
            r = self.get({"limit": bad})
            self.assertEqual(r.status, 400, r.text)
            meta = r.json()["error_metadata"]
            self.assertEqual((meta["error_kind"], meta["field_name"]), ("INVALID_PARAMETER", "limit"))
        self.assertEqual(len(self.get({"limit": ""}).json()["results"]), 23)

    def test_date_filters(self):
        c = self.data.collections[7]
        for q, kw in (({"filter_by_created_after": fmt_time(c["created_us"])}, {"created": (c["created_us"], None)}),
                      ({"filter_by_created_before": fmt_time(c["created_us"])}, {"created": (None, c["created_us"])}),
                      ({"filter_by_updated_after": fmt_time(c["updated_us"])}, {"updated": (c["updated_us"], None)}),
                      ({"filter_by_updated_before": fmt_time(c["updated_us"])}, {"updated": (None, c["updated_us"])})):
            ids, pages = walk(self.stack, "/v2/collections", self.token, dict(q, limit=5))
            self.assertEqual(ids, self.expected(**kw), q)
            self.assertEqual(pages[0]["total"], len(ids))
        r = self.get({"filter_by_updated_after": "2025-01-01"})
        self.assertEqual(r.status, 400)
        self.assertEqual(r.json()["error_metadata"]["field_name"], "filter_by_updated_after")

    def test_cursor_rules(self):
        first = self.get({"limit": 3}).json()
        cur = first["next_page"]
        r = self.get({"limit": 3, "page": cur})
        self.assertEqual([i["id"] for i in r.json()["results"]], self.expected()[3:6])
        for q in ({"page": cur[:-2]}, {"page": cur, "order_by": "created_at"},
                  {"page": cur, "filter_by_created_after": "2020-01-01T00:00:00Z"}):
            r = self.get(q)
            self.assertEqual(r.status, 400, r.text)
            self.assertEqual(r.json()["error_metadata"]["error_kind"], "INVALID_CURSOR")
        notes_cursor = self.stack.request("GET", "/v2/notes", query={"limit": 1}, token=self.token).json()["next_page"]
        self.assertEqual(self.get({"page": notes_cursor}).status, 400)
        _, other = self.stack.create_user("collector_other")
        self.assertEqual(self.get({"page": cur}, token=other).status, 400)

    def test_note_count_follows_changes(self):
        u, t = self.stack.create_user("counter")
        d = Dataset("counter", 20, n_collections=2)
        path = tmp_path(self.stack, "counter.jsonl")
        self.stack.notesctl("import", u, d.write_jsonl(path))
        counts = lambda: {c["id"]: c["note_count"] for c in self.get(token=t).json()["results"]}
        self.assertEqual(counts(), {c["id"]: d.note_count(c["id"]) for c in d.collections})
        victim = d.notes[0]
        self.stack.notesctl("note", "delete", u, victim["id"])
        d.notes.remove(victim)
        self.assertEqual(counts(), {c["id"]: d.note_count(c["id"]) for c in d.collections})
        mover = d.notes[0]
        mover["collections"] = [d.collections[1]["id"]]
        self.stack.notesctl("import", u, d.write_jsonl(path))
        self.assertEqual(counts(), {c["id"]: d.note_count(c["id"]) for c in d.collections})
        self.assertEqual(self.stack.request("GET", "/v2/notes", token=t).json()["total"], 19)


if __name__ == "__main__":
    unittest.main()
