"""GET /v2/notes through nginx and the worker pool: contract sections 1-3, 6-8."""
import unittest

from listdata import NOTE_FIELDS, REQ_ID, NotesBase, fmt_time, walk

class Envelope(NotesBase):
    def test_headers_and_request_id(self):
        r = self.get({"limit": 3})
        self.assertEqual(r.status, 200)
        self.assertEqual(r.headers["Content-Type"], "application/json; charset=utf-8")
        self.assertEqual(r.headers["Cache-Control"], "no-store")
        self.assertEqual(r.headers["X-Content-Type-Options"], "nosniff")
        body = r.json()
        self.assertRegex(body["request_id"], REQ_ID)
        self.assertEqual(r.headers.get_all("X-Request-Id"), [body["request_id"]])
        self.assertEqual(set(body), {"request_id", "results", "total", "next_page"})

    def test_request_ids_differ(self):
        a, b = self.ok({"limit": 1}), self.ok({"limit": 1})
        self.assertNotEqual(a["request_id"], b["request_id"])

    def test_default_page(self):
        body = self.ok()
        self.assertEqual(len(body["results"]), 50)
        self.assertEqual(body["total"], 230)
        self.assertIn("next_page", body)
        self.assertEqual([n["id"] for n in body["results"]], self.data.expected()[:50])

    def test_item_shape(self):
        item = self.ok({"limit": 1})["results"][0]
        self.assertEqual(set(item), NOTE_FIELDS)
        note = next(n for n in self.data.notes if n["id"] == item["id"])
        self.assertEqual(item["title"], note["title"])
        self.assertEqual(item["created_at"], fmt_time(note["created_us"]))
        self.assertEqual(item["updated_at"], fmt_time(note["updated_us"]))
        self.assertEqual(sorted(item["collection_ids"]), sorted(note["collections"]))
        self.assertEqual(item["audio_recording_ids"], [])
        self.assertIsInstance(item["snippet"], str)

    def test_fractional_timestamps(self):
        ids = {n["id"]: n for n in self.data.notes}
        _, pages = walk(self.stack, "/v2/notes", self.token, {"limit": 100})
        seen_ms = seen_us = False
        for page in pages:
            for item in page["results"]:
                n = ids[item["id"]]
                self.assertEqual(item["created_at"], fmt_time(n["created_us"]))
                frac = item["created_at"][19:-1]
                seen_ms |= len(frac) == 4
                seen_us |= len(frac) == 7
        self.assertTrue(seen_ms and seen_us)

    def test_include_note_content(self):
        item = self.ok({"limit": 1, "include_note_content": "true"})["results"][0]
        note = next(n for n in self.data.notes if n["id"] == item["id"])
        self.assertEqual(item["content"], note["content"])
        self.assertNotIn("content", self.ok({"limit": 1, "include_note_content": "0"})["results"][0])


class Pagination(NotesBase):
    def test_walk_updated_at(self):
        for limit in (100, 7, 1):
            ids, pages = walk(self.stack, "/v2/notes", self.token, {"limit": limit})
            self.assertEqual(ids, self.data.expected(), "limit %d" % limit)
            self.assertTrue(all(p["total"] == 230 for p in pages))
            self.assertNotIn("next_page", pages[-1])
            self.assertTrue(all("next_page" in p for p in pages[:-1]))

    def test_walk_created_at(self):
        ids, _ = walk(self.stack, "/v2/notes", self.token, {"limit": 33, "order_by": "created_at"})
        self.assertEqual(ids, self.data.expected("created_at"))

    def test_exact_multiple_has_no_empty_last_page(self):
        ids, pages = walk(self.stack, "/v2/notes", self.token, {"limit": 46})
        self.assertEqual(len(pages), 5)
        self.assertEqual(len(ids), 230)

    def test_limit_may_change_between_pages(self):
        first = self.ok({"limit": 10})
        rest = self.ok({"limit": 100, "page": first["next_page"]})
        self.assertEqual([n["id"] for n in first["results"] + rest["results"]], self.data.expected()[:110])


class LimitParam(NotesBase):
    def test_bounds(self):
        self.assertEqual(len(self.ok({"limit": 1})["results"]), 1)
        self.assertEqual(len(self.ok({"limit": 100})["results"]), 100)
        self.assertEqual(len(self.ok({"limit": 55})["results"]), 55)
        self.assertEqual(len(self.ok("limit=")["results"]), 50)

    def test_out_of_range(self):
        for bad in ("0", "101", "-1", "abc", "1.5", "+5", "1e2", "99999999999999999999"):
            meta = self.assert_error(self.get({"limit": bad}), 400, "INVALID_PARAMETER", "limit")
            self.assertIn("1", meta["message"])
            self.assertIn("100", meta["message"])

    def test_repeated(self):
        self.assert_error(self.get("limit=5&limit=5"), 400, "INVALID_PARAMETER", "limit")

    def test_unknown_parameters_ignored(self):
        self.assertEqual(len(self.ok({"limit": 2, "frobnicate": "yes", "config.include_snippet": "1"})["results"]), 2)


