#!/usr/bin/env python3
"""Load benchmark of notesd through the real nginx + worker pool (`make bench`).

    python3 tools/bench.py --srcdir SRC --builddir BUILD [--quick] [--scenarios a,b] ...
    python3 tools/bench.py ... --backend mysql|postgresql    (a throwaway server of t/db/)

1. Builds the data once: tools/gen_notes.py writes --users users x --notes-per-user notes (plus
   a 10-note user for the baseline), `notesctl import` loads them; the database is cached under
   BUILD/bench-data/ keyed by the parameters, the backend and a hash of its schema migrations,
   so the next run reuses it and a schema change rebuilds it. With --backend mysql or postgresql
   the database is a MariaDB/PostgreSQL server started with t/db/mariadb.sh / postgresql.sh in
   that cache folder (NOTESD_DB_MEMORY=--db-memory sizes its caches), analyzed after the import
   (tools/bench_backends.py), and stopped at the end, also on errors and Ctrl-C; --db CONN uses
   a database or server that is already running instead.
2. Starts a Stack (t/e2e/harness.py: notesd with one worker per core, nginx with the project's
   configuration) on that database, prepares each scenario's request list (walking pages to
   collect real cursors, several tokens per user), and sends every request once to check it.
3. Runs every scenario with wrk (tools/bench/requests.lua cycles through the list) --runs times,
   interleaved so that each round also measures the baseline, and prints a Markdown table of
   the medians (requests/s, p50/p90/p99, max, non-2xx) with ratios to the baseline, also
   written to BUILD/bench-results.md (other backends: bench-results-BACKEND.md). The header names
   the backend and its server version; `tools/bench_backends.py merge` puts the reports of
   several backends side by side, `tools/bench_backends.py run` runs them all and merges.

A scenario is a small declarative entry in SCENARIOS: method, path, the user it runs as, and a
function of the prepared Context returning query dicts and/or JSON bodies (POST bodies work).
Nothing here asserts on timings; the numbers are for people.
"""
import argparse
import hashlib
import http.client
import json
import os
import platform
import random
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import namedtuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_backends  # noqa: E402
import bench_import  # noqa: E402
import gen_notes  # noqa: E402

TINY_USER, TINY_NOTES, TINY_NUMBER = "bench-tiny", 10, 99
TOKENS_PER_USER = 4
DAY_US = 86400 * 1000000
FIRST_PAGE_REQUESTS = 40  # per filter and round in the first-page costs of list_filtered
END_US = gen_notes.END_EPOCH * 1000000

# ---- scenarios ----------------------------------------------------------------------------

# user: "tiny" (10 notes), "big" (the first, largest user) or "bigs" (every large user in turn).
# queries/bodies: functions of the Context returning lists; when both are given they are paired
# cyclically. An item of queries may also be a (user, query) pair to pin a request to a user.
# method "MIXED": each query item carries its own "method" and "path" (write scenarios). refresh:
# the request list is built again before every run (a write that can succeed only once: an
# update names the note's current version, a delete an existing note). companion: a scenario
# run at the same time on --write-connections connections, reported in a row of its own.
# user "writer": the last large user, whose notes the write scenarios change (creates add
# notes, deletes remove some), so the searched user stays as built. SQLite runs write to a copy
# of the cached file (sqlite_run_copy); a server database keeps what the runs wrote.
Scenario = namedtuple("Scenario", "name method path user about queries bodies refresh companion")


def scenario(name, method, path, user, about, queries=None, bodies=None, refresh=False,
             companion=None):
    return Scenario(name, method, path, user, about, queries, bodies, refresh, companion)


SCENARIOS = [
    scenario("baseline", "GET", "/v2/notes", "tiny",
             "limit=1 for a user with 10 notes: the fixed cost of nginx + FastCGI + auth",
             queries=lambda c: [{"limit": 1}]),
    scenario("list_first_page", "GET", "/v2/notes", "big",
             "first page of 50 (both orders) of the large user",
             queries=lambda c: [{"limit": 50}, {"limit": 50, "order_by": "created_at"}, {}]),
    scenario("list_content", "GET", "/v2/notes", "big",
             "first page of 50 with include_note_content=true",
             queries=lambda c: [{"limit": 50, "include_note_content": "true"}]),
    scenario("list_deep_pages", "GET", "/v2/notes", "big",
             "limit=100 at cursors spread over a full walk of the large user (both orders)",
             queries=lambda c: c.deep_pages()),
    scenario("list_filtered", "GET", "/v2/notes", "big",
             "collection, contains_* and date filters: first pages and deep pages",
             queries=lambda c: c.filtered_pages()),
    scenario("collections", "GET", "/v2/collections", "bigs",
             "collection lists (about 20 per user, note_count) with limits, orders, cursors",
             queries=lambda c: c.collection_pages()),
    # Searches: POST bodies cycling through many different queries of the large user; each one
    # is a new search (a new snapshot), except in search_snapshot_pages.
    scenario("search_rare", "POST", "/v2/notes/search", "big",
             "one rare word (about 80-400 notes of 100,000 contain it)",
             bodies=lambda c: c.search_bodies("rare")),
    scenario("search_two_terms", "POST", "/v2/notes/search", "big",
             "two mid-frequency words (each in about 0.3-8% of the notes)",
             bodies=lambda c: c.search_bodies("two_terms")),
    scenario("search_frequent", "POST", "/v2/notes/search", "big",
             "one or two frequent words (each in 15-90% of the notes)",
             bodies=lambda c: c.search_bodies("frequent")),
    scenario("search_phrase", "POST", "/v2/notes/search", "big",
             "a quoted phrase of 2-3 words taken from the user's notes",
             bodies=lambda c: c.search_bodies("phrase")),
    scenario("search_prefix", "POST", "/v2/notes/search", "big",
             "a word cut to 3-6 letters as the last (prefix) term, alone or after a word",
             bodies=lambda c: c.search_bodies("prefix")),
    scenario("search_cjk", "POST", "/v2/notes/search", "big",
             "2-4 Chinese/Japanese/Korean characters taken from the user's notes",
             bodies=lambda c: c.search_bodies("cjk")),
    scenario("search_mixed", "POST", "/v2/notes/search", "big",
             "the six query sets above interleaved (the acceptance scenario)",
             bodies=lambda c: c.search_bodies("mixed")),
    scenario("search_snapshot_pages", "POST", "/v2/notes/search", "big",
             "offset 20/40/60/80 of prepared snapshots (snapshot_id reuse) of mixed queries",
             queries=lambda c: c.snapshot_pages()[0], bodies=lambda c: c.snapshot_pages()[1]),
    # Writes of about 2 KB notes (issue 18), after the reads so that these see the data as built.
    scenario("write_create", "POST", "/v2/notes", "writer",
             "POST /v2/notes: a new note of about 2 KB (title, paragraphs, a task) per request",
             bodies=lambda c: c.write_bodies()),
    scenario("write_update", "MIXED", "/v2/notes/{id}", "writer",
             "PATCH /v2/notes/{id}: the whole content (about 2 KB) of a different note each time, "
             "with its current version",
             queries=lambda c: c.update_requests(), refresh=True),
    scenario("write_delete", "MIXED", "/v2/notes/{id}", "writer",
             "DELETE /v2/notes/{id}: a different existing note each time",
             queries=lambda c: c.delete_requests(), refresh=True),
    scenario("write_mixed", "MIXED", "/v2/notes", "writer",
             "creates, updates and deletes interleaved (2:2:1)",
             queries=lambda c: c.mixed_write_requests(), refresh=True),
    scenario("search_mixed_with_writes", "POST", "/v2/notes/search", "big",
             "search_mixed while write_mixed runs beside it on --write-connections connections "
             "(its row: search_mixed_with_writes (writes))",
             bodies=lambda c: c.search_bodies("mixed"), companion="write_mixed"),
]
SEARCH_KINDS = ("rare", "two_terms", "frequent", "phrase", "prefix", "cjk")
QUERIES_PER_KIND = 200
# search/query.cpp's stopwords: a realistic frequent query is a frequent content word, not "the"
STOPWORDS = set("""a an and are as at be been but by can do does for from has have how i if in
into is it its not of on or such that the their there these this to was what when where which
who why will with were would any""".split())
CJK_RUN = re.compile("[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]+")
DEFAULT_SCENARIOS = [s.name for s in SCENARIOS if s.name != "write_mixed"]  # a companion only
WRITE_WORDS = ("plan review deploy kernel garden invoice meeting draft budget travel recipe "
               "library network backup sketch chapter lesson server client report").split()


