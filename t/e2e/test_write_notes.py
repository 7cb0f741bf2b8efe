"""The note write API (contract section 10) through the real nginx and worker pool: read by id
with ETag, create, update under a version check, delete, trash and restore, created-at; every
error with status, error_kind and field_name; other users' notes; read-only tokens; and
read-your-writes in lists, totals, note_count and search."""
import datetime
import json
import os
import unittest
import uuid

from harness import shared_stack
from listdata import REQ_ID, fmt_time, parse_time, walk

CREATE_FIELDS = {"request_id", "id", "title", "content", "version", "collection_ids",
                 "created_at", "updated_at"}
UPDATE_FIELDS = CREATE_FIELDS | {"trashed_at"}
GET_FIELDS = UPDATE_FIELDS | {"audio_recording_ids", "attachment_metadata"}


def iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc)


class Writer:
    """Request helpers bound to a stack and a token."""

    def __init__(self, stack, token):
        self.stack, self.token = stack, token

    def req(self, method, path, body=None, **kw):
        return self.stack.request(method, path, body=body, token=self.token, **kw)

    def create(self, content, **fields):
        body = dict(fields, content=content)
        r = self.req("POST", "/v2/notes", body)
        if r.status != 200:
            raise AssertionError("create -> %d %s" % (r.status, r.text))
        return r.json()

    def get(self, note_id):
        return self.req("GET", "/v2/notes/" + note_id)

    def search(self, query):
        r = self.req("POST", "/v2/notes/search", {"query": query, "limit": 50})
        if r.status != 200:
            raise AssertionError("search -> %d %s" % (r.status, r.text))
        return [n["id"] for n in r.json()["results"]]

    def total(self, query=None):
        r = self.req("GET", "/v2/notes", query=dict(query or {}, limit=1))
        if r.status != 200:
            raise AssertionError("list -> %d %s" % (r.status, r.text))
        return r.json()["total"]

    def collections(self):
        r = self.req("GET", "/v2/collections", query={"limit": 100})
        return {c["title"]: c for c in r.json()["results"]}


def import_collections(stack, user, titles):
    path = os.path.join(stack.dir, "colls-%s.jsonl" % user)
    with open(path, "w") as f:
        for t in titles:
            f.write(json.dumps({"type": "collection", "title": t,
                                "created_at": "2025-01-01T00:00:00Z"}) + "\n")
    stack.notesctl("import", user, path)


