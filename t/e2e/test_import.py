"""notesctl import through to the API: the til corpus, fixtures for every derived field,
broken files, re-import, and an import killed half-way."""
import json
import os
import sys
import random
import signal
import sqlite3
import subprocess
import time
import unittest

from harness import SHARED, Stack, shared_stack
from listdata import walk

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "import")
TIL = os.path.join(SHARED, "corpus", "til")


def md_files(root):
    out = []
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        out += [os.path.join(dirpath, f) for f in files if f.lower().endswith(".md")
                and not f.startswith("._") and not f.startswith(".#")]
    return out


class TilCorpus(unittest.TestCase):
    def test_import_and_reimport(self):
        self.assertTrue(os.path.isdir(TIL), "the shared corpus is missing: %s" % TIL)
        stack = shared_stack()
        user, token = stack.create_user("til")
        out = stack.notesctl("import", user, TIL)
        self.assertIn("imported 1873 notes (1873 new, 0 updated, 0 unchanged), 76 collections, 0 errors",
                      out.stdout + out.stderr)
        notes, pages = walk(stack, "/v2/notes", token, {"limit": 100})
        self.assertEqual(len(notes), 1873)
        self.assertEqual(len(set(notes)), 1873)
        self.assertEqual(pages[0]["total"], 1873)
        cols, cpages = walk(stack, "/v2/collections", token, {"limit": 100})
        self.assertEqual(len(cols), 76)
        # every folder is a collection holding exactly its files
        by_title = {}
        for page in cpages:
            for c in page["results"]:
                by_title[c["title"]] = c
        for folder in sorted(os.listdir(TIL)):
            path = os.path.join(TIL, folder)
            if not os.path.isdir(path) or folder.startswith("."):
                continue
            count = len(md_files(path))
            if count == 0:
                continue
            self.assertIn(folder, by_title)
            self.assertEqual(by_title[folder]["note_count"], count, folder)
            r = stack.request("GET", "/v2/notes", query={"collection_id": by_title[folder]["id"], "limit": 1},
                              token=token)
            self.assertEqual(r.json()["total"], count, folder)
        before = stack.request("GET", "/v2/notes", query={"limit": 100, "include_note_content": "true"},
                               token=token).json()["results"]
        again = stack.notesctl("import", user, TIL)
        self.assertIn("(0 new, 0 updated, 1873 unchanged)", again.stdout + again.stderr)
        after = stack.request("GET", "/v2/notes", query={"limit": 100, "include_note_content": "true"},
                              token=token).json()["results"]
        self.assertEqual(before, after)
        self.assertEqual(walk(stack, "/v2/notes", token, {"limit": 100})[0], notes)


