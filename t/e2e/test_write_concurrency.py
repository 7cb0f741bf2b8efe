"""Note writes under concurrency and crashes, through nginx and the worker pool: one winner per
version, list walks and searches beside a writer, and workers killed with SIGKILL in the middle
of writes leaving a database that `notesctl check` finds consistent."""
import json
import os
import random
import signal
import threading
import time
import unittest
import uuid

from harness import Stack, shared_stack
from listdata import walk


def create(stack, token, content, **fields):
    r = stack.request("POST", "/v2/notes", body=dict(fields, content=content), token=token)
    if r.status != 200:
        raise AssertionError("create -> %d %s" % (r.status, r.text))
    return r.json()


def run_threads(fns):
    errors = []

    def wrap(fn):
        try:
            fn()
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(fn,)) for fn in fns]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


class Concurrency(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = shared_stack()
        cls.user, cls.token = cls.stack.create_user("racer")
        _, cls.other = cls.stack.create_user("bystander")

    def test_one_update_wins_per_version(self):
        n = create(self.stack, self.token, "contended")
        clients = 8
        for round_ in range(3):
            version = round_ + 1
            statuses = []
            lock = threading.Lock()

            def update(i):
                r = self.stack.request("PATCH", "/v2/notes/" + n["id"], token=self.token,
                                       body={"content": "round %d client %d" % (round_, i),
                                             "version": version})
                with lock:
                    statuses.append((r.status, r.json().get("error_metadata", {}).get("error_kind")))

            run_threads([lambda i=i: update(i) for i in range(clients)])
            ok = [s for s in statuses if s[0] == 200]
            self.assertEqual(len(ok), 1, statuses)
            self.assertEqual(sorted(s for s in statuses if s[0] != 200),
                             [(409, "VERSION_CONFLICT")] * (clients - 1), statuses)
            g = self.stack.request("GET", "/v2/notes/" + n["id"], token=self.token).json()
            self.assertEqual(g["version"], version + 1)
            self.assertTrue(g["content"].startswith("round %d " % round_), g["content"])

    def test_list_walk_beside_a_writer(self):
        # Notes that exist for the whole walk and keep their sort key: each exactly once.
        stable = set()
        for i in range(120):
            stable.add(create(self.stack, self.token, "stable %d" % i,
                              created_at="2020-01-01T00:00:00Z",
                              updated_at="2020-01-%02dT00:00:00Z" % (1 + i % 28))["id"])
        churn = [create(self.stack, self.token, "churn %d" % i,
                        updated_at="2020-01-%02dT12:00:00Z" % (1 + i % 28))["id"] for i in range(60)]
        stop = threading.Event()

        def writer():
            rnd = random.Random(1)
            while not stop.is_set():
                op = rnd.choice(["create", "delete", "trash", "update"])
                if op == "create" or not churn:
                    churn.append(create(self.stack, self.token, "new churn",
                                        updated_at="2020-01-%02dT06:00:00Z" % rnd.randint(1, 28))["id"])
                elif op == "delete":
                    self.stack.request("DELETE", "/v2/notes/" + churn.pop(rnd.randrange(len(churn))),
                                       token=self.token)
                elif op == "trash":
                    self.stack.request("POST", "/v2/notes/%s/trash" % churn.pop(rnd.randrange(len(churn))),
                                       token=self.token)
                else:
                    nid = churn[rnd.randrange(len(churn))]
                    v = self.stack.request("GET", "/v2/notes/" + nid, token=self.token).json()["version"]
                    self.stack.request("PATCH", "/v2/notes/" + nid, token=self.token,
                                       body={"content": "changed", "version": v})

        walks = []

        def walker():
            try:
                for order in ("updated_at", "created_at"):
                    for limit in (7, 25):
                        ids, _ = walk(self.stack, "/v2/notes", self.token,
                                      {"limit": limit, "order_by": order})
                        walks.append(ids)
            finally:
                stop.set()

        run_threads([writer, walker])
        self.assertEqual(len(walks), 4)
        for ids in walks:
            self.assertEqual(len(ids), len(set(ids)), "a walk returned a note twice")
            self.assertEqual(stable - set(ids), set(), "a walk skipped a stable note")

    def test_searches_beside_a_writer(self):
        # Only this user's live notes: never another user's, never one deleted or trashed
        # before the search was sent.
        create(self.stack, self.other, "foreign gnarwhal note")
        mine = [create(self.stack, self.token, "gnarwhal %d" % i)["id"] for i in range(30)]
        dead = set()
        lock = threading.Lock()
        stop = threading.Event()

        def writer():
            rnd = random.Random(2)
            while not stop.is_set():
                if rnd.random() < 0.5 and len(mine) > 5:
                    nid = mine.pop(rnd.randrange(len(mine)))
                    path = ("/v2/notes/" + nid) if rnd.random() < 0.5 else "/v2/notes/%s/trash" % nid
                    r = self.stack.request("DELETE" if path.endswith(nid) else "POST", path,
                                           token=self.token)
                    if r.status == 200:
                        with lock:
                            dead.add(nid)
                else:
                    mine.append(create(self.stack, self.token, "gnarwhal again")["id"])

        seen = set()

        def searcher():
            try:
                for _ in range(60):
                    with lock:
                        dead_before = set(dead)
                    r = self.stack.request("POST", "/v2/notes/search", token=self.token,
                                           body={"query": "gnarwhal", "limit": 50})
                    self.assertEqual(r.status, 200, r.text)
                    ids = [x["id"] for x in r.json()["results"]]
                    self.assertEqual(set(ids) & dead_before, set())
                    seen.update(ids)
            finally:
                stop.set()

        run_threads([writer, searcher])
        foreign = self.stack.request("POST", "/v2/notes/search", token=self.other,
                                     body={"query": "gnarwhal"}).json()["results"]
        self.assertEqual(len(foreign), 1)
        self.assertNotIn(foreign[0]["id"], seen)
        out = self.stack.notesctl("check", self.user, check=False)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)