class Filters(NotesBase):
    def check(self, query, **expect):
        ids, pages = walk(self.stack, "/v2/notes", self.token, dict(query, limit=40))
        want = self.data.expected(**expect)
        self.assertEqual(ids, want, query)
        self.assertEqual(pages[0]["total"], len(want))
        return ids

    def test_order_by(self):
        self.assert_error(self.get({"order_by": "title"}), 400, "INVALID_PARAMETER", "order_by")
        self.assert_error(self.get({"order_by": ""}), 400, "INVALID_PARAMETER", "order_by")

    def test_collection(self):
        for c in self.data.collections:
            self.check({"collection_id": c["id"]}, collection=c["id"])
            self.check({"collection_id": c["id"].upper(), "order_by": "created_at"},
                       collection=c["id"], order_by="created_at")
        body = self.ok({"collection_id": "00000000-0000-4000-8000-000000000000"})
        self.assertEqual((body["results"], body["total"]), ([], 0))
        self.assertNotIn("next_page", body)
        self.assertEqual(len(self.ok("collection_id=")["results"]), 50)
        for bad in ("42", "not-a-uuid", "3f0c1c2e8a514c8e9a432f1d7a6b9c01"):
            self.assert_error(self.get({"collection_id": bad}), 400, "INVALID_PARAMETER", "collection_id")

    def test_flags_each_and_or(self):
        names = {"open": "contains_open_tasks", "task": "contains_tasks",
                 "image": "contains_images", "file": "contains_files"}
        for flag, param in names.items():
            ids = self.check({param: "true"}, flags=[flag])
            self.assertTrue(ids)
            self.check({param: "false"})
            self.check({param: "TRUE"}, flags=[flag])
        self.check({"contains_images": "1", "contains_files": "1"}, flags=["image", "file"])
        self.check({"contains_closed": "1", "contains_open_tasks": "1", "contains_images": "0"},
                   flags=["open"])
        for bad in ("", "yes", "2", "on"):
            self.assert_error(self.get({"contains_tasks": bad}), 400, "INVALID_PARAMETER", "contains_tasks")

    def test_code_block_task_is_not_a_task(self):
        code_ids = {n["id"] for n in self.data.notes if "inside code" in n["content"]}
        ids, _ = walk(self.stack, "/v2/notes", self.token, {"limit": 100, "contains_tasks": "1"})
        self.assertFalse(code_ids & set(ids))

    def test_date_bounds_inclusive(self):
        n = self.data.notes[100]
        self.check({"filter_by_updated_after": fmt_time(n["updated_us"])}, updated=(n["updated_us"], None))
        self.check({"filter_by_updated_before": fmt_time(n["updated_us"])}, updated=(None, n["updated_us"]))
        exact = self.check({"filter_by_created_after": fmt_time(n["created_us"]),
                            "filter_by_created_before": fmt_time(n["created_us"])},
                           created=(n["created_us"], n["created_us"]))
        self.assertIn(n["id"], exact)

    def test_date_offsets_and_leniency(self):
        u = self.data.notes[60]["updated_us"]
        want = self.data.expected(updated=(u, None))
        stamp = fmt_time(u)  # ...Z
        hh = int(stamp[11:13])
        plus = "%s%02d%s+01:00" % (stamp[:11], (hh + 1) % 24, stamp[13:19]) if hh < 23 else None
        if plus:
            ids, _ = walk(self.stack, "/v2/notes", self.token, {"filter_by_updated_after": plus, "limit": 100})
            self.assertEqual(ids, want)
            # an unencoded '+' arrives as a space and is read as '+'
            body = self.ok("limit=100&filter_by_updated_after=" + plus)
            self.assertEqual([x["id"] for x in body["results"]], want[:100])
            self.assertEqual(body["total"], len(want))
        ids3, _ = walk(self.stack, "/v2/notes", self.token,
                       {"filter_by_updated_after": stamp[:-1] + "z", "limit": 100})
        self.assertEqual(ids3, want)

    def test_bad_dates(self):
        for bad in ("2025-01-01", "2025-01-01T00:00:00", "2025-02-30T00:00:00Z", "yesterday",
                    "2025-01-01T00:00:00.1234567Z", "2025-01-01T25:00:00Z", "1735689600"):
            for param in ("filter_by_created_after", "filter_by_created_before",
                          "filter_by_updated_after", "filter_by_updated_before"):
                self.assert_error(self.get({param: bad}), 400, "INVALID_PARAMETER", param)
        self.assertEqual(self.ok("filter_by_created_after=")["total"], 230)

    def test_combined(self):
        c = self.data.collections[1]["id"]
        u = self.data.notes[150]["updated_us"]
        self.check({"collection_id": c, "contains_tasks": "1", "filter_by_updated_before": fmt_time(u),
                    "order_by": "created_at"},
                   collection=c, flags=["task"], updated=(None, u), order_by="created_at")

    def test_empty_range(self):
        body = self.ok({"filter_by_updated_after": "2030-01-01T00:00:00Z"})
        self.assertEqual((body["results"], body["total"]), ([], 0))
        self.assertNotIn("next_page", body)


if __name__ == "__main__":
    unittest.main()
