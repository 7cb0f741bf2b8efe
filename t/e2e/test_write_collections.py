"""The collection half of the write API through nginx and the worker pool (contract section 10):
one collection's read, create, change and delete, collection search, and linking, unlinking and
moving notes; every change visible at once in lists, totals, note_count, search filters and reads."""
import json
import threading
import time
import unittest
import uuid

from apicase import ApiCase
from harness import shared_stack
from listdata import fmt_time, parse_time, tmp_path

COLL_FIELDS = {"request_id", "id", "title", "description", "created_at", "updated_at"}
ITEM_FIELDS = {"id", "title", "description", "created_at", "updated_at", "note_count"}


def note(i, words, colls=()):
    return {"id": str(uuid.uuid5(uuid.NAMESPACE_URL, "wc/note/%d" % i)),
            "title": "Note %d %s" % (i, words.split()[0]),
            "content": "# Note %d %s\n\n%s and some filler text." % (i, words.split()[0], words),
            "created_at": "2025-01-%02dT10:00:00Z" % (i + 1),
            "updated_at": "2025-02-%02dT10:00:00Z" % (i + 1),
            "collection_ids": list(colls)}


class Base(ApiCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()
        cls.user, cls.token = cls.stack.create_user("wc-%s" % cls.__name__.lower())
        cls.other, cls.other_token = cls.stack.create_user("wc-other-%s" % cls.__name__.lower())
        cls.home = str(uuid.uuid5(uuid.NAMESPACE_URL, "wc/coll/home/" + cls.__name__))
        cls.notes = [note(i, w, [cls.home] if i < 2 else [])
                     for i, w in enumerate(["zebra stripes", "walrus tusks", "quokka smile",
                                            "narwhal horn", "okapi forest"])]
        lines = [json.dumps({"type": "collection", "id": cls.home, "title": "Home base",
                             "description": None, "created_at": "2025-01-01T00:00:00Z",
                             "updated_at": "2025-01-01T00:00:00Z"})]
        lines += [json.dumps(n) for n in cls.notes]
        path = tmp_path(cls.stack, "wc-%s.jsonl" % cls.__name__)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        cls.stack.notesctl("import", cls.user, path)

    def create(self, **fields):
        fields.setdefault("title", "c-" + uuid.uuid4().hex[:8])
        return self.ok("POST", "/v2/collections", fields)

    def note_item(self, note_id):
        """The note as GET /v2/notes lists it."""
        for item in self.ok("GET", "/v2/notes", query={"limit": 100})["results"]:
            if item["id"] == note_id:
                return item
        self.fail("note %s not listed" % note_id)

    def in_collection(self, cid):
        return [n["id"] for n in self.ok("GET", "/v2/notes", query={"collection_id": cid,
                                                                    "limit": 100})["results"]]

    def searched(self, query, cids):
        body = {"query": query, "filter_by_collection_ids": cids}
        return [n["id"] for n in self.ok("POST", "/v2/notes/search", body)["results"]]


class Create(Base):
    def test_create_fields_and_read_back(self):
        before = self.ok("GET", "/v2/collections")["total"]
        t0 = time.time()
        c = self.create(title="Travel plans", description="Trips for 2025")
        self.assertEqual(set(c), COLL_FIELDS)
        self.assertEqual(c["title"], "Travel plans")
        self.assertEqual(c["description"], "Trips for 2025")
        self.assertEqual(c["id"], str(uuid.UUID(c["id"])))
        self.assertEqual(c["created_at"], c["updated_at"])
        self.assertLess(abs(parse_time(c["created_at"]) / 1e6 - t0), 60)
        got = self.ok("GET", "/v2/collections/" + c["id"])
        self.assertEqual(set(got), COLL_FIELDS | {"note_count"})
        self.assertEqual(got["note_count"], 0)
        for k in COLL_FIELDS - {"request_id"}:
            self.assertEqual(got[k], c[k])
        listed = self.ok("GET", "/v2/collections", query={"limit": 100})
        self.assertEqual(listed["total"], before + 1)
        self.assertIn(c["id"], [i["id"] for i in listed["results"]])

    def test_given_id_and_times(self):
        cid = str(uuid.uuid4())
        c = self.create(id=cid.upper(), title="Given", created_at="2024-05-01T10:00:00+02:00",
                        updated_at="2024-06-01T00:00:00.5Z")
        self.assertEqual(c["id"], cid)
        self.assertEqual(c["created_at"], "2024-05-01T08:00:00Z")
        self.assertEqual(c["updated_at"], "2024-06-01T00:00:00.500Z")
        self.assertIsNone(c["description"])
        only_created = self.create(created_at="2024-01-01T00:00:00Z")
        self.assertEqual(only_created["created_at"], "2024-01-01T00:00:00Z")
        self.assertLess(abs(parse_time(only_created["updated_at"]) / 1e6 - time.time()), 60)
        self.error(self.call("POST", "/v2/collections", {"id": cid, "title": "again"}),
                   409, "CONFLICT", "id")
        # ids are per user: another user may use it, and learns nothing
        other = self.ok("POST", "/v2/collections", {"id": cid, "title": "theirs"},
                        token=self.other_token)
        self.assertEqual(other["id"], cid)
        self.assertEqual(self.ok("GET", "/v2/collections/" + cid)["title"], "Given")

    def test_create_errors(self):
        cases = [
            ({}, "title"), ({"title": ""}, "title"), ({"title": 5}, "title"),
            ({"title": "x" * 1001}, "title"), ({"title": "t", "description": "d" * 10001}, "description"),
            ({"title": "t", "description": 3}, "description"), ({"title": "t", "id": "nope"}, "id"),
            ({"title": "t", "created_at": "2024-01-01"}, "created_at"),
            ({"title": "t", "updated_at": "2024-01-01T00:00:00"}, "updated_at"),
            ({"title": "t", "created_at": "2030-01-01T00:00:00Z"}, "created_at"),
            ({"title": "t", "created_at": "2024-02-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z"},
             "updated_at"),
        ]
        before = self.ok("GET", "/v2/collections")["total"]
        for body, field in cases:
            with self.subTest(body=body):
                self.error(self.call("POST", "/v2/collections", body), 400, "INVALID_PARAMETER", field)
        self.create(title="x" * 1000, description="d" * 10000)
        self.assertEqual(self.ok("GET", "/v2/collections")["total"], before + 1)
        self.error(self.call("POST", "/v2/collections", "[1]"), 400, "INVALID_JSON")
        self.error(self.call("POST", "/v2/collections", "", headers={"Content-Type": "application/json"}),
                   400, "INVALID_JSON")
        self.error(self.call("POST", "/v2/collections", '{"title": "t"}',
                             headers={"Content-Type": "text/plain"}), 415, "UNSUPPORTED_MEDIA_TYPE")
        self.assertEqual(self.ok("GET", "/v2/collections")["total"], before + 1)


class Patch(Base):
    def test_patch_fields(self):
        c = self.create(title="Before", description="desc", created_at="2024-01-01T00:00:00Z",
                        updated_at="2024-01-02T00:00:00Z")
        path = "/v2/collections/" + c["id"]
        p = self.ok("PATCH", path, {"title": "After"})
        self.assertEqual(set(p), COLL_FIELDS)
        self.assertEqual((p["title"], p["description"], p["created_at"]),
                         ("After", "desc", "2024-01-01T00:00:00Z"))
        self.assertGreater(parse_time(p["updated_at"]), parse_time("2025-01-01T00:00:00Z"))
        p = self.ok("PATCH", path, {"description": "", "updated_at": "2024-03-01T00:00:00Z"})
        self.assertIsNone(p["description"])
        self.assertEqual(p["updated_at"], "2024-03-01T00:00:00Z")
        self.assertEqual(p["title"], "After")
        p = self.ok("PATCH", path, {"description": "new one", "title": None})
        self.assertEqual((p["title"], p["description"]), ("After", "new one"))
        # every field is optional: an empty body only moves updated_at
        r = self.call("PATCH", path, "", headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 200, r.text)
        got = self.ok("GET", path)
        self.assertEqual((got["title"], got["description"]), ("After", "new one"))
        self.assertEqual(got["updated_at"], r.json()["updated_at"])

    def test_patch_errors(self):
        c = self.create(title="P", created_at="2024-06-01T00:00:00Z")
        path = "/v2/collections/" + c["id"]
        self.error(self.call("PATCH", path, {"title": ""}), 400, "INVALID_PARAMETER", "title")
        self.error(self.call("PATCH", path, {"description": "d" * 10001}), 400, "INVALID_PARAMETER",
                   "description")
        self.error(self.call("PATCH", path, {"updated_at": "2024-01-01T00:00:00Z"}), 400,
                   "INVALID_PARAMETER", "updated_at")
        self.error(self.call("PATCH", path, {"updated_at": "2099-01-01T00:00:00Z"}), 400,
                   "INVALID_PARAMETER", "updated_at")
        self.error(self.call("PATCH", "/v2/collections/" + str(uuid.uuid4()), {"title": "x"}),
                   404, "NOT_FOUND")
        self.error(self.call("PATCH", "/v2/collections/not-a-uuid", {"title": "x"}), 400,
                   "INVALID_PARAMETER", "collection_id")
        self.assertEqual(self.ok("GET", path)["title"], "P")


class DeleteAndLinks(Base):
    def test_link_unlink_visible_everywhere(self):
        c = self.create(title="Linked")
        cid, nid = c["id"], self.notes[3]["id"]
        path = "/v2/collections/%s/notes/%s" % (cid, nid)
        before = self.note_item(nid)
        ack = self.ok("PUT", path)
        self.assertEqual(set(ack), {"request_id"})
        self.ok("PUT", path.upper().replace("/V2/COLLECTIONS/", "/v2/collections/").replace("/NOTES/", "/notes/"))
        self.assertEqual(self.ok("GET", "/v2/collections/" + cid)["note_count"], 1)
        item = self.note_item(nid)
        self.assertEqual(item["collection_ids"], [cid])
        # a link changes neither updated_at (API.md) nor anything else of the note
        self.assertEqual(item["updated_at"], before["updated_at"])
        self.assertEqual(self.in_collection(cid), [nid])
        self.assertEqual(self.searched("narwhal", [cid]), [nid])
        listed = {i["id"]: i for i in self.ok("GET", "/v2/collections", query={"limit": 100})["results"]}
        self.assertEqual(listed[cid]["note_count"], 1)
        self.ok("DELETE", path)
        self.ok("DELETE", path)  # not linked any more: still an acknowledgement
        self.assertEqual(self.ok("GET", "/v2/collections/" + cid)["note_count"], 0)
        self.assertEqual(self.note_item(nid)["collection_ids"], [])
        self.assertEqual(self.in_collection(cid), [])
        self.assertEqual(self.searched("narwhal", [cid]), [])

    def test_link_errors(self):
        cid = self.create()["id"]
        nid = self.notes[4]["id"]
        for method in ("PUT", "DELETE"):
            self.error(self.call(method, "/v2/collections/%s/notes/%s" % (cid, uuid.uuid4())),
                       404, "NOT_FOUND")
            self.error(self.call(method, "/v2/collections/%s/notes/%s" % (uuid.uuid4(), nid)),
                       404, "NOT_FOUND")
            self.error(self.call(method, "/v2/collections/%s/notes/x%s" % (cid, nid[1:])),
                       400, "INVALID_PARAMETER", "note_id")
            self.error(self.call(method, "/v2/collections/123/notes/%s" % nid),
                       400, "INVALID_PARAMETER", "collection_id")
        self.assertEqual(self.ok("GET", "/v2/collections/" + cid)["note_count"], 0)

    def test_delete_keeps_notes(self):
        c = self.create(title="Doomed")
        cid = c["id"]
        linked = [self.notes[0]["id"], self.notes[2]["id"]]
        for nid in linked:
            self.ok("PUT", "/v2/collections/%s/notes/%s" % (cid, nid))
        self.assertEqual(self.note_item(linked[0])["collection_ids"], [self.home, cid])
        notes_before = self.ok("GET", "/v2/notes")["total"]
        colls_before = self.ok("GET", "/v2/collections")["total"]
        self.assertEqual(sorted(self.searched("zebra quokka", [cid])), sorted(linked))
        ack = self.ok("DELETE", "/v2/collections/" + cid)
        self.assertEqual(set(ack), {"request_id"})
        self.error(self.call("GET", "/v2/collections/" + cid), 404, "NOT_FOUND")
        self.error(self.call("DELETE", "/v2/collections/" + cid), 404, "NOT_FOUND")
        self.assertEqual(self.ok("GET", "/v2/notes")["total"], notes_before)
        self.assertEqual(self.ok("GET", "/v2/collections")["total"], colls_before - 1)
        self.assertEqual(self.note_item(linked[0])["collection_ids"], [self.home])
        self.assertEqual(self.note_item(linked[1])["collection_ids"], [])
        self.assertEqual(self.in_collection(cid), [])
        self.assertEqual(self.searched("zebra quokka", [cid]), [])
        self.assertEqual(self.ok("GET", "/v2/collections/" + self.home)["note_count"], 2)
        self.assertEqual(self.stack.integrity_problems(), [])

    def test_trashed_notes(self):
        """A trashed note is not linkable (404); a collection deleted meanwhile is not restored."""
        a, b = self.create(title="T-A")["id"], self.create(title="T-B")["id"]
        nid = self.notes[2]["id"]
        self.ok("PUT", "/v2/collections/%s/notes/%s" % (a, nid))
        self.ok("PUT", "/v2/collections/%s/notes/%s" % (b, nid))
        self.ok("POST", "/v2/notes/%s/trash" % nid)
        self.assertEqual((self.ok("GET", "/v2/collections/" + a)["note_count"],
                          self.ok("GET", "/v2/collections/" + b)["note_count"]), (0, 0))
        for method, path, body in (("PUT", "/v2/collections/%s/notes/%s" % (a, nid), None),
                                   ("DELETE", "/v2/collections/%s/notes/%s" % (a, nid), None),
                                   ("POST", "/v2/collections/%s/notes/%s/move" % (a, nid),
                                    {"target_collection_id": b})):
            with self.subTest(method=method, path=path):
                self.error(self.call(method, path, body), 404, "NOT_FOUND")
        self.ok("DELETE", "/v2/collections/" + a)
        self.assertEqual(self.ok("GET", "/v2/notes/" + nid)["collection_ids"], [b])
        self.ok("POST", "/v2/notes/%s/restore" % nid)
        self.assertEqual(self.note_item(nid)["collection_ids"], [b])
        self.assertEqual(self.ok("GET", "/v2/collections/" + b)["note_count"], 1)
        self.assertEqual(self.in_collection(b), [nid])
        self.ok("DELETE", "/v2/collections/%s/notes/%s" % (b, nid))

    def test_move(self):
        a, b = self.create(title="A")["id"], self.create(title="B")["id"]
        nid = self.notes[1]["id"]
        self.ok("PUT", "/v2/collections/%s/notes/%s" % (a, nid))
        move = "/v2/collections/%s/notes/%s/move"
        ack = self.ok("POST", move % (a, nid), {"target_collection_id": b.upper()})
        self.assertEqual(set(ack), {"request_id"})
        self.assertEqual(self.note_item(nid)["collection_ids"], [self.home, b])
        self.assertEqual((self.ok("GET", "/v2/collections/" + a)["note_count"],
                          self.ok("GET", "/v2/collections/" + b)["note_count"]), (0, 1))
        self.assertEqual(self.in_collection(b), [nid])
        self.assertEqual(self.searched("walrus", [a]), [])
        self.assertEqual(self.searched("walrus", [b]), [nid])
        # not linked to the source any more
        self.error(self.call("POST", move % (a, nid), {"target_collection_id": b}), 404, "NOT_FOUND")
        # source equal to target: nothing changes
        self.ok("POST", move % (b, nid), {"target_collection_id": b})
        self.assertEqual(self.note_item(nid)["collection_ids"], [self.home, b])
        # already in the target too: the source link goes, the target keeps one
        self.ok("POST", move % (self.home, nid), {"target_collection_id": b})
        self.assertEqual(self.note_item(nid)["collection_ids"], [b])
        self.assertEqual(self.ok("GET", "/v2/collections/" + b)["note_count"], 1)
        self.ok("POST", move % (b, nid), {"target_collection_id": self.home})
        self.assertEqual(self.note_item(nid)["collection_ids"], [self.home])

    def test_move_errors(self):
        a, b = self.create()["id"], self.create()["id"]
        nid = self.notes[4]["id"]
        self.ok("PUT", "/v2/collections/%s/notes/%s" % (a, nid))
        move = "/v2/collections/%s/notes/%s/move"
        self.error(self.call("POST", move % (a, nid), {}), 400, "INVALID_PARAMETER", "target_collection_id")
        self.error(self.call("POST", move % (a, nid), {"target_collection_id": "b"}), 400,
                   "INVALID_PARAMETER", "target_collection_id")
        self.error(self.call("POST", move % (a, nid), {"target_collection_id": str(uuid.uuid4())}),
                   404, "NOT_FOUND")
        self.error(self.call("POST", move % (uuid.uuid4(), nid), {"target_collection_id": b}),
                   404, "NOT_FOUND")
        self.error(self.call("POST", move % (a, uuid.uuid4()), {"target_collection_id": b}),
                   404, "NOT_FOUND")
        self.error(self.call("POST", move % ("zz", nid), {"target_collection_id": b}), 400,
                   "INVALID_PARAMETER", "source_collection_id")
        self.assertEqual(self.note_item(nid)["collection_ids"], [a])

    def test_move_is_atomic_for_readers(self):
        """A reader never sees the note in neither or both collections, in any one response."""
        a, b = self.create(title="Ping")["id"], self.create(title="Pong")["id"]
        nid = self.notes[3]["id"]
        self.ok("PUT", "/v2/collections/%s/notes/%s" % (a, nid))
        stop = threading.Event()
        seen = []
        failures = []

        def reader():
            while not stop.is_set():
                notes = self.call("GET", "/v2/notes", query={"limit": 100})
                colls = self.call("GET", "/v2/collections", query={"limit": 100})
                if notes.status != 200 or colls.status != 200:
                    failures.append((notes.status, colls.status))
                    continue
                ids = [n["collection_ids"] for n in notes.json()["results"] if n["id"] == nid][0]
                counts = {c["id"]: c["note_count"] for c in colls.json()["results"]}
                seen.append((len({a, b} & set(ids)), counts[a] + counts[b]))

        threads = [threading.Thread(target=reader) for _ in range(2)]
        for t in threads:
            t.start()
        src, dst = a, b
        for _ in range(40):
            self.ok("POST", "/v2/collections/%s/notes/%s/move" % (src, nid), {"target_collection_id": dst})
            src, dst = dst, src
        stop.set()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])
        self.assertGreater(len(seen), 10)
        self.assertEqual({s for s in seen}, {(1, 1)})


