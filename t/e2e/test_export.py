"""notesctl export, the inverse of import: what the API wrote comes out, and a round trip (export,
import into an empty account, export again) gives identical files in both formats."""
import filecmp
import json
import os
import unittest
import uuid

from harness import shared_stack
from listdata import tmp_path


class Export(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()
        cls.user, cls.token = cls.stack.create_user("exp-source")
        notes = [
            {"id": str(uuid.uuid4()), "title": 'Quotes "inside" \\ and: colons',
             "content": "# Heading\n\nBody with ünïcödé, 東京都庁 and a tab\there.\n\n- [ ] task\n",
             "created_at": "2024-01-01T00:00:00.123456Z", "updated_at": "2024-02-01T00:00:00Z"},
            {"id": str(uuid.uuid4()), "content": "No explicit title line\nsecond line\n\n\n",
             "created_at": "2024-01-02T00:00:00Z", "updated_at": "2024-02-02T00:00:00.5Z"},
            {"id": str(uuid.uuid4()), "content": "---\nnot: front matter\n---\ntext",
             "created_at": "2024-01-03T00:00:00Z", "updated_at": "2024-02-03T00:00:00Z"},
        ]
        path = tmp_path(cls.stack, "exp-src.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(json.dumps(n) for n in notes) + "\n")
        cls.stack.notesctl("import", cls.user, path)
        cls.notes = notes
        post = lambda body: cls.stack.request("POST", "/v2/collections", body=body, token=cls.token).json()
        cls.a = post({"title": "Alpha \"one\"", "description": "first\nsecond line"})
        cls.b = post({"title": "Beta", "created_at": "2023-05-05T05:05:05Z"})
        cls.empty = post({"title": "Empty one", "description": None})
        for cid, nid in ((cls.a["id"], notes[0]["id"]), (cls.b["id"], notes[0]["id"]),
                         (cls.b["id"], notes[1]["id"])):
            r = cls.stack.request("PUT", "/v2/collections/%s/notes/%s" % (cid, nid), token=cls.token)
            assert r.status == 200, r.text
        # a trashed note is the user's too: it comes out with trashed_at and goes back in the trash
        r = cls.stack.request("POST", "/v2/notes/%s/trash" % notes[1]["id"], token=cls.token)
        assert r.status == 200, r.text
        cls.trashed_at = cls.stack.request("GET", "/v2/notes/" + notes[1]["id"],
                                           token=cls.token).json()["trashed_at"]

    def export(self, user, fmt, name):
        path = tmp_path(self.stack, name)
        args = ["export", user] + (["--format", fmt] if fmt else []) + [path]
        out = self.stack.notesctl(*args).stdout
        self.assertRegex(out, r"exported 3 notes \(1 trashed\), \d+ collections")
        return path

    def test_jsonl_holds_what_the_api_shows(self):
        path = self.export(self.user, None, "exp-view.jsonl")
        with open(path) as f:
            rows = [json.loads(line) for line in f]
        colls = {r["id"]: r for r in rows if r["type"] == "collection"}
        notes = {r["id"]: r for r in rows if r["type"] == "note"}
        listed = self.stack.request("GET", "/v2/collections", token=self.token).json()["results"]
        self.assertEqual(set(colls), {c["id"] for c in listed})
        for c in listed:
            self.assertEqual({k: colls[c["id"]][k] for k in ("title", "description", "created_at", "updated_at")},
                             {k: c[k] for k in ("title", "description", "created_at", "updated_at")})
        api = self.stack.request("GET", "/v2/notes", query={"include_note_content": "true"},
                                 token=self.token).json()["results"]
        live = {i: n for i, n in notes.items() if "trashed_at" not in n}
        self.assertEqual(set(live), {n["id"] for n in api})
        trashed = [n for n in notes.values() if "trashed_at" in n]
        self.assertEqual([n["id"] for n in trashed], [self.notes[1]["id"]])
        self.assertEqual(trashed[0]["trashed_at"], self.trashed_at)
        self.assertEqual(trashed[0]["collection_ids"], [self.b["id"]])
        for n in api:
            e = notes[n["id"]]
            self.assertEqual((e["title"], e["content"], e["created_at"], e["updated_at"], e["collection_ids"]),
                             (n["title"], n["content"], n["created_at"], n["updated_at"], n["collection_ids"]))

    def test_round_trips(self):
        for fmt, ext in ((None, ".jsonl"), ("jsonl", ".jsonl"), ("markdown", "")):
            with self.subTest(fmt=fmt):
                first = self.export(self.user, fmt, "exp-1-%s%s" % (fmt, ext))
                other, other_token = self.stack.create_user("exp-%s-%s" % (fmt, uuid.uuid4().hex[:6]))
                self.stack.notesctl("import", other, first)
                back = self.stack.request("GET", "/v2/notes/" + self.notes[1]["id"], token=other_token).json()
                self.assertEqual(back["trashed_at"], self.trashed_at)
                listed = self.stack.request("GET", "/v2/notes", token=other_token).json()
                self.assertEqual(listed["total"], 2)
                second = self.export(other, fmt, "exp-2-%s%s" % (fmt, ext))
                if fmt == "markdown":
                    self.assertEqual(sorted(os.listdir(first)), sorted(os.listdir(second)))
                    self.assertEqual(len(os.listdir(first)), 3)
                    for name in os.listdir(first):
                        self.assertTrue(filecmp.cmp(os.path.join(first, name), os.path.join(second, name),
                                                    shallow=False), name)
                else:
                    with open(first, "rb") as f1, open(second, "rb") as f2:
                        self.assertEqual(f1.read(), f2.read())

    def test_markdown_folder_must_be_new(self):
        path = tmp_path(self.stack, "exp-busy")
        os.makedirs(path)
        with open(os.path.join(path, "x"), "w") as f:
            f.write("x")
        r = self.stack.notesctl("export", self.user, "--format", "markdown", path, check=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("not an empty folder", r.stderr)
        r = self.stack.notesctl("export", self.user, "--format", "pdf", path, check=False)
        self.assertEqual(r.returncode, 2, r.stderr)


if __name__ == "__main__":
    unittest.main()
