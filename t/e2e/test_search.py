"""POST /v2/notes/search through nginx and the worker pool: contract section 5."""
import json
import unittest

from harness import shared_stack
from listdata import REQ_ID, fmt_time, tmp_path

BASE = 1735689600 * 1000000
FIELDS = {"request_id", "results", "total", "offset", "limit", "has_next_page", "snapshot_id"}


def note(i, title, content, cols=(), updated=None, created=None):
    return {"id": "00000000-0000-4000-8000-%012d" % i, "title": title, "content": content,
            "created_at": fmt_time(created if created is not None else BASE + i * 1000000),
            "updated_at": fmt_time(updated if updated is not None else BASE + i * 1000000),
            "collection_ids": list(cols)}


def nid(i):
    return "00000000-0000-4000-8000-%012d" % i


COL_A = "10000000-0000-4000-8000-00000000000a"
COL_B = "10000000-0000-4000-8000-00000000000b"

LONG_TAIL = " ".join(["filler words about nothing much at all"] * 60)

NOTES = [
    note(1, "Cafe notes", "We met at the cafe on the corner."),
    note(2, "Fullwidth", "The abc of testing."),
    note(3, "Tokyo", "東京都庁に行きました。展望台から富士山が見えた。"),
    note(4, "Korean", "서울특별시 여행 계획을 세웠다."),
    note(5, "Japanese kana", "ひらがなとカタカナの練習をする。"),
    note(6, "Cluster", "Deploying kubernetes clusters with helm charts."),
    # same length and term frequencies; only adjacency differs
    note(7, "Storage design", "the file system stores blocks and the file system survives crashes"),
    note(8, "Apart", "the system stores file blocks and the file survives system crashes"),
    note(9, "zebra", "Unrelated body text about animals."),
    note(10, "Animals", "A long body that mentions zebra once among other animals like lions and tigers."),
    note(11, "Far match", LONG_TAIL + " the quokka appears near the end of this note " + LONG_TAIL),
    note(12, "Emoji 🎉 party", "Celebrate 🎉 with friends."),
    # identical notes: equal scores, so updated_at desc then id desc decides
    note(20, "Twin", "twinword here", updated=BASE + 500 * 1000000),
    note(21, "Twin", "twinword here", updated=BASE + 500 * 1000000),
    note(22, "Twin", "twinword here", updated=BASE + 400 * 1000000),
    note(23, "Twin", "twinword here", updated=BASE + 600 * 1000000),
]
# 150 notes sharing a term; only the 10 oldest are in collection A and have an open task, and
# they mention the term least, so without filters they fall outside the 100 best.
for k in range(150):
    i = 100 + k
    in_a = k < 10
    NOTES.append(note(i, "Widget report %d" % k,
                      "- [ ] follow up on the widget %d\n" % k if in_a else
                      "widget status %d\n" % k + "widget " * (1 + k % 5),
                      cols=[COL_A] if in_a else [COL_B], updated=BASE + i * 1000000))


class SearchBase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()
        if not getattr(SearchBase, "_ready", None) or SearchBase._ready[0] is not cls.stack:
            user, token = cls.stack.create_user("searcher")
            path = tmp_path(cls.stack, "search.jsonl")
            with open(path, "w") as f:
                for cid, title in ((COL_A, "Collection A"), (COL_B, "Collection B")):
                    f.write(json.dumps({"type": "collection", "id": cid, "title": title,
                                        "created_at": fmt_time(BASE), "updated_at": fmt_time(BASE)}) + "\n")
                for n in NOTES:
                    f.write(json.dumps(n) + "\n")
            cls.stack.notesctl("import", user, path)
            SearchBase._ready = (cls.stack, user, token)
        _, cls.user, cls.token = SearchBase._ready

    def search(self, body, query=None, token=None, headers=None):
        return self.stack.request("POST", "/v2/notes/search", query=query, body=body,
                                  token=token or self.token, headers=headers)

    def ok(self, body, query=None, token=None):
        r = self.search(body, query, token)
        self.assertEqual(r.status, 200, r.text)
        data = r.json()
        self.assertEqual(set(data), FIELDS)
        return data

    def ids(self, body, query=None):
        return [n["id"] for n in self.ok(body, query)["results"]]

    def error(self, r, status, kind, field=None):
        self.assertEqual(r.status, status, r.text)
        body = r.json()
        self.assertRegex(body["request_id"], REQ_ID)
        self.assertEqual(r.headers["X-Request-Id"], body["request_id"])
        self.assertEqual(body["error_metadata"]["error_kind"], kind)
        if field:
            self.assertEqual(body["error_metadata"].get("field_name"), field)
        return body