class Search(Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        mk = lambda **f: cls.stack.request("POST", "/v2/collections", body=f, token=cls.token).json()
        cls.garden = mk(title="Garden ideas", description="Tomatoes and roses",
                        updated_at="2025-03-01T00:00:00Z", created_at="2025-01-01T00:00:00Z")
        cls.roses = mk(title="Roses", description=None, updated_at="2025-02-01T00:00:00Z",
                       created_at="2025-01-01T00:00:00Z")
        cls.kitchen = mk(title="Kitchen", description="Recipes with tomatoes, gardening",
                         updated_at="2025-04-01T00:00:00Z", created_at="2025-02-01T00:00:00Z")
        cls.many = [mk(title="Bulk %d" % i, updated_at="2024-01-01T00:00:%02dZ" % i,
                       created_at="2024-01-01T00:00:00Z") for i in range(55)]

    def search(self, body):
        r = self.ok("POST", "/v2/collections/search", body)
        self.assertEqual(set(r), {"request_id", "results", "total"})
        self.assertEqual(r["total"], len(r["results"]))
        for item in r["results"]:
            self.assertEqual(set(item), ITEM_FIELDS)
        return [i["id"] for i in r["results"]]

    def test_query_best_first(self):
        # a title match outweighs a description match
        self.assertEqual(self.search({"query": "roses"}), [self.roses["id"], self.garden["id"]])
        self.assertEqual(self.search({"query": "TOMATOES"}), self.search({"query": "tomatoes"}))
        self.assertEqual(set(self.search({"query": "tomato"})), {self.garden["id"], self.kitchen["id"]})
        # prefix of the last word, accents and case folded
        self.assertEqual(self.search({"query": "GÄRD"})[:2], [self.garden["id"], self.kitchen["id"]])
        self.assertEqual(self.search({"query": "bulk 7"})[0], self.many[7]["id"])
        self.assertEqual(self.search({"query": "nothing-like-this"}), [])
        self.assertEqual(self.search({"query": "!!!"}), [])

    def test_without_query_most_recent(self):
        listed = self.ok("GET", "/v2/collections", query={"limit": 50})["results"]
        self.assertEqual(self.search({}), [c["id"] for c in listed])
        self.assertEqual(len(self.search({"query": None})), 50)
        self.assertEqual(len(self.search({"query": "bulk"})), 50)

    def test_date_bounds(self):
        got = self.search({"filter_by_updated_after": "2025-02-01T00:00:00Z",
                           "filter_by_updated_before": "2025-03-01T00:00:00Z"})
        self.assertEqual(got, [self.garden["id"], self.roses["id"]])
        got = self.search({"query": "tomatoes", "filter_by_created_after": "2025-02-01T00:00:00Z"})
        self.assertEqual(got, [self.kitchen["id"]])
        got = self.search({"query": "roses", "filter_by_created_before": "2024-12-31T00:00:00Z"})
        self.assertEqual(got, [])

    def test_errors(self):
        self.error(self.call("POST", "/v2/collections/search", {"query": 1}), 400, "INVALID_PARAMETER", "query")
        self.error(self.call("POST", "/v2/collections/search", {"query": "q" * 1001}), 400,
                   "INVALID_PARAMETER", "query")
        self.error(self.call("POST", "/v2/collections/search", {"filter_by_updated_after": "yesterday"}),
                   400, "INVALID_PARAMETER", "filter_by_updated_after")
        self.error(self.call("POST", "/v2/collections/search", "nope"), 400, "INVALID_JSON")
        r = self.call("POST", "/v2/collections/search", "", headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 200, r.text)

    def test_other_users_see_nothing(self):
        r = self.ok("POST", "/v2/collections/search", {"query": "roses"}, token=self.other_token)
        self.assertEqual(r["results"], [])


class Isolation(Base):
    def test_foreign_resources_are_404_on_every_verb(self):
        mine = self.create(title="Private")["id"]
        nid = self.notes[0]["id"]
        theirs = self.ok("POST", "/v2/collections", {"title": "theirs"}, token=self.other_token)["id"]
        t = self.other_token
        cases = [
            ("GET", "/v2/collections/" + mine, None),
            ("PATCH", "/v2/collections/" + mine, {"title": "stolen"}),
            ("DELETE", "/v2/collections/" + mine, None),
            ("PUT", "/v2/collections/%s/notes/%s" % (mine, nid), None),
            ("DELETE", "/v2/collections/%s/notes/%s" % (mine, nid), None),
            ("PUT", "/v2/collections/%s/notes/%s" % (theirs, nid), None),  # my note, their collection
            ("DELETE", "/v2/collections/%s/notes/%s" % (theirs, nid), None),
            ("POST", "/v2/collections/%s/notes/%s/move" % (self.home, nid), {"target_collection_id": theirs}),
            ("POST", "/v2/collections/%s/notes/%s/move" % (theirs, nid), {"target_collection_id": theirs}),
        ]
        for method, path, body in cases:
            with self.subTest(method=method, path=path):
                self.error(self.call(method, path, body, token=t), 404, "NOT_FOUND")
        self.assertEqual(self.ok("GET", "/v2/collections/" + mine)["title"], "Private")
        self.assertEqual(self.note_item(nid)["collection_ids"], [self.home])
        self.assertEqual(self.ok("GET", "/v2/collections/" + self.home)["note_count"], 2)

    def test_unauthenticated(self):
        r = self.stack.request("POST", "/v2/collections", body={"title": "x"})
        self.error(r, 401, "NOT_AUTHORIZED")

    def test_read_only_token_writes_nothing(self):
        out = self.stack.notesctl("token", "create", self.user, "--read-only").stdout
        ro = out.strip().splitlines()[-1]
        cid, nid = self.home, self.notes[0]["id"]
        before = self.ok("GET", "/v2/collections", query={"limit": 100})
        other = self.create(title="Other")["id"]
        missing = str(uuid.uuid4())
        for target in (cid, missing, "not-a-uuid"):  # the same answer whether it exists
            for method, path, body in [
                    ("POST", "/v2/collections", {"title": "x"}),
                    ("PATCH", "/v2/collections/" + target, {"title": "x"}),
                    ("DELETE", "/v2/collections/" + target, None),
                    ("PUT", "/v2/collections/%s/notes/%s" % (target, nid), None),
                    ("DELETE", "/v2/collections/%s/notes/%s" % (target, nid), None),
                    ("POST", "/v2/collections/%s/notes/%s/move" % (target, nid),
                     {"target_collection_id": other})]:
                with self.subTest(method=method, path=path):
                    self.error(self.call(method, path, body, token=ro), 403, "FORBIDDEN")
        after = self.ok("GET", "/v2/collections", query={"limit": 100})
        self.assertEqual(after["total"], before["total"] + 1)  # "Other" alone
        self.assertEqual(self.ok("GET", "/v2/collections/" + cid)["note_count"], 2)
        self.assertEqual(self.note_item(nid)["collection_ids"], [cid])
        # its reads work: a collection, collection search
        self.assertEqual(self.ok("GET", "/v2/collections/" + cid, token=ro)["id"], cid)
        self.ok("POST", "/v2/collections/search", {"query": "home"}, token=ro)

    def test_methods_and_allow(self):
        cid, nid = self.home, self.notes[0]["id"]
        cases = [
            ("/v2/collections", "DELETE", "GET, POST"),
            ("/v2/collections/search", "GET", "POST"),
            ("/v2/collections/" + cid, "POST", "GET, PATCH, DELETE"),
            ("/v2/collections/%s/notes/%s" % (cid, nid), "GET", "PUT, DELETE"),
            ("/v2/collections/%s/notes/%s/move" % (cid, nid), "PUT", "POST"),
        ]
        for path, method, allow in cases:
            with self.subTest(path=path, method=method):
                r = self.call(method, path)
                self.error(r, 405, "METHOD_NOT_ALLOWED")
                self.assertEqual(r.headers["Allow"], allow)
        for path in ("/v2/collections/%s/notes" % cid, "/v2/collections/%s/x" % cid,
                     "/v2/collections//notes/%s" % nid, "/v2/collections/%s/notes/%s/move/x" % (cid, nid)):
            with self.subTest(path=path):
                self.error(self.call("GET", path), 404, "NOT_FOUND")


if __name__ == "__main__":
    unittest.main()
