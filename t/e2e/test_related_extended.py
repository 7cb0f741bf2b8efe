"""Related notes and extended search through nginx and the worker pool (contract section 10): the
search engine's ranking with a note's own distinctive terms, and cursor pages in relevance and
date order."""
import json
import unittest
import uuid

from apicase import ApiCase
from harness import shared_stack
from listdata import fmt_time, tmp_path

BASE_US = 1735689600 * 1000000  # 2025-01-01T00:00:00Z
RELATED_FIELDS = {"id", "title", "snippet", "collection_ids", "created_at", "updated_at", "score"}
EXT_FIELDS = {"id", "title", "snippet", "note_summary", "created_at", "updated_at",
              "attachment_matches"}


def nid(prefix, i):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "re/%s/%d" % (prefix, i)))


def import_notes(stack, user, name, notes, collections=()):
    lines = [json.dumps(dict(c, type="collection")) for c in collections]
    for n in notes:
        lines.append(json.dumps({
            "id": n["id"], "title": n["title"], "content": n["content"],
            "created_at": fmt_time(n["updated_us"] - 1000000), "updated_at": fmt_time(n["updated_us"]),
            "collection_ids": n.get("collections", [])}))
    path = tmp_path(stack, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    stack.notesctl("import", user, path)


class Base(ApiCase):
    pass


class Related(Base):
    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()
        cls.user, cls.token = cls.stack.create_user("re-related")
        _, cls.other_token = cls.stack.create_user("re-related-other")
        cls.coll = str(uuid.uuid5(uuid.NAMESPACE_URL, "re/related/coll"))
        space = ["telescope nebula galaxy orbit", "nebula galaxy spectrum", "telescope mirror orbit",
                 "galaxy cluster redshift nebula", "orbit of the comet"]
        food = ["pasta basil tomato oven", "basil pesto pasta", "tomato soup oven", "bread oven flour"]
        cls.notes = []
        for i, words in enumerate(space + food):
            cls.notes.append({"id": nid("related", i), "title": words.split()[0].title() + " notes",
                              "content": "%s\n\nAbout %s, written down." % (words, words),
                              "updated_us": BASE_US + i * 3600 * 1000000,
                              "collections": [cls.coll] if i == 1 else []})
        cls.space = [n["id"] for n in cls.notes[:5]]
        cls.food = [n["id"] for n in cls.notes[5:]]
        import_notes(cls.stack, cls.user, "related.jsonl", cls.notes,
                     [{"id": cls.coll, "title": "Space", "created_at": "2025-01-01T00:00:00Z",
                       "updated_at": "2025-01-01T00:00:00Z"}])

    def related(self, note_id, **query):
        r = self.ok("GET", "/v2/notes/%s/related-notes" % note_id, query=query or None)
        self.assertEqual(set(r), {"request_id", "results", "total"})
        self.assertEqual(r["total"], len(r["results"]))
        return r["results"]

    def test_fields_and_order(self):
        got = self.related(self.space[0])
        self.assertTrue(got)
        for item in got:
            self.assertEqual(set(item), RELATED_FIELDS)
            self.assertIsInstance(item["score"], (int, float))
            self.assertGreater(item["score"], 0)
        ids = [i["id"] for i in got]
        self.assertNotIn(self.space[0], ids)
        self.assertEqual(len(ids), len(set(ids)))
        # the astronomy notes sharing two words first, then the one sharing one; the words of
        # every note ("notes", "about") tell nothing apart and find no cooking note
        self.assertEqual(set(ids[:3]), set(self.space[1:4]))
        self.assertEqual(ids[3:], [self.space[4]])
        scores = [i["score"] for i in got]
        self.assertEqual(scores, sorted(scores, reverse=True))
        by_id = {n["id"]: n for n in self.notes}
        for item in got:
            n = by_id[item["id"]]
            self.assertEqual(item["title"], n["title"])
            self.assertEqual(item["updated_at"], fmt_time(n["updated_us"]))
            self.assertEqual(item["collection_ids"], n["collections"])
        food = [i["id"] for i in self.related(self.food[0])]
        self.assertEqual(set(food[:2]), set(self.food[1:3]))
        self.assertEqual(food[2:], [self.food[3]])

    def test_limit(self):
        self.assertEqual(len(self.related(self.space[0], limit=2)), 2)
        self.assertEqual([i["id"] for i in self.related(self.space[0], limit=2)],
                         [i["id"] for i in self.related(self.space[0])][:2])
        for bad in ("0", "21", "x", "-1", "1.5"):
            with self.subTest(limit=bad):
                self.error(self.call("GET", "/v2/notes/%s/related-notes" % self.space[0],
                                     query={"limit": bad}), 400, "INVALID_PARAMETER", "limit")
        self.assertLessEqual(len(self.related(self.space[0], limit=20)), 20)

    def test_errors_and_isolation(self):
        self.error(self.call("GET", "/v2/notes/%s/related-notes" % uuid.uuid4()), 404, "NOT_FOUND")
        self.error(self.call("GET", "/v2/notes/nope/related-notes"), 400, "INVALID_PARAMETER", "note_id")
        self.error(self.call("GET", "/v2/notes/%s/related-notes" % self.space[0], token=self.other_token),
                   404, "NOT_FOUND")
        r = self.call("POST", "/v2/notes/%s/related-notes" % self.space[0])
        self.error(r, 405, "METHOD_NOT_ALLOWED")
        self.assertEqual(r.headers["Allow"], "GET")

    def test_reads_its_writes(self):
        target = self.space[2]
        before = [i for i in self.related(self.space[0]) if i["id"] == target][0]
        self.assertEqual(before["collection_ids"], [])
        self.ok("PUT", "/v2/collections/%s/notes/%s" % (self.coll, target))
        after = [i for i in self.related(self.space[0]) if i["id"] == target][0]
        self.assertEqual(after["collection_ids"], [self.coll])
        self.ok("DELETE", "/v2/collections/%s/notes/%s" % (self.coll, target))
        gone = self.notes[3]["id"]
        self.stack.notesctl("note", "delete", self.user, gone)
        self.assertNotIn(gone, [i["id"] for i in self.related(self.space[0])])
        self.error(self.call("GET", "/v2/notes/%s/related-notes" % gone), 404, "NOT_FOUND")


class Extended(Base):
    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()
        cls.user, cls.token = cls.stack.create_user("re-extended")
        cls.other, cls.other_token = cls.stack.create_user("re-extended-other")
        cls.coll = str(uuid.uuid5(uuid.NAMESPACE_URL, "re/extended/coll"))
        cls.notes = []
        for i in range(130):
            words = ["comet"] * (1 + i % 4)
            if i % 10 == 0:
                words += ["tail", "of", "the", "comet", "glows"]
            if i % 7 == 0:
                words += ["tail", "wind"]
            # runs of five notes share one updated_at: pages must cut inside a tie
            n = {"id": nid("ext", i), "title": "Log %d" % i,
                 "content": "Entry %d: %s and filler words here." % (i, " ".join(words)),
                 "updated_us": BASE_US + (i // 5) * 60 * 1000000,
                 "collections": [cls.coll] if i % 3 == 0 else []}
            cls.notes.append(n)
        cls.notes.append({"id": nid("ext", 999), "title": "Unrelated",
                          "content": "nothing to see", "updated_us": BASE_US})
        import_notes(cls.stack, cls.user, "ext.jsonl", cls.notes,
                     [{"id": cls.coll, "title": "Thirds", "created_at": "2025-01-01T00:00:00Z",
                       "updated_at": "2025-01-01T00:00:00Z"}])
        # the other user has the same words: never in this user's results
        import_notes(cls.stack, cls.other, "ext-other.jsonl",
                     [{"id": nid("ext-other", i), "title": "Theirs %d" % i, "content": "comet tail",
                       "updated_us": BASE_US + i} for i in range(5)])

    def by_date(self, pred):
        notes = [n for n in self.notes if pred(n)]
        notes.sort(key=lambda n: (n["updated_us"], n["id"]), reverse=True)
        return [n["id"] for n in notes]

    def page(self, body, token=None):
        r = self.ok("POST", "/v2/notes/extended-search", body, token=token)
        self.assertEqual(set(r), {"request_id", "results", "has_next_page", "next_page_cursor"})
        for item in r["results"]:
            self.assertEqual(set(item), EXT_FIELDS)
            self.assertIsNone(item["note_summary"])
            self.assertEqual(item["attachment_matches"], [])
        self.assertEqual(r["has_next_page"], r["next_page_cursor"] is not None)
        return r

    def walk(self, body):
        body = dict(body)
        ids, pages = [], 0
        while True:
            r = self.page(body)
            pages += 1
            ids += [i["id"] for i in r["results"]]
            if not r["has_next_page"]:
                return ids, pages
            body["next_page_cursor"] = r["next_page_cursor"]
            self.assertLess(pages, 500)

    def test_relevance_is_the_search_order(self):
        searched = self.ok("POST", "/v2/notes/search", {"query": "comet"})
        r = self.page({"query": "comet"})
        self.assertEqual(len(r["results"]), 10)
        self.assertEqual([i["id"] for i in r["results"]], [i["id"] for i in searched["results"]][:10])
        ids, pages = self.walk({"query": "comet", "limit": 7})
        self.assertEqual(len(ids), 130)
        self.assertEqual(len(set(ids)), 130)
        self.assertEqual(pages, 19)
        first100 = self.ok("POST", "/v2/notes/search", {"query": "comet", "limit": 50})
        second = self.ok("POST", "/v2/notes/search", {"query": "comet", "limit": 50},
                         query={"offset": 50, "snapshot_id": first100["snapshot_id"]})
        self.assertEqual(ids[:100], [i["id"] for i in first100["results"] + second["results"]])

    def test_snippet_is_query_aware(self):
        r = self.page({"query": "glows", "sort_by": "DATE", "limit": 1})
        self.assertIn("glows", r["results"][0]["snippet"])

    def test_date_order_walks_every_match(self):
        want = self.by_date(lambda n: "comet" in n["content"])
        for limit in (1, 4, 5, 100):
            with self.subTest(limit=limit):
                ids, _ = self.walk({"query": "comet", "sort_by": "DATE", "limit": limit})
                self.assertEqual(ids, want)
        r = self.page({"query": "comet", "sort_by": "DATE"})
        self.assertEqual([i["id"] for i in r["results"]], want[:10])
        for item in r["results"]:
            n = [x for x in self.notes if x["id"] == item["id"]][0]
            self.assertEqual((item["title"], item["updated_at"]), (n["title"], fmt_time(n["updated_us"])))

    def test_phrase_and_filters(self):
        phrase = self.by_date(lambda n: "tail of the comet" in n["content"] or
                              "comet tail" in n["content"])
        ids, _ = self.walk({"query": '"comet tail"', "sort_by": "DATE", "limit": 3})
        self.assertEqual(ids, phrase)
        ids, _ = self.walk({"query": '"comet tail"', "limit": 3})
        self.assertEqual(sorted(ids), sorted(phrase))
        in_coll = self.by_date(lambda n: self.coll in n.get("collections", []))
        for sort in ("DATE", "RELEVANCE"):
            with self.subTest(sort=sort):
                ids, _ = self.walk({"query": "comet", "sort_by": sort, "limit": 9,
                                    "filter_by_collection_ids": [self.coll]})
                self.assertEqual(sorted(ids), sorted(in_coll))
                excluded = in_coll[:5]
                ids, _ = self.walk({"query": "comet", "sort_by": sort, "limit": 9,
                                    "filter_by_collection_ids": [self.coll],
                                    "exclude_note_ids": [e.upper() for e in excluded]})
                self.assertEqual(sorted(ids), sorted(in_coll[5:]))
                lo, hi = BASE_US + 5 * 60 * 1000000, BASE_US + 9 * 60 * 1000000
                ids, _ = self.walk({"query": "comet", "sort_by": sort, "limit": 4,
                                    "filter_by_updated_after": fmt_time(lo),
                                    "filter_by_updated_before": fmt_time(hi)})
                self.assertEqual(sorted(ids), sorted(self.by_date(lambda n: lo <= n["updated_us"] <= hi
                                                                  and "comet" in n["content"])))
        self.assertEqual(self.page({"query": "zzzz"})["results"], [])
        self.assertEqual(self.page({"query": "!!!", "sort_by": "DATE"})["results"], [])

    def test_cursor_tamper_and_replay(self):
        for sort in ("RELEVANCE", "DATE"):
            with self.subTest(sort=sort):
                body = {"query": "comet", "sort_by": sort, "limit": 5}
                cur = self.page(body)["next_page_cursor"]
                self.assertIsInstance(cur, str)
                # a cursor may be used again: the same page
                second = self.page(dict(body, next_page_cursor=cur))
                again = self.page(dict(body, next_page_cursor=cur))
                self.assertEqual(second["results"], again["results"])
                self.assertEqual(len(second["results"]), 5)
                bad = [cur[:-2] + ("AA" if cur[-2:] != "AA" else "BB"), cur[:20], "garbage", "x" * 300,
                       "x" * 5000]
                for text in bad:
                    self.error(self.call("POST", "/v2/notes/extended-search",
                                         dict(body, next_page_cursor=text)),
                               400, "INVALID_CURSOR", "next_page_cursor")
                other_sort = "DATE" if sort == "RELEVANCE" else "RELEVANCE"
                replays = [dict(body, query="tail", next_page_cursor=cur),
                           dict(body, sort_by=other_sort, next_page_cursor=cur),
                           dict(body, filter_by_collection_ids=[self.coll], next_page_cursor=cur),
                           dict(body, exclude_note_ids=[self.notes[0]["id"]], next_page_cursor=cur),
                           dict(body, filter_by_updated_after="2020-01-01T00:00:00Z", next_page_cursor=cur)]
                for replay in replays:
                    self.error(self.call("POST", "/v2/notes/extended-search", replay),
                               400, "INVALID_CURSOR", "next_page_cursor")
                self.error(self.call("POST", "/v2/notes/extended-search", dict(body, next_page_cursor=cur),
                                     token=self.other_token), 400, "INVALID_CURSOR", "next_page_cursor")
                # limit is not part of the binding, and the query compares in its analysed form
                self.page(dict(body, limit=3, query="COMET", next_page_cursor=cur))

    def test_errors(self):
        cases = [({}, "query"), ({"query": ""}, "query"), ({"query": "  "}, "query"),
                 ({"query": 3}, "query"), ({"query": "q" * 1001}, "query"),
                 ({"query": "a", "limit": 0}, "limit"), ({"query": "a", "limit": 101}, "limit"),
                 ({"query": "a", "limit": "5"}, "limit"), ({"query": "a", "sort_by": "date"}, "sort_by"),
                 ({"query": "a", "exclude_note_ids": [str(uuid.uuid4()) for _ in range(101)]},
                  "exclude_note_ids"),
                 ({"query": "a", "exclude_note_ids": ["x"]}, "exclude_note_ids"),
                 ({"query": "a", "filter_by_collection_ids": "x"}, "filter_by_collection_ids"),
                 ({"query": "a", "filter_by_updated_after": "2025-01-01"}, "filter_by_updated_after"),
                 ({"query": "a", "next_page_cursor": 5}, "next_page_cursor")]
        for body, field in cases:
            with self.subTest(body=str(body)[:80]):
                self.error(self.call("POST", "/v2/notes/extended-search", body), 400,
                           "INVALID_PARAMETER", field)
        self.error(self.call("POST", "/v2/notes/extended-search", "[]"), 400, "INVALID_JSON")
        r = self.call("GET", "/v2/notes/extended-search")
        self.error(r, 405, "METHOD_NOT_ALLOWED")
        self.assertEqual(r.headers["Allow"], "POST")
        mine = {n["id"] for n in self.notes}
        theirs = self.walk({"query": "comet tail"})[0]
        self.assertTrue(theirs)
        r = self.page({"query": "comet tail"}, token=self.other_token)
        self.assertEqual(len(r["results"]), 5)
        self.assertFalse({i["id"] for i in r["results"]} & mine)


class Window(Base):
    """RELEVANCE pages through the best 1,000 matches; DATE through every one."""

    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()
        cls.user, cls.token = cls.stack.create_user("re-window")
        cls.notes = [{"id": nid("win", i), "title": "W%d" % i,
                      "content": "marmot " * (1 + i % 5) + "entry %d" % i,
                      "updated_us": BASE_US + i * 1000000} for i in range(1010)]
        import_notes(cls.stack, cls.user, "win.jsonl", cls.notes)

    def walk(self, body):
        body = dict(body)
        ids = []
        while True:
            r = self.ok("POST", "/v2/notes/extended-search", body)
            ids += [i["id"] for i in r["results"]]
            if not r["has_next_page"]:
                self.assertIsNone(r["next_page_cursor"])
                return ids
            body["next_page_cursor"] = r["next_page_cursor"]

    def test_relevance_stops_at_1000(self):
        ids = self.walk({"query": "marmot", "limit": 100})
        self.assertEqual(len(ids), 1000)
        self.assertEqual(len(set(ids)), 1000)

    def test_date_has_no_end(self):
        ids = self.walk({"query": "marmot", "limit": 100, "sort_by": "DATE"})
        self.assertEqual(ids, [n["id"] for n in reversed(self.notes)])


if __name__ == "__main__":
    unittest.main()