class Envelope(SearchBase):
    def test_shape_and_defaults(self):
        data = self.ok({"query": "widget"})
        self.assertEqual(data["offset"], 0)
        self.assertEqual(data["limit"], 20)
        self.assertEqual(data["total"], 100)  # 150 match; the snapshot keeps 100
        self.assertEqual(len(data["results"]), 20)
        self.assertTrue(data["has_next_page"])
        self.assertRegex(data["snapshot_id"], r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
        item = data["results"][0]
        self.assertEqual(set(item), {"id", "title", "snippet", "created_at", "updated_at",
                                     "collection_ids", "audio_recording_ids"})

    def test_include_content(self):
        data = self.ok({"query": "quokka", "config": {"include_note_content": True}})
        self.assertEqual(data["results"][0]["content"], NOTES[10]["content"])
        data = self.ok({"query": "quokka", "config": {"include_snippet": True}})
        self.assertNotIn("content", data["results"][0])

    def test_query_aware_snippet(self):
        data = self.ok({"query": "quokka"})
        self.assertEqual(data["results"][0]["id"], nid(11))
        self.assertIn("quokka", data["results"][0]["snippet"])
        self.assertLessEqual(len(data["results"][0]["snippet"]), 200)

    def test_no_match(self):
        data = self.ok({"query": "xylophonequartz"})
        self.assertEqual((data["results"], data["total"], data["has_next_page"]), ([], 0, False))


class Paging(SearchBase):
    def test_pages_over_snapshot(self):
        first = self.ok({"query": "widget", "limit": 30})
        snap = first["snapshot_id"]
        got = [n["id"] for n in first["results"]]
        offset = 30
        while True:
            page = self.ok({"query": "widget"}, query={"offset": offset, "limit": 30, "snapshot_id": snap})
            self.assertEqual(page["snapshot_id"], snap)
            self.assertEqual(page["total"], 100)
            got += [n["id"] for n in page["results"]]
            offset += 30
            if not page["has_next_page"]:
                break
        self.assertEqual(len(got), 100)
        self.assertEqual(len(set(got)), 100)
        beyond = self.ok({"query": "widget", "offset": 150, "snapshot_id": snap})
        self.assertEqual((beyond["results"], beyond["has_next_page"]), ([], False))

    def test_pagination_in_body_or_query(self):
        snap = self.ok({"query": "widget"})["snapshot_id"]
        a = self.ids({"query": "widget", "offset": 20, "limit": 5, "snapshot_id": snap})
        b = self.ids({"query": "widget"}, query={"offset": 20, "limit": 5, "snapshot_id": snap})
        c = self.ids({"query": "widget", "limit": 5}, query={"offset": 20, "limit": 5, "snapshot_id": snap})
        self.assertEqual(a, b)
        self.assertEqual(a, c)
        self.error(self.search({"query": "widget", "limit": 6}, query={"limit": 5}), 400, "INVALID_PARAMETER", "limit")

    def test_limits(self):
        self.assertEqual(len(self.ok({"query": "widget", "limit": 50})["results"]), 50)
        self.assertEqual(len(self.ok({"query": "widget", "limit": 1})["results"]), 1)
        for bad in (0, 51, -1, "5", 2.5, True):
            self.error(self.search({"query": "widget", "limit": bad}), 400, "INVALID_PARAMETER", "limit")
        for bad in ("0", "51", "x"):
            self.error(self.search({"query": "widget"}, query={"limit": bad}), 400, "INVALID_PARAMETER", "limit")
        self.error(self.search({"query": "widget", "offset": -1}), 400, "INVALID_PARAMETER", "offset")
        self.error(self.search({"query": "widget", "offset": 5}), 400, "INVALID_PARAMETER", "offset")
        self.error(self.search({"query": "widget"}, query={"offset": "3"}), 400, "INVALID_PARAMETER", "offset")

    def test_snapshot_reuse_rules(self):
        snap = self.ok({"query": "widget", "filter_by_collection_ids": [COL_A, COL_B]})["snapshot_id"]
        # the same query and filters after normalisation
        same = self.ok({"query": "  WIDGET ", "filter_by_collection_ids": [COL_B.upper(), COL_A],
                        "snapshot_id": snap, "offset": 1})
        self.assertEqual(same["snapshot_id"], snap)
        for body in ({"query": "gadget"}, {"query": "widget"},
                     {"query": "widget", "filter_by_collection_ids": [COL_A]},
                     {"query": "widget", "filter_by_collection_ids": [COL_A, COL_B], "filter_by_contains_tasks": True}):
            self.error(self.search(dict(body, snapshot_id=snap, offset=1)), 400, "SNAPSHOT_MISMATCH")

    def test_unknown_and_foreign_snapshot_are_the_same_404(self):
        snap = self.ok({"query": "widget"})["snapshot_id"]
        _, other = self.stack.create_user("snoop")
        a = self.error(self.search({"query": "widget", "snapshot_id": snap, "offset": 1}, token=other), 404, "NOT_FOUND")
        b = self.error(self.search({"query": "widget", "snapshot_id": "12345678-1234-1234-1234-123456789abc",
                                    "offset": 1}), 404, "NOT_FOUND")
        self.assertEqual(a["error_metadata"]["message"], b["error_metadata"]["message"])
        self.error(self.search({"query": "widget", "snapshot_id": "nope"}), 400, "INVALID_PARAMETER", "snapshot_id")
        other_ids = self.ok({"query": "widget"}, token=other)
        self.assertEqual(other_ids["total"], 0)

    def test_pages_show_current_fields_and_drop_deleted(self):
        u, t = self.stack.create_user("churner")
        path = tmp_path(self.stack, "churn-search.jsonl")
        notes = [note(500 + k, "Gizmo %d" % k, "gizmo text %d" % k, updated=BASE + k * 1000000) for k in range(30)]
        with open(path, "w") as f:
            f.writelines(json.dumps(n) + "\n" for n in notes)
        self.stack.notesctl("import", u, path)
        first = self.ok({"query": "gizmo", "limit": 10}, token=t)
        snap = first["snapshot_id"]
        order = [n["id"] for n in first["results"]]
        # change the world: delete one note of page 2, retitle another, add new matching notes
        page2 = self.ok({"query": "gizmo", "limit": 10, "offset": 10, "snapshot_id": snap}, token=t)
        ids2 = [n["id"] for n in page2["results"]]
        self.stack.notesctl("note", "delete", u, ids2[0])
        changed = next(n for n in notes if n["id"] == ids2[1])
        changed["title"] = "Gizmo renamed"
        extra = [note(600 + k, "Gizmo new %d" % k, "gizmo fresh", updated=BASE + 10 ** 9 + k) for k in range(5)]
        with open(path, "w") as f:
            f.writelines(json.dumps(n) + "\n" for n in [changed] + extra)
        self.stack.notesctl("import", u, path)
        again = self.ok({"query": "gizmo", "limit": 10, "offset": 10, "snapshot_id": snap}, token=t)
        ids_again = [n["id"] for n in again["results"]]
        self.assertEqual(ids_again, ids2[1:])  # same order, the deleted one left out
        self.assertEqual(again["results"][0]["title"], "Gizmo renamed")
        self.assertEqual(again["total"], 30)
        p1 = self.ok({"query": "gizmo", "limit": 10, "snapshot_id": snap}, token=t)
        self.assertEqual([n["id"] for n in p1["results"]], order)
        p3 = self.ok({"query": "gizmo", "limit": 10, "offset": 20, "snapshot_id": snap}, token=t)
        everything = order + ids_again + [n["id"] for n in p3["results"]]
        self.assertEqual(len(everything), len(set(everything)))
        self.assertFalse(set(n["id"] for n in extra) & set(everything))


class Validation(SearchBase):
    def test_query_rules(self):
        for body in ({}, {"query": None}, {"query": ""}, {"query": "   \t\n"}, {"query": 5},
                     {"query": ["a"]}, {"query": "x" * 1001}):
            self.error(self.search(body), 400, "INVALID_PARAMETER", "query")
        self.ok({"query": "x" * 1000})
        self.ok({"query": "🎉" * 1000})
        self.error(self.search({"query": "🎉" * 1001}), 400, "INVALID_PARAMETER", "query")

    def test_collection_ids_rules(self):
        for bad in ("x", ["not-a-uuid"], [5], [None], {"a": 1}):
            self.error(self.search({"query": "widget", "filter_by_collection_ids": bad}), 400,
                       "INVALID_PARAMETER", "filter_by_collection_ids")
        many = ["20000000-0000-4000-8000-%012d" % i for i in range(101)]
        self.error(self.search({"query": "widget", "filter_by_collection_ids": many}), 400,
                   "INVALID_PARAMETER", "filter_by_collection_ids")
        self.assertEqual(self.ok({"query": "widget", "filter_by_collection_ids": many[:100]})["total"], 0)
        self.assertEqual(self.ok({"query": "widget", "filter_by_collection_ids": []})["total"], 100)
        self.assertEqual(self.ok({"query": "widget", "filter_by_collection_ids": None})["total"], 100)

    def test_dates_and_flags_rules(self):
        for field in ("filter_by_created_after", "filter_by_created_before",
                      "filter_by_updated_after", "filter_by_updated_before"):
            for bad in ("2025-01-01", 5, "2025-13-01T00:00:00Z"):
                self.error(self.search({"query": "widget", field: bad}), 400, "INVALID_PARAMETER", field)
        for field in ("filter_by_contains_open_tasks", "filter_by_contains_tasks",
                      "filter_by_contains_images", "filter_by_contains_files"):
            for bad in ("true", 1, "yes"):
                self.error(self.search({"query": "widget", field: bad}), 400, "INVALID_PARAMETER", field)
        self.error(self.search({"query": "widget", "config": "x"}), 400, "INVALID_PARAMETER", "config")
        self.error(self.search({"query": "widget", "config": {"include_note_content": "yes"}}), 400,
                   "INVALID_PARAMETER", "config.include_note_content")

    def test_body_and_media_type(self):
        for raw in (b"not json", b"[1,2]", b"", b'{"query":"a"} extra', b'{"query":"a",}'):
            self.error(self.search(raw, headers={"Content-Type": "application/json"}), 400, "INVALID_JSON")
        r = self.search(b'{"query":"widget"}', headers={"Content-Type": "text/plain"})
        self.error(r, 415, "UNSUPPORTED_MEDIA_TYPE")
        r = self.search(b'{"query":"widget"}', headers={"Content-Type": "application/x-www-form-urlencoded"})
        self.error(r, 415, "UNSUPPORTED_MEDIA_TYPE")
        r = self.stack.request("POST", "/v2/notes/search", body=b'{"query":"widget"}', token=self.token)
        self.assertEqual(r.status, 200, r.text)  # no content type: accepted when the body is JSON
        r = self.search(b'{"query":"widget"}', headers={"Content-Type": "Application/JSON; charset=utf-8"})
        self.assertEqual(r.status, 200, r.text)
        big = json.dumps({"query": "widget", "pad": "x" * 70000})
        r = self.search(big.encode(), headers={"Content-Type": "application/json"})
        self.error(r, 413, "PAYLOAD_TOO_LARGE")

    def test_strict_json(self):
        # RFC 8259 (issue 20, item 5): each is 400 INVALID_JSON naming the problem and its byte
        # offset. The reader before (jsoncpp's strict mode) accepted the first five (the query
        # read as "widget", "wid", "wid\nget", "widget" plus invalid UTF-8, and "widget"); it
        # named neither problem nor offset for the last two.
        for raw, problem in ((b'{"query":"widget"}\x00{"limit":"x"}',
                              "trailing a NUL byte after the JSON value at byte 18"),
                             (b'{"query":"wid\x00get"}', "a NUL byte in a string at byte 13"),
                             (b'{"query":"wid\nget"}',
                              "a raw control character U+000A in a string (escape it) at byte 13"),
                             (b'{"query":"widget\\udc00"}', "an escaped lone surrogate U+DC00 at byte 16"),
                             (b'{"query":"widget","limit":01}', "a number with a leading zero at byte 26"),
                             (b'{"query":"widget","query":"x"}', 'duplicate key "query" at byte 18'),
                             (b'{"query":"\xc0\xafwidget"}', "invalid UTF-8 (byte 0xC0) at byte 10")):
            body = self.error(self.search(raw, headers={"Content-Type": "application/json"}), 400,
                              "INVALID_JSON")
            self.assertEqual(body["error_metadata"]["message"],
                             "the request body is not valid JSON: " + problem)
        self.ok({"query": "widget", "pad": "tab\t and newline\n escaped, \u00e9 and \U0001F600"})

    def test_method_and_auth(self):
        r = self.stack.request("GET", "/v2/notes/search", token=self.token)
        self.error(r, 405, "METHOD_NOT_ALLOWED")
        self.assertEqual(r.headers["Allow"], "POST")
        r = self.stack.request("POST", "/v2/notes/search", body={"query": "widget"})
        self.error(r, 401, "NOT_AUTHORIZED")


class Filters(SearchBase):
    def test_filters_apply_before_the_cut(self):
        # 150 notes match "widget"; the 10 in collection A are the oldest and would fall outside
        # the top 100 without the filter.
        snap = self.ok({"query": "widget", "limit": 50})
        unfiltered = [n["id"] for n in snap["results"]]
        unfiltered += self.ids({"query": "widget", "limit": 50, "offset": 50, "snapshot_id": snap["snapshot_id"]})
        self.assertEqual(len(unfiltered), 100)
        self.assertFalse(set(unfiltered) & set(nid(100 + k) for k in range(10)))
        data = self.ok({"query": "widget", "filter_by_collection_ids": [COL_A], "limit": 50})
        self.assertEqual(sorted(n["id"] for n in data["results"]), sorted(nid(100 + k) for k in range(10)))
        self.assertEqual(data["total"], 10)
        data = self.ok({"query": "widget", "filter_by_contains_open_tasks": True, "limit": 50})
        self.assertEqual(data["total"], 10)
        data = self.ok({"query": "widget", "filter_by_contains_open_tasks": True,
                        "filter_by_contains_images": True, "limit": 50})
        self.assertEqual(data["total"], 10)  # OR-combined
        data = self.ok({"query": "widget", "filter_by_contains_open_tasks": False, "limit": 50})
        self.assertEqual(data["total"], 100)

    def test_date_bounds_inclusive(self):
        lo, hi = BASE + 105 * 1000000, BASE + 109 * 1000000
        data = self.ok({"query": "widget", "filter_by_updated_after": fmt_time(lo),
                        "filter_by_updated_before": fmt_time(hi), "limit": 50})
        self.assertEqual(sorted(n["id"] for n in data["results"]), [nid(i) for i in range(105, 110)])
        data = self.ok({"query": "widget", "filter_by_created_after": fmt_time(hi), "limit": 50,
                        "filter_by_created_before": "2025-01-01T00:01:49+00:00"})
        self.assertEqual([n["id"] for n in data["results"]], [nid(109)])


class Relevance(SearchBase):
    def first(self, q):
        ids = self.ids({"query": q})
        return ids[0] if ids else None

    def test_folding(self):
        self.assertEqual(self.first("Café"), nid(1))
        self.assertEqual(self.first("CAFÉ"), nid(1))
        self.assertEqual(self.first("ＡＢＣ"), nid(2))

    def test_cjk(self):
        self.assertEqual(self.first("東京"), nid(3))
        self.assertEqual(self.first("都庁"), nid(3))
        self.assertEqual(self.first("서울"), nid(4))
        self.assertEqual(self.first("カタカナ"), nid(5))
        self.assertEqual(self.first("ひらがな"), nid(5))

    def test_prefix_last_term(self):
        self.assertEqual(self.first("kuber"), nid(6))
        self.assertEqual(self.first("deploying kuber"), nid(6))
        self.assertEqual(self.ids({"query": "kuber deploying"}), [nid(6)])

    def test_phrase(self):
        quoted = self.ids({"query": '"file system"'})
        self.assertEqual(quoted[0], nid(7))
        self.assertNotIn(nid(8), quoted)  # the words only apart
        loose = self.ids({"query": "file system"})
        self.assertIn(nid(8), loose)
        self.assertLess(loose.index(nid(7)), loose.index(nid(8)))

    def test_title_outweighs_body(self):
        ids = self.ids({"query": "zebra"})
        self.assertEqual(ids[:2], [nid(9), nid(10)])

    def test_emoji(self):
        self.assertEqual(self.first("🎉 party"), nid(12))

    def test_hostile_queries(self):
        for q in ('"', "*", "-", "AND", "NEAR(", ":", ")(", "🎉" * 1000, "OR NOT", "widget*",
                  '"unbalanced', "a:b", "((widget", "\\", "'", "%", "_", "NULL", "; DROP TABLE notes"):
            r = self.search({"query": q})
            self.assertEqual(r.status, 200, (q, r.text))
            self.assertEqual(set(r.json()), FIELDS)

    def test_operator_words_are_text(self):
        self.assertIn(nid(9), self.ids({"query": "zebra NOT"}))      # no negation
        self.assertIn(nid(9), self.ids({"query": "-zebra"}))
        either = self.ids({"query": "zebra OR quokka", "limit": 50})  # OR is a word, not an operator
        self.assertIn(nid(9), either)
        self.assertIn(nid(11), either)
        self.assertEqual(self.ids({"query": "zebra AND NOT"})[:2], [nid(9), nid(10)])

    def test_ties_break_by_updated_then_id(self):
        self.assertEqual(self.ids({"query": "twinword"}), [nid(23), nid(21), nid(20), nid(22)])


class Isolation(SearchBase):
    def test_other_user_sees_nothing(self):
        _, other = self.stack.create_user("stranger")
        for q in ("widget", "quokka", "東京", "kuber"):
            self.assertEqual(self.ok({"query": q}, token=other)["total"], 0)


if __name__ == "__main__":
    unittest.main()
