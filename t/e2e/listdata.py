"""Deterministic list-endpoint fixtures written as JSON Lines, with their expected API view.

Notes carry unambiguous markdown markers, so the expected flags follow from the content:
open task `- [ ]`, closed task `- [x]`, an image embed, a PDF link, and a task marker inside a
code block (which must not count).
"""
import datetime
import json
import os
import re
import unittest
import uuid

from harness import shared_stack

BASE_US = 1735689600 * 1000000  # 2025-01-01T00:00:00Z


def fmt_time(us):
    """The contract's output format: Z, fraction only when non-zero (3 or 6 digits)."""
    secs, frac = divmod(us, 1000000)
    s = datetime.datetime.fromtimestamp(secs, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        s += ".%03d" % (frac // 1000) if frac % 1000 == 0 else ".%06d" % frac
    return s + "Z"


def parse_time(text):
    """RFC 3339 with offset -> epoch microseconds (test side, for expectations)."""
    d = datetime.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    delta = d - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    return (delta.days * 86400 + delta.seconds) * 1000000 + delta.microseconds


FLAG_BODIES = [
    ("plain", "Just some prose about nothing in particular.", set()),
    ("open", "Things to do:\n\n- [ ] write the report\n- [x] book the room", {"open", "task"}),
    ("closed", "Done list:\n\n- [x] shipped it", {"task"}),
    ("image", "A diagram:\n\n![architecture](images/arch.png)", {"image"}),
    ("file", "The spec is attached: [spec](files/spec.pdf)", {"file"}),
    ("code", "Not a task:\n\n```\n- [ ] inside code\n```", set()),
    ("both", "- [ ] review ![chart](chart.jpg) and [data](data.xlsx)", {"open", "task", "image", "file"}),
]


class Dataset:
    """notes: list of dicts with id, title, content, created_us, updated_us, collections, flags."""

    def __init__(self, prefix, n_notes, n_collections=3, seed_offset=0):
        self.prefix = prefix
        self.collections = []
        for c in range(n_collections):
            self.collections.append({
                "id": str(uuid.uuid5(uuid.NAMESPACE_URL, "%s/collection/%d" % (prefix, c))),
                "title": "%s collection %d" % (prefix, c),
                "description": None if c == 0 else "Collection number %d" % c,
                "created_us": BASE_US + c * 86400 * 1000000 + (c * 1000 if c % 2 else 0),
                "updated_us": BASE_US + (30 - c) * 86400 * 1000000,
            })
        self.notes = []
        for i in range(n_notes):
            kind, body, flags = FLAG_BODIES[i % len(FLAG_BODIES)]
            cols = []
            if n_collections:
                cols.append(self.collections[i % n_collections]["id"])
                if i % 5 == 0 and n_collections > 1:
                    cols.append(self.collections[(i + 1) % n_collections]["id"])
            title = "%s note %04d %s" % (prefix, i, kind)
            self.notes.append({
                "id": str(uuid.uuid5(uuid.NAMESPACE_URL, "%s/note/%d" % (prefix, i + seed_offset))),
                "title": title,
                "content": "# %s\n\n%s\n" % (title, body),
                # groups of three share updated_at: ties are broken by id descending
                "updated_us": BASE_US + (i // 3) * 60 * 1000000,
                "created_us": BASE_US - (n_notes - i) * 3600 * 1000000 + (i % 4) * 1000 + (i % 7 == 1),
                "collections": cols,
                "flags": flags,
            })

    def write_jsonl(self, path, notes=None, with_collections=True):
        with open(path, "w") as f:
            if with_collections:
                for c in self.collections:
                    f.write(json.dumps({"type": "collection", "id": c["id"], "title": c["title"],
                                        "description": c["description"],
                                        "created_at": fmt_time(c["created_us"]),
                                        "updated_at": fmt_time(c["updated_us"])}) + "\n")
            for n in (self.notes if notes is None else notes):
                f.write(json.dumps({"id": n["id"], "title": n["title"], "content": n["content"],
                                    "created_at": fmt_time(n["created_us"]),
                                    "updated_at": fmt_time(n["updated_us"]),
                                    "collection_ids": n["collections"]}) + "\n")
        return path

    def expected(self, order_by="updated_at", collection=None, flags=(), created=(None, None),
                 updated=(None, None)):
        key = "created_us" if order_by == "created_at" else "updated_us"
        out = []
        for n in self.notes:
            if collection and collection not in n["collections"]:
                continue
            if flags and not (set(flags) & n["flags"]):
                continue
            if created[0] is not None and n["created_us"] < created[0]:
                continue
            if created[1] is not None and n["created_us"] > created[1]:
                continue
            if updated[0] is not None and n["updated_us"] < updated[0]:
                continue
            if updated[1] is not None and n["updated_us"] > updated[1]:
                continue
            out.append(n)
        out.sort(key=lambda n: (n[key], n["id"]), reverse=True)
        return [n["id"] for n in out]

    def note_count(self, collection_id):
        return sum(1 for n in self.notes if collection_id in n["collections"])


def walk(stack, path, token, query=None, key="next_page"):
    """Follows next_page to the end; returns (ids, pages)."""
    query = dict(query or {})
    ids, pages = [], []
    while True:
        r = stack.request("GET", path, query=query, token=token)
        if r.status != 200:
            raise AssertionError("%s %s -> %d %s" % (path, query, r.status, r.text))
        body = r.json()
        pages.append(body)
        ids.extend(item["id"] for item in body["results"])
        nxt = body.get(key)
        if not nxt:
            return ids, pages
        query["page"] = nxt
        if len(pages) > 10000:
            raise AssertionError("pagination does not end")


def tmp_path(stack, name):
    return os.path.join(stack.dir, name)


REQ_ID = re.compile(r"^api-request-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
NOTE_FIELDS = {"id", "title", "snippet", "created_at", "updated_at", "collection_ids",
               "audio_recording_ids"}


_fixture = {}


class NotesBase(unittest.TestCase):
    """Shares one user with 230 imported notes among all list test classes of a process."""

    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()
        if _fixture.get("stack") is not cls.stack:
            data = Dataset("alice-notes", 230)
            user, token = cls.stack.create_user("alice_notes")
            cls.stack.notesctl("import", user, data.write_jsonl(tmp_path(cls.stack, "alice.jsonl")))
            _fixture.update(stack=cls.stack, data=data, user=user, token=token)
        cls.data, cls.user, cls.token = _fixture["data"], _fixture["user"], _fixture["token"]

    def get(self, query=None, token=None):
        return self.stack.request("GET", "/v2/notes", query=query,
                                  token=self.token if token is None else token)

    def ok(self, query=None):
        r = self.get(query)
        self.assertEqual(r.status, 200, r.text)
        return r.json()

    def assert_error(self, r, status, kind, field=None):
        self.assertEqual(r.status, status, r.text)
        body = r.json()
        self.assertRegex(body["request_id"], REQ_ID)
        self.assertEqual(r.headers["X-Request-Id"], body["request_id"])
        self.assertEqual(body["error_category"], "SERVER_ERROR" if status >= 500 else "CLIENT_ERROR")
        meta = body["error_metadata"]
        self.assertEqual(meta["error_kind"], kind)
        self.assertEqual(meta["request_id"], body["request_id"])
        self.assertTrue(meta["message"])
        if field:
            self.assertEqual(meta.get("field_name"), field)
            self.assertIn(field, meta["message"])
        self.assertTrue(r.headers["Content-Type"].startswith("application/json"))
        return meta