class NoteWrites(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()
        cls.user, token = cls.stack.create_user("writer")
        cls.w = Writer(cls.stack, token)
        _, other = cls.stack.create_user("intruder")
        cls.other = Writer(cls.stack, other)
        out = cls.stack.notesctl("token", "create", cls.user, "--read-only").stdout
        cls.ro = Writer(cls.stack, out.strip().splitlines()[-1])
        import_collections(cls.stack, cls.user, ["Projects", "Reading Ünïcode"])
        colls = cls.w.collections()
        cls.projects = colls["Projects"]["id"]
        cls.reading = colls["Reading Ünïcode"]["id"]

    def assertError(self, r, status, kind, field=None):
        self.assertEqual(r.status, status, r.text)
        body = r.json()
        self.assertRegex(body["request_id"], REQ_ID)
        meta = body["error_metadata"]
        self.assertEqual(meta["error_kind"], kind, r.text)
        self.assertEqual(meta.get("field_name"), field, r.text)
        return meta

    # ---- create and read ----

    def test_create_exact_fields_and_derived_values(self):
        before = now_utc()
        n = self.w.create("# Grocery *list*\n\nmilk and bread\n\n- [ ] eggs\n\n"
                          "![plan](img/plan.png) [spec](docs/spec.PDF) ![[voice.m4a]]",
                          collection_ids=[self.projects])
        self.assertEqual(set(n), CREATE_FIELDS)
        self.assertRegex(n["request_id"], REQ_ID)
        self.assertEqual(n["title"], "Grocery list")
        self.assertEqual(n["version"], 1)
        self.assertEqual(n["collection_ids"], [self.projects])
        self.assertEqual(n["created_at"], n["updated_at"])
        self.assertGreaterEqual(parse_time(n["created_at"]), int(before.timestamp() * 1e6) - 1000000)
        g = self.w.get(n["id"])
        self.assertEqual(g.status, 200, g.text)
        body = g.json()
        self.assertEqual(set(body), GET_FIELDS)
        self.assertEqual(g.headers["X-Request-Id"], body["request_id"])
        self.assertIsNone(body["trashed_at"])
        self.assertEqual(body["content"], n["content"])
        kinds = sorted(a["attachment_kind"] for a in body["attachment_metadata"])
        self.assertEqual(kinds, ["image", "pdf"])
        for a in body["attachment_metadata"]:
            uuid.UUID(a["attachment_id"])
            self.assertIsNone(a["page_count"])
        self.assertEqual(len(body["audio_recording_ids"]), 1)
        # stable attachment ids: the same on the next read and after an update keeping them
        again = self.w.get(n["id"]).json()
        self.assertEqual(again["attachment_metadata"], body["attachment_metadata"])
        listed = self.w.req("GET", "/v2/notes", query={"contains_open_tasks": "true",
                                                       "contains_images": "true", "limit": 100})
        self.assertIn(n["id"], [x["id"] for x in listed.json()["results"]])

    def test_create_with_id_times_and_titles(self):
        nid = str(uuid.uuid4()).upper()
        n = self.w.create("body text", id=nid, created_at="2024-02-03T04:05:06.5+01:00",
                          updated_at="2024-03-01T00:00:00Z",
                          collection_titles=["projects", "READING ÜNÏCODE", "no such"],
                          collection_ids=[str(uuid.uuid4())])
        self.assertEqual(n["id"], nid.lower())
        self.assertEqual(n["created_at"], "2024-02-03T03:05:06.500Z")
        self.assertEqual(n["updated_at"], "2024-03-01T00:00:00Z")
        self.assertEqual(sorted(n["collection_ids"]), sorted([self.projects, self.reading]))
        r = self.w.req("POST", "/v2/notes", {"content": "again", "id": nid.lower()})
        self.assertError(r, 409, "CONFLICT", "id")
        # the other user may use the same id: ids are per user
        self.assertEqual(self.other.req("POST", "/v2/notes", {"content": "mine", "id": nid}).status, 200)
        only_updated = self.w.create("x", updated_at="2024-05-01T00:00:00Z")
        self.assertEqual(only_updated["created_at"], "2024-05-01T00:00:00Z")

    def test_create_errors(self):
        soon = iso(now_utc() + datetime.timedelta(seconds=120))
        cases = [
            ({}, "content"),
            ({"content": 5}, "content"),
            ({"content": "x" * 200001}, "content"),
            ({"content": "x", "id": "nope"}, "id"),
            ({"content": "x", "collection_ids": "x"}, "collection_ids"),
            ({"content": "x", "collection_ids": [str(uuid.uuid4())] * 101}, "collection_ids"),
            ({"content": "x", "collection_titles": [""]}, "collection_titles"),
            ({"content": "x", "collection_titles": ["a"] * 101}, "collection_titles"),
            ({"content": "x", "created_at": "2025-01-01"}, "created_at"),
            ({"content": "x", "created_at": "2025-01-01T00:00:00"}, "created_at"),
            ({"content": "x", "updated_at": soon}, "updated_at"),
            ({"content": "x", "created_at": "2025-01-02T00:00:00Z",
              "updated_at": "2025-01-01T00:00:00Z"}, "updated_at"),
        ]
        for body, field in cases:
            with self.subTest(field=field, body=str(body)[:80]):
                self.assertError(self.w.req("POST", "/v2/notes", body), 400, "INVALID_PARAMETER", field)
        self.assertError(self.w.req("POST", "/v2/notes", "[1]"), 400, "INVALID_JSON")
        self.assertError(self.w.req("POST", "/v2/notes", ""), 400, "INVALID_JSON")
        r = self.w.req("POST", "/v2/notes", '{"content":"x"}', headers={"Content-Type": "text/plain"})
        self.assertError(r, 415, "UNSUPPORTED_MEDIA_TYPE")
        # 200,000 characters (not bytes) are fine
        big = self.w.req("POST", "/v2/notes",
                         json.dumps({"content": "é" * 200000}, ensure_ascii=False).encode())
        self.assertEqual(big.status, 200, big.text[:300])

    def test_strict_json_bodies(self):
        # Write bodies go through the strict RFC 8259 reader too (issue 20, item 5): 400
        # INVALID_JSON naming the problem and its byte offset, and nothing is written. main's
        # reader before took the first two (a raw newline deep in a 600 KB note, a note update
        # followed by a NUL byte and more) and named no problem for the third.
        n = self.w.create("strict")
        path = "/v2/notes/" + n["id"]
        before = self.w.total()
        big = b'{"content":"' + b"a" * 600000 + b'\n"}'
        for method, target, raw, problem in (
                ("POST", "/v2/notes", big,
                 "a raw control character U+000A in a string (escape it) at byte 600012"),
                ("PATCH", path, b'{"content":"changed","version":1}\x00{"version":2}',
                 "trailing a NUL byte after the JSON value at byte 33"),
                ("POST", "/v2/collections", b'{"title":"A","title":"B"}',
                 'duplicate key "title" at byte 13')):
            with self.subTest(method=method, target=target):
                meta = self.assertError(self.w.req(method, target, raw), 400, "INVALID_JSON")
                self.assertEqual(meta["message"], "the request body is not valid JSON: " + problem)
        self.assertEqual(self.w.total(), before)
        self.assertEqual(self.w.get(n["id"]).json()["content"], "strict")
        self.assertNotIn("A", self.w.collections())
        self.assertNotIn("B", self.w.collections())

    def test_body_limits(self):
        # 1 MiB for create and update (nginx and worker), 64 KiB elsewhere
        r = self.w.req("POST", "/v2/notes", {"content": "a" * 190000 + "\u00e9" * 2000})
        self.assertEqual(r.status, 200, r.text[:200])
        r = self.w.req("POST", "/v2/notes", {"content": "a" * (1 << 20)})
        self.assertError(r, 413, "PAYLOAD_TOO_LARGE")
        # nginx's answer (the body never reached a worker), naming the limit of that request
        self.assertIn("1 MiB", r.json()["error_metadata"]["message"])
        n = self.w.create("small")
        big = {"content": "word " * 30000, "version": 1}  # 150 KB, over 64 KiB
        r = self.w.req("PATCH", "/v2/notes/" + n["id"], big)
        self.assertEqual(r.status, 200, r.text[:200])
        r = self.w.req("PATCH", "/v2/notes/%s/created-at" % n["id"],
                       {"created_at": "2020-01-01T00:00:00Z", "pad": "x" * 70000})
        self.assertError(r, 413, "PAYLOAD_TOO_LARGE")
        self.assertIn("64 KiB", r.json()["error_metadata"]["message"])
        for path in ("/v2/notes/search", "/v2/notes/extended-search"):
            r = self.w.req("POST", path, {"query": "x", "pad": "x" * 70000})
            self.assertError(r, 413, "PAYLOAD_TOO_LARGE")
            self.assertIn("64 KiB", r.json()["error_metadata"]["message"])

    def test_get_etag_and_errors(self):
        n = self.w.create("etag me")
        g = self.w.get(n["id"])
        etag = g.headers["ETag"]
        self.assertTrue(etag.startswith('"'), etag)
        r = self.w.req("GET", "/v2/notes/" + n["id"], headers={"If-None-Match": etag})
        self.assertEqual(r.status, 304)
        self.assertEqual(r.raw, b"")
        self.assertEqual(r.headers["ETag"], etag)
        r = self.w.req("GET", "/v2/notes/" + n["id"], headers={"If-None-Match": '"other", W/' + etag})
        self.assertEqual(r.status, 304)
        self.assertEqual(self.w.req("GET", "/v2/notes/" + n["id"],
                                    headers={"If-None-Match": '"other"'}).status, 200)
        # every change of the response changes the tag: trash, restore, update, created-at
        # (a restore gives the note back as it was before the trash, and so the tag)
        for step in (lambda: self.w.req("POST", "/v2/notes/%s/trash" % n["id"]),
                     lambda: self.w.req("POST", "/v2/notes/%s/restore" % n["id"]),
                     lambda: self.w.req("PATCH", "/v2/notes/" + n["id"], {"content": "new", "version": 1}),
                     lambda: self.w.req("PATCH", "/v2/notes/%s/created-at" % n["id"],
                                        {"created_at": "2020-01-01T00:00:00Z"})):
            self.assertEqual(step().status, 200)
            tag = self.w.get(n["id"]).headers["ETag"]
            self.assertNotEqual(tag, etag)
            etag = tag
        self.assertError(self.w.get("not-a-uuid"), 400, "INVALID_PARAMETER", "note_id")
        self.assertError(self.w.get(str(uuid.uuid4())), 404, "NOT_FOUND")

    # ---- update ----

    def test_update_versions_and_search(self):
        n = self.w.create("The zebracorn grazes quietly", collection_ids=[self.reading])
        count_before = self.w.collections()["Reading Ünïcode"]["note_count"]
        self.assertIn(n["id"], self.w.search("zebracorn"))
        r = self.w.req("PATCH", "/v2/notes/" + n["id"],
                       {"content": "# Platypunk\n\nnow about platypunks", "version": 1})
        self.assertEqual(r.status, 200, r.text)
        u = r.json()
        self.assertEqual(set(u), UPDATE_FIELDS)
        self.assertEqual(u["version"], 2)
        self.assertEqual(u["title"], "Platypunk")
        self.assertIsNone(u["trashed_at"])
        self.assertEqual(u["created_at"], n["created_at"])  # kept
        self.assertEqual(u["collection_ids"], [self.reading])  # links kept
        self.assertGreaterEqual(u["updated_at"], n["updated_at"])
        self.assertNotIn(n["id"], self.w.search("zebracorn"))
        self.assertIn(n["id"], self.w.search("platypunks"))
        self.assertEqual(self.w.collections()["Reading Ünïcode"]["note_count"], count_before)
        got = self.w.get(n["id"]).json()
        self.assertEqual(got["version"], 2)
        self.assertEqual(got["content"], "# Platypunk\n\nnow about platypunks")
        # stale version: 409 naming the current one, and nothing changes
        r = self.w.req("PATCH", "/v2/notes/" + n["id"], {"content": "lost", "version": 1})
        meta = self.assertError(r, 409, "VERSION_CONFLICT", "version")
        self.assertIn("2", meta["message"])
        self.assertEqual(self.w.get(n["id"]).json()["content"], got["content"])
        # an explicit updated_at
        r = self.w.req("PATCH", "/v2/notes/" + n["id"],
                       {"content": "later", "version": 2, "updated_at": "2030-01-01T00:00:00Z"})
        self.assertError(r, 400, "INVALID_PARAMETER", "updated_at")
        r = self.w.req("PATCH", "/v2/notes/" + n["id"],
                       {"content": "before", "version": 2, "updated_at": "1999-01-01T00:00:00Z"})
        self.assertError(r, 400, "INVALID_PARAMETER", "updated_at")

    def test_update_errors(self):
        n = self.w.create("to update")
        path = "/v2/notes/" + n["id"]
        for body, field in [({"version": 1}, "content"), ({"content": "x"}, "version"),
                            ({"content": "x", "version": "1"}, "version"),
                            ({"content": "x", "version": 1.0}, "version"),
                            ({"content": "x", "version": 0}, "version"),
                            ({"content": "x" * 200001, "version": 1}, "content")]:
            with self.subTest(body=str(body)[:60]):
                self.assertError(self.w.req("PATCH", path, body), 400, "INVALID_PARAMETER", field)
        self.assertError(self.w.req("PATCH", "/v2/notes/x", {"content": "x", "version": 1}),
                         400, "INVALID_PARAMETER", "note_id")
        self.assertError(self.w.req("PATCH", "/v2/notes/" + str(uuid.uuid4()),
                                    {"content": "x", "version": 1}), 404, "NOT_FOUND")

    # ---- created-at ----

    def test_created_at(self):
        n = self.w.create("dated", created_at="2024-06-01T00:00:00Z", updated_at="2024-07-01T00:00:00Z")
        path = "/v2/notes/%s/created-at" % n["id"]
        r = self.w.req("PATCH", path, {"created_at": "2023-01-01T00:00:00Z"})
        self.assertEqual(r.status, 200, r.text)
        body = r.json()
        self.assertEqual(set(body), GET_FIELDS)
        self.assertEqual(body["created_at"], "2023-01-01T00:00:00Z")
        self.assertEqual(body["updated_at"], "2024-07-01T00:00:00Z")
        self.assertEqual(body["version"], 1)
        # the created_at filter and order see it at once
        r = self.w.req("GET", "/v2/notes", query={"filter_by_created_before": "2023-01-01T00:00:00Z",
                                                  "limit": 100})
        self.assertIn(n["id"], [x["id"] for x in r.json()["results"]])
        for value in ("2023-01-01T00:00:00Z", "2024-01-01T00:00:00Z"):  # not earlier
            self.assertError(self.w.req("PATCH", path, {"created_at": value}), 400,
                             "INVALID_PARAMETER", "created_at")
        self.assertError(self.w.req("PATCH", path, {}), 400, "INVALID_PARAMETER", "created_at")
        self.assertError(self.w.req("PATCH", path, {"created_at": "yesterday"}), 400,
                         "INVALID_PARAMETER", "created_at")

    # ---- trash, restore, delete ----

    def test_trash_and_restore(self):
        n = self.w.create("the quokkaroo note", collection_ids=[self.projects])
        nid = n["id"]
        total = self.w.total()
        count = self.w.collections()["Projects"]["note_count"]
        self.assertIn(nid, self.w.search("quokkaroo"))
        r = self.w.req("POST", "/v2/notes/%s/trash" % nid)
        self.assertEqual(r.status, 200, r.text)
        self.assertEqual(set(r.json()), {"request_id"})
        self.assertEqual(self.w.req("POST", "/v2/notes/%s/trash" % nid).status, 200)  # repeat
        self.assertEqual(self.w.total(), total - 1)
        self.assertEqual(self.w.total({"collection_id": self.projects}), count - 1)
        self.assertEqual(self.w.collections()["Projects"]["note_count"], count - 1)
        self.assertNotIn(nid, self.w.search("quokkaroo"))
        ids, _ = walk(self.stack, "/v2/notes", self.w.token, {"limit": 100})
        self.assertNotIn(nid, ids)
        g = self.w.get(nid).json()
        self.assertIsNotNone(g["trashed_at"])
        self.assertEqual(g["collection_ids"], [self.projects])
        self.assertError(self.w.req("PATCH", "/v2/notes/" + nid, {"content": "x", "version": 1}),
                         409, "NOTE_TRASHED")
        self.assertError(self.w.req("PATCH", "/v2/notes/%s/created-at" % nid,
                                    {"created_at": "2001-01-01T00:00:00Z"}), 409, "NOTE_TRASHED")
        self.assertError(self.w.req("POST", "/v2/notes", {"content": "x", "id": nid}), 409,
                         "CONFLICT", "id")
        r = self.w.req("POST", "/v2/notes/%s/restore" % nid)
        self.assertEqual(r.status, 200, r.text)
        self.assertEqual(self.w.req("POST", "/v2/notes/%s/restore" % nid).status, 200)  # repeat
        self.assertEqual(self.w.total(), total)
        self.assertEqual(self.w.collections()["Projects"]["note_count"], count)
        self.assertIn(nid, self.w.search("quokkaroo"))
        g = self.w.get(nid).json()
        self.assertIsNone(g["trashed_at"])
        self.assertEqual(g["version"], 1)  # trash and restore keep the version
        self.assertEqual(g["content"], n["content"])
        self.assertError(self.w.req("POST", "/v2/notes/%s/trash" % str(uuid.uuid4())), 404, "NOT_FOUND")
        self.assertError(self.w.req("POST", "/v2/notes/%s/restore" % str(uuid.uuid4())), 404, "NOT_FOUND")

    def test_delete(self):
        n = self.w.create("a wombatrix to delete", collection_ids=[self.projects])
        total = self.w.total()
        count = self.w.collections()["Projects"]["note_count"]
        r = self.w.req("DELETE", "/v2/notes/" + n["id"])
        self.assertEqual(r.status, 200, r.text)
        self.assertEqual(set(r.json()), {"request_id"})
        self.assertError(self.w.get(n["id"]), 404, "NOT_FOUND")
        self.assertError(self.w.req("DELETE", "/v2/notes/" + n["id"]), 404, "NOT_FOUND")
        self.assertEqual(self.w.total(), total - 1)
        self.assertEqual(self.w.collections()["Projects"]["note_count"], count - 1)
        self.assertEqual(self.w.search("wombatrix"), [])
        # a trashed note can be deleted too, and its id is free again
        t = self.w.create("trash then delete")
        self.assertEqual(self.w.req("POST", "/v2/notes/%s/trash" % t["id"]).status, 200)
        self.assertEqual(self.w.req("DELETE", "/v2/notes/" + t["id"]).status, 200)
        self.assertError(self.w.get(t["id"]), 404, "NOT_FOUND")
        self.assertEqual(self.w.create("reborn", id=t["id"])["id"], t["id"])

    # ---- scope and ownership ----

    def test_other_users_note_is_404_on_every_verb(self):
        n = self.w.create("private thoughts")
        nid = n["id"]
        o = self.other
        self.assertError(o.get(nid), 404, "NOT_FOUND")
        self.assertError(o.req("PATCH", "/v2/notes/" + nid, {"content": "x", "version": 1}), 404, "NOT_FOUND")
        self.assertError(o.req("DELETE", "/v2/notes/" + nid), 404, "NOT_FOUND")
        self.assertError(o.req("POST", "/v2/notes/%s/trash" % nid), 404, "NOT_FOUND")
        self.assertError(o.req("POST", "/v2/notes/%s/restore" % nid), 404, "NOT_FOUND")
        self.assertError(o.req("PATCH", "/v2/notes/%s/created-at" % nid,
                               {"created_at": "2001-01-01T00:00:00Z"}), 404, "NOT_FOUND")
        # linking to another user's collection is ignored
        mine = o.create("with a foreign collection", collection_ids=[self.projects])
        self.assertEqual(mine["collection_ids"], [])
        g = self.w.get(nid).json()
        self.assertEqual((g["version"], g["content"], g["trashed_at"]), (1, "private thoughts", None))

    def test_read_only_token(self):
        n = self.w.create("guarded")
        nid = n["id"]
        missing = str(uuid.uuid4())
        before = self.w.total()
        for target in (nid, missing, "not-a-uuid"):  # the same answer whether the note exists
            for method, path, body in [
                    ("POST", "/v2/notes", {"content": "x"}),
                    ("PATCH", "/v2/notes/" + target, {"content": "x", "version": 1}),
                    ("DELETE", "/v2/notes/" + target, None),
                    ("POST", "/v2/notes/%s/trash" % target, None),
                    ("POST", "/v2/notes/%s/restore" % target, None),
                    ("PATCH", "/v2/notes/%s/created-at" % target, {"created_at": "2001-01-01T00:00:00Z"})]:
                with self.subTest(method=method, path=path):
                    self.assertError(self.ro.req(method, path, body), 403, "FORBIDDEN")
        self.assertEqual(self.w.total(), before)
        self.assertEqual(self.w.get(nid).json()["version"], 1)
        # reads work
        self.assertEqual(self.ro.get(nid).status, 200)
        self.assertEqual(self.ro.req("POST", "/v2/notes/search", {"query": "guarded"}).status, 200)
        listing = self.stack.notesctl("token", "list", self.user).stdout
        self.assertIn("read-only", listing)
        self.assertIn("read-write", listing)

    def test_methods_not_allowed(self):
        nid = str(uuid.uuid4())
        for method, path, allow in [("PUT", "/v2/notes", "GET, POST"),
                                    ("POST", "/v2/notes/" + nid, "GET, PATCH, DELETE"),
                                    ("GET", "/v2/notes/%s/trash" % nid, "POST"),
                                    ("DELETE", "/v2/notes/%s/restore" % nid, "POST"),
                                    ("POST", "/v2/notes/%s/created-at" % nid, "PATCH")]:
            with self.subTest(method=method, path=path):
                r = self.w.req(method, path)
                self.assertError(r, 405, "METHOD_NOT_ALLOWED")
                self.assertEqual(r.headers["Allow"], allow)

    def test_consistent_after_everything(self):
        n = self.w.create("check me")
        self.w.req("PATCH", "/v2/notes/" + n["id"], {"content": "checked", "version": 1})
        out = self.stack.notesctl("check", self.user, check=False)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)