class Fixtures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()
        cls.user, cls.token = cls.stack.create_user("fixtures")
        cls.out = cls.stack.notesctl("import", cls.user, os.path.join(FIXTURES, "md"), check=False)
        ids, pages = walk(cls.stack, "/v2/notes", cls.token, {"limit": 100, "include_note_content": "1"})
        cls.notes = {n["title"]: n for p in pages for n in p["results"]}

    def flagged(self, **flags):
        ids, _ = walk(self.stack, "/v2/notes", self.token, dict(flags, limit=100))
        return sorted(n["title"] for n in self.notes.values() if n["id"] in set(ids))

    def test_summary_and_broken_files(self):
        text = self.out.stdout + self.out.stderr
        self.assertEqual(self.out.returncode, 1, text)  # errors reported
        self.assertIn("imported 14 notes (14 new, 0 updated, 0 unchanged), 7 collections, 5 errors", text)
        for name in ("bad-date.md", "bad-id.md", "bad-line.md", "invalid-utf8.md", "unclosed.md"):
            self.assertIn(name, text)
        self.assertEqual(len(self.notes), 14)

    def test_flags(self):
        self.assertIn("Whiteboard photos", self.flagged(contains_images="1"))
        self.assertNotIn("Task syntax in code", self.flagged(contains_images="1"))
        self.assertIn("Quarterly papers", self.flagged(contains_files="1"))
        self.assertNotIn("Task syntax in code", self.flagged(contains_files="1"))
        self.assertNotIn("Task syntax in code", self.flagged(contains_tasks="1"))
        open_titles = self.flagged(contains_open_tasks="1")
        task_titles = self.flagged(contains_tasks="1")
        self.assertTrue(set(open_titles) < set(task_titles))

    def test_audio_attachments(self):
        memo = self.notes["Voice memos"]
        self.assertEqual(len(memo["audio_recording_ids"]), 2)  # two local recordings, not the URL
        for n in self.notes.values():
            if n["title"] != "Voice memos":
                self.assertEqual(n["audio_recording_ids"], [], n["title"])

    def test_front_matter(self):
        with open(os.path.join(FIXTURES, "md", "front", "full.md")) as f:
            head = f.read().split("---")[1]
        meta = dict(line.split(":", 1) for line in head.strip().splitlines() if ":" in line and not line.startswith(" "))
        title = meta["title"].strip().strip('"')
        self.assertIn(title, self.notes)
        n = self.notes[title]
        if "id" in meta:
            self.assertEqual(n["id"], meta["id"].strip().lower())
        self.assertFalse(n["content"].startswith("---"))

    def test_reimport_changes_nothing(self):
        out = self.stack.notesctl("import", self.user, os.path.join(FIXTURES, "md"), check=False)
        self.assertIn("(0 new, 0 updated, 14 unchanged)", out.stdout + out.stderr)

    def test_jsonl(self):
        u, t = self.stack.create_user("jsonl")
        out = self.stack.notesctl("import", u, os.path.join(FIXTURES, "mem.jsonl"), check=False)
        text = out.stdout + out.stderr
        self.assertIn("mem.jsonl:", text)  # bad lines reported with their line number
        body = self.stack.request("GET", "/v2/notes", query={"limit": 100}, token=t).json()
        pancakes = next(n for n in body["results"] if n["id"] == "5d2f6c1a-7b3e-4d7a-8e0f-1a2b3c4d5e01")
        self.assertEqual(pancakes["title"], "Pancakes")
        self.assertEqual(pancakes["updated_at"], "2024-03-02T08:00:00.250Z")
        standup = next(n for n in body["results"] if n["id"] == "5d2f6c1a-7b3e-4d7a-8e0f-1a2b3c4d5e02")
        self.assertEqual(standup["created_at"], "2024-03-05T08:00:00Z")
        self.assertEqual(len(standup["audio_recording_ids"]), 1)
        self.assertEqual(sorted(standup["collection_ids"]), ["0b0f2a9e-1c1d-4c38-9f4c-5f0c7e2c9a01",
                                                             "0b0f2a9e-1c1d-4c38-9f4c-5f0c7e2c9a02"])


class KilledImport(unittest.TestCase):
    def test_killed_import_is_consistent_and_rerun_completes(self):
        self.assertTrue(os.path.isdir(TIL), "the shared corpus is missing: %s" % TIL)
        with Stack() as stack:
            user, token = stack.create_user("killed")
            cmd = [stack.binary("notesctl"), "--db", stack.db_url, "import", user, TIL, "--batch", "100"]
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=stack._env())
            # wait until some batches have landed, then kill it without warning
            deadline = time.time() + 60
            total = 0
            while time.time() < deadline and proc.poll() is None:
                total = stack.request("GET", "/v2/notes", query={"limit": 1}, token=token).json()["total"]
                if total >= 200:
                    break
                time.sleep(0.02)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            partial, _ = walk(stack, "/v2/notes", token, {"limit": 100})
            self.assertLess(len(partial), 1873, "the import ended before it was killed")
            body = stack.request("GET", "/v2/notes", query={"limit": 1}, token=token).json()
            self.assertEqual(body["total"], len(partial))       # counts match the rows
            cols, cpages = walk(stack, "/v2/collections", token, {"limit": 100})
            linked = sum(c["note_count"] for p in cpages for c in p["results"])
            self.assertLessEqual(linked, len(partial) * 3)
            out = stack.notesctl("import", user, TIL, "--batch", "100")
            text = out.stdout + out.stderr
            self.assertIn("imported 1873 notes", text)
            self.assertIn("%d unchanged" % len(partial), text)
            self.assertEqual(len(walk(stack, "/v2/notes", token, {"limit": 100})[0]), 1873)
            self.assertEqual(stack.integrity_problems(), [])