class ImportBesideApiWrites(unittest.TestCase):
    """notesctl import and API writes of one user at the same time: both take the user's write
    lock per transaction, so no write is lost and every count stays right."""

    def test_no_lost_update_and_right_counts(self):
        stack = shared_stack()
        user, token = stack.create_user("importer")
        ids = [str(uuid.uuid5(uuid.NAMESPACE_URL, "ibw/%s/%d" % (user, i))) for i in range(100)]

        def jsonl(name, notes):
            path = os.path.join(stack.dir, name)
            with open(path, "w") as f:
                for nid, content in notes:
                    f.write(json.dumps({"id": nid, "content": content,
                                        "updated_at": "2025-01-01T00:00:00Z"}) + "\n")
            return path

        stack.notesctl("import", user, jsonl("ibw-1.jsonl", [(n, "# first %s" % n) for n in ids]))
        # The import changes ids[0:50] (one content update each) and adds 300 notes, ten per
        # transaction; the API meanwhile updates ids[0:10] (shared with the import) and
        # ids[50:100] (its own), and creates 100 notes.
        second = jsonl("ibw-2.jsonl", [(n, "# imported %s" % n) for n in ids[:50]] +
                       [(str(uuid.uuid4()), "# new %d" % i) for i in range(300)])
        api_updates = {n: 0 for n in ids[:10] + ids[50:]}
        created = []

        def importer():
            out = stack.notesctl("import", user, second, "--batch", "10", check=False)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

        def api_writer():
            for i, nid in enumerate(ids[:10] + ids[50:]):
                for _ in range(20):  # the import may have changed the version meanwhile
                    v = stack.request("GET", "/v2/notes/" + nid, token=token).json()["version"]
                    r = stack.request("PATCH", "/v2/notes/" + nid, token=token,
                                      body={"content": "# api %d" % i, "version": v})
                    if r.status == 200:
                        api_updates[nid] += 1
                        break
                    self.assertEqual(r.status, 409, r.text)
                created.append(create(stack, token, "# api new %d" % i)["id"])
                created.append(create(stack, token, "# api new %d b" % i)["id"])

        run_threads([importer, api_writer])
        total = stack.request("GET", "/v2/notes", token=token, query={"limit": 1}).json()["total"]
        self.assertEqual(total, 100 + 300 + len(created))
        self.assertEqual(len(created), 120)
        for nid in ids:
            g = stack.request("GET", "/v2/notes/" + nid, token=token).json()
            imported = 1 if nid in ids[:50] else 0
            # every write that answered (or imported) is counted in the version: none was lost
            self.assertEqual(g["version"], 1 + imported + api_updates.get(nid, 0), nid)
            if nid in ids[50:]:
                self.assertTrue(g["content"].startswith("# api "), g["content"])
        out = stack.notesctl("check", user, check=False)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)