class CheckFindsDamage(unittest.TestCase):
    """notesctl check is the crash tests' judge: it must notice each kind of damage."""

    def test_each_damage_is_reported(self):
        stack = shared_stack()
        user, token = stack.create_user("damaged")
        w = Writer(stack, token)
        import_collections(stack, user, ["Box"])
        box = w.collections()["Box"]["id"]
        for i in range(3):
            w.create("the marmoset sleeps %d" % i, collection_ids=[box])
        ok = stack.notesctl("check", user, check=False)
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        uid = "(SELECT id FROM users WHERE name = 'damaged')"
        damages = [
            ("UPDATE users SET note_count = note_count + 1 WHERE id = %s" % uid,
             "UPDATE users SET note_count = note_count - 1 WHERE id = %s" % uid, "users.note_count"),
            ("UPDATE collections SET note_count = 7 WHERE user_id = %s" % uid,
             "UPDATE collections SET note_count = 3 WHERE user_id = %s" % uid, "collections.note_count"),
            # API writes wait in pending entries (no merger here): term_df has no row of the
            # user's yet, and the entries hold the postings
            ("INSERT INTO term_df (user_id, term, df) VALUES (%s, 'marmoset', 1)" % uid,
             "DELETE FROM term_df WHERE user_id = %s AND term = 'marmoset'" % uid,
             "term_df of 'marmoset'"),
            ("UPDATE index_pending SET flags = flags + 1 WHERE user_id = %s" % uid,
             "UPDATE index_pending SET flags = flags - 1 WHERE user_id = %s" % uid,
             "postings of term 'sleep'"),
            ("UPDATE index_pending SET updated_us = updated_us + 1 WHERE user_id = %s" % uid,
             "UPDATE index_pending SET updated_us = updated_us - 1 WHERE user_id = %s" % uid,
             "does not name its note's current version"),
            ("UPDATE users SET body_tokens = body_tokens + 5 WHERE id = %s" % uid,
             "UPDATE users SET body_tokens = body_tokens - 5 WHERE id = %s" % uid, "users.body_tokens"),
            ("UPDATE note_time_counts SET notes = notes + 1 WHERE user_id = %s AND time_column = 1 "
             "AND shift = 40" % uid,
             "UPDATE note_time_counts SET notes = notes - 1 WHERE user_id = %s AND time_column = 1 "
             "AND shift = 40" % uid, "note_time_counts of updated_us"),
        ]
        for damage, repair, expected in damages:
            with self.subTest(expected=expected):
                stack.sql(damage)
                out = stack.notesctl("check", user, check=False)
                stack.sql(repair)
                self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
                self.assertIn(expected, out.stdout)
        ok = stack.notesctl("check", user, check=False)
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)


if __name__ == "__main__":
    unittest.main()