class KillLoopDuringImport(unittest.TestCase):
    """kill -9 of notesctl import again and again, at moments of no particular batch (inside a
    batch's transaction, between batches, in the compaction after them): after every kill `notesctl
    check` finds counts and index exact, and a new run completes the import without losing a
    committed batch. Each round imports into a new user and is killed at a random moment of the
    time a whole import took (an import that ends first lowers that time), so that the kills land
    inside the import whatever the build's speed; the last round's user is then resumed."""
    ROUNDS = 6

    def test_kill_loop_then_check(self):
        self.assertTrue(os.path.isdir(TIL), "the shared corpus is missing: %s" % TIL)
        rnd = random.Random(20)
        with Stack() as stack:
            def cmd(user):  # batches of 100: each one segment, merged at the end
                return [stack.binary("notesctl"), "--db", stack.db_url, "import", user, TIL,
                        "--batch", "100"]
            timing, _ = stack.create_user("killloop-time")
            t0 = time.monotonic()
            subprocess.run(cmd(timing), check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=stack._env())
            took = time.monotonic() - t0
            killed = 0
            for i in range(self.ROUNDS):
                user, token = stack.create_user("killloop%d" % i)
                t0 = time.monotonic()
                proc = subprocess.Popen(cmd(user), stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, env=stack._env())
                time.sleep(rnd.uniform(0.1, 0.9) * took)
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
                    killed += 1
                else:
                    took = min(took, time.monotonic() - t0)
                proc.wait()
                out = stack.notesctl("check", user, check=False)
                self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
                notes, _ = walk(stack, "/v2/notes", token, {"limit": 100})
                total = stack.request("GET", "/v2/notes", query={"limit": 1},
                                      token=token).json()["total"]
                self.assertEqual(total, len(notes))  # counts match the rows
            sys.stderr.write("KillLoopDuringImport: %d of %d imports killed (an import: %.3f s)\n"
                             % (killed, self.ROUNDS, took))
            self.assertGreaterEqual(killed, 3, "the imports ended before the kills (%.2f s)" % took)
            # the last round's user: a new run completes what the kill left
            out = stack.notesctl("import", user, TIL, "--batch", "100")
            self.assertIn("imported 1873 notes", out.stdout + out.stderr)
            self.assertEqual(len(walk(stack, "/v2/notes", token, {"limit": 100})[0]), 1873)
            out = stack.notesctl("check", user, check=False)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            self.assertEqual(stack.integrity_problems(), [])


QUERIES = ["git", "python list", "\"pull request\"", "docker comp", "sql", "rust"]


def search_pages(test, stack, token):
    """The first page (ids and snippets) of each of QUERIES."""
    out = []
    for q in QUERIES:
        r = stack.request("POST", "/v2/notes/search", query={"limit": 50}, token=token,
                          body={"query": q})
        test.assertEqual(r.status, 200, q)
        out.append([(n["id"], n.get("snippet")) for n in r.json()["results"]])
    return out