class CrashSafety(unittest.TestCase):
    def test_sigkill_in_the_middle_of_writes(self):
        # More kills than the crash-loop guard allows by default (10 a minute) on purpose; a
        # short respawn back-off, so that a slot killed several times in a row (its back-off
        # doubles up to respawn_backoff_max_ms) is back soon after the last kill.
        with Stack(config={"workers": 3, "crash_loop_limit": 1000,
                           "respawn_backoff_max_ms": 400}) as st:
            user, token = st.create_user("crashy")
            # id -> the contents a read may show: the last answered write's, plus any write
            # whose answer was lost with its worker (it may or may not have committed); None
            # stands for "deleted".
            acked = {}
            lock = threading.Lock()
            stop = threading.Event()

            def record(nid, outcome, ok):
                with lock:
                    if ok:
                        acked[nid] = {outcome}
                    elif nid in acked:
                        acked[nid].add(outcome)

            def writer(seed):
                rnd = random.Random(seed)
                words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
                mine = []
                while not stop.is_set():
                    body = " ".join(rnd.choice(words) for _ in range(rnd.randint(50, 400)))
                    op = "create" if not mine else rnd.choice(["create", "update", "update", "delete"])
                    nid = str(uuid.uuid4()) if op == "create" else rnd.choice(mine)
                    status = None
                    try:
                        if op == "update":
                            g = st.request("GET", "/v2/notes/" + nid, token=token, timeout=10)
                            if g.status != 200:
                                continue
                            status = st.request("PATCH", "/v2/notes/" + nid, token=token, timeout=10,
                                                body={"content": body,
                                                      "version": g.json()["version"]}).status
                        elif op == "delete":
                            status = st.request("DELETE", "/v2/notes/" + nid, token=token,
                                                timeout=10).status
                        else:
                            status = st.request("POST", "/v2/notes", token=token, timeout=10,
                                                body={"content": body, "id": nid}).status
                    except OSError:
                        pass  # the connection died with its worker
                    if op == "create":
                        if status == 200:
                            mine.append(nid)
                            record(nid, body, True)
                    elif op == "update":
                        if status in (200, None) or status >= 500:
                            record(nid, body, status == 200)
                    else:
                        if status == 200 or status == 404:
                            mine.remove(nid)
                        if status in (200, None) or status >= 500:
                            record(nid, None, status == 200)

            def killer():
                rnd = random.Random(3)
                try:
                    for _ in range(12):
                        time.sleep(rnd.uniform(0.2, 0.6))
                        pids = st.worker_pids()
                        if pids:
                            try:
                                os.kill(rnd.choice(pids), signal.SIGKILL)
                            except ProcessLookupError:
                                pass  # it ended by itself meanwhile (max_requests=1 recycles)
                finally:
                    time.sleep(0.5)
                    stop.set()

            run_threads([lambda: writer(10), lambda: writer(11), killer])
            st.wait_for_workers(3)
            out = st.notesctl("check", user, check=False)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            self.assertEqual(st.integrity_problems(), [])
            self.assertGreater(len(acked), 10)
            for nid, allowed in acked.items():
                g = st.request("GET", "/v2/notes/" + nid, token=token)
                shown = g.json()["content"] if g.status == 200 else None
                self.assertIn(g.status, (200, 404), g.text)
                self.assertIn(shown, allowed, nid)
            live = sum(1 for allowed in acked.values() if None not in allowed)
            total = st.request("GET", "/v2/notes", token=token, query={"limit": 1}).json()["total"]
            self.assertGreaterEqual(total, live)


if __name__ == "__main__":
    unittest.main()