class Context:
    """What scenarios draw on: the running stack, users, tokens and walks through their pages."""

    def __init__(self, stack, tokens, big_users, walk_pages, seed, duration=20):
        self.stack, self.tokens, self.big_users, self.walk_pages = stack, tokens, big_users, walk_pages
        self.seed = seed  # of the generated data: its vocabulary gives terms of known frequency
        self.big = big_users[0]
        self.writer = big_users[-1]
        self.duration = duration
        self.conn = None
        self.timings = {}  # label -> [seconds] of sequential requests made while preparing
        self._queries, self._sample, self._pages = {}, None, None  # built on first use

    def request(self, method, target, headers, body=None):
        """One request on the kept-alive connection: (status, body bytes, seconds). nginx closes
        an idle or used-up keep-alive connection (keepalive_timeout, keepalive_requests); a
        request that finds it closed is sent once more on a new connection."""
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.stack.port, timeout=60)
            try:
                t0 = time.perf_counter()
                self.conn.request(method, target, body=body, headers=headers)
                resp = self.conn.getresponse()
                data = resp.read()
                return resp.status, data, time.perf_counter() - t0
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise

    def get(self, user, path, query, label=None):
        """One GET on a kept-alive connection; returns the decoded JSON (raises unless 200)."""
        target = path + ("?" + urllib.parse.urlencode(query) if query else "")
        status, data, took = self.request("GET", target, {"Authorization": "Bearer " + self.tokens[user][0]})
        if label:
            self.timings.setdefault(label, []).append(took)
        if status != 200:
            raise RuntimeError("GET %s answered %d: %s" % (target, status, data[:300]))
        return json.loads(data)

    def walk(self, user, path, query, limit=100, max_pages=None, label=None):
        """Cursors of every page of a walk (None for the first page), up to max_pages."""
        cursors, cursor = [None], None
        while max_pages is None or len(cursors) < max_pages:
            q = dict(query, limit=limit)
            if cursor:
                q["page"] = cursor
            body = self.get(user, path, q, label)
            cursor = body.get("next_page")
            if not cursor:
                break
            cursors.append(cursor)
        return cursors

    @staticmethod
    def spread(items, n):
        """n items evenly spread over the list (all of them when it is shorter)."""
        if len(items) <= n:
            return list(items)
        return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)]

    def deep_pages(self):
        out = []
        for order in ("updated_at", "created_at"):
            cursors = self.walk(self.big, "/v2/notes", {"order_by": order}, label="walk notes (%s)" % order)
            for c in self.spread(cursors[1:], 100):
                out.append({"limit": 100, "order_by": order, "page": c})
        return out

    def terms(self, lo, hi, n):
        """n vocabulary words whose share of running words lies in [lo, hi], spread over that
        band, for search queries: the rarest words are near 4e-6 (about 80 uses per 100,000
        notes), 1e-3 is a frequent word."""
        probs = gen_notes.word_probability(self.seed)
        band = [w for w, p in probs.items() if lo <= p <= hi]
        return self.spread(band, n)

    def sample_notes(self, n=4000):
        """The large user's first n notes exactly as the generator wrote them (same seed and
        user number): real text to take phrases and CJK runs from."""
        if self._sample is None:
            words = gen_notes.vocabulary(self.seed)
            gen = gen_notes.UserGenerator(self.seed, int(self.big[-2:]), words,
                                          gen_notes.zipf_cum_weights(len(words)))
            self._sample = [gen.note() for _ in range(n)]
        return self._sample

    def phrases(self, rng, n):
        """Quoted runs of 2-3 adjacent words from one sentence of a sampled note, not all of
        them stopwords."""
        out = []
        notes = self.sample_notes()
        while len(out) < n:
            text = rng.choice(notes)["content"]
            paras = [p for p in text.split("\n\n") if p and p[0].isalpha()]
            if not paras:
                continue
            sentence = rng.choice(re.split(r"[.?!:]", rng.choice(paras)))
            words = re.findall(r"[a-z]+", sentence.lower())
            k = rng.choice((2, 2, 3))
            if len(words) < k:
                continue
            i = rng.randrange(len(words) - k + 1)
            run = words[i:i + k]
            if all(w in STOPWORDS for w in run):
                continue
            out.append('"%s"' % " ".join(run))
        return out

    def cjk_terms(self, rng, n):
        runs = [r for note in self.sample_notes() for r in CJK_RUN.findall(note["content"]) if len(r) >= 2]
        out = []
        while len(out) < n:
            r = rng.choice(runs)
            k = min(len(r), rng.choice((2, 2, 3, 4)))
            i = rng.randrange(len(r) - k + 1)
            out.append(r[i:i + k])
        return out

    def search_queries(self, kind):
        """QUERIES_PER_KIND query strings of one kind (see SCENARIOS), deterministic."""
        cache = self._queries
        if kind in cache:
            return cache[kind]
        rng = random.Random("queries:%s:%d" % (kind, self.seed))
        n = QUERIES_PER_KIND
        if kind == "rare":
            out = self.terms(4e-6, 1.5e-5, n)
        elif kind == "two_terms":
            band = self.terms(1.5e-5, 4e-4, 2 * n)
            out = ["%s %s" % tuple(rng.sample(band, 2)) for _ in range(n)]
        elif kind == "frequent":
            band = [w for w in self.terms(1e-3, 3e-2, 1000) if w not in STOPWORDS]
            out = [" ".join(rng.sample(band, rng.choice((1, 2)))) for _ in range(n)]
        elif kind == "phrase":
            out = self.phrases(rng, n)
        elif kind == "prefix":
            long_words = [w for w in self.terms(4e-6, 3e-2, 3000) if len(w) >= 6 and w not in STOPWORDS]
            mid = self.terms(1.5e-5, 4e-4, n)
            out = []
            for _ in range(n):
                w = rng.choice(long_words)
                cut = w[:rng.randint(3, min(6, len(w) - 1))]
                out.append(cut if rng.random() < 0.5 else "%s %s" % (rng.choice(mid), cut))
        elif kind == "cjk":
            out = self.cjk_terms(rng, n)
        elif kind == "mixed":  # interleaved: every kind in every stretch of the list
            lists = [self.search_queries(k) for k in SEARCH_KINDS]
            out = [q for group in zip(*lists) for q in group]
        else:
            raise ValueError("unknown query kind " + kind)
        cache[kind] = out
        return out

    # ---- writes ----

    def write_content(self, rng):
        """A note of about 2 KB: a heading, paragraphs of vocabulary words, a task line."""
        words = gen_notes.vocabulary(self.seed)[:5000] if not hasattr(self, "_vocab") else self._vocab
        self._vocab = words
        title = " ".join(rng.choice(WRITE_WORDS) for _ in range(3)).capitalize()
        paras = []
        while sum(len(p) for p in paras) < 1900:
            paras.append(" ".join(rng.choice(words) for _ in range(40)) + ".")
        return "# %s\n\n%s\n\n- [ ] %s\n" % (title, "\n\n".join(paras), rng.choice(WRITE_WORDS))

    def write_bodies(self, n=500):
        rng = random.Random(self.seed * 7 + 1)
        return [{"content": self.write_content(rng)} for _ in range(n)]

    def writer_ids(self, n):
        """Ids of n of the writer's notes, newest first (the first pages of its list)."""
        ids, cursor = [], None
        while len(ids) < n:
            q = {"limit": 100, "order_by": "created_at"}
            if cursor:
                q["page"] = cursor
            body = self.get(self.writer, "/v2/notes", q)
            ids += [x["id"] for x in body["results"]]
            cursor = body.get("next_page")
            if not cursor:
                break
        return ids[:n]

    def writes_per_run(self):
        # more than a run sends (its warm-up included), so no request repeats (an update names a
        # version once): API writes ran at up to 1,700 req/s on the benchmark machine (2026-11)
        return max(500, self.duration * 2500)

    def update_requests(self, n=None):
        rng = random.Random()
        n = n or self.writes_per_run()
        ids = self.writer_ids(n)
        versions = {nid: self.get(self.writer, "/v2/notes/" + nid, None)["version"] for nid in ids}
        # A writer with fewer notes than updates: the list goes round again, each note's next
        # update naming the version its previous one made (a version grows by one).
        out = []
        for i in range(n):
            nid = ids[i % len(ids)]
            out.append({"method": "PATCH", "path": "/v2/notes/" + nid,
                        "body": {"content": self.write_content(rng), "version": versions[nid] + i // len(ids)}})
        return out

    def delete_requests(self, n=None):
        # The oldest notes go first, so that updates (newest first) and deletes do not meet.
        ids = self.writer_ids(2 * (n or self.writes_per_run()))
        return [{"method": "DELETE", "path": "/v2/notes/" + nid, "body": None}
                for nid in reversed(ids[len(ids) // 2:])]

    def mixed_write_requests(self):
        n = self.writes_per_run() // 5
        updates, deletes = self.update_requests(2 * n), self.delete_requests(n)
        creates = [{"method": "POST", "path": "/v2/notes", "body": b} for b in self.write_bodies(2 * n)]
        out = []
        for i in range(n):
            out += [creates[2 * i], updates[2 * i], creates[2 * i + 1], deletes[i], updates[2 * i + 1]]
        return out

    def search_bodies(self, kind):
        return [{"query": q} for q in self.search_queries(kind)]

    def search(self, user, query, body, label=None):
        """One POST /v2/notes/search on the kept-alive connection; returns the decoded JSON."""
        target = "/v2/notes/search?" + urllib.parse.urlencode(query)
        status, raw, took = self.request("POST", target, {
            "Authorization": "Bearer " + self.tokens[user][0], "Content-Type": "application/json"},
            json.dumps(body).encode())
        if label:
            self.timings.setdefault(label, []).append(took)
        if status != 200:
            raise RuntimeError("search %r answered %d: %s" % (body, status, raw[:300]))
        return json.loads(raw)

    def snapshot_pages(self):
        """(queries, bodies): later pages (offset 20..80, limit 20) of snapshots made now, one
        per mixed query whose window has more than 20 results."""
        if self._pages is None:
            queries, bodies = [], []
            for body in self.search_bodies("mixed"):
                first = self.search(self.big, {"limit": 20}, body, label="search: first page (mixed, sequential)")
                for off in range(20, first["total"], 20):
                    queries.append({"limit": 20, "offset": off, "snapshot_id": first["snapshot_id"]})
                    bodies.append(body)
            self._pages = (queries, bodies)
        return self._pages

    def collections(self, user):
        return self.get(user, "/v2/collections", {"limit": 100})["results"]

    def filter_sets(self):
        cols = sorted(self.collections(self.big), key=lambda c: -c["note_count"])
        big, mid, small = cols[0]["id"], cols[len(cols) // 2]["id"], cols[-1]["id"]

        def day(n):  # n days before the data's end, as RFC 3339
            return gen_notes.rfc3339(END_US - n * DAY_US)
        return {
            "largest collection": {"collection_id": big},
            "median collection": {"collection_id": mid},
            "smallest collection": {"collection_id": small},
            "contains_tasks": {"contains_tasks": "true"},
            "contains_open_tasks": {"contains_open_tasks": "true"},
            "contains_images": {"contains_images": "true"},
            "contains_files": {"contains_files": "true"},
            "images or files": {"contains_images": "true", "contains_files": "true"},
            "updated last 30 days": {"filter_by_updated_after": day(30)},
            "created 3-month window": {"filter_by_created_after": day(455), "filter_by_created_before": day(365)},
            "created before day 600": {"filter_by_created_before": day(600), "order_by": "created_at"},
            "collection + tasks": {"collection_id": big, "contains_tasks": "true"},
            "collection + window": {"collection_id": mid, "filter_by_updated_after": day(365),
                                    "filter_by_updated_before": day(180)},
        }

    def worker_seconds(self, endpoint):
        """The workers' summed time (s) and count of an endpoint's requests (the status page)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.stack.port, timeout=10)
        try:
            conn.request("GET", "/notesd-status")
            status = json.loads(conn.getresponse().read())
        finally:
            conn.close()
        for e in status["requests"]["by_endpoint"]:
            if e["endpoint"] == endpoint:
                return e["duration_us_sum"] / 1e6, float(e["total"])
        return 0.0, 0.0

    def first_page_costs(self, n=40, rounds=3):
        """Worker time of each list_filtered filter's first page (limit 50), one request at a
        time, n per filter and round, the rounds interleaved: {label: (total, [ms per round])};
        "none" is the unfiltered first page."""
        sets = dict([("none", {})] + list(self.filter_sets().items()))
        out = {}
        for _ in range(rounds):
            for label, query in sets.items():
                q = dict(query, limit=50)
                total = self.get(self.big, "/v2/notes", q)["total"]
                t0, c0 = self.worker_seconds("list_notes")
                for _ in range(n):
                    self.get(self.big, "/v2/notes", q)
                t1, c1 = self.worker_seconds("list_notes")
                out.setdefault(label, (total, []))[1].append((t1 - t0) / max(1.0, c1 - c0) * 1000)
        return out

    def first_searches(self, workers, restarts=3, drop_caches=False):
        """The first search after each of `restarts` restarts of notesd (master and workers; nginx
        stays), on a new connection, a different mixed query each time: [seconds]. drop_caches:
        the kernel's page cache is dropped too, as after a reboot of the machine (root only)."""
        bodies = self.search_bodies("mixed")
        headers = {"Authorization": "Bearer " + self.tokens[self.big][0], "Content-Type": "application/json"}
        out = []
        for i in range(restarts):
            if drop_caches:
                self.stack.stop_notesd()
                os.sync()
                with open("/proc/sys/vm/drop_caches", "w") as f:
                    f.write("3\n")
            self.stack.restart_notesd(workers)
            if self.conn:
                self.conn.close()
                self.conn = None
            body = json.dumps(bodies[(i * 7919) % len(bodies)], ensure_ascii=False).encode()
            status, data, took = self.request("POST", "/v2/notes/search", headers, body)
            if status != 200:
                raise RuntimeError("the first search after a restart answered %d: %s" % (status, data[:300]))
            out.append(took)
        return out

    def filtered_pages(self):
        out = []
        for label, query in self.filter_sets().items():
            out.append(dict(query, limit=50))
            cursors = self.walk(self.big, "/v2/notes", query, max_pages=self.walk_pages,
                                label="walk filter: " + label)
            out += [dict(query, limit=100, page=c) for c in self.spread(cursors[1:], 10)]
        return out

    def collection_pages(self):
        out = []
        for user in self.big_users:
            out += [(user, {}), (user, {"order_by": "created_at"}),
                    (user, {"filter_by_updated_after": gen_notes.rfc3339(END_US - 20 * DAY_US)})]
            for c in self.walk(user, "/v2/collections", {}, limit=5)[1:]:
                out.append((user, {"limit": 5, "page": c}))
        return out


# ---- requests and wrk ---------------------------------------------------------------------

Request = namedtuple("Request", "method token target body")


def build_requests(sc, ctx):
    """The scenario's request list, tokens of the right user cycled across it."""
    queries = sc.queries(ctx) if sc.queries else [{}]
    bodies = sc.bodies(ctx) if sc.bodies else [None]
    users = {"tiny": [TINY_USER], "big": [ctx.big], "bigs": ctx.big_users, "writer": [ctx.writer]}[sc.user]
    out = []
    for i in range(max(len(queries), len(bodies))):
        q, body = queries[i % len(queries)], bodies[i % len(bodies)]
        user = users[i % len(users)]
        if isinstance(q, tuple):
            user, q = q
        toks = ctx.tokens[user]
        method, path = sc.method, sc.path
        if method == "MIXED":  # the item is the whole request
            method, path, body, q = q["method"], q["path"], q["body"], None
        target = path + ("?" + urllib.parse.urlencode(q) if q else "")
        out.append(Request(method, toks[i % len(toks)], target,
                           None if body is None else json.dumps(body, ensure_ascii=False)))
    return out


def check_requests(stack, reqs, limit=400):
    """Sends each distinct request once; returns sequential latencies (s). Raises unless 2xx."""
    times = []
    conn = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=60)
    try:
        for r in Context.spread(reqs, limit):
            headers = {"Authorization": "Bearer " + r.token}
            if r.body is not None:
                headers["Content-Type"] = "application/json"
            t0 = time.perf_counter()
            conn.request(r.method, r.target, body=None if r.body is None else r.body.encode(), headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            times.append(time.perf_counter() - t0)
            if not 200 <= resp.status < 300:
                raise RuntimeError("%s %s answered %d: %s" % (r.method, r.target, resp.status, data[:300]))
    finally:
        conn.close()
    return times


def write_request_file(path, reqs):
    with open(path, "w", encoding="utf-8") as f:
        for r in reqs:
            if "\t" in r.target or (r.body and ("\t" in r.body or "\n" in r.body)):
                raise ValueError("request cannot be written on one line: %r" % (r,))
            f.write("%s\t%s\t%s\t%s\n" % (r.method, r.token, r.target, r.body or ""))


def run_wrk(a, port, req_file, duration, connections=None):
    connections = connections or a.connections
    threads = max(1, min(a.threads, connections))
    cmd = ["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % duration, "--timeout", "10s",
           "--latency", "-s", os.path.join(HERE, "bench", "requests.lua"),
           "http://127.0.0.1:%d" % port, "--", req_file, str(threads)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 120)
    m = re.search(r"^BENCH-JSON (\{.*\})$", p.stdout, re.M)
    if p.returncode != 0 or not m:
        raise RuntimeError("wrk failed (%d):\n%s\n%s" % (p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    r = json.loads(m.group(1))
    r["rps"] = r["requests"] / (r["duration_us"] / 1e6)
    r["non2xx"] = r["err_status"]  # wrk counts answers >= 400; the API sends no 1xx/3xx
    r["sock_errors"] = r["err_connect"] + r["err_read"] + r["err_write"] + r["err_timeout"]
    return r


class StatusProbe:
    """Asks the status page (/notesd-status, answered by the notesd master) every 100 ms while
    wrk runs: its latency under load, and the requests it counted."""

    def __init__(self, port):
        self.port, self.latencies, self.failures = port, [], 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def total(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", "/notesd-status")
            return json.loads(conn.getresponse().read())["requests"]["total"]
        finally:
            conn.close()

    def _run(self):
        while not self._stop.wait(0.1):
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            t0 = time.monotonic()
            try:
                conn.request("GET", "/notesd-status")
                r = conn.getresponse()
                r.read()
                if r.status == 200:
                    self.latencies.append(time.monotonic() - t0)
                else:
                    self.failures += 1
            except OSError:
                self.failures += 1
            finally:
                conn.close()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(15)


# ---- data ---------------------------------------------------------------------------------

def data_spec(a):
    big = a.users if a.big_users is None else min(a.big_users, a.users)
    return {"generator": gen_notes.GENERATOR_VERSION, "seed": a.seed, "users": a.users,
            "notes_per_user": a.notes_per_user, "big_users": big, "small_notes": a.small_notes}


def user_plan(spec):
    """[(name, generator user number, notes)] for every user of the data set."""
    plan = [("bench%02d" % u, u, spec["notes_per_user"] if u <= spec["big_users"] else spec["small_notes"])
            for u in range(1, spec["users"] + 1)]
    return plan + [(TINY_USER, TINY_NUMBER, TINY_NOTES)]


def notesctl(a, db, *args, timeout=3600):
    cmd = [os.path.join(a.builddir, "notesctl"), "--db", db] + [str(x) for x in args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
    return p


def schema_tag(a, backend):
    """A short hash of the migrations of the backend's dialect: a cached database built before
    a schema change (a new index, new derived columns) is rebuilt rather than reused."""
    folder = os.path.join(a.srcdir, "sql", backend)
    h = hashlib.sha256()
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        with open(os.path.join(folder, name), "rb") as f:
            h.update(name.encode() + b"\0" + f.read())
    return h.hexdigest()[:8]


def cache_key(a, spec):
    key = "s%d-u%dx%d-b%d-g%d-m%s" % (spec["seed"], spec["users"], spec["notes_per_user"],
                                      spec["big_users"], spec["generator"], schema_tag(a, a.backend))
    if a.db:
        return key + "-" + hashlib.sha256(a.db.encode()).hexdigest()[:10]
    return key if a.backend == "sqlite" else key + "-" + a.backend  # SQLite keys as before


def open_database(a, cache, fresh):
    """The connection string of the cached data: --db, the SQLite file, or a server of ours,
    started now (a.server, which main stops). fresh: start from an empty database (a build);
    a --db database is never emptied."""
    if a.db:
        return a.db
    if a.backend == "sqlite":
        path = os.path.join(cache, "notes.db")
        # The search snapshots file starts empty on every run, cached data or not: each run makes
        # the snapshots it pages through, and the rows earlier runs left behind (kept 6 h, below)
        # would otherwise grow the file run after run (2.9 million rows, 10 GB, once), and every
        # search's snapshot write with it, so that two runs of one build would not compare.
        parts = ("", "-snapshots") if fresh else ("-snapshots",)
        for f in [path + x + y for x in parts for y in ("", "-wal", "-shm", "-journal")]:
            if os.path.exists(f):
                os.remove(f)
        return "sqlite3://db=" + path
    folder = os.path.join(cache, "db")
    a.server = bench_backends.ServerBackend(a.srcdir, a.backend, folder, a.db_memory)
    if fresh:
        a.server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    log("data: starting the %s server in %s (NOTESD_DB_MEMORY=%s)" % (a.backend, folder, a.db_memory))
    return a.server.start()


def prepare_data(a):
    """Returns (db connection string, info dict); builds and imports the data unless cached."""
    spec = data_spec(a)
    cache = os.path.join(a.cache_dir, cache_key(a, spec))
    os.makedirs(cache, exist_ok=True)
    ready = os.path.join(cache, "READY.json")
    present = a.db or os.path.exists(os.path.join(cache, "notes.db" if a.backend == "sqlite" else "db"))
    if os.path.exists(ready) and present and not a.rebuild:
        with open(ready) as f:
            info = json.load(f)
        info["cached"] = True
        log("data: reusing %s (built %s)" % (cache, info.get("built_at")))
        return open_database(a, cache, False), info
    if os.path.exists(ready):
        os.remove(ready)  # an interrupted rebuild must not look complete
    db = open_database(a, cache, True)
    plan = user_plan(spec)
    jsonl = os.path.join(cache, "jsonl")
    log("data: generating %d users (%d notes) into %s" % (len(plan), sum(n for _, _, n in plan), jsonl))
    t0 = time.monotonic()
    os.makedirs(jsonl, exist_ok=True)
    gen_notes.generate_many([(spec["seed"], num, n, jsonl) for _, num, n in plan], a.gen_jobs)
    gen_s = time.monotonic() - t0
    notesctl(a, db, "migrate")
    existing = notesctl(a, db, "user", "list").stdout
    imports = []
    for name, num, n in plan:
        if not re.search(r"(^|\s)%s(\s|$)" % re.escape(name), existing, re.M):
            notesctl(a, db, "user", "add", name)
        path = os.path.join(jsonl, gen_notes.user_file_name(num))
        t1 = time.monotonic()
        out = notesctl(a, db, "import", name, path).stdout.strip().splitlines()
        dt = time.monotonic() - t1
        imports.append({"user": name, "notes": n, "seconds": round(dt, 2)})
        log("data: %s: %s in %.1f s (%.0f notes/s)" % (name, out[-1] if out else "", dt, n / dt))
    t1 = time.monotonic()
    bench_backends.after_import(a.srcdir, db)
    analyze_s = time.monotonic() - t1
    total_n = sum(i["notes"] for i in imports)
    total_s = sum(i["seconds"] for i in imports)
    info = {"spec": spec, "built_at": time.strftime("%Y-%m-%d %H:%M:%S"), "generate_seconds": round(gen_s, 1),
            "import_seconds": round(total_s, 1), "notes": total_n,
            "import_notes_per_s": round(total_n / total_s) if total_s else None, "imports": imports,
            "analyze_seconds": round(analyze_s, 1)}
    if a.backend != "sqlite":
        info["db_bytes"] = bench_backends.database_bytes(a.srcdir, db)
    elif not a.db:
        info["db_bytes"] = sum(os.path.getsize(os.path.join(cache, f)) for f in os.listdir(cache)
                               if f.startswith("notes.db"))
    # The import's baseline in the same run: SQLite FTS5 indexing the same notes (issue 19).
    fts_n, fts_s, fts_bytes = bench_import.fts5_import(
        [os.path.join(jsonl, gen_notes.user_file_name(num)) for _, num, _ in plan], os.path.join(cache, "fts5.db"))
    info["fts5"] = {"notes": fts_n, "seconds": round(fts_s, 1), "notes_per_s": round(fts_n / fts_s), "bytes": fts_bytes}
    os.remove(os.path.join(cache, "fts5.db"))
    log("data: FTS5 baseline: %d notes in %.1f s (%.0f notes/s), %.0f MB" % (fts_n, fts_s, fts_n / fts_s, fts_bytes / 1e6))
    with open(ready, "w") as f:
        json.dump(info, f, indent=1)
    if not a.keep_jsonl:
        shutil.rmtree(jsonl, ignore_errors=True)
    info["cached"] = False
    return db, info


def sqlite_run_copy(a, db):
    """The SQLite file this run writes to: a copy of the cached one in the work directory, so
    that every run starts from the data as built. The write scenarios add and remove the writer's
    notes; on the cached file itself, runs had grown it from 0.3 to 4.6 GB in a day, and each
    run's writes went to larger trees than the last one's."""
    if a.db or a.backend != "sqlite":
        return db
    src = db[len("sqlite3://db="):]
    with sqlite3.connect(src) as c:  # an interrupted build may have left frames in the WAL
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    work = a.work_dir or os.path.join(a.builddir, "bench-work", a.backend)
    os.makedirs(work, exist_ok=True)
    dst = os.path.join(work, "notes.db")
    for x in ("", "-wal", "-shm", "-journal", "-snapshots", "-snapshots-wal", "-snapshots-shm"):
        if os.path.exists(dst + x):
            os.remove(dst + x)
    t0 = time.monotonic()
    shutil.copyfile(src, dst)
    # Written back now, not by the kernel half a minute later in the middle of a run, where
    # 1.3 GB of writeback held up the runs' WAL syncs (write_update varied 698-939 req/s).
    fd = os.open(dst, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    log("data: copied to %s for this run and synced (%.0f MB in %.1f s)" % (dst, os.path.getsize(dst) / 1e6, time.monotonic() - t0))
    return "sqlite3://db=" + dst + ("" if not a.db_options else " " + a.db_options)


# ---- running and reporting ----------------------------------------------------------------

def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def start_stack(a, db):
    os.environ["NOTESD_BUILDDIR"] = a.builddir
    os.environ["NOTESD_SRCDIR"] = a.srcdir
    sys.path.insert(0, os.path.join(a.srcdir, "t", "e2e"))
    from harness import Stack
    # Snapshots made while preparing must outlive every round of search_snapshot_pages.
    # wrk is one address standing for many clients: nginx's per-address and pool limits must
    # not shed its connections: the most a scenario opens (search_mixed_with_writes adds the
    # writers' connections) and the status page's poller, which nginx counts as well (with 32
    # connections and CONN_PER_ADDR 32 list_filtered had 1,033 JSON 503s in 10 s).
    in_flight = a.connections + a.write_connections + 1
    shield = {"CONN_PER_ADDR": max(32, in_flight), "POOL_MAX_CONNS": max(64, in_flight)}
    # The background merger runs as notesd's defaults have it (the e2e harness turns it off):
    # writes are measured with the folds and merges they cause.
    config = {"workers": a.workers, "snapshot_ttl_s": 6 * 3600, "merge_interval_ms": a.merge_interval_ms,
              "merge_fold_delay_ms": 10000}
    if a.merge_nice is not None:
        config["merge_nice"] = a.merge_nice
    return Stack(config=config, db=db, nginx=shield, start_timeout=60).start()


def create_tokens(stack, users):
    return {u: [stack.create_token(u) for _ in range(TOKENS_PER_USER)] for u in users}


def summarize(runs):
    med = lambda k: statistics.median(r[k] for r in runs)  # noqa: E731
    return {"rps": med("rps"), "p50": med("p50"), "p90": med("p90"), "p99": med("p99"),
            "max": max(r["max"] for r in runs), "non2xx": sum(r["non2xx"] for r in runs),
            "sock_errors": sum(r["sock_errors"] for r in runs),
            "requests": sum(r["requests"] for r in runs), "runs": len(runs)}


def ms(us):
    return "%.2f" % (us / 1000.0) if us < 10000 else "%.1f" % (us / 1000.0)


def pct_ms(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] * 1000


def machine_line():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            model = m.group(1).strip() if m else ""
        with open("/proc/meminfo") as f:
            mem_gb = int(re.search(r"MemTotal:\s*(\d+)", f.read()).group(1)) / 1048576
    except (OSError, AttributeError):
        mem_gb = 0
    return "%d cores (%s), %.0f GiB RAM, %s %s" % (os.cpu_count(), model or "unknown CPU", mem_gb,
                                                  platform.system(), platform.release())


def git_rev(srcdir):
    p = subprocess.run(["git", "-C", srcdir, "describe", "--always", "--dirty"], capture_output=True, text=True)
    return p.stdout.strip() or "unknown"


def build_line(builddir):
    """Which build is measured: `notesd --version` names a profile-guided one (make pgo)."""
    p = subprocess.run([os.path.join(builddir, "notesd"), "--version"], capture_output=True, text=True)
    return "profile-guided build (make pgo)" if "profile-guided" in p.stdout else "plain build"


def import_line(info):
    """notesd's import against the FTS5 baseline measured when the data was built."""
    fts = info.get("fts5")
    if not fts or not info.get("import_seconds"):
        return "- import baseline: not measured (data built before the FTS5 baseline existed; `--rebuild`)"
    ours = info["notes"] / info["import_seconds"]
    size = ("; bytes on disk notesd %.0f MB (%.0f per note), FTS5 %.0f MB (%.0f per note), %.2fx" % (
        info["db_bytes"] / 1e6, info["db_bytes"] / info["notes"], fts["bytes"] / 1e6, fts["bytes"] / fts["notes"],
        info["db_bytes"] / fts["bytes"])) if info.get("db_bytes") else ""
    return ("- import baseline (same notes, same run): notesd %.0f notes/s, SQLite FTS5 (detail=full, porter "
            "unicode61, title + content) %.0f notes/s: ratio %.2f%s" % (ours, fts["notes_per_s"],
                                                                       ours / fts["notes_per_s"], size))


def report(a, info, scenarios, results, checks, ctx, command, first_pages=None, first_searches=None):
    base = results.get("baseline")
    spec = info["spec"]
    lines = ["# notesd benchmark, %s" % time.strftime("%Y-%m-%d %H:%M"), "",
             "- command: `%s`" % command,
             "- backend: %s" % info["server"],
             "- machine: %s; notesd %s, %s" % (machine_line(), git_rev(a.srcdir), build_line(a.builddir)),
             "- data: %d users x %d notes%s + user `%s` with %d notes; seed %d; %s" % (
                 spec["users"], spec["notes_per_user"],
                 "" if spec["big_users"] >= spec["users"] else " (%d of them; the other %d users %d notes each)"
                 % (spec["big_users"], spec["users"] - spec["big_users"], spec["small_notes"]),
                 TINY_USER, TINY_NOTES, spec["seed"],
                 "database " + ("%.2f GB" % (info["db_bytes"] / 1e9) if info.get("db_bytes") else "of --db")),
             "- import (`notesctl import`, one .jsonl per user, built %s%s): %d notes in %.1f s, "
             "%s notes/s; generation took %.1f s%s" % (
                 info["built_at"], ", reused from cache" if info["cached"] else "", info["notes"],
                 info["import_seconds"], info["import_notes_per_s"], info["generate_seconds"],
                 "" if a.backend == "sqlite" else "; then %s (%.1f s)" % (
                     "ANALYZE TABLE" if a.backend == "mysql" else "VACUUM ANALYZE", info.get("analyze_seconds", 0))),
             import_line(info),
             "- load: wrk %d threads, %d connections, %d s per scenario, median of %d interleaved runs "
             "(max: worst run; non-2xx and socket errors: summed); notesd %d workers; nginx as in nginx/"
             % (min(a.threads, a.connections), a.connections, a.duration, a.runs, a.workers), "",
             "| scenario | req/s | p50 ms | p90 ms | p99 ms | max ms | non-2xx | socket errors |"
             " p50 / baseline | req/s / baseline | distinct requests |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    rows = []
    for sc in scenarios:
        rows.append(sc.name)
        if sc.companion:
            rows.append(sc.name + " (writes)")
    for name in rows:
        r = results[name]
        ratio_p50 = "%.2f" % (r["p50"] / base["p50"]) if base and base["p50"] else "-"
        ratio_rps = "%.2f" % (r["rps"] / base["rps"]) if base and base["rps"] else "-"
        lines.append("| %s | %.0f | %s | %s | %s | %s | %d | %d | %s | %s | %d |" % (
            name, r["rps"], ms(r["p50"]), ms(r["p90"]), ms(r["p99"]), ms(r["max"]), r["non2xx"],
            r["sock_errors"], ratio_p50, ratio_rps, r["distinct"]))
    lines += ["", "Single requests without concurrency (keep-alive, from the preparation and check passes):", "",
              "| requests | n | median ms | p90 ms | max ms |", "| --- | ---: | ---: | ---: | ---: |"]
    for label, t in list(checks.items()) + sorted(ctx.timings.items()):
        lines.append("| %s | %d | %.2f | %.2f | %.2f |" % (label, len(t), pct_ms(t, 0.5), pct_ms(t, 0.9), max(t) * 1000))
    for label, t in (first_searches or {}).items():
        lines += ["", "First search after a restart of notesd (%s; nginx kept, a new connection, a different "
                  "mixed query each time; issue 19: at most 50 ms): %d restarts, median %.1f ms, max %.1f ms" % (
                      label, len(t), pct_ms(t, 0.5), max(t) * 1000)]
    if first_pages:
        base_ms = statistics.median(first_pages["none"][1])
        lines += ["", "First pages of the list_filtered filters, one request at a time: worker time per request "
                  "(the status page's duration sum of list_notes; median of %d interleaved rounds of %d), and its "
                  "ratio to the unfiltered first page's (issue 19: at most 2):" % (
                      len(first_pages["none"][1]), FIRST_PAGE_REQUESTS), "",
                  "| filter | total | worker ms | / unfiltered |", "| --- | ---: | ---: | ---: |"]
        for label, (total, per_round) in first_pages.items():
            m = statistics.median(per_round)
            lines.append("| %s | %d | %.3f | %.2f |" % ("unfiltered" if label == "none" else label, total, m,
                                                       m / base_ms if base_ms else 0))
    lines += ["", "Scenarios:", ""] + ["- `%s`: %s %s, %s" % (s.name, s.method, s.path, s.about) for s in scenarios]
    return "\n".join(lines) + "\n"


def run_benchmark(a, scenarios, db, info, command):
    stack = start_stack(a, db)
    try:
        spec = info["spec"]
        big_users = ["bench%02d" % u for u in range(1, spec["big_users"] + 1)]
        tokens = create_tokens(stack, big_users + [TINY_USER])
        ctx = Context(stack, tokens, big_users, a.walk_pages, spec["seed"], a.duration)
        work = a.work_dir or os.path.join(a.builddir, "bench-work", a.backend)
        os.makedirs(work, exist_ok=True)
        files, checks, distinct = {}, {}, {}
        by_name = {sc.name: sc for sc in SCENARIOS}
        companions = [by_name[sc.companion] for sc in scenarios if sc.companion]

        def prepare(sc, check):
            t0 = time.monotonic()
            reqs = build_requests(sc, ctx)
            if check and not sc.refresh:  # a refreshed list's writes may succeed only once
                checks["check: " + sc.name] = check_requests(stack, reqs)
            files[sc.name] = os.path.join(work, sc.name + ".requests")
            write_request_file(files[sc.name], reqs)
            distinct[sc.name] = len(set(reqs))
            log("prepared %s: %d requests in %.1f s" % (sc.name, len(reqs), time.monotonic() - t0))

        def run(sc, duration):
            """One wrk run of sc (and of its companion beside it): {name: result}."""
            for x in [sc] + ([by_name[sc.companion]] if sc.companion else []):
                if x.refresh:
                    prepare(x, False)
            if ctx.conn:
                ctx.conn.close()
                ctx.conn = None
            if not sc.companion:
                return {sc.name: run_wrk(a, stack.port, files[sc.name], duration)}
            beside = {}
            t = threading.Thread(target=lambda: beside.update(r=run_wrk(
                a, stack.port, files[sc.companion], duration, a.write_connections)))
            t.start()
            main = run_wrk(a, stack.port, files[sc.name], duration)
            t.join()
            if "r" not in beside:
                raise RuntimeError("the companion run of %s failed" % sc.name)
            return {sc.name: main, sc.name + " (writes)": beside["r"]}

        for sc in scenarios + companions:
            prepare(sc, True)
        first_pages = None
        if any(sc.name == "list_filtered" for sc in scenarios):
            t0 = time.monotonic()
            first_pages = ctx.first_page_costs(FIRST_PAGE_REQUESTS)
            log("first pages of the filters measured in %.1f s" % (time.monotonic() - t0))
        for sc in scenarios if a.warmup > 0 else ():  # warm-up: caches, page cache; not recorded
            run(sc, a.warmup)
        raw = {}
        status = {"latencies": [], "failures": 0, "counted": 0, "sent": 0}
        merges = {}  # scenario -> its merge steps (Stack.merge_steps)
        for i in range(a.runs):
            for sc in scenarios:
                before = StatusProbe(stack.port).total()
                log_at = len(stack.logs())
                with StatusProbe(stack.port) as probe:
                    results_of_run = run(sc, a.duration)
                time.sleep(0.5)  # requests wrk gave up on at its end are answered meanwhile
                merges.setdefault(sc.name, []).extend(stack.merge_steps(since=log_at))
                status["counted"] += StatusProbe(stack.port).total() - before
                status["latencies"] += probe.latencies
                status["failures"] += probe.failures
                for name, r in results_of_run.items():
                    status["sent"] += r["requests"]
                    raw.setdefault(name, []).append(r)
                    log("run %d/%d %s: %.0f req/s, p50 %s ms, p99 %s ms, non-2xx %d"
                        % (i + 1, a.runs, name, r["rps"], ms(r["p50"]), ms(r["p99"]), r["non2xx"]))
        results = {}
        for name in raw:
            results[name] = summarize(raw[name])
            results[name]["distinct"] = distinct.get(name, distinct.get(name.split(" ")[0], 0))
            if name.endswith(" (writes)"):
                results[name]["distinct"] = distinct[by_name[name.split(" ")[0]].companion]
        with open(os.path.join(work, "raw-results.json"), "w") as f:
            json.dump(raw, f, indent=1)
        first_searches = {}
        if any(sc.name.startswith("search_") for sc in scenarios):  # last: it empties the workers' caches
            first_searches["the kernel's page cache warm"] = ctx.first_searches(a.workers)
            if os.access("/proc/sys/vm/drop_caches", os.W_OK):
                first_searches["the kernel's page cache dropped too, as after a reboot"] = ctx.first_searches(
                    a.workers, drop_caches=True)
        text = report(a, info, scenarios, results, checks, ctx, command, first_pages, first_searches)
        t = status["latencies"]
        if t:
            text += ("\nStatus page during the runs (/notesd-status every 100 ms): %d answers, median %.2f ms, "
                     "p99 %.2f ms, max %.2f ms, %d failed; requests it counted: %d, wrk's responses: %d "
                     "(the status also counts the requests each run's connections had in flight at its end)\n"
                     % (len(t), pct_ms(t, 0.5), pct_ms(t, 0.99), max(t) * 1000, status["failures"],
                        status["counted"], status["sent"]))
        text += merge_report(merges)
        return text
    finally:
        stack.stop()


def merge_report(merges):
    """The background merger's steps during the recorded runs, from its log: issue 19 asks that
    a merge never blocks a request longer than 20 ms, i.e. that no write transaction of a step
    holds the lock longer (store.hpp IndexStep::longest_write_us: to the return of COMMIT)."""
    rows = [(name, steps) for name, steps in merges.items() if steps]
    if not rows:
        return "\nBackground merge steps during the runs: none.\n"
    out = ["\nBackground merge steps during the runs (the merger's log; a step's longest write "
           "transaction, lock held to the return of its COMMIT; the merger's CPU time in its steps, "
           "and per note folded):\n",
           "| scenario | steps | notes folded | segments merged | write transactions | "
           "longest ms | its op | steps over 20 ms | CPU s | CPU ms / note folded |",
           "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    for name, steps in rows:  # (user, folded, merged, lost, transactions, longest_write_us, op, cpu_us)
        top = max(steps, key=lambda s: s[5])
        folded, cpu_us = sum(s[1] for s in steps), sum(s[7] for s in steps)
        out.append("| %s | %d | %d | %d | %d | %.1f | %s | %d | %.1f | %s |" % (
            name, len(steps), folded, sum(s[2] for s in steps),
            sum(s[4] for s in steps), top[5] / 1000.0, top[6], sum(1 for s in steps if s[5] > 20000),
            cpu_us / 1e6, "%.2f" % (cpu_us / 1000.0 / folded) if folded else "-"))
    return "\n".join(out) + "\n"


def parse_args(argv):
    ap = argparse.ArgumentParser(description="notesd load benchmark (see the module docstring)")
    ap.add_argument("--srcdir", default=os.path.dirname(HERE))
    ap.add_argument("--builddir", default=os.getcwd())
    ap.add_argument("--quick", action="store_true",
                    help="try it out: 2 users x 20,000 notes, 5 s per scenario, 1 run")
    ap.add_argument("--users", type=int, help="users with generated notes (default 10; quick 2)")
    ap.add_argument("--notes-per-user", type=int, help="notes of each large user (default 100000; quick 20000)")
    ap.add_argument("--big-users", type=int, help="how many users get --notes-per-user (default all)")
    ap.add_argument("--small-notes", type=int, default=1000, help="notes of the other users")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=int, help="seconds per scenario run (default 20; quick 5)")
    ap.add_argument("--runs", type=int, help="runs per scenario, the median is reported (default 3; quick 1)")
    ap.add_argument("--warmup", type=int, default=2, help="seconds of unrecorded load per scenario first")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--write-connections", type=int, default=4,
                    help="connections of the writes run beside search_mixed_with_writes")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2, help="wrk threads")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="notesd workers")
    ap.add_argument("--merge-interval-ms", type=int, default=1000,
                    help="the background merger's pause between passes (notesd's merge_interval_ms; "
                         "0: no merger, to measure what the merges cost the requests beside them)")
    ap.add_argument("--merge-nice", type=int,
                    help="the merger's merge_nice (default notesd's; 0: the workers' priority throughout)")
    ap.add_argument("--backend", choices=bench_backends.BACKENDS,
                    help="sqlite (default: a cached file), or mysql / postgresql: a throwaway MariaDB / "
                         "PostgreSQL server in the cache folder, started and stopped here")
    ap.add_argument("--db-memory", default="2G",
                    help="cache memory of that server (NOTESD_DB_MEMORY of t/db/*.sh: InnoDB buffer pool, "
                         "shared_buffers; default 2G)")
    ap.add_argument("--db-options", default="", help="options appended to the SQLite run copy's "
                    "connection string, to compare settings on the same data (e.g. 'mmap_mb=0')")
    ap.add_argument("--db", help="SOCI connection string of a running database instead (the backend "
                                 "follows from its scheme)")
    ap.add_argument("--cache-dir", help="where data is cached (default BUILDDIR/bench-data)")
    ap.add_argument("--work-dir", help="where the request files go (default BUILDDIR/bench-work/BACKEND)")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the cached data")
    ap.add_argument("--keep-jsonl", action="store_true", help="keep the generated .jsonl files")
    ap.add_argument("--gen-jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--walk-pages", type=int, default=300, help="page cap of each filtered walk")
    ap.add_argument("--scenarios", default=",".join(DEFAULT_SCENARIOS),
                    help="comma-separated, from: " + ", ".join(s.name for s in SCENARIOS))
    ap.add_argument("--output", help="Markdown report (default BUILDDIR/bench-results.md; other "
                                     "backends: bench-results-BACKEND.md)")
    a = ap.parse_args(argv)
    if a.db:
        backend = bench_backends.backend_of(a.db)
        if backend not in bench_backends.BACKENDS or a.backend not in (None, backend):
            ap.error("--db %s... is not a %s database" % (a.db.split("://")[0], a.backend or "known"))
        a.backend = backend
    a.backend = a.backend or "sqlite"
    if a.db_options and (a.db or a.backend != "sqlite"):
        ap.error("--db-options applies to the SQLite run copy only (not with --db or --backend %s)" % a.backend)
    a.server = None
    for k, full, quick in (("users", 10, 2), ("notes_per_user", 100000, 20000), ("duration", 20, 5), ("runs", 3, 1)):
        if getattr(a, k) is None:
            setattr(a, k, quick if a.quick else full)
    a.srcdir, a.builddir = os.path.abspath(a.srcdir), os.path.abspath(a.builddir)
    a.cache_dir = os.path.abspath(a.cache_dir or os.path.join(a.builddir, "bench-data"))
    a.output = a.output or os.path.join(a.builddir, "bench-results%s.md" % (
        "" if a.backend == "sqlite" else "-" + a.backend))
    return a


MAIN_PID = os.getpid()


def on_signal(signum, frame):
    """SIGTERM/SIGHUP as Ctrl-C: main's `finally` stops our database server. A forked process
    (gen_notes' Pool, whose terminate() sends SIGTERM to its workers) just ends."""
    if os.getpid() != MAIN_PID:
        os._exit(128 + signum)
    sys.exit(128 + signum)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    a = parse_args(argv)
    by_name = {s.name: s for s in SCENARIOS}
    names = [n.strip() for n in a.scenarios.split(",") if n.strip()]
    unknown = [n for n in names if n not in by_name]
    if unknown:
        sys.exit("bench: unknown scenario(s) %s; known: %s" % (", ".join(unknown), ", ".join(by_name)))
    if "baseline" not in names:  # every ratio needs the baseline of the same run
        names.insert(0, "baseline")
    if not shutil.which("wrk"):
        sys.exit("bench: wrk not found (apt-get install wrk)")
    for b in ("notesd", "notesctl"):
        if not os.access(os.path.join(a.builddir, b), os.X_OK):
            sys.exit("bench: %s is not built in %s (make %s)" % (b, a.builddir, b))
    shown, skip = [], False
    for x in argv:  # the command as typed, without the paths of this machine or a password
        if skip or x.startswith(("--srcdir=", "--builddir=", "--output=")):
            skip = False
            continue
        if x.startswith("--db="):
            x = "--db=CONN"
        skip = x in ("--srcdir", "--builddir", "--output")
        if not skip:
            shown.append("CONN" if shown and shown[-1] == "--db" else x)
    command = "python3 tools/bench.py " + " ".join(shown)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        db, info = prepare_data(a)
        db = sqlite_run_copy(a, db)
        info["server"] = bench_backends.server_info(a.srcdir, db)
        text = run_benchmark(a, [by_name[n] for n in names], db, info, command.strip())
    finally:
        if a.server:
            log("stopping the %s server" % a.backend)
            a.server.stop()
    with open(a.output, "w") as f:
        f.write(text)
    sys.stdout.write(text)
    log("written to " + a.output)


if __name__ == "__main__":
    main()