class KillLoopDuringMerge(unittest.TestCase):
    """kill -9 of `notesctl pack` while it merges a user's segments, again and again: each of
    a merge step's short transactions leaves the index exact (the merged segment stays hidden
    until one transaction publishes it and retires its inputs), so after every kill `notesctl
    check` finds the index exact and searches give the same pages, and the next pack removes
    what the killed one left. Each round is a new user with the same
    19 unmerged segments, killed at a random moment of the time a whole pack took (a pack that
    ends first resets that time), so that most kills land inside the merge whatever the build's
    speed."""
    ROUNDS = 6

    def round_user(self, stack, name):
        user, token = stack.create_user(name)
        stack.notesctl("import", user, TIL, "--batch", "100", "--no-compact")
        stack.notesctl("check", user)  # reads every block: the pack runs on warm caches
        return user, token

    def test_kill_merge_loop_then_check(self):
        self.assertTrue(os.path.isdir(TIL), "the shared corpus is missing: %s" % TIL)
        rnd = random.Random(21)
        with Stack() as stack:
            timing, _ = self.round_user(stack, "mergetime")
            t0 = time.monotonic()
            out = stack.notesctl("pack", timing)
            took = time.monotonic() - t0
            self.assertIn("merged 16 segments (4 left)", out.stdout)
            killed = 0
            for i in range(self.ROUNDS):
                user, token = self.round_user(stack, "killmerge%d" % i)
                pages = search_pages(self, stack, token)
                cmd = [stack.binary("notesctl"), "--db", stack.db_url, "pack", user]
                t0 = time.monotonic()
                proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        env=stack._env())
                time.sleep(rnd.uniform(0.2, 0.8) * took)
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
                    killed += 1
                else:
                    took = min(took, time.monotonic() - t0)
                proc.wait()
                out = stack.notesctl("check", user, check=False)
                self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
                self.assertEqual(search_pages(self, stack, token), pages)
                out = stack.notesctl("pack", user)  # completes what the kill left
                self.assertRegex(out.stdout, r"merged (16|0) segments \(4 left\)")
                self.assertEqual(search_pages(self, stack, token), pages)
                self.assertEqual(stack.notesctl("check", user, check=False).returncode, 0)
            sys.stderr.write("KillLoopDuringMerge: %d of %d packs killed (a pack: %.3f s)\n"
                             % (killed, self.ROUNDS, took))
            self.assertGreaterEqual(killed, 3, "the packs ended before the kills (%.2f s)" % took)
            self.assertEqual(stack.integrity_problems(), [])


class PackedPostings(unittest.TestCase):
    """Searches give the same pages whether the postings are packed (SQLite, schema 006), not
    packed at all, or packed again by `notesctl pack`; elsewhere pack does nothing."""

    def pages(self, stack, token):
        return search_pages(self, stack, token)

    def test_same_results_rows_packed_segments(self):
        """The same pages whether the postings are rows, packed rows or a segment."""
        self.assertTrue(os.path.isdir(TIL), "the shared corpus is missing: %s" % TIL)
        stack = shared_stack()
        user, token = stack.create_user("segments")
        # batches below 64 notes are postings rows, and --no-compact leaves them so
        stack.notesctl("import", user, TIL, "--batch", "50", "--no-compact")
        rows = self.pages(stack, token)
        self.assertGreater(sum(len(p) for p in rows), 100)
        # folded 256 notes per step (8 segments), then merged down to 4
        out = stack.notesctl("pack", user)
        self.assertRegex(out.stdout, r"folded 1873 notes into the search index's segments, "
                                     r"merged 5 segments \(4 left\) for user %s" % user)
        self.assertIn("packed 0 postings blocks for user %s" % user, out.stdout)
        self.assertEqual(self.pages(stack, token), rows)
        out = stack.notesctl("pack", user)
        self.assertIn("folded 0 notes into the search index's segments, merged 0 segments "
                      "(4 left)", out.stdout)
        if stack.backend == "sqlite":
            path = stack.db_url.split("db=", 1)[1]
            with sqlite3.connect(path, timeout=10) as db:
                uid = db.execute("SELECT id FROM users WHERE name = ?", (user,)).fetchone()[0]
                for table in ("postings", "postings_packed"):
                    self.assertEqual(db.execute("SELECT COUNT(*) FROM %s WHERE user_id = ?" % table,
                                                (uid,)).fetchone()[0], 0, table)
                self.assertEqual(db.execute("SELECT COUNT(*) FROM index_segments WHERE user_id = ?",
                                            (uid,)).fetchone()[0], 4)
        # a second user's import, compacted at its end (its note ids are its own, so ties
        # may order differently): as many results per query, and a clean check
        other, other_token = stack.create_user("segments-import")
        stack.notesctl("import", other, TIL)
        self.assertEqual([len(p) for p in self.pages(stack, other_token)], [len(p) for p in rows])
        out = stack.notesctl("check", other)
        self.assertEqual(out.returncode, 0, out.stderr)


if __name__ == "__main__":
    unittest.main()
